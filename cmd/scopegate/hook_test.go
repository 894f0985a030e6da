package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	scexec "github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/policy"
)

// hookShell asks `scopegate hook claude-code` about a Bash command in a fresh
// session of w's project and returns the session and call id of the
// rewritten `scopegate exec` command.
func hookShell(t *testing.T, w *workspace, sessionID, command string) (string, string) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": sessionID, "cwd": w.proj, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
	cmd := w.cmd("hook", "claude-code")
	cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	var ans struct {
		H struct {
			Decision string         `json:"permissionDecision"`
			Updated  map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &ans); err != nil || ans.H.Decision != "allow" {
		t.Fatalf("hook answer %s: %v", out, err)
	}
	rewritten, _ := ans.H.Updated["command"].(string)
	m := regexp.MustCompile(`exec --session (\S+) --branch main --call (\S+) -- ` + regexp.QuoteMeta(policy.ShellQuote(command)) + `$`).FindStringSubmatch(rewritten)
	if m == nil || !strings.HasPrefix(rewritten, scopegateBin+" ") {
		t.Fatalf("rewritten command %q does not run this scopegate's exec", rewritten)
	}
	return m[1], m[2]
}

// exitCode runs cmd and returns its exit code, stdout and stderr.
func exitCode(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out), stderr.String()
}

func TestExecRunsAStoredCallOnce(t *testing.T) {
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	if err := os.MkdirAll(w.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	id, call := hookShell(t, w, "sess-1", "printf 'hi\\n'; printf 'warn\\n' >&2; exit 7")
	code, stdout, stderr := exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call))
	if code != 7 || stdout != "hi\n" || stderr != "warn\n" {
		t.Errorf("exec: exit %d, stdout %q, stderr %q; want 7, the command's own output", code, stdout, stderr)
	}
	// tools.org records the run's stderr as it records its stdout.
	es, err := audit.ReadFile(filepath.Join(w.sessions, id, "branches", "main", audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if last := es[len(es)-1]; last.Mode != audit.ModeExec || last.Stdout != "hi\n" || last.Stderr != "warn\n" {
		t.Errorf("the exec entry records stdout %q and stderr %q, want the run's", last.Stdout, last.Stderr)
	}
	code, _, stderr = exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call))
	if code != exitUsage || !strings.Contains(stderr, "already run") {
		t.Errorf("second exec of one call id: exit %d, stderr %q; want %d", code, stderr, exitUsage)
	}

	// Decided again when it runs: a scope that now denies it gives 126.
	_, call = hookShell(t, w, "sess-1", "ls")
	w.run(0, "scope", "expand", "--session", id, "--deny-command", "ls")
	code, stdout, stderr = exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call))
	if code != exitNowDenied || stdout != "" || !strings.Contains(stderr, "shell_commands.deny") {
		t.Errorf("exec of a call the scope now denies: exit %d, stdout %q, stderr %q; want 126 with the reason", code, stdout, stderr)
	}
	code, _, _ = exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", "01NOSUCHCALL000000000000"))
	if code != exitUsage {
		t.Errorf("unknown call id: exit %d, want %d", code, exitUsage)
	}

	// The user's command comes last, and must be the stored one: a command
	// changed after the decision (edited in the agent's dialog) does not
	// run, and spends the call.
	marker := filepath.Join(w.proj, "ran")
	_, call = hookShell(t, w, "sess-1", "touch "+marker)
	code, _, stderr = exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call, "--", "touch "+marker+" && true"))
	if code != exitNowDenied || !strings.Contains(stderr, "changed after the decision") {
		t.Errorf("exec of another command: exit %d, stderr %q; want 126", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the changed command ran")
	}
	if code, _, _ := exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call, "--", "touch "+marker)); code != exitUsage {
		t.Errorf("exec after a refused one: exit %d, want %d (the call is spent)", code, exitUsage)
	}
	_, call = hookShell(t, w, "sess-1", "touch "+marker)
	if code, _, stderr := exitCode(t, w.cmd("exec", "--session", id, "--branch", "main", "--call", call, "--", "touch "+marker)); code != 0 {
		t.Errorf("exec with its own command: exit %d, stderr %q", code, stderr)
	}
}

// With a serve holding the sessions root, check, call and hook forward to
// it over its private socket, so its /metrics counts them with their via.
func TestCLIForwardsToServe(t *testing.T) {
	w := newWorkspace(t, "true")
	s := startServe(t, w)
	sock := filepath.Join(w.sessions, ".scopegate.sock")
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("serve's socket %s: %v (mode %v), want a 0600 socket", sock, err, fi.Mode())
	}
	w.run(3, "check", "--session", w.id, `{"tool":"shell","args":{"command":"curl x"}}`)
	w.run(0, "call", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"true"},"cwd":%q}`, w.proj))
	hookShell(t, w, w.id, "true")
	_, text := get(t, s.url+"/metrics")
	for _, tc := range []struct{ labels []string }{
		{[]string{`decision="denied"`, `via="cli"`, `tool="shell"`}},
		{[]string{`decision="allowed"`, `via="cli"`, `tool="shell"`}},
		{[]string{`decision="allowed"`, `via="hook"`, `tool="shell"`}},
	} {
		if v := metricValue(t, text, "scopegate_tool_calls_total", tc.labels...); v != 1 {
			t.Errorf("scopegate_tool_calls_total%v = %v, want 1 (forwarded to serve)", tc.labels, v)
		}
	}
	s.stop()
	if _, err := os.Stat(sock); err == nil {
		t.Error("serve left its socket behind")
	}
	// Without a serve, the CLI decides in-process.
	w.run(3, "check", "--session", w.id, `{"tool":"shell","args":{"command":"curl x"}}`)
}

// A hook whose decision hangs (here: a serve socket that accepts and never
// answers) denies within its deadline instead of leaving the agent to time
// out, which both agents take as "run the tool".
func TestHookDeniesWhenTheDecisionHangs(t *testing.T) {
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	for _, d := range []string{w.sessions, w.proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", filepath.Join(w.sessions, ".scopegate.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	in := `{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	cmd := w.cmd("hook", "claude-code")
	cmd.Stdin = strings.NewReader(in)
	code, stdout, _ := exitCode(t, cmd)
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) || !strings.Contains(stdout, "no decision within") {
		t.Errorf("exit %d, stdout %q; want a deny for the hung decision", code, stdout)
	}
}

// An agent the hook does not know gets no options (never another agent's),
// and the known agents' exec command lines carry the confinement resolved
// from SCOPEGATE_CONFINE, the same the gateway runs with.
func TestHookOptions(t *testing.T) {
	t.Setenv("SCOPEGATE_CONFINE", "off")
	t.Setenv("CLAUDE_PROJECT_DIR", t.TempDir())
	a := &app{sessionsDir: t.TempDir(), configDir: t.TempDir(), roamDir: t.TempDir()}
	if _, err := a.hookOptions("cursor", config.Hooks{}); err == nil || !strings.Contains(err.Error(), `unknown agent "cursor"`) {
		t.Errorf("options of an unknown agent: error %v, want unknown agent", err)
	}
	for _, agent := range agents.Names() {
		o, err := a.hookOptions(agent, config.Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		if line := o.ExecCommand("s", "main", "c1", "ls"); !strings.Contains(line, " --confine off exec ") {
			t.Errorf("%s exec command %q, want --confine off", agent, line)
		}
	}
	if c := a.gatewayOptions(nil, nil, nil).Confine; c != scexec.ConfineOff {
		t.Errorf("gateway confinement %v, want ConfineOff", c)
	}
}
