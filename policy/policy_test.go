package policy_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func TestParseDocumentStrict(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"empty", "", true},
		{"full", "paths:\n  read: [\"/a/**\"]\n  write: []\n  deny: [\"**/.git/**\"]\norg_roam_patterns:\n  subdirectory: [\"gptel/**\"]\n  tags: [gptel]\n  node_ids: [\"*\"]\nshell_commands:\n  allow: [ls]\n  deny: [\"rm -rf\"]\n", true},
		{"partial", "paths:\n  read: [\"/a/**\"]\n", true},
		{"unknown key", "paths:\n  raed: [\"/a/**\"]\n", false},
		{"unknown section", "network: {}\n", false},
		{"duplicate key", "paths:\n  read: [\"/a\"]\n  read: [\"/b\"]\n", false},
		{"second document", "paths: {}\n---\npaths: {}\n", false},
		{"wrong type", "paths:\n  read: \"/a/**\"\n", false},
		{"not yaml", "paths: [\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.ParseDocument([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, policy.ErrInvalidScope) {
				t.Fatalf("error %v does not wrap ErrInvalidScope", err)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	for name, doc := range map[string]policy.Document{
		"bad glob":           {Paths: policy.PathRules{Read: []string{"/a/[b"}}},
		"unresolved var":     {Paths: policy.PathRules{Write: []string{"${project_root}/**"}}},
		"empty pattern":      {Paths: policy.PathRules{Deny: []string{""}}},
		"bad shell entry":    {Shell: policy.ShellRules{Allow: []string{"ls 'unterminated"}}},
		"bad roam subdir":    {OrgRoam: policy.RoamRules{Subdirectory: []string{"a/[b"}}},
		"tilde without home": {Paths: policy.PathRules{Read: []string{"~/x/**"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := policy.Compile(doc, policy.Env{}); !errors.Is(err, policy.ErrInvalidScope) {
				t.Fatalf("Compile = %v, want ErrInvalidScope", err)
			}
		})
	}
}

// project makes a small project under a temp dir and a scope for it.
func project(t *testing.T) (string, *policy.Scope, policy.Env) {
	t.Helper()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	for rel, c := range map[string]string{"README.md": "x", "src/a.go": "package a", ".env": "K=v", "build/.keep": ""} {
		writeFile(t, filepath.Join(proj, rel), c, 0o644)
	}
	env := policy.Env{Home: filepath.Join(root, "home"), Protected: []string{filepath.Join(proj, ".sessions")}}
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}, Deny: []string{"**/.env"}},
		Shell: policy.ShellRules{
			Allow: []string{"ls", "cat", "git", "find -exec", "find", "rm", "python3 -m pytest", "go generate"},
			Deny:  []string{"rm -rf", "git push --force"},
		},
		OrgRoam: policy.RoamRules{Subdirectory: []string{"gptel/**"}, Tags: []string{"gptel"}, NodeIDs: []string{"abc"}},
	}, env)
	if err != nil {
		t.Fatal(err)
	}
	return proj, sc, env
}

func shellCall(cmd, cwd string) policy.Call {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return policy.Call{Tool: policy.ToolShell, Args: args, Cwd: cwd}
}

func TestShellEntries(t *testing.T) {
	proj, sc, env := project(t)
	tests := []struct {
		cmd    string
		reason policy.Reason
	}{
		{"ls -la", policy.ReasonAllowed},
		{"rm build/.keep", policy.ReasonAllowed},
		{"rm -r -f build", policy.ReasonCommandDenied},
		{"rm --recursive --force build", policy.ReasonCommandDenied},
		{"rm --rec --forc build", policy.ReasonCommandDenied},
		{"rm -fR build", policy.ReasonCommandDenied},
		{"git push origin main", policy.ReasonAllowed},
		{"git push -f origin main", policy.ReasonCommandDenied},
		{"git push --force-with-lease origin main", policy.ReasonCommandDenied},
		{"find . -name '*.go'", policy.ReasonAllowed},
		{"find . -exec cat {} ;", policy.ReasonAllowed},
		{"find . -exec curl {} ;", policy.ReasonCommandNotAllowed},
		{"find . -delete", policy.ReasonDangerousArgument},
		{"python3 -m pytest -q", policy.ReasonAllowed},
		{"python3 src/x.py", policy.ReasonCommandNotAllowed},
		{"go generate ./...", policy.ReasonAllowed},
		{"go build ./...", policy.ReasonCommandNotAllowed},
		{"cat .env", policy.ReasonPathDenied},
		{"ls > .sessions/x", policy.ReasonRedirectNotInScope},
		{"curl http://x", policy.ReasonCommandNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			d := sc.Decide(shellCall(tt.cmd, proj), env)
			if d.Reason != tt.reason {
				t.Fatalf("reason = %s (%s), want %s", d.Reason, d.Message, tt.reason)
			}
		})
	}
}

func TestEveryViolationReported(t *testing.T) {
	proj, sc, env := project(t)
	d := sc.Decide(shellCall("curl x; cat /etc/passwd > /tmp/out; rm -rf build", proj), env)
	if d.Allowed {
		t.Fatal("allowed")
	}
	got := map[policy.Reason]bool{}
	for _, v := range d.Violations {
		got[v.Reason] = true
		if v.Message == "" || strings.ContainsAny(v.Message, "\n\r") {
			t.Errorf("violation message not one line: %q", v.Message)
		}
	}
	for _, want := range []policy.Reason{policy.ReasonCommandNotAllowed, policy.ReasonPathNotInScope, policy.ReasonRedirectNotInScope, policy.ReasonCommandDenied} {
		if !got[want] {
			t.Errorf("missing violation %s in %+v", want, d.Violations)
		}
	}
	if decides := policy.Deciding(d.Violations); d.Reason != decides.Reason || d.Rule != decides.Rule || decides.Reason != policy.ReasonCommandDenied {
		t.Errorf("top-level fields %s %s do not repeat the deciding violation, the hard one (%s %s)", d.Reason, d.Rule, decides.Reason, decides.Rule)
	}
}

func TestProtectedRootsNeverWritable(t *testing.T) {
	proj, sc, env := project(t)
	prot := env.Protected[0]
	if err := os.MkdirAll(prot, 0o700); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"path": filepath.Join(prot, "scope.yml"), "content": "x"})
	if d := sc.Decide(policy.Call{Tool: policy.ToolWriteFile, Args: args}, env); d.Allowed {
		t.Fatal("write_file into a protected root allowed")
	}
	args, _ = json.Marshal(map[string]any{"path": filepath.Join(prot, "scope.yml")})
	if d := sc.Decide(policy.Call{Tool: policy.ToolReadFile, Args: args}, env); !d.Allowed {
		t.Fatalf("reading a protected root inside read scope denied: %s", d.Message)
	}
	for _, cmd := range []string{"ls > .sessions/tools.org", "go build -o .sessions/x ./...", "cp README.md .sessions/", "sed -i s/a/b/ .sessions/scope.yml"} {
		if d := sc.Decide(shellCall(cmd, proj), env); d.Allowed {
			t.Errorf("%s: allowed", cmd)
		}
	}
	// Through a symlink to the protected root.
	if err := os.Symlink(prot, filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	args, _ = json.Marshal(map[string]any{"path": filepath.Join(proj, "link", "tools.org"), "content": "x"})
	if d := sc.Decide(policy.Call{Tool: policy.ToolWriteFile, Args: args}, env); d.Allowed {
		t.Fatal("write through a symlink into a protected root allowed")
	}
}

func TestRoam(t *testing.T) {
	_, sc, env := project(t)
	tests := []struct {
		tool string
		args string
		ok   bool
	}{
		{policy.ToolRoamCreateNode, `{"title":"T","subdirectory":"gptel/notes","tags":["gptel"]}`, true},
		{policy.ToolRoamCreateNode, `{"title":"T","subdirectory":"gptel"}`, true},
		{policy.ToolRoamCreateNode, `{"title":"T","subdirectory":"private"}`, false},
		{policy.ToolRoamCreateNode, `{"title":"T","subdirectory":"gptel/../private"}`, false},
		{policy.ToolRoamCreateNode, `{"title":"T","subdirectory":"gptel","tags":["secret"]}`, false},
		{policy.ToolRoamCreateNode, `{"subdirectory":"gptel"}`, false},
		{policy.ToolRoamReadNode, `{"node_id":"abc"}`, true},
		{policy.ToolRoamReadNode, `{"node_id":"other"}`, false},
		{policy.ToolRoamAddTags, `{"node_id":"abc","tags":["gptel"]}`, true},
		{policy.ToolRoamLinkNodes, `{"source_id":"abc","target_id":"zzz"}`, false},
		{policy.ToolRoamReadNode, `{"node_id":7}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			d := sc.Decide(policy.Call{Tool: tt.tool, Args: json.RawMessage(tt.args)}, env)
			if d.Allowed != tt.ok {
				t.Fatalf("allowed = %v (%s: %s), want %v", d.Allowed, d.Reason, d.Message, tt.ok)
			}
		})
	}
}

func TestInvalidCalls(t *testing.T) {
	_, sc, env := project(t)
	for name, c := range map[string]policy.Call{
		"unknown tool":    {Tool: "format_disk", Args: json.RawMessage(`{}`)},
		"ill-typed":       {Tool: policy.ToolReadFile, Args: json.RawMessage(`{"path":3}`)},
		"unknown arg":     {Tool: policy.ToolReadFile, Args: json.RawMessage(`{"path":"/x","mode":"r"}`)},
		"relative no cwd": {Tool: policy.ToolReadFile, Args: json.RawMessage(`{"path":"README.md"}`)},
		"empty command":   {Tool: policy.ToolShell, Args: json.RawMessage(`{"command":"  "}`)},
		"parse error":     {Tool: policy.ToolShell, Args: json.RawMessage(`{"command":"ls (("}`), Cwd: "/"},
	} {
		t.Run(name, func(t *testing.T) {
			if d := sc.Decide(c, env); d.Allowed {
				t.Fatal("allowed")
			}
		})
	}
}

func TestCheckExecAtRunTime(t *testing.T) {
	proj, sc, env := project(t)
	if vs := sc.CheckExec([]string{"rm", "-rf", "build"}, proj, env); len(vs) == 0 {
		t.Fatal("rm -rf allowed at run time")
	}
	if vs := sc.CheckExec([]string{"cat", "README.md"}, proj, env); len(vs) != 0 {
		t.Fatalf("cat README.md refused: %+v", vs)
	}
	if vs := sc.CheckPath("/etc/passwd", policy.AccessRead, proj, env); len(vs) == 0 {
		t.Fatal("/etc/passwd readable")
	}
	read, write := sc.Roots()
	if len(read) != 1 || read[0] != proj || len(write) != 1 || write[0] != proj {
		t.Fatalf("roots = %v %v", read, write)
	}
}

func mkfile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func TestDocumentJSONHasEmptyLists(t *testing.T) {
	out, err := json.Marshal(policy.Document{Paths: policy.PathRules{Read: []string{"/a/**"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "null") || !strings.Contains(string(out), `"write":[]`) || !strings.Contains(string(out), `"read":["/a/**"]`) {
		t.Fatalf("JSON %s", out)
	}
}

// TestHardViolationDecides: a call denied both for a scope reason and for a
// hard one is decided by the hard one. Its reason, rule and message are the
// hard violation's, with no widening hint: a widening would not let the
// call run.
func TestHardViolationDecides(t *testing.T) {
	proj, sc, env := project(t)
	writeFile(t, filepath.Join(filepath.Dir(proj), "outside", "secret.txt"), "s", 0o644)
	for _, command := range []string{"cat ../outside/secret.txt .env", "cat .env ../outside/secret.txt"} {
		t.Run(command, func(t *testing.T) {
			call := policy.Call{Tool: policy.ToolShell, Args: json.RawMessage(`{"command":` + quoteJSON(command) + `}`), Cwd: proj}
			d := sc.Decide(call, env)
			if d.Allowed || len(d.Violations) != 2 {
				t.Fatalf("decision %+v, want two violations", d)
			}
			if d.Reason != policy.ReasonPathDenied || !strings.HasPrefix(d.Rule, "paths.deny") || strings.Contains(d.Message, policy.ExpandCommand) {
				t.Errorf("reason %s, rule %q, message %q; want path_denied by paths.deny, without a hint", d.Reason, d.Rule, d.Message)
			}
			if d.Widenable() || d.Widenings() != nil {
				t.Errorf("a denial with a hard violation is widenable: %+v", d.Widenings())
			}
		})
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
