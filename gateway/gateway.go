// Package gateway takes one tool call end to end: load the branch's scope,
// decide, run, audit, count. Every entry point (CLI, HTTP, hooks) goes
// through it, so there is exactly one decision path.
package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"github.com/scopegate/scopegate/policy"
)

// Options configure a Gateway. The zero value works: no protected roots, no
// home directory.
type Options struct {
	// SessionsDir and ConfigDir are never writable by a tool call.
	SessionsDir string
	ConfigDir   string
	// RoamDir is the org-roam directory.
	RoamDir string
	// Home is the home directory ~ and $HOME expand to in calls.
	Home string
	// LookupHome resolves ~user; nil uses the system's user database.
	LookupHome func(name string) (string, bool)
}

// Gateway decides and runs tool calls.
type Gateway struct {
	opts Options
}

// New returns a Gateway.
func New(opts Options) *Gateway {
	if opts.LookupHome == nil {
		opts.LookupHome = systemHome
	}
	return &Gateway{opts: opts}
}

func systemHome(name string) (string, bool) {
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return u.HomeDir, true
}

// Env returns the policy environment of a decision with default cwd.
func (g *Gateway) Env(cwd string, extraProtected ...string) policy.Env {
	var protected []string
	for _, p := range append([]string{g.opts.SessionsDir, g.opts.ConfigDir}, extraProtected...) {
		if p == "" {
			continue
		}
		protected = append(protected, filepath.Clean(p))
		// The canonical spelling too, when the root is reached through a link.
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			protected = append(protected, real)
		}
	}
	return policy.Env{
		Home:      g.opts.Home,
		HomeOf:    g.opts.LookupHome,
		Protected: protected,
		RoamDir:   g.opts.RoamDir,
		Cwd:       cwd,
	}
}

// LoadScope reads and compiles a scope file. A missing file gives a
// decision of scope_missing, an unusable one scope_invalid: callers turn
// the returned error into a denial with [DenyFor].
func (g *Gateway) LoadScope(path string, env policy.Env) (*policy.Scope, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrScopeMissing, path)
		}
		return nil, fmt.Errorf("%w: read %s: %v", policy.ErrInvalidScope, path, err)
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := policy.Compile(doc, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ErrScopeMissing is returned by LoadScope when there is no scope file.
var ErrScopeMissing = errors.New("scope file missing")

// DenyFor is the decision for a call on a branch whose scope could not be
// loaded.
func DenyFor(tool string, err error) policy.Decision {
	if errors.Is(err, ErrScopeMissing) {
		return policy.Deny(tool, policy.Violation{Reason: policy.ReasonScopeMissing, Rule: "scope.yml",
			Message: "this session has no scope.yml, so every call is denied: " + err.Error()})
	}
	return policy.DenyInvalidScope(tool, err)
}

// Check decides a call against the scope file at path, without running or
// auditing it.
func (g *Gateway) Check(scopePath string, call policy.Call, cwd string) policy.Decision {
	env := g.Env(cwd, scopePath)
	sc, err := g.LoadScope(scopePath, env)
	if err != nil {
		return DenyFor(call.Tool, err)
	}
	return sc.Decide(call, env)
}
