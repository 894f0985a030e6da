package exec

// The grep and glob tools as they were before the parallel engine: a
// serial walk (fs.WalkDir, doublestar.GlobWalk) through the os.Root with a
// full Checker.CheckPath of every entry, and a line-by-line match. Kept as
// the oracle the engine is compared with (search_test.go).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scopegate/scopegate/policy"
)

func (r *Runner) oracleGlob(ctx context.Context, a policy.GlobArgs, cwd string) (Result, error) {
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
	res := Result{Matches: []string{}}
	err = doublestar.GlobWalk(sub, pattern, func(p string, _ fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		full := filepath.Join(t.abs, filepath.FromSlash(p))
		if vs := r.opts.Checker.CheckPath(full, policy.AccessRead, cwd); len(vs) > 0 {
			return nil
		}
		if len(res.Matches) == r.opts.MaxMatches {
			res.Truncated = true
			return errEnough
		}
		res.Matches = append(res.Matches, full)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return Result{}, fmt.Errorf("glob %q in %q: %w", a.Pattern, base, err)
	}
	slices.Sort(res.Matches)
	return res, nil
}

func (r *Runner) oracleGrep(ctx context.Context, a policy.GrepArgs, cwd string) (Result, error) {
	re, err := regexp.Compile(a.Pattern)
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
	fsys := root.FS()
	start := fsPath(t.rel)
	err = fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable entries below are skipped, like grep -s
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.FromSlash(start), filepath.FromSlash(p))
		full := filepath.Join(t.abs, rel)
		if p != start {
			if vs := r.opts.Checker.CheckPath(full, policy.AccessRead, cwd); len(vs) > 0 {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if a.Include != "" && !oracleIncludes(a.Include, filepath.ToSlash(rel)) {
			return nil
		}
		return r.oracleGrepFile(&res, re, fsys, p, full)
	})
	if err != nil && !errors.Is(err, errEnough) {
		return Result{}, fmt.Errorf("grep %q in %q: %w", a.Pattern, base, err)
	}
	return res, nil
}

// oracleIncludes matches an include glob against a file's base name, or against
// its path below the search root when the glob has a slash.
func oracleIncludes(glob, rel string) bool {
	if strings.Contains(glob, "/") {
		ok, _ := doublestar.Match(glob, rel)
		return ok
	}
	ok, _ := doublestar.Match(glob, path.Base(rel))
	return ok
}

// oracleGrepFile appends the matching lines of one file. Hard-linked files and
// files with NUL bytes (binary) are skipped.
func (r *Runner) oracleGrepFile(res *Result, re *regexp.Regexp, fsys fs.FS, p, full string) error {
	f, err := fsys.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || nlink(fi) > 1 {
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var found []string
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if slices.Contains(line, 0) {
			return nil
		}
		if !re.Match(line) {
			continue
		}
		text := line
		if len(text) > maxLineText {
			text = text[:maxLineText]
		}
		found = append(found, full+":"+strconv.Itoa(n)+":"+string(text))
	}
	for _, m := range found {
		if len(res.Matches) == r.opts.MaxMatches {
			res.Truncated = true
			return errEnough
		}
		res.Matches = append(res.Matches, m)
	}
	return nil
}
