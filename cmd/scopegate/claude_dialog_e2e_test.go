package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// TestClaudeCodeDialog runs the real Claude Code interactively, in a
// pseudo-terminal, with scopegate's hooks as README installs them and the
// scripted model, and answers its permission dialogs as a user does:
//
//   - a read outside the project: the dialog shows the user's command, and
//     Yes runs it once;
//   - a new file outside the project made by a shell command: Yes creates it;
//   - a Write outside the project: Yes lets Claude Code write it, and
//     tools.org records that it ran;
//   - a shell command answered No: nothing runs, and once the turn is over
//     no grant or stored call is left.
func TestClaudeCodeDialog(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	root := t.TempDir()
	proj, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
	sessions := filepath.Join(root, "sessions")
	for _, d := range []string{proj, outside, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "outside-secret-5d1e"
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	const (
		readCmd  = "cat ../outside/secret.txt"
		touchCmd = "touch ../outside/new.txt"
		noCmd    = "touch ../outside/refused.txt"
	)
	written := filepath.Join(outside, "written.txt")
	model := newMockAnthropic(t, []toolStep{
		{"Bash", map[string]any{"command": readCmd, "description": "read the secret"}},
		{"Bash", map[string]any{"command": touchCmd, "description": "make a file"}},
		{"Write", map[string]any{"file_path": written, "content": "written\n"}},
		{"Bash", map[string]any{"command": noCmd, "description": "make another file"}},
	})
	// The hook's sessions: the project readable and writable, and the
	// programs the script runs.
	cfg := filepath.Join(root, "config")
	for name, content := range map[string]string{
		"config.yml": "hooks:\n  profile: project\n",
		"scope-profiles/project.yml": "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\n  deny: [\"**/.git/**\"]\n" +
			"shell_commands:\n  allow: [cat, touch, ls]\n",
	} {
		p := filepath.Join(cfg, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(sessions, "*", "branches", "main", audit.LogFile))
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, data)
			}
		}
	})
	hook := policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(sessions) + " --config-dir " +
		policy.ShellQuote(cfg) + " --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook claude-code"
	settingsFile := filepath.Join(root, "settings.json")
	writeJSONFile(t, settingsFile, claudeCodeHookSettings(hook))
	claudeHome(t, filepath.Join(root, "claude"), proj, claudeTestKey)

	cmd := exec.Command(claude, "--settings", settingsFile)
	cmd.Dir = proj
	cmd.Env = append(claudeEnv(root, proj, model.url), "TERM=xterm-256color")
	term := startClaudeTerminal(t, cmd)
	term.expect("shift+tab to cycle", 90*time.Second)
	term.typeKeys("Work through the task.")
	time.Sleep(500 * time.Millisecond)
	term.typeKeys("\r")

	// 1. The dialog names the user's command, in the hook's reason and as
	// the last argument of the command it approves; Yes runs it once.
	shown := squeeze(term.expect("Do you want to proceed?", 2*time.Minute))
	if !strings.Contains(shown, squeeze("requires confirmation for this command: "+readCmd)) || !strings.Contains(shown, squeeze("-- '"+readCmd+"'")) {
		t.Errorf("the dialog does not show the user's command %q first in its reason and last in the command:\n%s", readCmd, shown)
	}
	// 2. Yes on a new file outside the project: the command creates it.
	shown = squeeze(term.choose("1", "Do you want to proceed?", 2*time.Minute))
	if !strings.Contains(shown, squeeze("-- '"+touchCmd+"'")) {
		t.Errorf("the second dialog does not show %q:\n%s", touchCmd, shown)
	}
	// 3. A Write outside the project: Claude Code's own file dialog.
	term.choose("1", "Do you want to create written.txt?", 2*time.Minute)
	// 4. No: Claude Code stops the turn.
	term.choose("1", "Do you want to proceed?", 2*time.Minute)
	term.choose("2", "What should Claude do instead?", time.Minute)
	// The user goes on: a new turn, and with it the end of the asks left
	// waiting.
	term.typeKeys("Stop here.")
	time.Sleep(500 * time.Millisecond)
	term.typeKeys("\r")
	term.expect("done", 2*time.Minute)

	if r := model.result(0); r.isError || !strings.Contains(r.content, secret) {
		t.Errorf("approved read: tool result %+v, want the file's content", r)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err != nil {
		t.Errorf("the approved touch did not create its file: %v (tool result %+v)", err, model.result(1))
	}
	if data, err := os.ReadFile(written); err != nil || string(data) != "written\n" {
		t.Errorf("the approved Write: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "refused.txt")); err == nil {
		t.Error("the command answered No ran")
	}
	branch := hookBranch(t, sessions)
	for _, dir := range []string{gateway.GrantsDir, gateway.StoredCallsDir} {
		if left, _ := filepath.Glob(filepath.Join(branch, dir, "*")); len(left) > 0 {
			t.Errorf("%s holds %v after the turn", dir, left)
		}
	}

	es, err := audit.ReadFile(filepath.Join(branch, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	byCall := map[string][]audit.Entry{}
	var order []string
	for _, e := range es {
		if _, seen := byCall[e.CallID]; !seen {
			order = append(order, e.CallID)
		}
		byCall[e.CallID] = append(byCall[e.CallID], e)
	}
	if len(order) != 4 {
		t.Fatalf("tools.org has %d calls, want 4: %+v", len(order), es)
	}
	for i, want := range []struct {
		decision, answer, approved, mode string
	}{
		{audit.DecisionAllowed, gateway.AnswerOnce, gateway.AnswerOnce, audit.ModeExec},
		{audit.DecisionAllowed, gateway.AnswerOnce, gateway.AnswerOnce, audit.ModeExec},
		{audit.DecisionAllowed, gateway.AnswerOnce, gateway.AnswerOnce, audit.ModeHook},
		{audit.DecisionDenied, gateway.AnswerDecline, "", audit.ModeHook},
	} {
		entries := byCall[order[i]]
		if len(entries) != 2 || entries[0].Decision != audit.DecisionAsked {
			t.Errorf("call %d: entries %+v, want an asked entry and its outcome", i, entries)
			continue
		}
		last := entries[1]
		if last.Decision != want.decision || last.Answer != want.answer || last.Approved != want.approved || last.Mode != want.mode {
			t.Errorf("call %d: outcome %s answer %q approved %q mode %s, want %s %q %q %s", i, last.Decision, last.Answer, last.Approved, last.Mode,
				want.decision, want.answer, want.approved, want.mode)
		}
	}
	// The approved run is spent: its exec again finds no call.
	again := exec.Command(scopegateBin, "--sessions-dir", sessions, "exec", "--session", filepath.Base(filepath.Dir(filepath.Dir(branch))),
		"--branch", "main", "--call", order[0], "--", readCmd)
	if out, err := again.CombinedOutput(); err == nil || strings.Contains(string(out), secret) {
		t.Errorf("the approved call ran again: %v\n%s", err, out)
	}
}

// claudeCodeHookSettings are the hooks README's settings line installs:
// PreToolUse decides every tool call; PostToolUse records what became of a
// call the user was asked about; UserPromptSubmit, Stop and SessionEnd end
// the asks a turn left waiting.
func claudeCodeHookSettings(command string) map[string]any {
	h := []any{map[string]any{"type": "command", "command": command, "timeout": 60}}
	hooks := map[string]any{}
	for _, ev := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"} {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": h}}
	}
	for _, ev := range []string{"UserPromptSubmit", "Stop", "SessionEnd"} {
		hooks[ev] = []any{map[string]any{"hooks": h}}
	}
	return map[string]any{"hooks": hooks}
}

// hookBranch is the branch directory of the one session the hook made.
func hookBranch(t *testing.T, sessions string) string {
	t.Helper()
	branches, _ := filepath.Glob(filepath.Join(sessions, "*", "branches", "main"))
	if len(branches) != 1 {
		t.Fatalf("sessions made by the hook: %v, want one", branches)
	}
	return branches[0]
}
