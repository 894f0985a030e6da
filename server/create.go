package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
}

// CreateSession creates (or, with ExistOK, finds) a session the way
// `scopegate session create` does: validate, resolve the scope from
// worktrees, profile or preset, then create. Paths must be absolute: a
// server has no meaningful working directory. Warnings of the profile
// resolution go to warn.
func CreateSession(ctx context.Context, st *sessions.Store, l profiles.Loader, req CreateRequest, warn func(string)) (sessions.Created, error) {
	if req.ID != "" {
		if err := sessions.ValidateID(req.ID); err != nil {
			return sessions.Created{}, fmt.Errorf("session id %q: %w", req.ID, err)
		}
	} else if strings.TrimSpace(req.Name) == "" {
		return sessions.Created{}, errorf(400, CodeBadRequest, "give a name (or an id)")
	}
	if req.ExistOK && req.ID == "" {
		return sessions.Created{}, errorf(400, CodeBadRequest, "exist_ok needs an id")
	}
	if req.Preset == "" {
		req.Preset = sessions.DefaultPreset
	}
	if !profiles.ValidName(req.Preset) {
		return sessions.Created{}, fmt.Errorf("preset %q: %w", req.Preset, profiles.ErrInvalidName)
	}
	if req.Profile != "" && !profiles.ValidName(req.Profile) {
		return sessions.Created{}, fmt.Errorf("profile %q: %w", req.Profile, profiles.ErrInvalidName)
	}
	opts := sessions.CreateOptions{Name: req.Name, ID: req.ID, ExistOK: req.ExistOK, Preset: req.Preset}
	if req.ExistOK {
		if _, err := os.Stat(st.SessionDir(req.ID)); err == nil {
			return st.Create(ctx, opts)
		}
	}
	for _, w := range req.Worktrees {
		if !filepath.IsAbs(w) {
			return sessions.Created{}, errorf(400, CodeBadRequest, fmt.Sprintf("worktree %q: not an absolute path", w))
		}
		if fi, err := os.Stat(w); err != nil || !fi.IsDir() {
			return sessions.Created{}, errorf(400, CodeBadRequest, fmt.Sprintf("worktree %q: not a directory", w))
		}
		opts.Worktrees = append(opts.Worktrees, filepath.Clean(w))
	}
	if req.ProjectRoot != "" {
		if !filepath.IsAbs(req.ProjectRoot) {
			return sessions.Created{}, errorf(400, CodeBadRequest, fmt.Sprintf("project_root %q: not an absolute path", req.ProjectRoot))
		}
		opts.ProjectRoot = filepath.Clean(req.ProjectRoot)
	}
	res := l.Resolve(profiles.Request{Preset: opts.Preset, Profile: req.Profile,
		Worktrees: opts.Worktrees, ProjectRoot: opts.ProjectRoot})
	for _, w := range res.Warnings {
		if warn != nil {
			warn(w)
		}
	}
	opts.Scope, opts.ScopeSource = res.Scope, res.Source
	return st.Create(ctx, opts)
}
