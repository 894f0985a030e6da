package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
)

// TestHookKeepsAgentRules: a hook applies the agent's own rules to the
// user's command before it rewrites it, since the agent would match them
// against the rewritten command. A rule that denies denies, naming itself;
// one that asks asks where the agent asks its user, and denies where it
// cannot.
func TestHookKeepsAgentRules(t *testing.T) {
	root := t.TempDir()
	proj, claudeDir, codexHome := filepath.Join(root, "proj"), filepath.Join(root, "claude"), filepath.Join(root, "codex")
	for path, content := range map[string]string{
		filepath.Join(proj, "secret.txt"):               "s",
		filepath.Join(proj, ".git", "HEAD"):             "ref: refs/heads/main\n",
		filepath.Join(proj, ".claude", "settings.json"): `{"permissions":{"deny":["Bash(echo:*)","Read(secret.txt)"],"ask":["Bash(wc:*)"]}}`,
		filepath.Join(claudeDir, "settings.json"):       `{"permissions":{"deny":["Bash(uname:*)"]}}`,
		filepath.Join(codexHome, "rules", "a.rules"):    `prefix_rule(pattern=["wc"], decision="prompt")` + "\n" + `prefix_rule(pattern=["echo"], decision="forbidden", justification="use printf")`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := gateway.New(gateway.Options{SessionsDir: filepath.Join(root, "sessions"), ConfigDir: filepath.Join(root, "config"), Home: filepath.Join(root, "home"),
		Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
	hook := func(agent, mode, command string) (string, string, string) {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "rules-" + agent, "cwd": proj, "hook_event_name": "PreToolUse",
			"permission_mode": mode, "tool_name": "Bash", "tool_input": map[string]any{"command": command}})
		o := gateway.HookOptions{ProjectDir: proj, Approvals: true, ExecCommand: func(s, b, c, cmd string) string { return "exec " + c + " -- " + cmd }}
		if agent == agents.ClaudeCode {
			o.Agent = agents.Env{ConfigDir: claudeDir}
		} else {
			o.Agent = agents.Env{ConfigDir: codexHome}
		}
		ans := g.Hook(context.Background(), agent, in, o)
		var out struct {
			H struct {
				Decision string         `json:"permissionDecision"`
				Reason   string         `json:"permissionDecisionReason"`
				Updated  map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		_ = json.Unmarshal(ans.Stdout, &out)
		cmd, _ := out.H.Updated["command"].(string)
		return out.H.Decision, out.H.Reason, cmd
	}
	for _, tc := range []struct {
		agent, mode, command string
		decision, reason     string
	}{
		{agents.ClaudeCode, "default", "echo hi", "deny", "Claude Code's permission rule Bash(echo:*) (deny, in " + filepath.Join(proj, ".claude", "settings.json") + ") refuses this command"},
		{agents.ClaudeCode, "default", "uname -a", "deny", "Bash(uname:*) (deny, in " + filepath.Join(claudeDir, "settings.json")},
		{agents.ClaudeCode, "default", "cat secret.txt", "deny", "Read(secret.txt)"},
		{agents.ClaudeCode, "default", "wc -c secret.txt", "deny", "Read(secret.txt)"},
		{agents.ClaudeCode, "default", "wc -l .git/HEAD", "deny", ""},
		{agents.ClaudeCode, "default", "wc -l x.txt", "ask", "wc -l x.txt: Claude Code's permission rule Bash(wc:*) (ask, in "},
		{agents.ClaudeCode, "bypassPermissions", "wc -l x.txt", "deny", "Bash(wc:*) (ask, in " + filepath.Join(proj, ".claude", "settings.json") + ") asks its user before this command runs, and nobody can be asked here"},
		{agents.ClaudeCode, "default", "ls", "allow", ""},
		{agents.Codex, "", "echo hi", "deny", `prefix_rule(pattern=["echo"], decision="forbidden") (deny, in ` + filepath.Join(codexHome, "rules", "a.rules") + ":2) refuses this command: use printf"},
		{agents.Codex, "", "wc -l x.txt", "deny", "and Codex's hook cannot ask"},
		{agents.Codex, "", "ls", "allow", ""},
	} {
		decision, reason, cmd := hook(tc.agent, tc.mode, tc.command)
		if tc.agent == agents.Codex && decision == "" {
			decision = "allow" // Codex's allow is the empty answer, or a rewrite
		}
		if decision != tc.decision || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s %s %q: %s %q, want %s %q", tc.agent, tc.mode, tc.command, decision, reason, tc.decision, tc.reason)
		}
		if (decision == "ask" || decision == "allow" && tc.agent == agents.ClaudeCode) && !strings.HasSuffix(cmd, " -- "+tc.command) {
			t.Errorf("%s %q: rewritten to %q, want the exec of the user's command", tc.agent, tc.command, cmd)
		}
	}
}
