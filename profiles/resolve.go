package profiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scopegate/scopegate/policy"
)

// ProjectRootVar is the variable profiles use for the session's project.
const ProjectRootVar = "${project_root}"

// Request says what a new session's scope comes from.
type Request struct {
	// Preset is the session's preset name.
	Preset string
	// Profile, when set, is used instead of the preset's profile.
	Profile string
	// Worktrees, when given, win over every profile.
	Worktrees []string
	// ProjectRoot replaces ${project_root}; empty drops the patterns
	// that use it.
	ProjectRoot string
}

// Resolution is the scope a session starts with and how it was chosen.
type Resolution struct {
	Scope policy.Document
	// Source says where the scope came from, e.g. "profile coding".
	Source string
	// Warnings are for the user's stderr: a missing profile, dropped
	// patterns.
	Warnings []string
}

// ErrInvalid marks a presets.yml or profile that cannot be used; the error
// names the file and, for a YAML error, the line.
var ErrInvalid = errors.New("invalid configuration")

// ErrConflict marks a request that names two sources of the scope.
var ErrConflict = errors.New("conflicting options")

// Resolve picks a new session's scope: explicit worktrees, else the given
// profile, else the preset's profile, else the preset's inline scope. It
// fails closed: an unknown preset or profile (ErrNotFound), a presets.yml
// or profile that does not parse (ErrInvalid, naming the file and line),
// and a profile given with worktrees (ErrConflict) are errors, never an
// empty or broader scope.
func (l Loader) Resolve(req Request) (Resolution, error) {
	var res Resolution
	warn := func(format string, args ...any) { res.Warnings = append(res.Warnings, fmt.Sprintf(format, args...)) }
	if len(req.Worktrees) > 0 {
		if req.Profile != "" {
			return res, fmt.Errorf("%w: give a profile or worktrees, not both (worktrees make their own scope: read and write each, with the standard deny list)", ErrConflict)
		}
		res.Scope = WorktreeScope(req.Worktrees)
		res.Source = "worktrees"
		return res, nil
	}
	profile := req.Profile
	var inline *policy.Document
	if profile == "" && req.Preset != "" {
		presets, err := l.Presets()
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		p, ok := presets[req.Preset]
		if !ok {
			return res, fmt.Errorf("preset %q: %w (known: %s)", req.Preset, ErrNotFound, strings.Join(sortedNames(presets), ", "))
		}
		if p.ScopeProfile == "" && p.Scope == nil {
			return res, fmt.Errorf("%w: preset %q names no scope_profile and no scope", ErrInvalid, req.Preset)
		}
		profile, inline = p.ScopeProfile, p.Scope
	}
	switch {
	case profile != "":
		doc, err := l.Load(profile)
		if err != nil {
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidName) {
				return res, err
			}
			return res, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		res.Scope, res.Source = doc, "profile "+profile
	case inline != nil:
		res.Scope, res.Source = *inline, "preset "+req.Preset
	default:
		return res, fmt.Errorf("%w: no preset or profile to take the scope from", ErrInvalid)
	}
	var dropped []string
	res.Scope, dropped = ExpandProjectRoot(res.Scope, req.ProjectRoot)
	if len(dropped) > 0 {
		warn("no project root found (give --project-root or run inside a project); dropped %d pattern(s) using %s: %s",
			len(dropped), ProjectRootVar, strings.Join(dropped, ", "))
	}
	return res, nil
}

func sortedNames(m map[string]Preset) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ExpandProjectRoot replaces ${project_root} in every pattern and command of
// doc with root (glob syntax in root escaped in patterns). When root is empty
// the entries using it are dropped and returned.
func ExpandProjectRoot(doc policy.Document, root string) (policy.Document, []string) {
	var dropped []string
	sub := func(list []string, glob bool) []string {
		if list == nil {
			return nil
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			if !strings.Contains(e, ProjectRootVar) {
				out = append(out, e)
				continue
			}
			if root == "" {
				dropped = append(dropped, e)
				continue
			}
			val := root
			if glob {
				val = policy.EscapeGlob(root)
			}
			out = append(out, strings.ReplaceAll(e, ProjectRootVar, val))
		}
		return out
	}
	doc.Paths.Read = sub(doc.Paths.Read, true)
	doc.Paths.Write = sub(doc.Paths.Write, true)
	doc.Paths.Deny = sub(doc.Paths.Deny, true)
	doc.OrgRoam.Subdirectory = sub(doc.OrgRoam.Subdirectory, true)
	doc.Shell.Allow = sub(doc.Shell.Allow, false)
	doc.Shell.Deny = sub(doc.Shell.Deny, false)
	return doc, dropped
}

// ProjectMarkers are the names whose presence makes a directory a project
// root.
func ProjectMarkers() []string {
	return []string{".git", ".projectile", ".hg", "go.mod", "package.json"}
}

// FindProjectRoot walks up from dir to the first directory holding a
// project marker.
func FindProjectRoot(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		for _, m := range ProjectMarkers() {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir, true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
