package server

import (
	"context"

	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// CreateRequest is the body of POST /v1/sessions: the fields of
// `scopegate session create`.
type CreateRequest struct {
	Name        string   `json:"name,omitempty"`
	ID          string   `json:"id,omitempty"`
	ExistOK     bool     `json:"exist_ok,omitempty"`
	Preset      string   `json:"preset,omitempty"`
	Profile     string   `json:"profile,omitempty"`
	ProjectRoot string   `json:"project_root,omitempty"`
	Worktrees   []string `json:"worktrees,omitempty"`
	// Mode is the main branch's mode: enforce (default) or observe.
	Mode string `json:"mode,omitempty"`
}

// CreateSession creates (or, with ExistOK, finds) a session the way
// `scopegate session create` does: validate, resolve the scope from
// worktrees, profile or preset, then create. Paths must be absolute: a
// server has no meaningful working directory. Warnings of the profile
// resolution go to warn.
func CreateSession(ctx context.Context, st *sessions.Store, l profiles.Loader, req CreateRequest, warn func(string)) (sessions.Created, error) {
	opts := sessions.CreateOptions{Name: req.Name, ID: req.ID, ExistOK: req.ExistOK, Preset: req.Preset,
		ProjectRoot: req.ProjectRoot, Worktrees: append([]string(nil), req.Worktrees...), Mode: req.Mode}
	return st.CreateWithProfile(ctx, l, opts, req.Profile, warn)
}
