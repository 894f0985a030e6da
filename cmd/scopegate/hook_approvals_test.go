package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
)

// hookAnswer is the part of a Claude Code hook answer the tests read.
type hookAnswer struct {
	Decision string         `json:"permissionDecision"`
	Reason   string         `json:"permissionDecisionReason"`
	Updated  map[string]any `json:"updatedInput"`
}

// askHook runs `scopegate hook AGENT` on one tool call of session in
// permission mode mode ("" sends none) and returns the answer.
func askHook(t *testing.T, w *workspace, agent, session, mode, tool string, input map[string]any) hookAnswer {
	t.Helper()
	in := map[string]any{"session_id": session, "cwd": w.proj, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input}
	if mode != "" {
		in["permission_mode"] = mode
	}
	raw, _ := json.Marshal(in)
	cmd := w.cmd("hook", agent)
	cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
	cmd.Dir = w.proj
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	var ans struct {
		H hookAnswer `json:"hookSpecificOutput"`
	}
	if len(out) == 0 {
		return hookAnswer{Decision: "(empty)"}
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("hook answer %s: %v", out, err)
	}
	return ans.H
}

// TestHookAsk: Claude Code's hook leaves a call denied for a scope reason
// to the user ("ask") in the permission modes where a user is asked, naming
// the widening; a Bash command is rewritten to the exec of a one-time grant
// that runs exactly that call once and leaves the scope as it was. Hard
// denials, the other modes, Codex and approvals: deny are denied.
func TestHookAsk(t *testing.T) {
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	if err := os.MkdirAll(w.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.proj, ".env"), []byte("KEY="+secretCanary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside.txt")
	bash := map[string]any{"command": "date +approved-%Y", "description": "date"}

	a := askHook(t, w, "claude-code", "ask-1", "auto", "Bash", bash)
	cmdline, _ := a.Updated["command"].(string)
	// The user's command comes last, where Claude Code's dialog shows it.
	m := regexp.MustCompile(`exec --session (\S+) --branch main --call (\S+) -- ` + regexp.QuoteMeta(`'date +approved-%Y'`) + `$`).FindStringSubmatch(cmdline)
	if a.Decision != "ask" || !strings.Contains(a.Reason, "--allow-command date") || m == nil || !strings.HasPrefix(cmdline, scopegateBin+" ") {
		t.Fatalf("widenable Bash in default mode: %+v, want ask naming --allow-command date with the exec rewrite", a)
	}
	session, callID := m[1], m[2]
	branch := filepath.Join(w.sessions, session, "branches", "main")
	scopeBefore, _ := os.ReadFile(filepath.Join(branch, "scope.yml"))
	if _, err := os.Stat(filepath.Join(branch, gateway.GrantsDir, callID+".json")); err != nil {
		t.Fatalf("no grant stored for %s: %v", callID, err)
	}
	// What Claude Code runs once the user approves: exactly this call, once.
	code, stdout, stderr := exitCode(t, exec.Command("sh", "-c", cmdline))
	if code != 0 || !strings.HasPrefix(stdout, "approved-") {
		t.Fatalf("approved exec: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, _ := exitCode(t, exec.Command("sh", "-c", cmdline)); code == 0 {
		t.Error("the approved exec ran a second time")
	}
	if after, _ := os.ReadFile(filepath.Join(branch, "scope.yml")); string(after) != string(scopeBefore) {
		t.Errorf("once changed scope.yml:\n%s", after)
	}
	// The same command again is asked again, and its grant is its own.
	b := askHook(t, w, "claude-code", "ask-1", "default", "Bash", bash)
	if b.Decision != "ask" || b.Updated["command"] == cmdline {
		t.Errorf("the same Bash again: %+v, want a new ask with a new call id", b)
	}

	// A file tool: ask; Claude Code performs it once the user approves.
	if a := askHook(t, w, "claude-code", "ask-1", "acceptEdits", "Write", map[string]any{"file_path": outside, "content": "x"}); a.Decision != "ask" ||
		!strings.Contains(a.Reason, "--write "+outside) || a.Updated != nil {
		t.Errorf("widenable Write in acceptEdits: %+v", a)
	}
	// Never asked: hard denials, modes without a user, unknown modes, Codex.
	for _, c := range []struct {
		agent, mode, tool string
		input             map[string]any
	}{
		{"claude-code", "default", "Read", map[string]any{"file_path": filepath.Join(w.proj, ".env")}},
		{"claude-code", "default", "Bash", map[string]any{"command": "rm -rf " + filepath.Join(root, "x")}},
		{"claude-code", "bypassPermissions", "Bash", bash},
		{"claude-code", "dontAsk", "Write", map[string]any{"file_path": outside, "content": "x"}},
		{"claude-code", "", "Bash", bash},
		{"claude-code", "someNewMode", "Bash", bash},
		{"codex", "default", "Bash", bash},
	} {
		if a := askHook(t, w, c.agent, "ask-1", c.mode, c.tool, c.input); a.Decision != "deny" || a.Updated != nil {
			t.Errorf("%s %s in mode %q: %+v, want deny", c.agent, c.tool, c.mode, a)
		}
	}
	// approvals: deny turns it off.
	if err := os.MkdirAll(w.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte("approvals: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a := askHook(t, w, "claude-code", "ask-1", "default", "Bash", bash); a.Decision != "deny" || !strings.Contains(a.Reason, "date") {
		t.Errorf("approvals: deny: %+v, want deny with scopegate's reason", a)
	}

	// tools.org: the asks are recorded as such, naming the widening and the
	// channel; the approved run says so.
	es, err := audit.ReadFile(filepath.Join(branch, "tools.org"), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var asked, approved int
	for _, e := range es {
		switch {
		case e.Decision == audit.DecisionAsked:
			asked++
			if e.Channel != gateway.ChannelHookAsk || e.Answer != gateway.AnswerAsk || e.Offered == "" || e.Mode != audit.ModeHook {
				t.Errorf("asked entry %+v", e)
			}
		case e.Mode == audit.ModeExec:
			if e.CallID == callID && e.Approved == gateway.AnswerOnce && e.Channel == gateway.ChannelHookAsk && e.Decision == audit.DecisionAllowed {
				approved++
			} else {
				t.Errorf("exec entry %+v", e)
			}
		case e.Offered != "":
			t.Errorf("entry %+v records an offer", e)
		}
	}
	if asked != 3 || approved != 1 {
		t.Errorf("%d asked and %d approved entries, want 3 and 1", asked, approved)
	}
}

// sendHook runs `scopegate hook claude-code` on one hook input of session
// and returns its stdout.
func sendHook(t *testing.T, w *workspace, session string, in map[string]any) string {
	t.Helper()
	in["session_id"], in["cwd"] = session, w.proj
	raw, _ := json.Marshal(in)
	cmd := w.cmd("hook", "claude-code")
	cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
	cmd.Dir = w.proj
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook %v: %v", in["hook_event_name"], err)
	}
	return string(out)
}

// TestHookAskLifecycle: nothing a Claude Code ask leaves outlives it. A turn
// that ends with the call not run removes its stored call and grant and
// records the refusal; a grant used after approval_timeout_seconds runs
// nothing and records no approval; a file tool the user approved is
// recorded when Claude Code reports it ran; an offer that could not let the
// call run is not made, and the denial says why.
func TestHookAskLifecycle(t *testing.T) {
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	outside := filepath.Join(root, "outside")
	for _, d := range []string{w.proj, outside, w.cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte("approval_timeout_seconds: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pre := func(id, tool string, input map[string]any) hookAnswer {
		out := sendHook(t, w, "life-1", map[string]any{"hook_event_name": "PreToolUse", "permission_mode": "default",
			"tool_name": tool, "tool_use_id": id, "tool_input": input})
		var ans struct {
			H hookAnswer `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(out), &ans); err != nil {
			t.Fatalf("hook answer %q: %v", out, err)
		}
		return ans.H
	}
	branch := filepath.Join(w.sessions, "life-1", "branches", "main")
	left := func() []string {
		var files []string
		for _, d := range []string{gateway.GrantsDir, gateway.StoredCallsDir, gateway.AsksDir} {
			m, _ := filepath.Glob(filepath.Join(branch, d, "*"))
			files = append(files, m...)
		}
		return files
	}

	// A turn ends with the asked command not run (the user said No).
	declined := pre("toolu_1", "Bash", map[string]any{"command": "touch ../outside/declined.txt"})
	cmdline, _ := declined.Updated["command"].(string)
	if declined.Decision != "ask" || !strings.HasPrefix(declined.Reason, "touch ../outside/declined.txt: ") || len(left()) != 3 {
		t.Fatalf("ask: %+v, stored %v", declined, left())
	}
	if out := sendHook(t, w, "life-1", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "never mind"}); out != "" {
		t.Errorf("UserPromptSubmit answered %q, want nothing", out)
	}
	if files := left(); len(files) != 0 {
		t.Errorf("after the turn, the branch still holds %v", files)
	}
	if code, _, stderr := exitCode(t, exec.Command("sh", "-c", cmdline)); code != exitUsage || !strings.Contains(stderr, "declined") {
		t.Errorf("exec of a declined ask: exit %d, stderr %q", code, stderr)
	}

	// Yes, given after approval_timeout_seconds.
	late := pre("toolu_2", "Bash", map[string]any{"command": "touch ../outside/late.txt"})
	cmdline, _ = late.Updated["command"].(string)
	time.Sleep(1500 * time.Millisecond)
	if code, _, stderr := exitCode(t, exec.Command("sh", "-c", cmdline)); code != exitNowDenied || !strings.Contains(stderr, "expired") {
		t.Errorf("exec of an expired grant: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "late.txt")); err == nil {
		t.Error("the expired grant let the command run")
	}

	// A Write the user approved, reported by Claude Code's PostToolUse.
	written := filepath.Join(outside, "w.txt")
	if a := pre("toolu_3", "Write", map[string]any{"file_path": written, "content": "x"}); a.Decision != "ask" {
		t.Fatalf("Write outside: %+v", a)
	}
	sendHook(t, w, "life-1", map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "toolu_3",
		"tool_input": map[string]any{"file_path": written, "content": "x"}, "tool_response": map[string]any{"type": "create"}})

	// Offers that could not let the call run are not made.
	for command, why := range map[string]string{
		"mkdir ../outside/d":    "makes the directory",
		"touch ../none/new.txt": "nor does its directory",
	} {
		if a := pre("toolu_x", "Bash", map[string]any{"command": command}); a.Decision != "deny" || !strings.Contains(a.Reason, "not offered for approval: ") || !strings.Contains(a.Reason, why) {
			t.Errorf("%s: %+v, want a denial saying it is not offered because it %s", command, a, why)
		}
	}

	es, err := audit.ReadFile(filepath.Join(branch, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range es {
		if e.Decision == audit.DecisionAsked {
			if e.AgentTool == "Write" && !strings.Contains(e.Message, "whether it ran is unknown") {
				t.Errorf("the asked Write says %q; with no PostToolUse hook in Claude Code's settings its outcome is unknown", e.Message)
			}
			continue
		}
		if e.Approved != "" && e.Decision != audit.DecisionAllowed {
			t.Errorf("entry %s records an approval for a call that did not run: %+v", e.CallID, e)
		}
		outcomes = append(outcomes, e.Mode+" "+e.Decision+" "+e.Answer)
	}
	want := "hook denied decline|exec denied |hook allowed once|hook denied |hook denied "
	if got := strings.Join(outcomes, "|"); got != want {
		t.Errorf("outcomes %q, want %q", got, want)
	}
}
