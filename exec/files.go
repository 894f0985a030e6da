package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/policy"
)

// maxEdit caps the size of a file edit_file rewrites.
const maxEdit = 16 << 20

// AmbiguousError is edit_file's old_string occurring more than once
// without replace_all. It matches [ErrAmbiguous].
type AmbiguousError struct {
	Count int
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("old_string occurs %d times; give more context or set replace_all", e.Count)
}

// Is makes errors.Is(err, ErrAmbiguous) hold.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// target is a path resolved to the scope root that holds it.
type target struct {
	abs  string // absolute, cleaned, as the call wrote it
	root string // the scope root directory to open an os.Root at
	rel  string // the canonical path relative to root
}

// canonical resolves symlinks on the longest existing prefix of an
// absolute, clean path, keeping a non-existing tail as written.
func canonical(abs string) (string, error) {
	var tail []string
	p := abs
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, tail...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("resolve %q: %w", abs, err)
		}
		if p == "/" {
			return abs, nil
		}
		tail = append([]string{filepath.Base(p)}, tail...)
		p = filepath.Dir(p)
	}
}

// absolute makes p absolute against cwd, expanding a leading ~.
func absolute(p, cwd string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrInvalidArgs)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrInvalidArgs)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand ~: %w", err)
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsAbs(cwd) {
			return "", fmt.Errorf("%w: relative path %q without an absolute working directory", ErrInvalidArgs, p)
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), nil
}

// resolve finds the scope root holding path: the longest write root for
// writes (never inside a protected root), the longest read or write root
// for reads.
func (r *Runner) resolve(path, cwd string, access policy.Access) (target, error) {
	abs, err := absolute(path, cwd)
	if err != nil {
		return target{}, err
	}
	canon, err := canonical(abs)
	if err != nil {
		return target{}, err
	}
	readRts, writeRts := r.grantRoots()
	roots := writeRts
	if access == policy.AccessWrite {
		for _, p := range r.protect {
			if within(canon, p) || within(abs, p) {
				return target{}, fmt.Errorf("%q: %w", path, ErrProtected)
			}
		}
	} else {
		roots = append(append([]string(nil), readRts...), writeRts...)
	}
	best := ""
	for _, root := range roots {
		if within(canon, root) && len(root) > len(best) {
			best = root
		}
	}
	if best == "" {
		return target{}, fmt.Errorf("%q: %w", path, ErrNotInRoots)
	}
	if best == canon && best != "/" {
		// A root that is the file itself (a scope naming one file, which
		// may not exist yet): its directory is the os.Root, and the file
		// operations, which never follow a symlink in the last component,
		// touch only that name.
		if fi, err := os.Lstat(canon); err != nil || !fi.IsDir() {
			best = filepath.Dir(canon)
		}
	}
	rel, err := filepath.Rel(best, canon)
	if err != nil {
		return target{}, fmt.Errorf("%q: %w", path, err)
	}
	return target{abs: abs, root: best, rel: rel}, nil
}

// prepare resolves path, re-checks it with the Checker right before the
// action, and opens the os.Root every later step goes through.
func (r *Runner) prepare(ctx context.Context, path, cwd string, access policy.Access) (target, *os.Root, error) {
	if err := ctx.Err(); err != nil {
		return target{}, nil, err
	}
	t, err := r.resolve(path, cwd, access)
	if err != nil {
		if errors.Is(err, ErrNotInRoots) || errors.Is(err, ErrProtected) {
			return target{}, nil, &DeniedError{Violations: []policy.Violation{violationFor(path, access, err)}, Err: err}
		}
		return target{}, nil, err
	}
	if vs := r.opts.Checker.CheckPath(path, access, cwd); len(vs) > 0 {
		return target{}, nil, &DeniedError{Violations: vs}
	}
	root, err := os.OpenRoot(t.root)
	if err != nil {
		return target{}, nil, fmt.Errorf("open scope root: %w", err)
	}
	return t, root, nil
}

// nlink returns the link count of fi, 1 when unknown.
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openRegular opens rel below root for reading, refusing symlinks in the
// last component, non-regular files and hard-linked files.
func openRegular(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, nil, fmt.Errorf("%s: is a directory", rel)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file", rel)
	case nlink(fi) > 1:
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", rel, ErrHardLink)
	}
	return f, fi, nil
}

func (r *Runner) readFile(ctx context.Context, a policy.ReadFileArgs, cwd string) (Result, error) {
	first, limit := 1, -1
	if a.Offset != nil {
		if *a.Offset < 0 {
			return Result{}, fmt.Errorf("%w: negative offset", ErrInvalidArgs)
		}
		first = max(*a.Offset, 1)
	}
	if a.Limit != nil {
		if *a.Limit < 0 {
			return Result{}, fmt.Errorf("%w: negative limit", ErrInvalidArgs)
		}
		limit = *a.Limit
	}
	t, root, err := r.prepare(ctx, a.Path, cwd, policy.AccessRead)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	f, fi, err := openRegular(root, t.rel)
	if err != nil {
		return Result{}, fmt.Errorf("read %q: %w", a.Path, err)
	}
	defer f.Close()
	var res Result
	var sb strings.Builder
	br := bufio.NewReaderSize(f, int(min(max(fi.Size()+1, 16), 64<<10)))
	for line := 1; limit != 0; line++ {
		s, err := br.ReadString('\n')
		if line >= first && s != "" {
			if int64(sb.Len()+len(s)) > r.opts.MaxRead {
				sb.WriteString(s[:r.opts.MaxRead-int64(sb.Len())])
				res.Truncated = true
				res.Stderr = fmt.Sprintf("read_file: content cut at %d bytes (file has %d bytes); use offset and limit to read the rest\n", r.opts.MaxRead, fi.Size())
				break
			}
			sb.WriteString(s)
			limit--
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return Result{}, fmt.Errorf("read %q: %w", a.Path, err)
		}
	}
	content := sb.String()
	res.Content = &content
	return res, nil
}

// writeAtomic replaces rel below root with data (atomicfile.WriteIn). An
// existing file keeps its mode; a new one gets 0644 and new directories
// 0755, both less the umask.
func writeAtomic(root *os.Root, rel string, data []byte) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("make parent directories: %w", err)
		}
	}
	mode, keep := fs.FileMode(0o644), false
	fi, err := root.Lstat(rel)
	switch {
	case err == nil && fi.Mode().IsRegular():
		if nlink(fi) > 1 {
			return fmt.Errorf("%s: %w", rel, ErrHardLink)
		}
		mode, keep = fi.Mode().Perm(), true
	case err == nil:
		return fmt.Errorf("%s: exists and is not a regular file", rel)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	// The data is on the disk before the name (Sync): a crash leaves the
	// old file or the new one, never an empty one under the file's name.
	return atomicfile.WriteIn(root, rel, data, mode, atomicfile.Options{Sync: true, ExactPerm: keep})
}

func (r *Runner) writeFile(ctx context.Context, a policy.WriteFileArgs, cwd string) (Result, error) {
	if a.Content == nil {
		return Result{}, fmt.Errorf("%w: content is missing", ErrInvalidArgs)
	}
	t, root, err := r.prepare(ctx, a.Path, cwd, policy.AccessWrite)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	if err := writeAtomic(root, t.rel, []byte(*a.Content)); err != nil {
		return Result{}, fmt.Errorf("write %q: %w", a.Path, err)
	}
	n := int64(len(*a.Content))
	return Result{BytesWritten: &n}, nil
}

func (r *Runner) editFile(ctx context.Context, a policy.EditFileArgs, cwd string) (Result, error) {
	switch {
	case a.OldString == nil || a.NewString == nil:
		return Result{}, fmt.Errorf("%w: old_string and new_string are required", ErrInvalidArgs)
	case *a.OldString == "":
		return Result{}, fmt.Errorf("%w: old_string is empty", ErrInvalidArgs)
	case *a.OldString == *a.NewString:
		return Result{}, fmt.Errorf("%w: old_string and new_string are the same", ErrInvalidArgs)
	}
	t, root, err := r.prepare(ctx, a.Path, cwd, policy.AccessWrite)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	f, fi, err := openRegular(root, t.rel)
	if err != nil {
		return Result{}, fmt.Errorf("edit %q: %w", a.Path, err)
	}
	if fi.Size() > maxEdit {
		f.Close()
		return Result{}, fmt.Errorf("edit %q: file is larger than %d bytes", a.Path, maxEdit)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEdit+1))
	f.Close()
	if err != nil {
		return Result{}, fmt.Errorf("edit %q: %w", a.Path, err)
	}
	content := string(b)
	n := strings.Count(content, *a.OldString)
	switch {
	case n == 0:
		return Result{}, fmt.Errorf("edit %q: %w", a.Path, ErrNoMatch)
	case n > 1 && !a.ReplaceAll:
		return Result{}, fmt.Errorf("edit %q: %w", a.Path, &AmbiguousError{Count: n})
	}
	content = strings.ReplaceAll(content, *a.OldString, *a.NewString)
	if err := writeAtomic(root, t.rel, []byte(content)); err != nil {
		return Result{}, fmt.Errorf("edit %q: %w", a.Path, err)
	}
	written := int64(len(content))
	return Result{Replacements: &n, BytesWritten: &written}, nil
}

func (r *Runner) listDir(ctx context.Context, a policy.ListDirArgs, cwd string) (Result, error) {
	t, root, err := r.prepare(ctx, a.Path, cwd, policy.AccessRead)
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), fsPath(t.rel))
	if err != nil {
		return Result{}, fmt.Errorf("list %q: %w", a.Path, err)
	}
	res := Result{Entries: make([]Entry, 0, min(len(ents), r.opts.MaxMatches))}
	for _, e := range ents {
		if len(res.Entries) == r.opts.MaxMatches {
			res.Truncated = true
			break
		}
		ent := Entry{Name: e.Name(), Type: entryType(e.Type())}
		if fi, err := e.Info(); err == nil && ent.Type == "file" {
			ent.Size = fi.Size()
		}
		res.Entries = append(res.Entries, ent)
	}
	return res, nil
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// fsPath turns a root-relative OS path into an io/fs path.
func fsPath(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.ToSlash(rel)
}
