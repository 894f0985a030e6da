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

	"github.com/scopegate/scopegate/internal/npmclient"
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
// Bash call and a Write call, each of which leaves a marker file when it
// runs.
func runClaudeAsk(t *testing.T, claude, mode string, hook func(root string) string) claudeAskRun {
	t.Helper()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	for _, d := range []string{proj, filepath.Join(root, "home"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bashMarker, writeMarker := filepath.Join(proj, "bash-ran"), filepath.Join(proj, "write-ran")
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
	cmd.Env = append(os.Environ(), "PWD="+proj, "HOME="+filepath.Join(root, "home"), "CLAUDE_CONFIG_DIR="+filepath.Join(root, "claude"),
		"ANTHROPIC_BASE_URL="+model.url, "ANTHROPIC_API_KEY=sk-ant-test-scopegate", "DISABLE_TELEMETRY=1", "IS_SANDBOX=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "ASK_LOG="+filepath.Join(root, "ask.log"))
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
	return run
}

// TestClaudeCodeAskMeasured measures, on the real Claude Code, what a
// PreToolUse "ask" does in each permission mode a headless run can use.
func TestClaudeCodeAskMeasured(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	askHook := func(root string) string {
		return `sh -c 'cat >> "$ASK_LOG"; echo >> "$ASK_LOG"; echo "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"measuring ask\"}}"'`
	}
	for _, mode := range []string{"", "default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"} {
		t.Run("mode="+mode, func(t *testing.T) {
			r := runClaudeAsk(t, claude, mode, askHook)
			t.Logf("mode %q: hook saw %v; bash ran %v, write ran %v; results %+v", mode, r.modes, r.ranBash, r.ranWrite, r.results)
		})
	}
}
