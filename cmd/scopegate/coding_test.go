package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Under the coding profile a Go module with a dependency builds, tests and
// vets through `call` (the build cache is granted), git works on the
// project, and no planted credential is readable, by file tools or by a
// program.
func TestCodingProfileBuildsAndKeepsSecrets(t *testing.T) {
	w := newWorkspace(t)
	// The home directory lies outside /tmp: a scope reading /** sees a
	// private /tmp.
	home, err := os.MkdirTemp("/var/tmp", "scopegate-coding-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	const canary = "CODING-CANARY-5150"
	files := map[string]string{
		"proj/third_party/dep/go.mod": "module example.com/dep\n\ngo 1.22\n",
		"proj/third_party/dep/dep.go": "package dep\n\nfunc Answer() int { return 42 }\n",
		"proj/go.mod":                 "module example.com/proj\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./third_party/dep\n",
		"proj/main.go":                "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() { fmt.Println(dep.Answer()) }\n",
		"proj/main_test.go":           "package main\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestAnswer(t *testing.T) {\n\tif dep.Answer() != 42 {\n\t\tt.Fatal(dep.Answer())\n\t}\n}\n",
	}
	secrets := []string{".ssh/id_ed25519", ".aws/credentials", ".git-credentials", ".config/gh/hosts.yml", ".bash_history"}
	for _, s := range secrets {
		files["home/"+s] = canary + "\n"
	}
	for rel, content := range files {
		p := filepath.Join(w.root, rel)
		if dir, ok := strings.CutPrefix(rel, "home/"); ok {
			p = filepath.Join(home, dir)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(w.root, "proj")
	env := func(args ...string) []byte {
		t.Helper()
		c := w.cmd(args...)
		c.Env = append(c.Env, "HOME="+home, "GOFLAGS=", "GOTOOLCHAIN=local")
		out, _ := c.Output()
		return out
	}
	var created struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(env("session", "create", "--name", "coding", "--profile", "coding", "--project-root", proj), &created); err != nil || created.SessionID == "" {
		t.Fatalf("session create: %v", err)
	}
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": proj})
		var res map[string]any
		if err := json.Unmarshal(env("call", "--session", created.SessionID, string(b)), &res); err != nil {
			t.Fatalf("call %s: %v", b, err)
		}
		return res
	}
	res := call("shell", map[string]any{"command": "go build ./... && go test ./... && go vet ./... && git init -q && git add . && git status --short", "timeout_ms": 120000})
	r, _ := res["result"].(map[string]any)
	if r["exit_code"] != float64(0) || !strings.Contains(r["stdout"].(string), "ok  \texample.com/proj") ||
		!strings.Contains(r["stdout"].(string), "A  main.go") {
		t.Fatalf("build, test and git under the coding profile: %v", res)
	}
	// Credentials: denied to file tools, invisible to programs.
	for _, s := range secrets {
		if d := call("read_file", map[string]any{"path": filepath.Join(home, s)}); strings.Contains(toJSON(d), canary) {
			t.Errorf("read_file %s: %v", s, d)
		}
	}
	// A project script that reads every file below the home directory.
	probe := "import os\nfor d, _, fs in os.walk(" + strconvQuote(home) + "):\n" +
		"    for f in fs:\n        try:\n            print(f, open(os.path.join(d, f)).read())\n" +
		"        except OSError as e:\n            print(f, e)\n"
	if err := os.WriteFile(filepath.Join(proj, "probe.py"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call("shell", map[string]any{"command": "python3 probe.py; cat main.go"})
	// The walk lists the masked files (read as empty), so it ran.
	if out := toJSON(res); strings.Contains(out, canary) || !strings.Contains(out, ".git-credentials") || !strings.Contains(out, "dep.Answer") {
		t.Errorf("a program read a credential, or did not run: %s", out)
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
