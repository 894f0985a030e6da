package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/policy"
)

// TestClaudeCodePathRules: Claude Code's Read and Edit rules meet the files
// a shell command reads and writes, as Claude Code 2.1.331 applies them
// (measured with a hook that allows without rewriting, deny rules
// Read(./.env) and Edit(*.md)).
func TestClaudeCodePathRules(t *testing.T) {
	proj := t.TempDir()
	for _, f := range []string{".env", "sub/.env", "notes.md", "sub/x.txt"} {
		p := filepath.Join(proj, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings := filepath.Join(proj, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions":{"deny":["Read(./.env)","Edit(*.md)","Bash(whoami)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := readAgentRules(agents.ClaudeCode, agents.Env{ProjectDir: proj, ConfigDir: filepath.Join(proj, "no-config")})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Cwd: proj, Execution: policy.ExecutionConfined}
	for command, want := range map[string]string{
		"cat .env": "Read(./.env)", "cat sub/.env": "Read(./.env)", "grep x .env": "Read(./.env)", "cat ./sub/../.env": "Read(./.env)",
		"echo y > notes.md": "Edit(*.md)", "echo y > new.md": "Edit(*.md)", "cp sub/x.txt sub/copy.md": "Edit(*.md)", "touch sub/t.md": "Edit(*.md)",
		"whoami":    "Bash(whoami)",
		"echo .env": "", "cat notes.md": "", "ls sub": "", "cat sub/x.txt": "", "whoami -u": "",
	} {
		hits := r.check(agents.ClaudeCode, shellCall(command, proj), env)
		var texts []string
		for _, h := range hits {
			texts = append(texts, h.text)
			if h.decision != agents.RuleDeny || !strings.Contains(h.rule, settings) {
				t.Errorf("%q: hit %+v", command, h)
			}
		}
		if got := strings.Join(texts, " "); want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%q: hits %q, want %q", command, got, want)
		}
	}
}

// TestReadAgentRulesFailsClosed: a settings or rules file that cannot be
// read is an error, never no rule.
func TestReadAgentRulesFailsClosed(t *testing.T) {
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.local.json"), []byte(`{"permissions":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readAgentRules(agents.ClaudeCode, agents.Env{ProjectDir: proj}); err == nil || !strings.Contains(err.Error(), "settings.local.json") {
		t.Errorf("broken settings: %v", err)
	}
	codex := filepath.Join(t.TempDir(), "codex")
	if err := os.MkdirAll(filepath.Join(codex, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codex, "rules", "default.rules"), []byte("prefix_rule(pattern=[\"rm\"], decision=\"sometimes\")\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readAgentRules(agents.Codex, agents.Env{ConfigDir: codex}); err == nil || !strings.Contains(err.Error(), "default.rules:1") {
		t.Errorf("broken rules: %v", err)
	}
	if _, err := readAgentRules(agents.ClaudeCode, agents.Env{PID: 1 << 30}); err == nil {
		t.Error("an unreadable command line is no error")
	}
}
