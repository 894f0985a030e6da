package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scopegate/scopegate/profiles"
)

// ErrInvalidOptions reports create options that cannot make a session (no
// name or id, --exist-ok without an id, a worktree that is not a directory).
var ErrInvalidOptions = errors.New("invalid session options")

// CreateWithProfile creates (or, with ExistOK and an existing id, finds) a
// session the way `scopegate session create` and POST /v1/sessions both do:
// validate, resolve the initial scope from the worktrees, the profile or the
// preset (profiles.Loader.Resolve), then create. Worktrees and ProjectRoot
// must be absolute. Warnings of the resolution go to warn.
func (s *Store) CreateWithProfile(ctx context.Context, l profiles.Loader, opts CreateOptions, profile string, warn func(string)) (Created, error) {
	if opts.ID != "" {
		if err := ValidateID(opts.ID); err != nil {
			return Created{}, err
		}
	} else if strings.TrimSpace(opts.Name) == "" {
		return Created{}, fmt.Errorf("%w: give a name (or an id)", ErrInvalidOptions)
	}
	if opts.ExistOK && opts.ID == "" {
		return Created{}, fmt.Errorf("%w: exist-ok needs an id", ErrInvalidOptions)
	}
	if opts.Preset == "" {
		opts.Preset = DefaultPreset
	}
	if !profiles.ValidName(opts.Preset) {
		return Created{}, fmt.Errorf("preset %q: %w", opts.Preset, profiles.ErrInvalidName)
	}
	if profile != "" && !profiles.ValidName(profile) {
		return Created{}, fmt.Errorf("profile %q: %w", profile, profiles.ErrInvalidName)
	}
	if opts.ExistOK {
		if _, err := os.Stat(s.SessionDir(opts.ID)); err == nil {
			return s.Create(ctx, opts)
		}
	}
	for i, w := range opts.Worktrees {
		if !filepath.IsAbs(w) {
			return Created{}, fmt.Errorf("%w: worktree %q is not an absolute path", ErrInvalidOptions, w)
		}
		if fi, err := os.Stat(w); err != nil || !fi.IsDir() {
			return Created{}, fmt.Errorf("%w: worktree %q is not a directory", ErrInvalidOptions, w)
		}
		opts.Worktrees[i] = filepath.Clean(w)
	}
	if opts.ProjectRoot != "" {
		if !filepath.IsAbs(opts.ProjectRoot) {
			return Created{}, fmt.Errorf("%w: project root %q is not an absolute path", ErrInvalidOptions, opts.ProjectRoot)
		}
		opts.ProjectRoot = filepath.Clean(opts.ProjectRoot)
	}
	if opts.ProjectRoot != "" {
		if fi, err := os.Stat(opts.ProjectRoot); err != nil || !fi.IsDir() {
			return Created{}, fmt.Errorf("%w: project root %q is not a directory", ErrInvalidOptions, opts.ProjectRoot)
		}
	}
	res, err := l.Resolve(profiles.Request{Preset: opts.Preset, Profile: profile, Worktrees: opts.Worktrees, ProjectRoot: opts.ProjectRoot})
	if err != nil {
		return Created{}, err
	}
	for _, w := range res.Warnings {
		if warn != nil {
			warn(w)
		}
	}
	opts.Scope, opts.ScopeSource = res.Scope, res.Source
	return s.Create(ctx, opts)
}
