package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// claudeEnv is the environment of a Claude Code run of the tests: its own
// home and configuration directory, the scripted model, no traffic beyond.
func claudeEnv(root, proj, modelURL string) []string {
	return append(os.Environ(), "PWD="+proj, "HOME="+filepath.Join(root, "home"), "CLAUDE_CONFIG_DIR="+filepath.Join(root, "claude"),
		"ANTHROPIC_BASE_URL="+modelURL, "ANTHROPIC_API_KEY="+claudeTestKey, "DISABLE_TELEMETRY=1", "IS_SANDBOX=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
}

// claudeTestKey is the API key the tests give Claude Code (the scripted
// model takes any).
const claudeTestKey = "sk-ant-test-scopegate-0123456789abcdef"

// writeJSONFile writes v as JSON to path, making its directory.
func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runClaudeHeadless runs `claude -p` in proj with settingsFile, against
// model, and returns its output.
func runClaudeHeadless(t *testing.T, claude, root, proj, settingsFile string, model *mockAnthropic, args ...string) string {
	t.Helper()
	for _, d := range []string{filepath.Join(root, "home"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, append([]string{"-p", "Work through the task.", "--settings", settingsFile, "--output-format", "json"}, args...)...)
	cmd.Dir = proj
	cmd.Env = claudeEnv(root, proj, model.url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out.String())
	}
	return out.String()
}

// claudeMeasuredRules is agents' table of Claude Code's verdicts on Bash
// commands under a set of deny rules.
type claudeMeasuredRules struct {
	Version string   `json:"version"`
	Deny    []string `json:"deny"`
	Cases   []struct {
		Command string `json:"command"`
		Denied  bool   `json:"denied"`
	} `json:"cases"`
}

// TestClaudeCodeRules measures again, on the installed Claude Code, the
// verdicts of agents/testdata/claudecode_bash_rules.json, which scopegate's
// matcher of Claude Code's rules is tested against: Claude Code applies its
// rules to each command itself (its hook allows without rewriting), and
// every command the table says it denies must be denied, every other must
// not be.
func TestClaudeCodeRules(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	data, err := os.ReadFile("../../agents/testdata/claudecode_bash_rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var m claudeMeasuredRules
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	writeJSONFile(t, filepath.Join(proj, ".claude", "settings.json"), map[string]any{"permissions": map[string]any{"deny": m.Deny}})
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	var script []toolStep
	for _, c := range m.Cases {
		script = append(script, toolStep{"Bash", map[string]any{"command": c.Command, "description": "measure"}})
	}
	model := newMockAnthropic(t, script)
	allow := `sh -c 'cat >/dev/null; echo "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"measuring\"}}"'`
	settingsFile := filepath.Join(root, "settings.json")
	writeJSONFile(t, settingsFile, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": allow}}}}}})
	runClaudeHeadless(t, claude, root, proj, settingsFile, model)
	for i, c := range m.Cases {
		r := model.result(i)
		denied := strings.Contains(r.content, "has been denied")
		if denied != c.Denied {
			t.Errorf("%q: Claude Code denied it: %v, the table (measured on %s) says %v; result %q", c.Command, denied, m.Version, c.Denied, r.content)
		}
	}
}

// TestClaudeCodeKeepsItsDenyRules: under scopegate's hook, Claude Code's
// own permissions.deny still refuses what it names, though the hook
// answers with a rewritten command that Claude Code would match its rules
// against instead: scopegate applies them to the user's command first; a
// command its permissions.ask names is still asked (and, headless, refused
// for want of anyone to answer). A command the rules leave alone runs
// through scopegate exec.
func TestClaudeCodeKeepsItsDenyRules(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	writeJSONFile(t, filepath.Join(proj, ".claude", "settings.json"), map[string]any{"permissions": map[string]any{
		"deny": []string{"Bash(echo:*)"}, "ask": []string{"Bash(wc:*)"}}})
	if err := os.WriteFile(filepath.Join(proj, "listed.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	marker := filepath.Join(proj, "echo-ran")
	model := newMockAnthropic(t, []toolStep{
		{"Bash", map[string]any{"command": "echo ran > " + marker, "description": "echo"}},
		{"Bash", map[string]any{"command": "ls", "description": "list"}},
		{"Bash", map[string]any{"command": "wc -l listed.txt", "description": "count"}},
	})
	sessions := filepath.Join(root, "sessions")
	hook := policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(sessions) + " --config-dir " +
		policy.ShellQuote(filepath.Join(root, "config")) + " --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook claude-code"
	settingsFile := filepath.Join(root, "settings.json")
	writeJSONFile(t, settingsFile, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": hook, "timeout": 60}}}}}})
	runClaudeHeadless(t, claude, root, proj, settingsFile, model)

	if _, err := os.Stat(marker); err == nil {
		t.Error("echo ran, though Claude Code's permissions.deny names it")
	}
	if r := model.result(0); !r.isError || !strings.Contains(r.content, "Bash(echo:*)") {
		t.Errorf("echo: tool result %+v, want a refusal naming the rule Bash(echo:*)", r)
	}
	if r := model.result(1); r.isError || !strings.Contains(r.content, "listed.txt") {
		t.Errorf("ls: tool result %+v, want its listing", r)
	}
	if r := model.result(2); !r.isError || !strings.Contains(r.content, "Bash(wc:*)") || !strings.Contains(r.content, "asks its user") {
		t.Errorf("wc: tool result %+v, want the ask naming the rule Bash(wc:*), refused headless", r)
	}
	files, _ := filepath.Glob(filepath.Join(sessions, "*", "branches", "main", "tools.org"))
	if len(files) != 1 {
		t.Fatalf("tools.org files %v, want the hook's one session", files)
	}
	es, err := audit.ReadFile(files[0], audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var denied, asked, ran int
	for _, e := range es {
		switch {
		case e.Mode == audit.ModeHook && e.Decision == audit.DecisionDenied && strings.Contains(e.Rule, "Bash(echo:*)"):
			denied++
		case e.Mode == audit.ModeHook && e.Decision == audit.DecisionAsked && strings.Contains(e.Rule, "Bash(wc:*)"):
			asked++
		case e.Mode == audit.ModeExec && e.Decision == audit.DecisionAllowed:
			ran++
		}
	}
	if denied != 1 || asked != 1 || ran != 1 {
		t.Errorf("tools.org has %d denials by the rule, %d asks and %d runs, want 1 of each: %+v", denied, asked, ran, es)
	}
}
