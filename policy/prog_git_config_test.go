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
		{name: "programs named by path in command lines", in: "[diff \"bin\"]\n\ttextconv = tools/tc.sh --x\n[alias]\n\tst = \"!sh -c '. ./env.sh'\"\n[core]\n\tpager = less -R\n\tsshCommand = ssh -i ~/.ssh/k\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n[remote \"o\"]\n\turl = ../other\n\tproxy = http://p:3128/\n",
			want: []gitConfigRef{{"diff.textconv", "/p/tools/tc.sh"}, {"alias.st", "/p/env.sh"}, {"core.sshcommand", "/home/u/.ssh/k"}}},
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
		{name: "hooks in the project", ex: ExecutionConfined, readOnly: ok, config: "[core]\n\thooksPath = .husky\n", says: "would run or read " + filepath.Join(proj, ".husky") + ", which its configuration names (core.hookspath)"},
		{name: "include in the project", ex: ExecutionConfined, readOnly: ok, config: "[include]\n\tpath = ../src/x.cfg\n", says: "would run or read " + filepath.Join(proj, "src/x.cfg") + ", which its configuration names (include.path)"},
		{name: "include outside the scope", ex: ExecutionConfined, readOnly: ok, config: "[include]\n\tpath = /etc/gitconfig.d/x\n", allowed: true},
		{name: "textconv in the project, external", ex: ExecutionExternal, config: "[diff \"bin\"]\n\ttextconv = ./src/tc.sh\n", says: "would run or read " + filepath.Join(proj, "src/tc.sh")},
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

// TestGitFindsRepositoryAsGit: the repository a git command is checked
// against is the one git itself finds: from the directory the kernel
// resolves (a symbolic link to a bare repository's subdirectory), past a
// .git directory that is no repository, and a HEAD with a commondir file.
func TestGitFindsRepositoryAsGit(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside") // read-only to the scope
	for _, f := range []string{".git/HEAD", ".git/config"} {
		writeTestFile(t, filepath.Join(outside, f), "[core]\n")
	}
	for _, d := range []string{".git/objects", ".git/refs"} {
		mkdirTest(t, filepath.Join(outside, d))
	}
	// A bare repository in the project (writable), with a subdirectory.
	for _, f := range []string{"bare/HEAD", "bare/config", "bare/info/exclude"} {
		writeTestFile(t, filepath.Join(outside, "w", f), "")
	}
	for _, d := range []string{"bare/objects", "bare/refs"} {
		mkdirTest(t, filepath.Join(outside, "w", d))
	}
	w := filepath.Join(outside, "w")
	// An empty .git below the bare one: git passes over it.
	mkdirTest(t, filepath.Join(w, "bare", ".git"))
	// A HEAD with a commondir, no objects or refs.
	writeTestFile(t, filepath.Join(w, "d", "HEAD"), "ref: refs/heads/main\n")
	writeTestFile(t, filepath.Join(w, "d", "commondir"), "../bare\n")
	mkdirTest(t, filepath.Join(w, "plain"))
	if err := os.Symlink(filepath.Join(w, "bare", "info"), filepath.Join(w, "plain", "l")); err != nil {
		t.Fatal(err)
	}
	sc, err := Compile(Document{
		Paths: PathRules{Read: []string{outside + "/**"}, Write: []string{w + "/**"}},
		Shell: ShellRules{Allow: []string{"git"}},
	}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, cwd, cmd string }{
		{"bare repository", filepath.Join(w, "bare"), "git log"},
		{"past an empty .git", filepath.Join(w, "bare"), "git -C .git/.. log"},
		{"through a link", filepath.Join(w, "plain"), "cd l && git log"},
		{"-C through a link", filepath.Join(w, "plain"), "git -C l log"},
		{"HEAD and commondir", filepath.Join(w, "d"), "git log"},
	} {
		// Confined, only the empty .git counts as read-only, as the view
		// (which protects every .git it finds) would have it.
		confined := Env{Execution: ExecutionConfined, ReadOnlyRepo: func(d string) error {
			if d == filepath.Join(w, "bare", ".git") {
				return nil
			}
			return errors.New("not one the view protects")
		}}
		for _, env := range []Env{{}, confined} {
			t.Run(tc.name+"/"+string(env.execution()), func(t *testing.T) {
				d := sc.Decide(Call{Tool: ToolShell, Args: []byte(`{"command":"` + tc.cmd + `"}`), Cwd: tc.cwd}, env)
				if d.Allowed || !strings.Contains(d.Message, "which tool calls can write") {
					t.Fatalf("allowed %v, message %q: want git refused for a repository tool calls can write", d.Allowed, d.Message)
				}
			})
		}
	}
	// The repository outside, which the scope does not let calls write.
	d := sc.Decide(Call{Tool: ToolShell, Args: []byte(`{"command":"git log"}`), Cwd: filepath.Join(w, "plain")}, Env{})
	if !d.Allowed {
		t.Fatalf("git below a read-only repository: %s", d.Message)
	}
}

// TestGoBuildRunsGit: go build and go install stamp what git says of the
// repository, running git there: in a repository tool calls can write,
// that is refused unless -buildvcs=false.
func TestGoBuildRunsGit(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "proj")
	for _, f := range []string{".git/HEAD", ".git/config", "go.mod", "main.go"} {
		writeTestFile(t, filepath.Join(proj, f), "")
	}
	for _, d := range []string{".git/objects", ".git/refs"} {
		mkdirTest(t, filepath.Join(proj, d))
	}
	sc, err := Compile(Document{
		Paths: PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}},
		Shell: ShellRules{Allow: []string{"go build", "go install", "go vet"}},
	}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, allowed := range map[string]bool{
		"go build -o out .": false, "go install .": false,
		"go build -buildvcs=false -o out .": true, "go vet ./...": true,
	} {
		d := sc.Decide(Call{Tool: ToolShell, Args: []byte(`{"command":"` + cmd + `"}`), Cwd: proj}, Env{})
		if d.Allowed != allowed {
			t.Errorf("%s: allowed %v, want %v (%s)", cmd, d.Allowed, allowed, d.Message)
		}
	}
}
