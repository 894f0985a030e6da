package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// codingCanary is the secret planted in every credential file of a coding
// session's home directory.
const codingCanary = "CODING-CANARY-5150"

// codingSecrets are the credential files planted in the home directory,
// each in its own format: what no tool call of a coding agent may read.
func codingSecrets() map[string]string {
	return map[string]string{
		".ssh/id_ed25519":      codingCanary + "\n",
		".aws/credentials":     "[default]\naws_secret_access_key = " + codingCanary + "\n",
		".git-credentials":     "https://u:" + codingCanary + "@example.com\n",
		".config/gh/hosts.yml": "github.com:\n    oauth_token: " + codingCanary + "\n",
		".bash_history":        "export TOKEN=" + codingCanary + "\n",
		".npmrc":               "//registry.npmjs.org/:_authToken=" + codingCanary + "\n",
		".pypirc":              "[pypi]\nusername = __token__\npassword = " + codingCanary + "\n",
		".config/pip/pip.conf": "[global]\nindex-url = https://__token__:" + codingCanary + "@pypi.example.com/simple\n",
	}
}

// codingSession is a session on the built-in coding profile over the
// project w.root/proj, run with a home directory that holds the planted
// credentials (codingSecrets). The home directory lies outside /tmp: a
// scope reading /** sees a private /tmp.
type codingSession struct {
	t              *testing.T
	w              *workspace
	home, proj, id string
	env            []string // added to the environment of every run
}

// newCodingSession writes files (paths relative to the project), plants
// the credentials and creates the session.
func newCodingSession(t *testing.T, files map[string]string) *codingSession {
	t.Helper()
	return newCodingSessionAt(t, "", files)
}

// newCodingSessionAt is newCodingSession on the project directory proj
// ("" for one in the workspace).
func newCodingSessionAt(t *testing.T, proj string, files map[string]string) *codingSession {
	t.Helper()
	w := newWorkspace(t)
	home, err := os.MkdirTemp("/var/tmp", "scopegate-coding-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if proj == "" {
		proj = filepath.Join(w.root, "proj")
	} else if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &codingSession{t: t, w: w, home: home, proj: proj,
		env: []string{"HOME=" + home, "GOFLAGS=", "GOTOOLCHAIN=local"}}
	write := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for rel, content := range files {
		write(filepath.Join(s.proj, rel), content)
	}
	for rel, content := range codingSecrets() {
		write(filepath.Join(home, rel), content)
	}
	var created struct {
		SessionID string `json:"session_id"`
	}
	if out := s.run("session", "create", "--name", "coding", "--profile", "coding", "--project-root", s.proj); json.Unmarshal(out, &created) != nil || created.SessionID == "" {
		t.Fatalf("session create: %s", out)
	}
	s.id = created.SessionID
	return s
}

// on is the session for the subtest t (with its own copy of the
// environment).
func (s *codingSession) on(t *testing.T) *codingSession {
	c := *s
	c.t, c.env = t, slices.Clone(s.env)
	return &c
}

// run runs scopegate with the session's environment and returns its
// standard output, whatever its exit code.
func (s *codingSession) run(args ...string) []byte {
	s.t.Helper()
	c := s.w.cmd(args...)
	c.Env = append(c.Env, s.env...)
	out, _ := c.Output()
	return out
}

// call runs a tool call in the session with cwd dir.
func (s *codingSession) call(dir, tool string, args map[string]any) map[string]any {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": dir})
	var res map[string]any
	if err := json.Unmarshal(s.run("call", "--session", s.id, string(b)), &res); err != nil {
		s.t.Fatalf("call %s: %v", b, err)
	}
	return res
}

// shell runs a shell command in the project and returns its result (nil
// when the call was denied).
func (s *codingSession) shell(command string) (map[string]any, map[string]any) {
	s.t.Helper()
	res := s.call(s.proj, "shell", map[string]any{"command": command, "timeout_ms": 120000})
	r, _ := res["result"].(map[string]any)
	return res, r
}

// unconfined runs a program as the user would outside scopegate, in dir,
// with the session's home directory, and fails the test if it fails.
func (s *codingSession) unconfined(dir, name string, args ...string) {
	s.t.Helper()
	c := exec.CommandContext(s.t.Context(), name, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "HOME="+s.home)
	if out, err := c.CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// checkSecrets requires that no planted credential is readable: not by
// file tools, not by a project script reading every file of the home
// directory, where it finds only what the view binds back (the caches the
// profile writes), not the credential stores. seen names files the script
// must list (so it ran).
func (s *codingSession) checkSecrets(seen ...string) {
	s.t.Helper()
	for rel := range codingSecrets() {
		if d := s.call(s.proj, "read_file", map[string]any{"path": filepath.Join(s.home, rel)}); strings.Contains(toJSON(d), codingCanary) {
			s.t.Errorf("read_file %s: %v", rel, d)
		}
	}
	// The pattern matches the canary without containing it.
	if d := s.call(s.proj, "grep", map[string]any{"pattern": "CODING-CANARY-[0-9]+", "path": s.home}); strings.Contains(toJSON(d), codingCanary) {
		s.t.Errorf("grep below the home directory: %v", d)
	}
	// The script prints every file's name, and the content of every small
	// one (each credential is small; the caches and environments hold
	// thousands of files).
	probe := "import os\nfor d, _, fs in os.walk(" + strconv.Quote(s.home) + "):\n" +
		"    for f in fs:\n        p = os.path.join(d, f)\n        try:\n" +
		"            print(p, open(p, 'rb').read() if os.path.getsize(p) <= 512 else os.path.getsize(p))\n" +
		"        except OSError as e:\n            print(p, e)\n"
	if err := os.WriteFile(filepath.Join(s.proj, "probe.py"), []byte(probe), 0o644); err != nil {
		s.t.Fatal(err)
	}
	res, r := s.shell("python3 probe.py")
	out := toJSON(res)
	if r == nil || r["truncated"] != false || strings.Contains(out, codingCanary) {
		s.t.Errorf("a program read a credential, or did not run whole: %s", out)
	}
	for _, name := range seen {
		if !strings.Contains(out, name) {
			s.t.Errorf("the walk did not list %s: %s", name, out)
		}
	}
	// The credential stores are not in the view at all.
	for _, name := range []string{".git-credentials", ".npmrc", ".pypirc", "pip.conf", "id_ed25519", ".aws", "hosts.yml", ".bash_history"} {
		if strings.Contains(out, name) {
			s.t.Errorf("the walk listed %s: %s", name, out)
		}
	}
}

// Under the coding profile a Go module with a dependency builds, tests and
// vets through `call` (the build cache is granted), git works on the
// project, and no planted credential is readable, by file tools or by a
// program.
func TestCodingProfileBuildsAndKeepsSecrets(t *testing.T) {
	s := newCodingSession(t, map[string]string{
		"third_party/dep/go.mod": "module example.com/dep\n\ngo 1.22\n",
		"third_party/dep/dep.go": "package dep\n\nfunc Answer() int { return 42 }\n",
		"go.mod":                 "module example.com/proj\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./third_party/dep\n",
		"main.go":                "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() { fmt.Println(dep.Answer()) }\n",
		"main_test.go":           "package main\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestAnswer(t *testing.T) {\n\tif dep.Answer() != 42 {\n\t\tt.Fatal(dep.Answer())\n\t}\n}\n",
	})
	res, r := s.shell("go build ./... && go test ./... && go vet ./... && git init -q && git add . && git status --short")
	if r == nil || r["exit_code"] != float64(0) || !strings.Contains(r["stdout"].(string), "ok  \texample.com/proj") ||
		!strings.Contains(r["stdout"].(string), "A  main.go") {
		t.Fatalf("build, test and git under the coding profile: %v", res)
	}
	s.checkSecrets(filepath.Join(".cache", "go-build", "README"))
	if _, r := s.shell("cat main.go"); r == nil || !strings.Contains(r["stdout"].(string), "dep.Answer") {
		t.Errorf("cat main.go: %v", r)
	}
}

// Under the coding profile npm ci installs a project's locked
// dependencies, and pip install -e . installs the project into a virtual
// environment kept outside it once the user has allowed pip and the
// environment's site-packages, each run for real through `call`; no
// planted credential is readable afterwards.
func TestCodingProfileInstallsPackages(t *testing.T) {
	s := newCodingSession(t, map[string]string{
		// A dependency packed as npm publishes it, locked by its integrity.
		"third_party/dep/package.json": `{"name": "dep", "version": "1.0.0", "main": "index.js"}` + "\n",
		"third_party/dep/index.js":     "module.exports = { answer: () => 42 };\n",
		"package.json": `{"name": "proj", "version": "1.0.0", "private": true, "scripts": {"test": "node check.js"},` +
			` "dependencies": {"dep": "file:third_party/dep-1.0.0.tgz"}}` + "\n",
		"check.js": `const dep = require("dep");` + "\n" + `console.log("answer", dep.answer(), require.resolve("dep"));` + "\n",
		// A Python project in the src layout: a script outside src imports
		// the package only through the installed distribution.
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
			"[project]\nname = \"sgdemo\"\nversion = \"0.1.0\"\n",
		"src/sgdemo/__init__.py": "def answer():\n    return 42\n",
		"check.py":               "import sys\nimport sgdemo\nprint(\"sgdemo\", sgdemo.answer(), sgdemo.__file__, sys.prefix)\n",
	})
	var seen []string // what the installs left below the home directory
	t.Run("npm ci", func(t *testing.T) {
		requireProgram(t, "node")
		requireProgram(t, "npm")
		s := s.on(t)
		// The user packs the dependency and locks it, outside scopegate.
		s.unconfined(filepath.Join(s.proj, "third_party", "dep"), "npm", "pack", "--pack-destination", "..")
		s.unconfined(s.proj, "npm", "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund")
		res, r := s.shell("npm ci --offline --no-audit --no-fund && npm test")
		if r == nil || r["exit_code"] != float64(0) ||
			!strings.Contains(r["stdout"].(string), "answer 42 "+filepath.Join(s.proj, "node_modules", "dep", "index.js")) {
			t.Fatalf("npm ci and npm test under the coding profile: %v", res)
		}
		// node_modules is npm's and node's own data: file tools do not see it.
		d := s.call(s.proj, "read_file", map[string]any{"path": "node_modules/dep/index.js"})
		if dec, _ := d["decision"].(map[string]any); dec["reason"] != "path_denied" {
			t.Errorf("read_file node_modules/dep/index.js: %v", d)
		}
		seen = append(seen, "_cacache")
	})
	t.Run("pip install -e", func(t *testing.T) {
		s := s.on(t)
		missing := func(what string, out []byte) {
			t.Helper()
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s (scripts/install-test-deps.sh installs python3-venv, python3-setuptools and python3-wheel):\n%s", what, out)
			}
			t.Skipf("%s (Debian: python3-venv python3-setuptools python3-wheel):\n%s", what, out)
		}
		// The user's virtual environment, outside the project (a program in
		// a directory the scope makes writable never runs by a bare name),
		// with Debian's setuptools and wheel: pip cannot reach an index to
		// fetch build dependencies, so it builds without isolation.
		venv := filepath.Join(s.home, ".venvs", "proj")
		if out, err := exec.CommandContext(t.Context(), "/usr/bin/python3", "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
			missing("/usr/bin/python3 -m venv: "+err.Error(), out)
		}
		py := filepath.Join(venv, "bin", "python3")
		if out, err := exec.CommandContext(t.Context(), py, "-c", "import setuptools, wheel").CombinedOutput(); err != nil {
			missing("setuptools or wheel missing: "+err.Error(), out)
		}
		// As activating it does: the environment's programs come first.
		s.env = append(s.env, "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
		const install = "pip install --no-build-isolation -e ."
		// pip is not in the profile; the decision names the entry to add.
		res := s.call(s.proj, "shell", map[string]any{"command": install})
		if dec, _ := res["decision"].(map[string]any); dec["reason"] != "command_not_allowed" ||
			!strings.Contains(dec["message"].(string), "--allow-command 'pip install'") {
			t.Fatalf("%s before pip is allowed: %v", install, res)
		}
		if out := s.run("scope", "expand", "--session", s.id, "--allow-command", "pip install"); !strings.Contains(string(out), "pip install") {
			t.Fatalf("scope expand --allow-command 'pip install': %s", out)
		}
		// The environment is not the project: pip builds, but cannot install.
		site := filepath.Join(venv, "lib")
		res, r := s.shell(install)
		if r == nil || r["exit_code"] == float64(0) || !strings.Contains(r["stderr"].(string), "Permission denied: '"+site) {
			t.Fatalf("%s without the environment writable: %v", install, res)
		}
		if out := s.run("scope", "expand", "--session", s.id, "--write", site+"/**"); !strings.Contains(string(out), site+"/**") {
			t.Fatalf("scope expand --write %s/**: %s", site, out)
		}
		res, r = s.shell(install)
		if r == nil || r["exit_code"] != float64(0) || !strings.Contains(r["stdout"].(string), "Successfully installed sgdemo-0.1.0") {
			t.Fatalf("%s: %v", install, res)
		}
		// From outside the project, the environment's python3 imports the
		// package from the project's source tree.
		check := filepath.Join(s.proj, "check.py")
		res = s.call(s.home, "shell", map[string]any{"command": "python3 " + check})
		r, _ = res["result"].(map[string]any)
		if want := "sgdemo 42 " + filepath.Join(s.proj, "src", "sgdemo", "__init__.py") + " " + venv; r == nil ||
			r["exit_code"] != float64(0) || !strings.Contains(r["stdout"].(string), want) {
			t.Fatalf("python3 %s from the home directory: %v, want %q", check, res, want)
		}
		seen = append(seen, "__editable__.sgdemo-0.1.0.pth")
	})
	s.checkSecrets(seen...)
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
