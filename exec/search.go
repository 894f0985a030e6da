package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/policy"
)

// The grep and glob tools. Both walk the tree below the call's path in
// the order a serial walk takes (fs.WalkDir for grep, doublestar.GlobWalk
// for glob), check every entry as Checker.CheckPath would, and stop at
// MaxMatches; their results are the same whatever the speed. What makes
// them fast:
//   - directories are listed ahead, in parallel, by a dirLister, which
//     skips what a deny glob matches;
//   - an entry met by the walk is checked with Checker.CheckWalked, which
//     knows where it resolves without asking the filesystem, and a file
//     or directory is opened relative to the search's start with no
//     symbolic link on the way (openat2), not through the os.Root one
//     component at a time;
//   - grep searches files in parallel, each as one buffer (lineMatcher),
//     and merges their matches in the walk's order.
//
// A runner whose checks may have effects beyond their answer (Broad: the
// Checker of observe mode records what it lets through) walks serially,
// so that they are made in the serial order and stop where it stops.

// maxLineText caps the text of one grep match.
const maxLineText = 500

var errEnough = errors.New("enough matches")

// errHardLinked marks a file with more than one hard link, which the
// search tools leave out as CheckPath would refuse it.
var errHardLinked = errors.New("hard-linked")

func (r *Runner) glob(ctx context.Context, a policy.GlobArgs, cwd string) (Result, error) {
	base := a.Path
	if base == "" {
		base = cwd
	}
	t, root, err := r.prepare(ctx, base, cwd, policy.AccessRead)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	pattern := a.Pattern
	if filepath.IsAbs(pattern) {
		rest, ok := strings.CutPrefix(filepath.Clean(pattern), t.abs+"/")
		if !ok {
			return Result{}, fmt.Errorf("%w: absolute pattern %q is not below %q", ErrInvalidArgs, pattern, t.abs)
		}
		pattern = rest
	}
	if !doublestar.ValidatePattern(pattern) {
		return Result{}, fmt.Errorf("%w: invalid glob pattern %q", ErrInvalidArgs, a.Pattern)
	}
	sub, err := fs.Sub(root.FS(), fsPath(t.rel))
	if err != nil {
		return Result{}, fmt.Errorf("glob %q: %w", base, err)
	}
	prog := searchProgressOf(ctx)
	gfs := &globFS{sub: sub}
	canon := filepath.Join(t.root, t.rel)
	if start, err := root.Open(fsPath(t.rel)); err == nil {
		if fi, err := start.Stat(); err == nil && fi.IsDir() {
			deny := r.searchDeny()
			literal := func(rel string) string { return strings.ToLower(filepath.Join(t.abs, rel)) }
			gfs.closed = func(rel string) bool { return deny.closed(literal(rel)) }
			// Only "**" walks the whole tree; other patterns read the few
			// directories they name.
			ahead := strings.Contains(pattern, "**")
			gfs.l, err = newDirLister(ctx, root, fsPath(t.rel), start, ahead, gfs.closed, prog.addEntries)
			if err != nil {
				return Result{}, fmt.Errorf("glob %q: %w", base, err)
			}
			defer gfs.l.close()
		} else {
			start.Close()
		}
	}
	res := Result{Matches: []string{}}
	err = doublestar.GlobWalk(gfs, pattern, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		full := filepath.Join(t.abs, filepath.FromSlash(p))
		if vs := r.checkGlobbed(gfs, p, d, full, canon, cwd); len(vs) > 0 {
			return nil
		}
		if len(res.Matches) == r.opts.MaxMatches {
			res.Truncated = true
			return errEnough
		}
		res.Matches = append(res.Matches, full)
		prog.addMatches(1)
		return nil
	})
	if err == nil {
		// A listing cut short by the end of ctx ends the walk early.
		err = ctx.Err()
	}
	if err != nil && !errors.Is(err, errEnough) {
		return Result{}, fmt.Errorf("glob %q in %q: %w", a.Pattern, base, err)
	}
	slices.Sort(res.Matches)
	return res, nil
}

// checkGlobbed checks one match of the glob walk at p (below the start),
// full as the call spells it: an entry of a directory listed with no
// symbolic link on the way through CheckWalked and its link count, any
// other (the start, a path through a symbolic link, one the walk stat'ed)
// through CheckPath.
func (r *Runner) checkGlobbed(gfs *globFS, p string, d fs.DirEntry, full, canon, cwd string) []policy.Violation {
	e, ok := d.(*globEnt)
	if !ok || p == "." || e.typ == fs.ModeSymlink {
		return r.opts.Checker.CheckPath(full, policy.AccessRead, cwd)
	}
	var links uint64
	if e.typ == 0 {
		// The link count, as CheckPath reads it; 0 for a file gone or
		// replaced by another kind.
		var st unix.Stat_t
		if err := unix.Fstatat(gfs.l.start, p, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			links = st.Nlink
		}
	}
	return r.opts.Checker.CheckWalked(full, canon+"/"+p, e.typ == fs.ModeDir, links, policy.AccessRead)
}

// globFS is what doublestar.GlobWalk walks: the os.Root's FS below the
// start, with directories listed by a dirLister where their path holds no
// symbolic link (the others, and everything but listings, through the
// os.Root as before). A directory below which every path is denied is
// listed empty: what the walk would find there could only be refused.
type globFS struct {
	sub fs.FS
	l   *dirLister // nil when the start is no directory
	// closed reports whether every path at and below rel is denied.
	closed func(rel string) bool
}

func (g *globFS) Open(name string) (fs.File, error)          { return g.sub.Open(name) }
func (g *globFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(g.sub, name) }
func (g *globFS) ReadDir(name string) ([]fs.DirEntry, error) { return g.readDir(name) }

func (g *globFS) readDir(name string) ([]fs.DirEntry, error) {
	if g.l == nil || !fs.ValidPath(name) {
		return fs.ReadDir(g.sub, name)
	}
	if err := g.l.ctx.Err(); err != nil {
		return nil, err
	}
	if name != "." && g.closed(name) {
		return nil, nil
	}
	ents, err := g.l.take(name)
	if err != nil {
		if err := g.l.ctx.Err(); err != nil {
			return nil, err
		}
		// A symbolic link on the way, which the os.Root follows within
		// the root as the walk always has; or an error, which it tells
		// as it always has.
		return fs.ReadDir(g.sub, name)
	}
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = &globEnt{searchEnt: e, dir: g, rel: joinRel(name, e.name)}
	}
	return out, nil
}

// globEnt is an entry of a directory the globFS listed with no symbolic
// link on the way.
type globEnt struct {
	searchEnt
	dir *globFS
	rel string
}

func (e *globEnt) Name() string               { return e.name }
func (e *globEnt) IsDir() bool                { return e.typ == fs.ModeDir }
func (e *globEnt) Type() fs.FileMode          { return e.typ }
func (e *globEnt) Info() (fs.FileInfo, error) { return fs.Lstat(e.dir.sub, e.rel) }

// searchDeny is the deny globs as the search tools use them to skip
// directories: the private view's compiled matcher (compileDeny), of all
// of them and of those that match everything below a directory they match
// ("X/**", with no alternatives or escapes).
type searchDeny struct {
	all, below *denyMatcher
}

func (r *Runner) searchDeny() searchDeny {
	var below []string
	for _, p := range r.deny {
		if strings.HasSuffix(p, "/**") && !strings.ContainsAny(p, `\{}`) {
			below = append(below, p)
		}
	}
	return searchDeny{all: compileDeny(r.deny), below: compileDeny(below)}
}

// denied reports whether a deny glob matches lower (a lower-case path).
func (d searchDeny) denied(lower string) bool { return d.all.full(lower) }

// closed reports whether a deny glob matches lower and everything below it.
func (d searchDeny) closed(lower string) bool { return d.below.full(lower) }

// grepFile is one file of the grep walk, in the walk's order.
type grepFile struct {
	seq       int
	rel, full string
}

// grepSearch is one run of the grep tool below a directory.
type grepSearch struct {
	r     *Runner
	ctx   context.Context
	a     policy.GrepArgs
	m     *lineMatcher
	abs   string // the start as the call spells it
	canon string // where it resolves
	cwd   string
	l     *dirLister
	deny  searchDeny
	prog  *SearchProgress
	// serial: search each file as the walk meets it (see the top).
	serial bool
	res    *Result
	// files feeds the searchers; inflight bounds the files handed out and
	// not yet merged.
	files    chan grepFile
	inflight chan struct{}
	seq      int
}

func (r *Runner) grep(ctx context.Context, a policy.GrepArgs, cwd string) (Result, error) {
	m, err := newLineMatcher(a.Pattern)
	if err != nil {
		return Result{}, fmt.Errorf("%w: pattern: %v", ErrInvalidArgs, err)
	}
	if a.Include != "" && !doublestar.ValidatePattern(a.Include) {
		return Result{}, fmt.Errorf("%w: invalid include glob %q", ErrInvalidArgs, a.Include)
	}
	base := a.Path
	if base == "" {
		base = cwd
	}
	t, root, err := r.prepare(ctx, base, cwd, policy.AccessRead)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	res := Result{Matches: []string{}}
	start := fsPath(t.rel)
	fi, err := fs.Stat(root.FS(), start)
	if err != nil {
		return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
	}
	if !fi.IsDir() {
		// One file, named by the call: read through the os.Root.
		if fi.Mode().IsRegular() && (a.Include == "" || includes(a.Include, ".")) {
			r.grepOne(&res, m, root, start, t.abs)
		}
		return res, nil
	}
	dir, err := root.Open(start)
	if err != nil {
		return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
	}
	g := &grepSearch{r: r, a: a, m: m, abs: t.abs, canon: filepath.Join(t.root, t.rel), cwd: cwd,
		deny: r.searchDeny(), prog: searchProgressOf(ctx), serial: r.opts.Broad, res: &res}
	walkCtx, stop := context.WithCancel(ctx)
	defer stop()
	g.ctx = walkCtx
	g.l, err = newDirLister(walkCtx, root, start, dir, !g.serial, g.skip, g.prog.addEntries)
	if err != nil {
		return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
	}
	defer g.l.close()
	if _, err := g.l.take("."); err != nil {
		// As the serial walk failed: the os.Root's own error.
		if _, err := fs.ReadDir(root.FS(), start); err != nil {
			return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
		}
	}
	if g.serial {
		err = g.walk(".")
	} else {
		err = g.parallel(stop)
	}
	if err != nil && !errors.Is(err, errEnough) {
		return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
	}
	return res, nil
}

// skip tells the lister which directories not to read ahead: those a
// deny glob matches, which the walk refuses.
func (g *grepSearch) skip(rel string) bool {
	return g.deny.denied(strings.ToLower(g.canon + "/" + rel))
}

// walk visits the entries below rel in the order of fs.WalkDir, checks
// each and hands each file to search.
func (g *grepSearch) walk(rel string) error {
	ents, err := g.l.take(rel)
	if err != nil {
		if rel == "." {
			return err
		}
		return nil // unreadable directories below are skipped, like grep -s
	}
	c := g.r.opts.Checker
	for _, e := range ents {
		if err := g.ctx.Err(); err != nil {
			return err
		}
		child := joinRel(rel, e.name)
		full := filepath.Join(g.abs, filepath.FromSlash(child))
		if e.typ == fs.ModeSymlink {
			// Never searched; checked still, as every entry is.
			c.CheckPath(full, policy.AccessRead, g.cwd)
			continue
		}
		if vs := c.CheckWalked(full, g.canon+"/"+child, e.typ == fs.ModeDir, 0, policy.AccessRead); len(vs) > 0 {
			if e.typ == fs.ModeDir {
				g.l.prune(child)
			}
			continue
		}
		switch {
		case e.typ == fs.ModeDir:
			if err := g.walk(child); err != nil {
				return err
			}
		case e.typ == 0:
			if g.a.Include != "" && !includes(g.a.Include, child) {
				continue
			}
			if err := g.file(child, full); err != nil {
				return err
			}
		}
	}
	return nil
}

// file searches one file now (serial) or hands it to the searchers.
func (g *grepSearch) file(rel, full string) error {
	if g.serial {
		found, err := searchFile(g.m, g.l, rel, full, nil)
		if err != nil {
			return nil
		}
		return g.merge(found)
	}
	select {
	case g.inflight <- struct{}{}:
	case <-g.ctx.Done():
		return g.ctx.Err()
	}
	select {
	case g.files <- grepFile{seq: g.seq, rel: rel, full: full}:
		g.seq++
		return nil
	case <-g.ctx.Done():
		return g.ctx.Err()
	}
}

// merge appends one file's matches to the result, up to MaxMatches.
func (g *grepSearch) merge(found []string) error {
	g.prog.addFiles(1)
	for _, m := range found {
		if len(g.res.Matches) == g.r.opts.MaxMatches {
			g.res.Truncated = true
			return errEnough
		}
		g.res.Matches = append(g.res.Matches, m)
		g.prog.addMatches(1)
	}
	return nil
}

// maxInflight bounds the files handed to the searchers and not yet merged.
const maxInflight = 512

// parallel runs the walk and the searchers, and merges their matches in
// the walk's order; stop ends the walk once MaxMatches are found.
func (g *grepSearch) parallel(stop context.CancelFunc) error {
	g.files = make(chan grepFile, 64)
	g.inflight = make(chan struct{}, maxInflight)
	type found struct {
		seq   int
		lines []string
	}
	results := make(chan found, 64)
	var searchers sync.WaitGroup
	for range searchWorkers() {
		searchers.Go(func() {
			var buf []byte
			for f := range g.files {
				lines, err := searchFile(g.m, g.l, f.rel, f.full, &buf)
				if err != nil {
					lines = nil
				}
				select {
				case results <- found{f.seq, lines}:
				case <-g.ctx.Done():
				}
			}
		})
	}
	walkErr := make(chan error, 1)
	go func() {
		err := g.walk(".")
		close(g.files)
		searchers.Wait()
		close(results)
		walkErr <- err
	}()
	// Merge in the walk's order.
	waiting := map[int][]string{}
	next := 0
	var mergeErr error
	for f := range results {
		if mergeErr != nil {
			continue // draining
		}
		waiting[f.seq] = f.lines
		for {
			lines, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			<-g.inflight
			if err := g.merge(lines); err != nil {
				mergeErr = err
				stop()
				break
			}
		}
	}
	err := <-walkErr
	if mergeErr != nil {
		return mergeErr
	}
	return err
}

// searchWorkers is how many files are searched at once: more than the
// processors, since a search waits on the disk and the system calls.
func searchWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// searchFile opens rel below the lister's start (no symbolic link on the
// way, none in its place) and returns its matching lines. It leaves out,
// returning an error, what is not a regular file with one link, what
// cannot be read, and binary files. buf, when set, is a buffer to reuse.
func searchFile(m *lineMatcher, l *dirLister, rel, full string, buf *[]byte) ([]string, error) {
	fd, err := l.openBelow(rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink > 1 {
		return nil, errHardLinked
	}
	var b []byte
	if buf != nil {
		b = (*buf)[:0]
	}
	if want := int(min(max(st.Size+1, 512), maxScanLine)); cap(b) < want {
		b = make([]byte, 0, want)
	}
	defer func() {
		if buf != nil {
			*buf = b[:0]
		}
	}()
	for len(b) < maxScanLine {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(2*cap(b), maxScanLine)-len(b))
		}
		want := min(cap(b), maxScanLine) - len(b)
		n, err := unix.Read(fd, b[len(b):len(b)+want])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		b = b[:len(b)+n]
		// The end: nothing more, or all the file had when it was stat'ed
		// and less than asked for (a regular file's read is short only
		// there; a file growing meanwhile was read as it was).
		if n == 0 || n < want && int64(len(b)) == st.Size {
			found, ok := m.match(nil, b, full)
			if !ok {
				return nil, errBinary
			}
			return found, nil
		}
	}
	// A file of maxScanLine bytes or more: line by line, as always.
	found, ok := m.scan(nil, io.MultiReader(bytes.NewReader(b), fdReader(fd)), full)
	if !ok {
		return nil, errBinary
	}
	return found, nil
}

// fdReader reads a file descriptor.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// errBinary marks a file with a NUL byte, left out whole.
var errBinary = errors.New("binary file")

// grepOne searches the one file a grep call names, through the os.Root.
func (r *Runner) grepOne(res *Result, m *lineMatcher, root *os.Root, name, full string) {
	f, err := root.FS().Open(name)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || nlink(fi) > 1 {
		return
	}
	found, ok := m.scan(nil, f, full)
	if !ok {
		return
	}
	for _, line := range found {
		if len(res.Matches) == r.opts.MaxMatches {
			res.Truncated = true
			return
		}
		res.Matches = append(res.Matches, line)
	}
}

// includes matches an include glob against a file's base name, or against
// its path below the search root when the glob has a slash.
func includes(glob, rel string) bool {
	if strings.Contains(glob, "/") {
		ok, _ := doublestar.Match(glob, rel)
		return ok
	}
	ok, _ := doublestar.Match(glob, path.Base(rel))
	return ok
}
