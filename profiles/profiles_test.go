package profiles

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestBuiltinsParseAndCompile(t *testing.T) {
	var l Loader
	infos, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	if want := []string{"coding", "research", "restricted"}; !slices.Equal(names, want) {
		t.Fatalf("built-ins = %v, want %v", names, want)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			doc, err := l.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			doc, _ = ExpandProjectRoot(doc, "/home/u/proj")
			if _, err := policy.Compile(doc, policy.Env{Home: "/home/u"}); err != nil {
				t.Fatalf("compile %s: %v", name, err)
			}
			if len(doc.Paths.Deny) == 0 {
				t.Errorf("%s has no deny list", name)
			}
			// No entry is a plain word that YAML readers take for a
			// boolean, a number or null (what scope show warns of).
			data, _, _ := l.Raw(name)
			for _, a := range yamlmsg.AmbiguousEntries(data) {
				t.Errorf("%s: %s", name, a)
			}
		})
	}
	restricted, _ := l.Load("restricted")
	if len(restricted.Shell.Allow) != 0 || len(restricted.Paths.Write) != 0 {
		t.Errorf("restricted allows shell or writes: %+v", restricted)
	}
	research, _ := l.Load("research")
	if len(research.Paths.Write) != 0 {
		t.Errorf("research allows writes: %+v", research.Paths.Write)
	}
}

func TestResolve(t *testing.T) {
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "scope-profiles", "coding.yml"), "paths:\n  read: [\"/user/**\"]\n")
	writeFile(t, filepath.Join(cfg, "scope-profiles", "mine.yml"), "paths:\n  write: [\"${project_root}/out/**\"]\n")
	writeFile(t, filepath.Join(cfg, "scope-profiles", "broken.yml"), "paths:\n  nope: 1\n")
	writeFile(t, filepath.Join(cfg, "presets.yml"), `
inline:
  paths:
    read: ["/inline/**"]
both:
  scope_profile: mine
  paths:
    read: ["/ignored/**"]
ghost:
  scope_profile: missing
`)
	l := Loader{ConfigDir: cfg}
	tests := []struct {
		name      string
		req       Request
		read      []string
		write     []string
		source    string
		warnings  int
		warnMatch string
		err       error
		errMatch  string
	}{
		{name: "user profile overrides built-in", req: Request{Preset: "executor"}, read: []string{"/user/**"}, source: "profile coding"},
		{name: "explicit profile beats preset", req: Request{Preset: "executor", Profile: "research"}, read: []string{"/**"}, source: "profile research"},
		{name: "worktrees", req: Request{Worktrees: []string{"/w/a[1]", "/w/b/"}},
			read: []string{`/w/a[[]1]/**`, "/w/b/**"}, write: []string{`/w/a[[]1]/**`, "/w/b/**"}, source: "worktrees"},
		{name: "inline preset scope", req: Request{Preset: "inline"}, read: []string{"/inline/**"}, source: "preset inline"},
		{name: "profile wins over inline", req: Request{Preset: "both", ProjectRoot: "/p"}, write: []string{"/p/out/**"}, source: "profile mine"},
		{name: "project root dropped", req: Request{Profile: "mine"}, source: "profile mine", warnings: 1, warnMatch: "no project root"},
		{name: "missing profile", req: Request{Profile: "nope"}, err: ErrNotFound, errMatch: `"nope"`},
		{name: "preset naming missing profile", req: Request{Preset: "ghost"}, err: ErrNotFound, errMatch: `"missing"`},
		{name: "invalid profile", req: Request{Profile: "broken"}, err: ErrInvalid, errMatch: "invalid scope"},
		{name: "unknown preset", req: Request{Preset: "who"}, err: ErrNotFound, errMatch: `"who"`},
		{name: "bad profile name", req: Request{Profile: "../x"}, err: ErrInvalidName, errMatch: "invalid profile name"},
		{name: "profile with worktrees", req: Request{Profile: "coding", Worktrees: []string{"/w/a"}}, err: ErrConflict, errMatch: "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := l.Resolve(tt.req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want %v mentioning %q", err, tt.err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tt.source {
				t.Errorf("source = %q, want %q", res.Source, tt.source)
			}
			if !slices.Equal(res.Scope.Paths.Read, tt.read) {
				t.Errorf("read = %q, want %q", res.Scope.Paths.Read, tt.read)
			}
			if !slices.Equal(res.Scope.Paths.Write, tt.write) {
				t.Errorf("write = %q, want %q", res.Scope.Paths.Write, tt.write)
			}
			if len(res.Warnings) != tt.warnings {
				t.Fatalf("warnings = %q, want %d", res.Warnings, tt.warnings)
			}
			if tt.warnMatch != "" && !strings.Contains(res.Warnings[0], tt.warnMatch) {
				t.Errorf("warning %q does not mention %q", res.Warnings[0], tt.warnMatch)
			}
		})
	}
}

func TestFindProjectRoot(t *testing.T) {
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "proj", "go.mod"), "module x\n")
	deep := filepath.Join(base, "proj", "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		start string
		want  string
		ok    bool
	}{
		{name: "from deep inside", start: deep, want: filepath.Join(base, "proj"), ok: true},
		{name: "at the root itself", start: filepath.Join(base, "proj"), want: filepath.Join(base, "proj"), ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FindProjectRoot(tt.start)
			if got != tt.want || ok != tt.ok {
				t.Errorf("FindProjectRoot(%q) = %q, %v; want %q, %v", tt.start, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParsePresetsErrors(t *testing.T) {
	tests := []struct{ name, in string }{
		{name: "unknown key", in: "x:\n  scope_profle: coding\n"},
		{name: "duplicate preset", in: "x:\n  scope_profile: a\nx:\n  scope_profile: b\n"},
		{name: "bad profile name", in: "x:\n  scope_profile: ../etc\n"},
		{name: "bad preset name", in: "\"a/b\":\n  scope_profile: coding\n"},
		{name: "not a mapping", in: "- a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParsePresets([]byte(tt.in)); err == nil {
				t.Errorf("ParsePresets(%q) succeeded", tt.in)
			}
		})
	}
}

func FuzzParsePresets(f *testing.F) {
	for _, s := range []string{"", "executor:\n  scope_profile: coding\n", "x:\n  paths:\n    read: [\"/a/**\"]\n", "x: 1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		presets, err := ParsePresets([]byte(in))
		if err != nil {
			return
		}
		for name, p := range presets {
			if !ValidName(name) {
				t.Errorf("accepted invalid preset name %q", name)
			}
			if p.ScopeProfile != "" && !ValidName(p.ScopeProfile) {
				t.Errorf("accepted invalid profile name %q", p.ScopeProfile)
			}
		}
	})
}

func FuzzExpandProjectRoot(f *testing.F) {
	f.Add("${project_root}/**", "/home/u/p[1]")
	f.Add("/etc/**", "")
	f.Fuzz(func(t *testing.T, pat, root string) {
		doc := policy.Document{Paths: policy.PathRules{Read: []string{pat}}}
		got, dropped := ExpandProjectRoot(doc, root)
		if len(got.Paths.Read)+len(dropped) != 1 {
			t.Fatalf("lost a pattern: %q, dropped %q", got.Paths.Read, dropped)
		}
		for _, p := range got.Paths.Read {
			if strings.Contains(p, ProjectRootVar) && !strings.Contains(root, ProjectRootVar) {
				t.Errorf("unexpanded %q", p)
			}
		}
	})
}

// projectile's project roots end in a slash; the patterns made from them
// must not hold a doubled one.
func TestExpandProjectRootTrailingSlash(t *testing.T) {
	doc := policy.Document{Paths: policy.PathRules{Write: []string{"${project_root}/**"}}}
	got, _ := ExpandProjectRoot(doc, "/home/u/proj/")
	if got.Paths.Write[0] != "/home/u/proj/**" {
		t.Errorf("got %q", got.Paths.Write[0])
	}
}

// Every built-in profile and every worktree scope denies the credential
// stores of CredentialDeny, and its own copy of the list is not needed.
func TestBuiltinsDenyCredentials(t *testing.T) {
	l := Loader{}
	for _, name := range []string{"coding", "research", "restricted"} {
		doc, err := l.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range CredentialDeny() {
			if !slices.Contains(doc.Paths.Deny, c) {
				t.Errorf("%s does not deny %s", name, c)
			}
		}
	}
	w := WorktreeScope([]string{"/w"})
	if !slices.Contains(w.Paths.Deny, "**/.git-credentials") {
		t.Errorf("worktree scope deny %q", w.Paths.Deny)
	}
	home := "/home/u"
	sc, err := policy.Compile(WorktreeScope([]string{home}), policy.Env{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{home + "/.git-credentials", home + "/.config/gh/hosts.yml", home + "/.docker/config.json",
		home + "/.kube/config", home + "/.npmrc", home + "/.pypirc", home + "/.cargo/credentials.toml", home + "/.bash_history",
		home + "/.zsh_history"} {
		args, _ := json.Marshal(map[string]string{"path": p})
		if d := sc.Decide(policy.Call{Tool: policy.ToolReadFile, Args: args, Cwd: home}, policy.Env{Home: home}); d.Allowed {
			t.Errorf("read_file %s is allowed", p)
		}
	}
}

// TestBuiltinsNetwork checks the network of the built-in profiles: coding
// reaches its toolchains' registries and forges on 443 and nothing else;
// research and restricted reach nothing.
func TestBuiltinsNetwork(t *testing.T) {
	var l Loader
	net := func(name string) policy.Network {
		doc, err := l.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ = ExpandProjectRoot(doc, "/home/u/proj")
		sc, err := policy.Compile(doc, policy.Env{Home: "/home/u"})
		if err != nil {
			t.Fatal(err)
		}
		return sc.Network()
	}
	coding := net("coding")
	if coding.Mode() != policy.NetworkList {
		t.Fatalf("coding: mode %s", coding.Mode())
	}
	for _, h := range []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org", "pypi.org", "files.pythonhosted.org",
		"crates.io", "static.crates.io", "index.crates.io", "github.com", "codeload.github.com", "raw.githubusercontent.com",
		"objects.githubusercontent.com"} {
		if ok, _ := coding.AllowHost(h, 443); !ok {
			t.Errorf("coding refuses %s:443", h)
		}
		if ok, _ := coding.AllowHost(h, 80); ok {
			t.Errorf("coding allows %s:80", h)
		}
	}
	for _, h := range []string{"evil.example", "localhost", "169.254.169.254", "gist.github.com", "pastebin.com"} {
		if ok, rule := coding.AllowHost(h, 443); ok {
			t.Errorf("coding allows %s:443 by %s", h, rule)
		}
	}
	for _, name := range []string{"research", "restricted"} {
		if m := net(name).Mode(); m != policy.NetworkNone {
			t.Errorf("%s: network %s, want none", name, m)
		}
	}
}
