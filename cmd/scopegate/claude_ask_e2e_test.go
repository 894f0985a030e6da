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

// claudeAskRun is what one headless Claude Code run did with a hook that
// answers "ask" to every tool call.
type claudeAskRun struct {
	modes    []string // permission_mode of each hook input
	ranBash  bool
	ranWrite bool
	results  []toolResult
	output   string
}

// runClaudeAsk runs `claude -p` in permission mode mode (none: no flag)
// with hook as its PreToolUse command hook; the scripted model makes a
// Bash call and a Write call outside the project, each of which leaves a
// marker file when it runs. It returns the run and its root directory.
func runClaudeAsk(t *testing.T, claude, mode string, hook func(root string) string) (claudeAskRun, string) {
	t.Helper()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	for _, d := range []string{proj, filepath.Join(root, "home"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bashMarker, writeMarker := filepath.Join(root, "bash-ran"), filepath.Join(root, "write-ran")
	model := newMockAnthropic(t, []toolStep{
		{"Bash", map[string]any{"command": "touch " + bashMarker, "description": "leave a marker"}},
		{"Write", map[string]any{"file_path": writeMarker, "content": "x\n"}},
	})
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "timeout": 60, "command": hook(root)}}}}}})
	settingsFile := filepath.Join(root, "settings.json")
	if err := os.WriteFile(settingsFile, settings, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-p", "Work through the task.", "--settings", settingsFile, "--output-format", "json"}
	if mode != "" {
		args = append(args, "--permission-mode", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = proj
	cmd.Env = append(claudeEnv(root, proj, model.url), "ASK_LOG="+filepath.Join(root, "ask.log"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	run := claudeAskRun{output: out.String()}
	if err != nil {
		t.Logf("claude -p (%s): %v\n%s", mode, err, out.String())
	}
	log, _ := os.ReadFile(filepath.Join(root, "ask.log"))
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		var in struct {
			PermissionMode string `json:"permission_mode"`
		}
		if json.Unmarshal([]byte(line), &in) == nil {
			run.modes = append(run.modes, in.PermissionMode)
		}
	}
	_, errB := os.Stat(bashMarker)
	_, errW := os.Stat(writeMarker)
	run.ranBash, run.ranWrite = errB == nil, errW == nil
	for i := range 2 {
		run.results = append(run.results, model.result(i))
	}
	return run, root
}

// TestClaudeCodeAsk measures, on the real Claude Code, what a PreToolUse
// "ask" does in the permission modes a headless run (-p) can use: the hook
// input names the mode, and nobody being there to answer, the call is
// refused with the hook's reason (docs/approvals.md has the table). Then
// scopegate's own hook, in every mode: a call denied for a scope reason
// (a Bash write and a Write outside the project) never runs, the model
// reads scopegate's reason, and tools.org says whether it was left to the
// user (asked) or denied.
func TestClaudeCodeAsk(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	askHook := func(string) string {
		return `sh -c 'cat >> "$ASK_LOG"; echo >> "$ASK_LOG"; echo "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"measuring ask\"}}"'`
	}
	for _, mode := range []string{"", "default", "acceptEdits", "bypassPermissions"} {
		t.Run("ask/mode="+mode, func(t *testing.T) {
			r, _ := runClaudeAsk(t, claude, mode, askHook)
			want := mode
			if want == "" {
				want = "default"
			}
			if len(r.modes) != 2 || r.modes[0] != want || r.modes[1] != want {
				t.Errorf("hook inputs carried permission_mode %v, want %q twice", r.modes, want)
			}
			if r.ranBash || r.ranWrite {
				t.Errorf("ask became an allow: bash ran %v, write ran %v", r.ranBash, r.ranWrite)
			}
			for i, res := range r.results {
				if !res.isError || !strings.Contains(res.content, "measuring ask") {
					t.Errorf("tool result %d: %+v, want a refusal with the hook's reason", i, res)
				}
			}
		})
	}
	for _, mode := range []string{"", "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"} {
		t.Run("scopegate/mode="+mode, func(t *testing.T) {
			var sessions string
			r, root := runClaudeAsk(t, claude, mode, func(root string) string {
				sessions = filepath.Join(root, "sessions")
				return policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(sessions) + " --config-dir " +
					policy.ShellQuote(filepath.Join(root, "config")) + " --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook claude-code"
			})
			if r.ranBash || r.ranWrite {
				t.Fatalf("a call outside the scope ran: bash %v, write %v\n%s", r.ranBash, r.ranWrite, r.output)
			}
			asks := mode == "" || mode == "default" || mode == "acceptEdits" || mode == "plan" || mode == "auto"
			for i, want := range []string{"--write " + filepath.Join(root, "bash-ran"), "--write " + filepath.Join(root, "write-ran")} {
				if res := r.results[i]; !res.isError || !strings.Contains(res.content, "scopegate") || !strings.Contains(res.content, want) {
					t.Errorf("tool result %d: %+v, want scopegate's reason naming %s", i, res, want)
				}
			}
			files, _ := filepath.Glob(filepath.Join(sessions, "*", "branches", "main", "tools.org"))
			if len(files) != 1 {
				t.Fatalf("tools.org files %v, want the hook's one session", files)
			}
			es, err := audit.ReadFile(files[0], audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			want := audit.DecisionDenied
			if asks {
				want = audit.DecisionAsked
			}
			if len(es) != 2 || es[0].Decision != want || es[1].Decision != want {
				t.Errorf("tools.org %+v, want two %s entries", es, want)
			}
			for _, e := range es {
				if e.Mode == audit.ModeExec {
					t.Errorf("an exec ran: %+v", e)
				}
			}
		})
	}
}
