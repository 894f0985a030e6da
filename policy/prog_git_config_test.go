package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestGitConfigRefs(t *testing.T) {
	const file, top, home = "/p/.git/config", "/p", "/home/u"
	for _, tc := range []struct {
		name, in string
		want     []gitConfigRef
		err      string
	}{
		{name: "nothing named", in: "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n"},
		{name: "include relative to the file", in: "[include]\n\tpath = extra.cfg\n",
			want: []gitConfigRef{{"include.path", "/p/.git/extra.cfg"}}},
		{name: "includeIf, quoted, home", in: "[includeIf \"gitdir:~/w/\"]\n  path = \"~/w.cfg\" ; comment\n",
			want: []gitConfigRef{{"includeif.path", "/home/u/w.cfg"}}},
		{name: "hooksPath relative to the working tree, any case", in: "[Core]\n\tHooksPath = tools/hooks\n",
			want: []gitConfigRef{{"core.hookspath", "/p/tools/hooks"}}},
		{name: "fsmonitor boolean", in: "[core]\nfsmonitor = true\n"},
		{name: "fsmonitor program", in: "[core]\nfsmonitor = ./fsmon.sh # mine\n",
			want: []gitConfigRef{{"core.fsmonitor", "/p/fsmon.sh"}}},
		{name: "key on the header line", in: "[core] hooksPath = /abs/hooks\n",
			want: []gitConfigRef{{"core.hookspath", "/abs/hooks"}}},
		{name: "a subsection of core counts as core", in: "[core.x]\nhooksPath = h\n",
			want: []gitConfigRef{{"core.hookspath", "/p/h"}}},
		{name: "continued value", in: "[include]\npath = a\\\n", err: "continued"},
		{name: "header without end", in: "[include\npath = a\n", err: "without ]"},
		{name: "prefix path", in: "[include]\npath = %(prefix)/etc/x\n", err: "not followed"},
		{name: "too big", in: strings.Repeat("#", maxGitConfig+1), err: "larger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gitConfigRefs([]byte(tc.in), file, top, home)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func FuzzGitConfigRefs(f *testing.F) {
	f.Add("[include]\n\tpath = extra\n")
	f.Add("[core] hooksPath = \"a\\\"b\" ; c\n[includeIf \"x\"]\npath=~/y\n")
	f.Add("[core]\nfsmonitor = ./m\n")
	f.Fuzz(func(t *testing.T, in string) {
		refs, err := gitConfigRefs([]byte(in), "/p/.git/config", "/p", "/h")
		if err != nil {
			return
		}
		for _, r := range refs {
			if !filepath.IsAbs(r.path) || filepath.Clean(r.path) != r.path {
				t.Fatalf("%q gives the path %q, not absolute and clean", in, r.path)
			}
		}
	})
}

// TestGitOnReadOnlyRepository: in a scope that writes the project without
// denying **/.git/**, git is refused when the caller runs it, and in a
// confined call runs only where the view says the repository is read-only
// and its configuration names nothing the scope lets programs write.
func TestGitOnReadOnlyRepository(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "proj")
	for _, f := range []string{".git/HEAD", ".git/config", "src/a.go"} {
		writeTestFile(t, filepath.Join(proj, f), "[core]\n")
	}
	for _, d := range []string{".git/objects", ".git/refs"} {
		mkdirTest(t, filepath.Join(proj, d))
	}
	sc, err := Compile(Document{
		Paths: PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}},
		Shell: ShellRules{Allow: []string{"git"}},
	}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(proj, ".git")
	ok := func(string) error { return nil }
	for _, tc := range []struct {
		name     string
		ex       Execution
		readOnly func(string) error
		config   string
		allowed  bool
		says     string
	}{
		{name: "external", ex: ExecutionExternal, readOnly: ok, says: "deny **/.git/**"},
		{name: "confined, no view", ex: ExecutionConfined, says: "no private view"},
		{name: "confined, read-only", ex: ExecutionConfined, readOnly: ok, allowed: true, says: "git runs with " + gitDir + " read-only"},
		{name: "confined, changed", ex: ExecutionConfined, readOnly: func(string) error { return errors.New("config changed at noon") }, says: "config changed at noon"},
		{name: "hooks in the project", ex: ExecutionConfined, readOnly: ok, config: "[core]\n\thooksPath = .husky\n", says: "core.hookspath names " + filepath.Join(proj, ".husky")},
		{name: "include in the project", ex: ExecutionConfined, readOnly: ok, config: "[include]\n\tpath = ../src/x.cfg\n", says: "include.path names " + filepath.Join(proj, "src/x.cfg")},
		{name: "include outside the scope", ex: ExecutionConfined, readOnly: ok, config: "[include]\n\tpath = /etc/gitconfig.d/x\n", allowed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeTestFile(t, filepath.Join(gitDir, "config"), "[core]\n"+tc.config)
			env := Env{Execution: tc.ex, ReadOnlyRepo: tc.readOnly}
			d := sc.Decide(Call{Tool: ToolShell, Args: []byte(`{"command":"git log"}`), Cwd: proj}, env)
			if d.Allowed != tc.allowed || !strings.Contains(d.Message, tc.says) {
				t.Fatalf("allowed %v (want %v), message %q does not say %q", d.Allowed, tc.allowed, d.Message, tc.says)
			}
		})
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	mkdirTest(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirTest(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
