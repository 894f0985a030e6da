package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Repositories in the private view.
//
// A repository's configuration and hooks name programs git runs
// (core.fsmonitor, core.pager, hooks). A scope that lets programs write
// the project without denying **/.git/** lets them write those too, and git
// would then run what a program wrote. So the private view of every
// program binds each repository directory below the write roots read-only
// (a .git file and the directory it names too), after binding the
// directories between the write root and the repository over themselves:
// a mount point cannot be renamed, so no program can move a repository
// away and put another in its place. git may then run on a repository
// whose configuration and hooks have not changed since the session began
// (ReadOnlyRepo): no program of the session could have written them.
// git commands that write the repository fail, as the decision says.

// protectRepos fills in the repositories of v (Repos, Pins, gitDirs):
// the .git entries below the write roots that no mask hides, as the deny
// walk found them (gits).
func (r *Runner) protectRepos(v *view, gits []string) {
	if r.opts.Broad {
		return
	}
	roots := outermost(r.writeRts)
	var entries []string
	for _, g := range gits {
		if slices.ContainsFunc(roots, func(w string) bool { return within(g, w) }) {
			entries = append(entries, g)
		}
	}
	seen := map[string]bool{}
	add := func(p string, gitDir bool) {
		if seen[p] || slices.ContainsFunc(v.Masks, func(m string) bool { return within(p, m) }) {
			return
		}
		// A write root inside a repository stays writable: git is
		// refused there.
		if slices.ContainsFunc(r.writeRts, func(w string) bool { return within(w, p) }) {
			return
		}
		root := slices.IndexFunc(roots, func(w string) bool { return within(p, w) })
		if root < 0 {
			return // outside the write roots: read-only anyway
		}
		seen[p] = true
		v.Repos = append(v.Repos, p)
		if gitDir {
			v.gitDirs = append(v.gitDirs, p)
		}
		for d := filepath.Dir(p); d != roots[root] && within(d, roots[root]); d = filepath.Dir(d) {
			v.Pins = append(v.Pins, d)
		}
	}
	for _, e := range entries {
		fi, err := os.Lstat(e)
		if err != nil {
			continue
		}
		dirs := []string{e}
		if !fi.IsDir() {
			add(e, false) // the .git file itself: what it names must stay
			target, ok := gitFileTarget(e)
			if !ok {
				continue
			}
			dirs = []string{target}
		}
		for _, d := range dirs {
			add(d, true)
			if common, ok := commonDir(d); ok {
				add(common, true)
			}
		}
	}
	// Outer pins first: each binds the tree as the previous left it.
	slices.SortFunc(v.Pins, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
	v.Pins = slices.Compact(v.Pins)
}

// gitFileTarget returns the repository directory a .git file names, with
// its links resolved.
func gitFileTarget(file string) (string, bool) {
	data, err := readSmall(file)
	if err != nil {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(file), target)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", false
	}
	return real, true
}

// commonDir returns the common directory a linked worktree's repository
// directory names in its commondir file, with its links resolved.
func commonDir(gitDir string) (string, bool) {
	data, err := readSmall(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return "", false
	}
	common := strings.TrimSpace(string(data))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	real, err := filepath.EvalSymlinks(common)
	if err != nil {
		return "", false
	}
	return real, true
}

// readSmall reads the first 4 KiB of a file: pointer files are a line.
func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if n == 0 {
		return nil, err
	}
	return buf[:n], nil
}

// ReadOnlyRepo says whether git may run on the repository directory
// gitDir in this call (policy.Env.ReadOnlyRepo): nil when the call's view
// binds it (and its common directory) read-only for every program and
// they have not changed since the session began.
func (sh *shell) ReadOnlyRepo(gitDir string) error {
	if err := sh.prepare(); err != nil {
		return err
	}
	v := sh.rules.View
	if v == nil {
		return fmt.Errorf("the call's programs run without a private view (%s)", sh.conf)
	}
	return sh.r.repoCheck(gitDir, func(d string) bool { return slices.Contains(v.gitDirs, d) })
}

// ExpectReadOnlyRepo says, before a call runs, whether ReadOnlyRepo will
// hold for gitDir in its programs' views: the host gives programs the
// private view and gitDir is unchanged since the session began.
func (r *Runner) ExpectReadOnlyRepo(gitDir string) error {
	if c := r.Confinement(); c != ConfinementNamespaces {
		return fmt.Errorf("programs here run without a private view (%s)", c)
	}
	return r.repoCheck(gitDir, nil)
}

// repoCheck checks gitDir and its common directory: each either lies
// outside the write roots or is one the view protects (found, when
// known) and unchanged since the session began.
func (r *Runner) repoCheck(gitDir string, found func(string) bool) error {
	real, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", gitDir, err)
	}
	dirs := []string{real}
	if common, ok := commonDir(real); ok && common != real {
		dirs = append(dirs, common)
	}
	for _, d := range dirs {
		if !slices.ContainsFunc(r.writeRts, func(w string) bool { return within(d, w) }) {
			continue
		}
		if r.opts.Broad {
			return errors.New("observe mode runs programs with the repository writable")
		}
		if w := slices.IndexFunc(r.writeRts, func(w string) bool { return within(w, d) }); w >= 0 {
			return fmt.Errorf("the write root %s lies inside %s", r.writeRts[w], d)
		}
		if found != nil && !found(d) {
			return fmt.Errorf("%s was not there when the call began, or lies deeper below the write roots than the view looks", d)
		}
		var start time.Time
		if r.opts.SessionStart != nil {
			start = r.opts.SessionStart()
		}
		if err := unchangedSince(d, start); err != nil {
			return err
		}
	}
	return nil
}

// unchangedSince checks that what a repository directory holds that git
// runs or configures itself from (config, config.worktree, commondir, the
// hooks) has not changed since start: no program of the session wrote it.
func unchangedSince(gitDir string, start time.Time) error {
	if start.IsZero() {
		return errors.New("the session's start is not recorded")
	}
	check := func(p string) error {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if changed := time.Unix(st.Ctim.Unix()); !changed.Before(start) {
			return fmt.Errorf("%s changed at %s, after this session began (%s): a program of the session may have written it",
				p, changed.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("%s is a symbolic link, whose target git would run or read", p)
		}
		return nil
	}
	for _, name := range []string{"config", "config.worktree", "commondir", "hooks"} {
		if err := check(filepath.Join(gitDir, name)); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir(filepath.Join(gitDir, "hooks"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("read the hooks of %s: %w", gitDir, err)
	}
	for _, e := range ents {
		if err := check(filepath.Join(gitDir, "hooks", e.Name())); err != nil {
			return err
		}
	}
	return nil
}
