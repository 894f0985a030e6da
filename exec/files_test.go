package exec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/policy"
)

// fileEnv is a project (read and write root) with a protected directory
// inside, and a directory outside every root.
type fileEnv struct {
	proj, outside, protected string
}

func newFileEnv(t *testing.T) fileEnv {
	t.Helper()
	e := fileEnv{proj: realDir(t), outside: realDir(t)}
	e.protected = filepath.Join(e.proj, ".sessions")
	writeFile(t, filepath.Join(e.protected, "scope.yml"), "paths: {}\n", 0o600)
	writeFile(t, filepath.Join(e.proj, "a.txt"), "one\ntwo\nthree\n", 0o644)
	writeFile(t, filepath.Join(e.outside, "secret"), "s3cret\n", 0o644)
	return e
}

func (e fileEnv) runner(t *testing.T, c checker) *Runner {
	return newRunner(t, Options{Checker: c, ReadRoots: []string{e.proj}, WriteRoots: []string{e.proj},
		Protected: []string{e.protected}, MaxRead: 64})
}

func TestReadFile(t *testing.T) {
	e := newFileEnv(t)
	writeFile(t, filepath.Join(e.proj, "big.txt"), strings.Repeat("0123456789\n", 20), 0o644)
	r := e.runner(t, checker{})
	tests := []struct {
		name    string
		args    policy.ReadFileArgs
		want    string
		trunc   bool
		wantErr error
	}{
		{"whole", policy.ReadFileArgs{Path: "a.txt"}, "one\ntwo\nthree\n", false, nil},
		{"absolute", policy.ReadFileArgs{Path: filepath.Join(e.proj, "a.txt")}, "one\ntwo\nthree\n", false, nil},
		{"offset", policy.ReadFileArgs{Path: "a.txt", Offset: ptr(2)}, "two\nthree\n", false, nil},
		{"offset and limit", policy.ReadFileArgs{Path: "a.txt", Offset: ptr(2), Limit: ptr(1)}, "two\n", false, nil},
		{"limit zero", policy.ReadFileArgs{Path: "a.txt", Limit: ptr(0)}, "", false, nil},
		{"past the end", policy.ReadFileArgs{Path: "a.txt", Offset: ptr(9)}, "", false, nil},
		{"size cap", policy.ReadFileArgs{Path: "big.txt"}, strings.Repeat("0123456789\n", 20)[:64], true, nil},
		{"negative offset", policy.ReadFileArgs{Path: "a.txt", Offset: ptr(-1)}, "", false, ErrInvalidArgs},
		{"outside the roots", policy.ReadFileArgs{Path: filepath.Join(e.outside, "secret")}, "", false, ErrNotInRoots},
		{"dot-dot outside", policy.ReadFileArgs{Path: "../" + filepath.Base(e.outside) + "/secret"}, "", false, ErrDenied},
		{"directory", policy.ReadFileArgs{Path: "."}, "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolReadFile, tt.args, e.proj)
			if tt.name == "directory" {
				if err == nil {
					t.Fatal("reading a directory succeeded")
				}
				return
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Content == nil || *res.Content != tt.want || res.Truncated != tt.trunc {
				t.Fatalf("content %q truncated %v", deref(res.Content), res.Truncated)
			}
			if tt.trunc && !strings.Contains(res.Stderr, "cut at 64 bytes") {
				t.Errorf("stderr %q does not state the cap", res.Stderr)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestFileToolsRefuseCheckerDenial(t *testing.T) {
	e := newFileEnv(t)
	r := e.runner(t, checker{path: denyBelow(e.proj)})
	calls := []struct {
		tool string
		args any
	}{
		{policy.ToolReadFile, policy.ReadFileArgs{Path: "a.txt"}},
		{policy.ToolWriteFile, policy.WriteFileArgs{Path: "b.txt", Content: ptr("x")}},
		{policy.ToolEditFile, policy.EditFileArgs{Path: "a.txt", OldString: ptr("one"), NewString: ptr("1")}},
		{policy.ToolListDir, policy.ListDirArgs{Path: "."}},
		{policy.ToolGlob, policy.GlobArgs{Pattern: "*"}},
		{policy.ToolGrep, policy.GrepArgs{Pattern: "one"}},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			_, err := run(t, r, c.tool, c.args, e.proj)
			var de *DeniedError
			if !errors.As(err, &de) || len(de.Violations) == 0 {
				t.Fatalf("err %v, want a DeniedError", err)
			}
		})
	}
	if exists(filepath.Join(e.proj, "b.txt")) {
		t.Error("b.txt was written")
	}
}

func TestWriteFile(t *testing.T) {
	e := newFileEnv(t)
	writeFile(t, filepath.Join(e.proj, "private"), "old", 0o600)
	if err := os.Link(filepath.Join(e.proj, "a.txt"), filepath.Join(e.proj, "a.link")); err != nil {
		t.Fatal(err)
	}
	r := e.runner(t, checker{})
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	tests := []struct {
		name    string
		path    string
		mode    os.FileMode
		wantErr error
	}{
		{"new file in new directories", "x/y/new.txt", 0o644 &^ os.FileMode(umask), nil},
		{"overwrite keeps mode", "private", 0o600, nil},
		{"protected root", filepath.Join(e.protected, "scope.yml"), 0, ErrProtected},
		{"new file in protected root", ".sessions/new", 0, ErrProtected},
		{"outside the roots", filepath.Join(e.outside, "f"), 0, ErrNotInRoots},
		{"hard-linked file", "a.link", 0, ErrHardLink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolWriteFile, policy.WriteFileArgs{Path: tt.path, Content: ptr("hello\n")}, e.proj)
			full := tt.path
			if !filepath.IsAbs(full) {
				full = filepath.Join(e.proj, full)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				if b, _ := os.ReadFile(full); string(b) == "hello\n" {
					t.Fatal("the file was written")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.BytesWritten == nil || *res.BytesWritten != 6 {
				t.Errorf("bytes written %v", res.BytesWritten)
			}
			fi, err := os.Stat(full)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(full); string(b) != "hello\n" || fi.Mode().Perm() != tt.mode {
				t.Errorf("content %q mode %v, want mode %v", b, fi.Mode().Perm(), tt.mode)
			}
			ents, _ := os.ReadDir(filepath.Dir(full))
			for _, ent := range ents {
				if atomicfile.IsTemp(ent.Name()) {
					t.Errorf("temporary file %s left behind", ent.Name())
				}
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(e.proj, "x")); err != nil || fi.Mode().Perm() != 0o755&^os.FileMode(umask) {
		t.Errorf("new directory: %v %v", fi, err)
	}
}

func TestEditFile(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		all      bool
		want     string
		n        int
		wantErr  error
		wantText string
	}{
		{"single", "two", "2", false, "one\n2\ntwo-x\n", 0, ErrAmbiguous, "old_string occurs 2 times; give more context or set replace_all"},
		{"unique", "one", "1", false, "1\ntwo\ntwo-x\n", 1, nil, ""},
		{"replace all", "two", "2", true, "one\n2\n2-x\n", 2, nil, ""},
		{"not found", "zzz", "y", false, "", 0, ErrNoMatch, "old_string not found"},
		{"empty old", "", "y", false, "", 0, ErrInvalidArgs, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFileEnv(t)
			writeFile(t, filepath.Join(e.proj, "e.txt"), "one\ntwo\ntwo-x\n", 0o640)
			r := e.runner(t, checker{})
			res, err := run(t, r, policy.ToolEditFile, policy.EditFileArgs{Path: "e.txt", OldString: &tt.old, NewString: &tt.new, ReplaceAll: tt.all}, e.proj)
			b, _ := os.ReadFile(filepath.Join(e.proj, "e.txt"))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("err %v, want %v %q", err, tt.wantErr, tt.wantText)
				}
				if string(b) != "one\ntwo\ntwo-x\n" {
					t.Fatalf("file changed: %q", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want || res.Replacements == nil || *res.Replacements != tt.n {
				t.Fatalf("content %q replacements %v", b, res.Replacements)
			}
			if fi, _ := os.Stat(filepath.Join(e.proj, "e.txt")); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v", fi.Mode().Perm())
			}
		})
	}
}

func TestListDir(t *testing.T) {
	e := newFileEnv(t)
	if err := os.Symlink("a.txt", filepath.Join(e.proj, "l")); err != nil {
		t.Fatal(err)
	}
	r := e.runner(t, checker{})
	res, err := run(t, r, policy.ToolListDir, policy.ListDirArgs{Path: e.proj}, "/")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{".sessions", "dir", 0}, {"a.txt", "file", 14}, {"l", "symlink", 0}}
	if len(res.Entries) != len(want) {
		t.Fatalf("entries %+v", res.Entries)
	}
	for i := range want {
		if res.Entries[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, res.Entries[i], want[i])
		}
	}
}

func TestGlob(t *testing.T) {
	e := newFileEnv(t)
	for _, f := range []string{"src/a.go", "src/b/c.go", "src/b/d.txt", ".git/x.go"} {
		writeFile(t, filepath.Join(e.proj, f), "package x\n", 0o644)
	}
	r := e.runner(t, checker{path: denyBelow(filepath.Join(e.proj, ".git"))})
	tests := []struct {
		name string
		args policy.GlobArgs
		want []string
	}{
		{"recursive", policy.GlobArgs{Pattern: "**/*.go"}, []string{"src/a.go", "src/b/c.go"}},
		{"below path", policy.GlobArgs{Pattern: "*.go", Path: "src/b"}, []string{"src/b/c.go"}},
		{"absolute pattern", policy.GlobArgs{Pattern: filepath.Join(e.proj, "src", "*.go")}, []string{"src/a.go"}},
		{"no match", policy.GlobArgs{Pattern: "*.rs"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolGlob, tt.args, e.proj)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(e.proj, w))
			}
			if strings.Join(res.Matches, ",") != strings.Join(want, ",") {
				t.Errorf("matches %v, want %v", res.Matches, want)
			}
		})
	}
}

func TestGrep(t *testing.T) {
	e := newFileEnv(t)
	writeFile(t, filepath.Join(e.proj, "src", "a.go"), "package a\nfunc Foo() {}\n", 0o644)
	writeFile(t, filepath.Join(e.proj, "src", "b.txt"), "Foo here\n", 0o644)
	writeFile(t, filepath.Join(e.proj, ".git", "c.go"), "func Foo\n", 0o644)
	writeFile(t, filepath.Join(e.proj, "bin"), "Foo\x00\n", 0o644)
	r := e.runner(t, checker{path: denyBelow(filepath.Join(e.proj, ".git"))})
	tests := []struct {
		name string
		args policy.GrepArgs
		want []string
	}{
		{"everywhere", policy.GrepArgs{Pattern: "Foo"}, []string{"src/a.go:2:func Foo() {}", "src/b.txt:1:Foo here"}},
		{"include", policy.GrepArgs{Pattern: "Fo+", Include: "*.go"}, []string{"src/a.go:2:func Foo() {}"}},
		{"one file", policy.GrepArgs{Pattern: "^package", Path: "src/a.go"}, []string{"src/a.go:1:package a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolGrep, tt.args, e.proj)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(e.proj, w))
			}
			if strings.Join(res.Matches, "|") != strings.Join(want, "|") {
				t.Errorf("matches %q, want %q", res.Matches, want)
			}
		})
	}
	if _, err := run(t, r, policy.ToolGrep, policy.GrepArgs{Pattern: "("}, e.proj); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("bad regexp: err %v", err)
	}
}

// A directory that is real when the path is resolved is swapped for a
// symlink to outside right before the action (inside CheckPath, the last
// step before acting): os.Root must refuse to follow it out.
func TestSymlinkSwapRace(t *testing.T) {
	tests := []struct {
		tool string
		args any
	}{
		{policy.ToolReadFile, policy.ReadFileArgs{Path: "sub/secret"}},
		{policy.ToolWriteFile, policy.WriteFileArgs{Path: "sub/secret", Content: ptr("pwned")}},
		{policy.ToolEditFile, policy.EditFileArgs{Path: "sub/secret", OldString: ptr("s3cret"), NewString: ptr("pwned")}},
		{policy.ToolListDir, policy.ListDirArgs{Path: "sub"}},
		{policy.ToolGrep, policy.GrepArgs{Pattern: "s3cret", Path: "sub"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			e := newFileEnv(t)
			sub := filepath.Join(e.proj, "sub")
			writeFile(t, filepath.Join(sub, "secret"), "harmless\n", 0o644)
			swap := func(string, policy.Access, string) []policy.Violation {
				if fi, err := os.Lstat(sub); err == nil && fi.IsDir() {
					if err := os.Rename(sub, sub+".old"); err != nil {
						t.Error(err)
					}
					if err := os.Symlink(e.outside, sub); err != nil {
						t.Error(err)
					}
				}
				return nil
			}
			r := e.runner(t, checker{path: swap})
			res, err := run(t, r, tt.tool, tt.args, e.proj)
			if fi, lerr := os.Lstat(sub); lerr != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatal("the swap did not happen")
			}
			if err == nil {
				t.Fatalf("the call followed the swapped symlink: %+v", res)
			}
			if b, _ := os.ReadFile(filepath.Join(e.outside, "secret")); string(b) != "s3cret\n" {
				t.Errorf("outside file changed: %q", b)
			}
			if strings.Contains(deref(res.Content), "s3cret") || len(res.Entries) > 0 || len(res.Matches) > 0 {
				t.Errorf("outside content leaked: %+v", res)
			}
		})
	}
}

// A write root that is one file (a scope naming a single file, new or
// existing) is written through its directory, that name only, never
// through a symlink put in its place.
func TestWriteFileRootIsTheFile(t *testing.T) {
	dir, outside := realDir(t), realDir(t)
	newFile, oldFile, link := filepath.Join(dir, "new.txt"), filepath.Join(dir, "old.txt"), filepath.Join(dir, "link")
	writeFile(t, oldFile, "old", 0o600)
	writeFile(t, filepath.Join(outside, "target"), "keep", 0o600)
	if err := os.Symlink(filepath.Join(outside, "target"), link); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Options{Checker: checker{}, WriteRoots: []string{newFile, oldFile, link}})
	for _, p := range []string{newFile, oldFile} {
		if _, err := run(t, r, policy.ToolWriteFile, policy.WriteFileArgs{Path: p, Content: ptr("hello\n")}, dir); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
		if got, _ := os.ReadFile(p); string(got) != "hello\n" {
			t.Fatalf("%s holds %q", p, got)
		}
	}
	if _, err := run(t, r, policy.ToolWriteFile, policy.WriteFileArgs{Path: filepath.Join(dir, "other.txt"), Content: ptr("x")}, dir); !errors.Is(err, ErrNotInRoots) {
		t.Fatalf("a sibling: %v, want ErrNotInRoots", err)
	}
	if _, err := run(t, r, policy.ToolWriteFile, policy.WriteFileArgs{Path: link, Content: ptr("x")}, dir); err == nil {
		t.Fatal("wrote through a symlink")
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "target")); string(got) != "keep" {
		t.Fatalf("the symlink's target holds %q", got)
	}
}
