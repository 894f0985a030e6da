package policy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/policy"
)

// corpusCase is one case of a policy decision corpus (see the header of
// testdata/corpus/public.yaml).
type corpusCase struct {
	ID     string         `yaml:"id"`
	Source string         `yaml:"source"`
	Scope  yaml.Node      `yaml:"scope"`
	Setup  []string       `yaml:"setup"`
	Call   map[string]any `yaml:"call"`
	Expect string         `yaml:"expect"`
	Why    string         `yaml:"why"`
}

var defaultCorpusScope = policy.Document{
	Paths: policy.PathRules{
		Read:  []string{"/work/proj/**", "/usr/share/doc/**"},
		Write: []string{"/work/proj/**"},
		Deny:  []string{"**/.git/**", "**/.env", "**/node_modules/**", "**/runtime/**"},
	},
	Shell: policy.ShellRules{
		Allow: []string{"ls", "find", "grep", "git", "rg", "cat", "go", "python3"},
		Deny:  []string{"rm -rf", "sudo"},
	},
}

// corpusFiles are the corpora run: the committed ones, and the shared ones
// beside the repository when present.
func corpusFiles(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	shared, _ := filepath.Glob("../../shared/corpus/*.yaml")
	seen := map[string]bool{}
	for _, f := range files {
		seen[filepath.Base(f)] = true
	}
	for _, f := range shared {
		if !seen[filepath.Base(f)] {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no corpus files found")
	}
	return files
}

// confinedCorpusFiles are the corpora decided for confined execution
// (testdata/corpus/confined): the CLI runner decides with check, which is
// external, so they live apart from the files it runs.
func confinedCorpusFiles(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/corpus/confined/*.yaml")
	if len(files) == 0 {
		t.Fatal("no confined corpus files found")
	}
	return files
}

func TestCorpus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the corpus fixture needs git:", err)
	}
	external, confined := corpusFiles(t), confinedCorpusFiles(t)
	for i, file := range append(external, confined...) {
		execution := policy.ExecutionExternal
		if i >= len(external) {
			execution = policy.ExecutionConfined
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []corpusCase
		if err := yaml.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(cases) == 0 {
			t.Fatalf("%s: no cases", file)
		}
		name := filepath.Base(file)
		if execution == policy.ExecutionConfined {
			name = "confined/" + name
		}
		t.Run(name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.ID, func(t *testing.T) {
					t.Parallel()
					runCorpusCase(t, tc, execution)
				})
			}
		})
	}
}

var corpusPathRE = regexp.MustCompile(`(^|[^A-Za-z0-9_.])(/work(/|\b)|/home/dev(/|\b))`)

// rewrite moves the corpus's /work and /home/dev below root, as the
// corpus header says.
func rewrite(s, root string) string {
	return corpusPathRE.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.IndexByte(m, '/')
		return m[:i] + root + m[i:]
	})
}

func runCorpusCase(t *testing.T, tc corpusCase, execution policy.Execution) {
	root := t.TempDir()
	buildFixture(t, root)
	// A setup step that would create a file outside the fixture (such as
	// /tmp/bin/git) creates it below root instead, and the call names it
	// there: no test writes outside its temporary directory.
	moved := map[string]string{}
	for _, step := range tc.Setup {
		step = rewrite(step, root)
		if p := setupTarget(step); filepath.IsAbs(p) && !strings.HasPrefix(p, root+"/") {
			moved[p] = root + "/outside" + p
			step = strings.Replace(step, p, moved[p], 1)
		}
		setupStep(t, step)
	}
	rewrite := func(s, root string) string {
		s = rewrite(s, root)
		for from, to := range moved {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	doc := defaultCorpusScope
	scope := &tc.Scope
	if scope.Kind == yaml.AliasNode {
		scope = scope.Alias
	}
	if scope.Kind == yaml.MappingNode {
		var err error
		out, err := yaml.Marshal(scope)
		if err != nil {
			t.Fatal(err)
		}
		if doc, err = policy.ParseDocument(out); err != nil {
			t.Fatalf("case scope: %v", err)
		}
	}
	doc = rewriteDoc(doc, root)
	home := root + "/home/dev"
	env := policy.Env{
		Execution: execution,
		Home:      home,
		HomeOf: func(name string) (string, bool) {
			if name == "root" {
				return "/root", true
			}
			return "", false
		},
	}
	sc, err := policy.Compile(doc, env)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	call := policy.Call{}
	args := map[string]any{}
	for k, v := range tc.Call {
		switch k {
		case "tool":
			call.Tool, _ = v.(string)
		case "cwd":
			s, _ := v.(string)
			call.Cwd = rewrite(s, root)
		default:
			if s, ok := v.(string); ok {
				v = rewrite(s, root)
			}
			args[k] = v
		}
	}
	if call.Cwd == "" && call.Tool != "shell" {
		call.Cwd = root + "/work/proj"
	}
	call.Args, _ = json.Marshal(args)
	d := sc.Decide(call, env)
	got := "deny"
	if d.Allowed {
		got = "allow"
	}
	if got != tc.Expect {
		t.Errorf("%s: got %s, want %s (%s)\ncall: %s\ndecision: %s: %s", tc.ID, got, tc.Expect, tc.Why, call.Args, d.Reason, d.Message)
	}
	if !d.Allowed && (d.Message == "" || strings.ContainsAny(d.Message, "\n\r")) {
		t.Errorf("%s: denial message must be one non-empty line: %q", tc.ID, d.Message)
	}
}

func rewriteDoc(d policy.Document, root string) policy.Document {
	rw := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = rewrite(s, root)
		}
		return out
	}
	d.Paths.Read, d.Paths.Write, d.Paths.Deny = rw(d.Paths.Read), rw(d.Paths.Write), rw(d.Paths.Deny)
	return d
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func buildFixture(t *testing.T, root string) {
	t.Helper()
	p := root + "/work/proj"
	files := map[string]string{
		"README.md": "# proj\n", "go.mod": "module example.com/proj\n\ngo 1.22\n",
		"src/main.go": "package main\n\nfunc main() {}\n", "src/runtime.go": "package main\n",
		"cmd/app/main.go": "package main\n\nfunc main() {}\n", ".env": "API_KEY=secret\n", ".env.example": "API_KEY=\n",
		".gitignore": ".env\nbuild/\n", "services/api/.env": "DB_PASSWORD=secret\n",
		"node_modules/lodash/package.json": "{\"name\":\"lodash\"}\n", "internal/runtime/state.json": "{}\n",
		"docs/security.md": "# security\n", "vendor/x.tar": "not really a tar\n",
	}
	for rel, c := range files {
		writeFile(t, filepath.Join(p, rel), c, 0o644)
	}
	for _, d := range []string{"build", "scripts"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{{"git", "init", "-q", p}, {"git", "-C", p, "remote", "add", "origin", "https://example.invalid/proj.git"}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	writeFile(t, root+"/home/dev/.ssh/id_ed25519", "PRIVATE KEY\n", 0o600)
	writeFile(t, root+"/home/dev/.bashrc", "# bashrc\n", 0o644)
}

// setupTarget is the path a setup step creates.
func setupTarget(step string) string {
	step = strings.TrimSpace(step)
	_, rest, _ := strings.Cut(step, " ")
	for _, sep := range []string{": ", " -> "} {
		if p, _, ok := strings.Cut(rest, sep); ok {
			return strings.TrimSpace(p)
		}
	}
	return strings.TrimSpace(rest)
}

func setupStep(t *testing.T, step string) {
	t.Helper()
	step = strings.TrimSpace(step)
	switch {
	case strings.HasPrefix(step, "mkdir "):
		if err := os.MkdirAll(strings.TrimSpace(step[6:]), 0o755); err != nil {
			t.Fatal(err)
		}
	case strings.HasPrefix(step, "file "), strings.HasPrefix(step, "exec "):
		path, content, _ := strings.Cut(step[5:], ": ")
		mode := os.FileMode(0o644)
		if strings.HasPrefix(step, "exec ") {
			mode = 0o755
		}
		writeFile(t, strings.TrimSpace(path), strings.ReplaceAll(content, `\n`, "\n"), mode)
	case strings.HasPrefix(step, "symlink "), strings.HasPrefix(step, "hardlink "):
		kind, rest, _ := strings.Cut(step, " ")
		link, target, _ := strings.Cut(rest, " -> ")
		link, target = strings.TrimSpace(link), strings.TrimSpace(target)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err == nil {
			if fi.IsDir() {
				os.RemoveAll(link)
			} else {
				os.Remove(link)
			}
		}
		var err error
		if kind == "symlink" {
			err = os.Symlink(target, link)
		} else {
			err = os.Link(target, link)
		}
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown setup step %q", step)
	}
}
