package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/telemetry"
)

// The machine's managed policy on every path: the CLI, serve, the hooks
// of the real Claude Code and Codex, the MCP SDK client, gptel's scope
// writer and the private view. Each test installs a policy of its own,
// root's, and names it with SCOPEGATE_MANAGED_FILE (no
// /etc/scopegate/managed.yml exists where the tests run), which every
// process the test starts inherits.

// managedSecret is the content of a file the managed policy denies: it
// must never reach a program's output or a model.
const managedSecret = "SCOPEGATE-MANAGED-CANARY-51c2e0"

// installManaged writes text as the managed policy (root's, 0644, in a
// directory only root writes) and points SCOPEGATE_MANAGED_FILE at it for
// the test and every process it starts.
func installManaged(t *testing.T, text string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root: a managed policy is trusted only as root's (CI runs as root)")
		}
		t.Skip("needs root: a managed policy is trusted only as root's")
	}
	if _, err := os.Stat(config.ManagedPath); err == nil {
		t.Fatalf("%s exists on this machine: it outranks the test's policy", config.ManagedPath)
	}
	path := filepath.Join(t.TempDir(), "managed.yml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.ManagedEnv, path)
	return path
}

// writeSecret puts a managed-denied file into the project.
func writeSecret(t *testing.T, proj string) string {
	t.Helper()
	p := filepath.Join(proj, "secrets", "key")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(managedSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkDecision runs `scopegate check` on the workspace's branch.
func (w *workspace) checkDecision(want int, tool string, args map[string]any) policy.Decision {
	w.t.Helper()
	call, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": w.proj})
	out := w.run(want, "check", "--session", w.id, string(call))
	var d policy.Decision
	if err := json.Unmarshal(out, &d); err != nil {
		w.t.Fatalf("check output %q: %v", out, err)
	}
	return d
}

// runErr runs scopegate, requires exit code want and returns its stderr.
func (w *workspace) runErr(want int, args ...string) string {
	w.t.Helper()
	_, stderr := w.runBoth(want, args...)
	return stderr
}

// isManaged requires a denial by the managed rule (a prefix of it).
func isManaged(t *testing.T, what string, d policy.Decision, rule string) {
	t.Helper()
	if d.Allowed || d.Reason != policy.ReasonManaged || !strings.HasPrefix(d.Rule, rule) || d.Widenings() != nil ||
		strings.Contains(d.Message, policy.ExpandCommand) {
		t.Errorf("%s: %v %s %q (%s), want a hard denial by %s", what, d.Allowed, d.Reason, d.Rule, d.Message, rule)
	}
}

// TestManagedCLI: the CLI decides within the managed policy and refuses
// every scope change beyond it; an allowed program reads nothing
// managed.paths.deny names in its private view; scope show marks what
// reaches beyond; tools.org notes the policy once.
func TestManagedCLI(t *testing.T) {
	w := newWorkspace(t, "grep", "cat", "tar", "ls")
	writeSecret(t, w.proj)
	if err := os.WriteFile(filepath.Join(w.proj, "a.txt"), []byte("visible\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(w.root, "outside")
	installManaged(t, fmt.Sprintf(`paths:
  deny: ["**/secrets/**"]
  ceiling:
    read: [%q, "/etc/**", "/usr/**"]
    write: [%q]
shell_commands:
  deny: [ssh]
modes: {observe: false}
approvals: deny
`, w.proj+"/**", w.proj+"/**"))
	scope := filepath.Join(w.branch, "scope.yml")

	isManaged(t, "read of the denied file", w.checkDecision(3, "read_file", map[string]any{"path": "secrets/key"}), "managed.paths.deny[0]")
	isManaged(t, "cat of the denied file", w.checkDecision(3, "shell", map[string]any{"command": "cat secrets/key"}), "managed.paths.deny[0]")
	isManaged(t, "write beyond the ceiling", w.checkDecision(3, "write_file", map[string]any{"path": filepath.Join(outside, "x"), "content": "x"}), policy.RuleManagedCeilingWrite)
	isManaged(t, "ssh", w.checkDecision(3, "shell", map[string]any{"command": "ssh host"}), "managed.shell_commands.deny[0]")
	// A read within the ceiling but not the scope stays widenable.
	if d := w.checkDecision(3, "read_file", map[string]any{"path": "/etc/hostname"}); d.Reason != policy.ReasonPathNotInScope || d.Widenings() == nil {
		t.Errorf("read within the ceiling: %+v, want path_not_in_scope with its widening", d)
	}

	// Programs read the tree on their own: the denied file is masked.
	for _, cmd := range []string{"grep -r . .", "tar -cf - . | tar -xOf -"} {
		r := w.shellResult(cmd)
		out := fmt.Sprint(r["stdout"], r["stderr"])
		if r["exit_code"] != float64(0) || !strings.Contains(out, "visible") || strings.Contains(out, managedSecret) ||
			r["confinement"] != "namespaces+landlock" {
			t.Errorf("%s: %v, want the project read and the secret masked", cmd, r)
		}
	}

	before, _ := os.ReadFile(scope)
	for _, args := range [][]string{
		{"--read", outside + "/**"},
		{"--write", "/etc/**"},
		{"--allow-command", "ssh"},
	} {
		msg := w.runErr(2, append([]string{"scope", "expand", "--session", w.id}, args...)...)
		if !strings.Contains(msg, "managed.") || !strings.Contains(msg, "refused by the managed policy") {
			t.Errorf("scope expand %v: %q, want refused naming the managed rule", args, msg)
		}
	}
	if msg := w.runErr(2, "scope", "mode", "--session", w.id, "observe"); !strings.Contains(msg, policy.RuleManagedObserve) {
		t.Errorf("scope mode observe: %q", msg)
	}
	if msg := w.runErr(2, "session", "create", "--name", "obs", "--worktree", w.proj, "--mode", "observe"); !strings.Contains(msg, policy.RuleManagedObserve) {
		t.Errorf("session create --mode observe: %q", msg)
	}
	if after, _ := os.ReadFile(scope); !bytes.Equal(after, before) {
		t.Fatalf("refused changes touched scope.yml:\n%s", after)
	}

	// A scope.yml that reaches beyond stays as it is; scope show marks it.
	text := strings.Replace(string(before), "  write:\n", "  write:\n    - "+outside+"/**\n", 1)
	if err := os.WriteFile(scope, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	isManaged(t, "write granted by scope.yml beyond the ceiling", w.checkDecision(3, "write_file", map[string]any{"path": filepath.Join(outside, "x"), "content": "x"}), policy.RuleManagedCeilingWrite)
	show := string(w.run(0, "scope", "show", "--session", w.id))
	for _, want := range []string{"# managed policy: ", config.ManagedEnv, "#   paths.deny: [**/secrets/**]", "#   approvals: deny",
		"# beyond the managed policy, without effect:", "paths.write[0] " + outside + "/** (managed.paths.ceiling.write)"} {
		if !strings.Contains(show, want) {
			t.Errorf("scope show lacks %q:\n%s", want, show)
		}
	}
	if data, _ := os.ReadFile(scope); string(data) != text {
		t.Error("scope.yml was changed")
	}
	var js struct {
		Managed struct {
			File   string          `json:"file"`
			Beyond []policy.Excess `json:"beyond"`
		} `json:"managed"`
	}
	if err := json.Unmarshal(w.run(0, "scope", "show", "--session", w.id, "--json"), &js); err != nil || len(js.Managed.Beyond) != 1 || js.Managed.File == "" {
		t.Errorf("scope show --json: %+v %v", js, err)
	}
	if out := string(w.run(0, "profiles", "show", "coding")); !strings.Contains(out, "#   paths.ceiling.write: ["+w.proj+"/**]") {
		t.Errorf("profiles show does not print the managed policy:\n%s", out)
	}

	// suggest proposes what lies within the policy, nothing beyond it.
	var sugs []struct{ Flag, Value string }
	if err := json.Unmarshal(w.run(0, "scope", "suggest", "--session", w.id, "--json"), &sugs); err != nil {
		t.Fatal(err)
	}
	for _, s := range sugs {
		if strings.HasPrefix(s.Value, outside) || strings.Contains(s.Value, "secrets") || s.Value == "ssh" {
			t.Errorf("suggest proposes %s %s, beyond the managed policy", s.Flag, s.Value)
		}
	}
	if !slices.ContainsFunc(sugs, func(s struct{ Flag, Value string }) bool { return s.Value == "/etc/hostname" }) {
		t.Errorf("suggest %+v lacks the read within the ceiling", sugs)
	}

	entries, err := audit.ReadFile(filepath.Join(w.branch, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for i, e := range entries {
		if e.Managed != "" {
			marked++
			if len(e.Managed) != 64 || i > 4 {
				t.Errorf("entry %d (%s) :MANAGED: %q", i, e.Tool, e.Managed)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d entries carry :MANAGED:, want the first after the policy came", marked)
	}
}

// TestManagedSuggestApply: a denial recorded before the managed policy
// came is not proposed once it reaches beyond it, naming the rule, and
// `scope suggest --apply` leaves scope.yml as it was.
func TestManagedSuggestApply(t *testing.T) {
	w := newWorkspace(t)
	outside := filepath.Join(w.root, "outside", "f.txt")
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := w.checkDecision(3, "read_file", map[string]any{"path": outside}); d.Reason != policy.ReasonPathNotInScope {
		t.Fatalf("before the policy: %+v, want path_not_in_scope", d)
	}
	installManaged(t, fmt.Sprintf("paths:\n  ceiling:\n    read: [%q]\n    write: [%q]\n", w.proj+"/**", w.proj+"/**"))
	scope := filepath.Join(w.branch, "scope.yml")
	before, _ := os.ReadFile(scope)
	out := string(w.run(0, "scope", "suggest", "--session", w.id, "--apply"))
	if !strings.Contains(out, "# not proposed: --read "+outside) || !strings.Contains(out, policy.RuleManagedCeilingRead) ||
		strings.Contains(out, "applied to scope.yml") {
		t.Errorf("suggest --apply:\n%s\nwant the read left out naming %s, nothing applied", out, policy.RuleManagedCeilingRead)
	}
	if after, _ := os.ReadFile(scope); !bytes.Equal(after, before) {
		t.Errorf("suggest --apply changed scope.yml:\n%s", after)
	}
}

// TestManagedNetworkAny: a host beyond the managed network is refused by
// the proxy and the DNS stub at run time though the scope says any: the
// program is run through the proxy with the policy's list.
func TestManagedNetworkAny(t *testing.T) {
	requireProgram(t, "curl")
	other := serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "LEAKED") }))
	port := serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://localhost:"+strconv.Itoa(other)+"/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "served "+r.URL.Path)
	}))
	w := newWorkspace(t, "curl", "getent")
	installManaged(t, "network: [\"localhost:"+strconv.Itoa(port)+"\"]\n")
	scope := filepath.Join(w.branch, "scope.yml")
	data, _ := os.ReadFile(scope)
	if err := os.WriteFile(scope, append(data, "network: any\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	ps := strconv.Itoa(port)
	r := w.shellResult("curl -sS --max-time 20 http://localhost:" + ps + "/ok")
	if r["exit_code"] != float64(0) || !strings.Contains(fmt.Sprint(r["stdout"]), "served /ok") || r["network_mode"] != "proxy" {
		t.Fatalf("a host within the policy: %v", r)
	}
	r = w.shellResult("curl -sSL --max-time 20 --fail-with-body http://localhost:" + ps + "/away")
	out := fmt.Sprint(r["stdout"], r["stderr"])
	if r["exit_code"] == float64(0) || strings.Contains(out, "LEAKED") || r["network_mode"] != "proxy" {
		t.Fatalf("a host beyond the policy under network: any: %v", r)
	}
	conns, _ := json.Marshal(r["network"])
	if !strings.Contains(string(conns), `"allowed":false`) || !strings.Contains(string(conns), policy.RuleManagedNetwork) {
		t.Errorf("connections %s, want the redirect's host refused by %s", conns, policy.RuleManagedNetwork)
	}
	// The DNS stub answers only the policy's names.
	r = w.shellResult("getent hosts github.com")
	conns, _ = json.Marshal(r["network"])
	if r["exit_code"] == float64(0) || !strings.Contains(string(conns), `"host":"github.com"`) || !strings.Contains(string(conns), policy.RuleManagedNetwork) {
		t.Errorf("name lookup beyond the policy: %v", r)
	}
	isManaged(t, "a literal host beyond the policy", w.checkDecision(3, "shell", map[string]any{"command": "curl http://localhost:" + strconv.Itoa(other) + "/"}), policy.RuleManagedNetwork)
}

// TestManagedServe: serve decides within the policy, counts its denials
// with reason="managed", and refuses an expansion beyond it (403).
func TestManagedServe(t *testing.T) {
	w := newWorkspace(t)
	writeSecret(t, w.proj)
	installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\n  ceiling:\n    read: [\""+w.proj+"/**\"]\n    write: [\""+w.proj+"/**\"]\n")
	s := startServe(t, w)
	var d policy.Decision
	body := `{"tool":"read_file","args":{"path":"secrets/key"},"cwd":` + strconv.Quote(w.proj) + `}`
	if code := post(t, http.DefaultClient, s.url+"/v1/sessions/"+w.id+"/check", body, &d); code != 200 {
		t.Fatalf("check: %d", code)
	}
	isManaged(t, "HTTP check", d, "managed.paths.deny[0]")
	// The CLI forwards to the serve: counted there too.
	isManaged(t, "CLI check while serve runs", w.checkDecision(3, "read_file", map[string]any{"path": "secrets/key"}), "managed.paths.deny[0]")
	if code := post(t, http.DefaultClient, s.url+"/v1/sessions/"+w.id+"/scope/expand", `{"read":["/srv/**"]}`, nil); code != http.StatusForbidden {
		t.Errorf("expand beyond the ceiling: %d, want 403", code)
	}
	_, text := get(t, s.url+"/metrics")
	if n := metricValue(t, text, "scopegate_denials_total", `reason="managed"`); n != 2 {
		t.Errorf("scopegate_denials_total{reason=\"managed\"} = %v, want 2", n)
	}
}

// TestManagedUntrusted: a managed policy that is group-writable, owned by
// another user, or not YAML denies every call, on every entry point,
// naming the file and the fault.
func TestManagedUntrusted(t *testing.T) {
	w := newWorkspace(t, "ls")
	path := installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\n")
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	for _, tc := range []struct {
		name    string
		prepare func() error
		want    string
	}{
		{"group-writable", func() error { return os.Chmod(path, 0o664) }, "is writable by group"},
		{"owned by nobody", func() error {
			if err := os.Chmod(path, 0o644); err != nil {
				return err
			}
			return os.Chown(path, uid, -1)
		}, "belongs to uid " + nobody.Uid},
		{"invalid YAML", func() error {
			if err := os.Chown(path, 0, 0); err != nil {
				return err
			}
			return os.WriteFile(path, []byte("paths:\n  deny: [\"**/secrets/**\"\n"), 0o644)
		}, "line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.prepare(); err != nil {
				t.Fatal(err)
			}
			w := *w
			w.t = t
			d := w.checkDecision(3, "shell", map[string]any{"command": "ls"})
			if d.Allowed || d.Reason != policy.ReasonManaged || !strings.Contains(d.Message, path) || !strings.Contains(d.Message, tc.want) {
				t.Errorf("check: %+v, want a managed denial naming %s and %q", d, path, tc.want)
			}
			// The hook denies in the agent's own terms, with the reason.
			in, _ := json.Marshal(map[string]any{"session_id": "managed-untrusted", "hook_event_name": "PreToolUse", "cwd": w.proj,
				"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
			cmd := w.cmd("hook", "claude-code")
			cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("hook: %v", err)
			}
			if !strings.Contains(string(out), `"permissionDecision":"deny"`) || !strings.Contains(string(out), tc.want) {
				t.Errorf("hook answer %s, want a deny naming %q", out, tc.want)
			}
		})
	}
}

// TestManagedClaudeCode: the real Claude Code, with scopegate as its
// command hook and approvals on, is denied by one managed entry, without
// the ask an approval would make.
func TestManagedClaudeCode(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{w.proj, filepath.Join(root, "home"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := writeSecret(t, w.proj)
	installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\n")
	script := []toolStep{
		{"Read", map[string]any{"file_path": secret}},
		{"Bash", map[string]any{"command": "cat secrets/key", "description": "read"}},
	}
	model := newMockAnthropic(t, script)
	hook := map[string]any{"type": "command", "timeout": 60,
		"command": policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(w.sessions) + " --config-dir " + policy.ShellQuote(w.cfg) + " hook claude-code"}
	runClaude(t, claude, root, w.proj, model, hook)
	for i := range script {
		if r := model.result(i); !strings.Contains(r.content, "managed.paths.deny[0]") || !strings.Contains(r.content, "no scope change can allow it") {
			t.Errorf("step %d (%s): tool result %q, want the managed denial", i, script[i].name, r.content)
		}
	}
	if model.sawAnywhere(managedSecret) {
		t.Error("the managed-denied file reached the model")
	}
	requireNoOffer(t, w.sessions, len(script))
}

// requireNoOffer requires the one session under sessions to have n
// entries, each denied by the managed policy and none offered.
func requireNoOffer(t *testing.T, sessions string, n int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sessions, "*", "branches", "main", audit.LogFile))
	if len(files) != 1 {
		t.Fatalf("want one session, found %v", files)
	}
	entries, err := audit.ReadFile(files[0], audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("%d entries, want %d: %+v", len(entries), n, entries)
	}
	for _, e := range entries {
		if e.Decision != audit.DecisionDenied || e.Reason != string(policy.ReasonManaged) || e.Offered != "" || e.Answer != "" || e.Widen != nil {
			t.Errorf("entry %s: %s %s offered %q answer %q widen %v, want a managed denial never offered", e.CallID, e.Decision, e.Reason, e.Offered, e.Answer, e.Widen)
		}
	}
}

// TestManagedCodex: the real Codex, with scopegate as its hook, is denied
// by one managed entry.
func TestManagedCodex(t *testing.T) {
	codex := npmclient.Bin(t, "codex")
	root := t.TempDir()
	sessionsDir, cfgDir, proj, codexHome := filepath.Join(root, "sessions"), filepath.Join(root, "config"), filepath.Join(root, "proj"), filepath.Join(root, "codex")
	for _, d := range []string{proj, codexHome, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSecret(t, proj)
	installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\nshell_commands:\n  deny: [\"git push\"]\n")
	script := []string{"cat secrets/key", "git push origin main"}
	model := newMockResponses(t, script)
	hookCmd := policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(sessionsDir) + " --config-dir " + policy.ShellQuote(cfgDir) + " hook codex"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, out := codexCommand(ctx, t, codex, codexHome, model.url, hookCmd, proj, filepath.Join(root, "home"))
	if err := cmd.Run(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out.String())
	}
	for i, rule := range []string{"managed.paths.deny[0]", "managed.shell_commands.deny[0]"} {
		if o := model.output(i); !strings.Contains(o, "blocked by PreToolUse hook") || !strings.Contains(o, rule) {
			t.Errorf("%s: output %q, want the hook's managed denial by %s", script[i], o, rule)
		}
	}
	for _, b := range model.bodies {
		if strings.Contains(b, managedSecret) {
			t.Fatal("the managed-denied file reached the model")
		}
	}
	requireNoOffer(t, sessionsDir, len(script))
}

// TestManagedMCP: the MCP TypeScript SDK client, declaring elicitation, is
// denied by one managed entry and never offered to widen it.
func TestManagedMCP(t *testing.T) {
	npmclient.Node(t)
	w := mcpWorkspace(t)
	writeSecret(t, w.proj)
	installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\n")
	got := runElicit(t, w, []string{"stdio", scopegateBin, w.id}, []elicitStep{
		{Tool: "read_file", Arguments: map[string]any{"path": filepath.Join(w.proj, "secrets", "key")}, Answer: "session"},
		{Tool: "shell", Arguments: map[string]any{"command": "echo ok"}, Answer: "once"},
	})
	if o := got[0]; len(o.Offers) != 0 || !o.IsError || !strings.Contains(o.Text, "managed.paths.deny[0]") || strings.Contains(o.Text, managedSecret) {
		t.Errorf("managed-denied read: %+v, want an error naming the managed entry and no offer", o)
	}
	if o := got[1]; o.IsError || !strings.Contains(o.Text, "ok") {
		t.Errorf("allowed call: %+v", o)
	}
	scope, _ := os.ReadFile(filepath.Join(w.branch, "scope.yml"))
	if strings.Contains(string(scope), "secrets") {
		t.Errorf("scope.yml was widened:\n%s", scope)
	}
}

// TestManagedGptel: gptel's scope writer (yaml.el, as gptel's scope
// expansion rewrites scope.yml) adds a write pattern beyond the ceiling:
// the file keeps it, it has no effect, scope show marks it; scopegate's
// own expansion of it is refused.
func TestManagedGptel(t *testing.T) {
	e := newGptelEnv(t)
	e.mkdirs("proj/.git", "extra")
	proj := filepath.Join(e.root, "proj")
	installManaged(t, "paths:\n  ceiling:\n    read: [\"/**\"]\n    write: [\""+proj+"/**\"]\n")
	e.run(0, "session", "create", "--id", "gm", "--name", "gm", "--project-root", proj)
	sel := []string{"--session", "gm"}
	scope := filepath.Join(e.sessions, "gm", "branches", "main", "scope.yml")
	gptelEmacs(t, "rewrite", []string{"GPTEL_ADD_WRITE=" + e.root + "/extra/**"}, scope)
	written, _ := os.ReadFile(scope)
	if !strings.Contains(string(written), e.root+"/extra/**") {
		t.Fatalf("gptel's expansion is missing:\n%s", written)
	}
	d := e.decide(sel, writeCall(e.root+"/extra/a"))
	if d.Allowed || d.Reason != policy.ReasonManaged || d.Rule != policy.RuleManagedCeilingWrite {
		t.Errorf("write granted by gptel beyond the ceiling: %+v", d)
	}
	if d := e.decide(sel, writeCall(proj+"/a")); !d.Allowed {
		t.Errorf("write within the ceiling: %+v", d)
	}
	out, _ := e.run(0, "scope", "show", "--session", "gm")
	if !strings.Contains(out, e.root+"/extra/** (managed.paths.ceiling.write)") {
		t.Errorf("scope show does not mark gptel's entry:\n%s", out)
	}
	_, errOut := e.run(2, "scope", "expand", "--session", "gm", "--write", e.root+"/more/**")
	if !strings.Contains(errOut, policy.RuleManagedCeilingWrite) {
		t.Errorf("scope expand beyond the ceiling: %q", errOut)
	}
	if after, _ := os.ReadFile(scope); !bytes.Equal(after, written) {
		t.Errorf("scope.yml changed:\n%s", after)
	}
}

// TestManagedTelemetry: the managed policy's export reaches its collector
// from the default and the per-call build, whatever the user's config.yml
// and OTEL_ variables say (another endpoint, the SDK disabled), with the
// policy's digest on the first record after it came.
func TestManagedTelemetry(t *testing.T) {
	otelcolBin(t)
	lean := buildLean(t, true)
	for _, build := range []string{"full", "lean"} {
		t.Run(build, func(t *testing.T) {
			col := startCollector(t)
			w := newWorkspace(t)
			if build == "lean" {
				w.bin = lean
			}
			writeSecret(t, w.proj)
			installManaged(t, "paths:\n  deny: [\"**/secrets/**\"]\ntelemetry: {endpoint: "+strconv.Quote(col.httpURL)+", protocol: http/protobuf}\n")
			if err := os.MkdirAll(w.cfg, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte("telemetry:\n  endpoint: http://127.0.0.1:9\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := w.cmd("call", "--session", w.id, `{"tool":"read_file","args":{"path":"secrets/key"},"cwd":"`+w.proj+`"}`)
			cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://127.0.0.1:9",
				"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_HEADERS=x=y",
				"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=")
			out, _ := cmd.Output()
			var res struct {
				CallID string `json:"call_id"`
			}
			if err := json.Unmarshal(out, &res); err != nil || res.CallID == "" {
				t.Fatalf("call output %q: %v", out, err)
			}
			rec := col.records(t, res.CallID)[res.CallID]
			if rec[telemetry.AttrReason] != string(policy.ReasonManaged) || len(rec[telemetry.AttrManaged]) != 64 {
				t.Errorf("record %v, want the managed denial with the policy's digest", rec)
			}
		})
	}
}
