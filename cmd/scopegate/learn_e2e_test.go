package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// credentialCanary is the content of a credential file, which no mode
// lets through.
const credentialCanary = "SCOPEGATE-E2E-AWS-CANARY-41c9"

// TestClaudeCodeObserveLearn drives the real Claude Code against a
// scripted model, with scopegate as its command hook, through learning a
// scope: a session in observe mode runs a task that reads and writes
// outside the project and runs commands the scope does not allow, all
// recorded as observed; scope suggest --apply widens the scope from them;
// the branch is set to enforce; the same task, resumed in the same Claude
// Code session, then runs with no denial. A credential read is refused in
// both runs.
func TestClaudeCodeObserveLearn(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	outside := filepath.Join(root, "outside")
	home := filepath.Join(root, "home")
	for _, d := range []string{w.proj, outside, filepath.Join(home, ".aws"), filepath.Join(root, "claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(w.proj, "notes.txt"), "first\nsecond\n")
	write(filepath.Join(outside, "in.txt"), "outside input\n")
	write(filepath.Join(home, ".aws", "credentials"), "aws_secret_access_key="+credentialCanary+"\n")
	if out, err := exec.Command("git", "-C", w.proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}

	// The Claude Code session and its scopegate session, made beforehand in
	// observe mode from the restricted profile (read the project only, no
	// writes, no shell).
	const claudeSession = "5d0c6a44-3f7e-4b59-9a51-8e2f4c1d7a10"
	w.id, w.branch = claudeSession, filepath.Join(w.sessions, claudeSession, "branches", "main")
	w.run(0, "session", "create", "--id", claudeSession, "--name", "learn", "--profile", "restricted",
		"--project-root", w.proj, "--mode", "observe")

	task := func(run string) []toolStep {
		return []toolStep{
			{"Read", map[string]any{"file_path": filepath.Join(outside, "in.txt")}},
			{"Write", map[string]any{"file_path": filepath.Join(outside, "out.txt"), "content": "written in " + run}},
			{"Bash", map[string]any{"command": "tac notes.txt", "description": "reverse"}},
			{"Bash", map[string]any{"command": "wc -l " + filepath.Join(outside, "in.txt"), "description": "count"}},
			{"Read", map[string]any{"file_path": filepath.Join(home, ".aws", "credentials")}},
		}
	}
	hook := map[string]any{"type": "command", "timeout": 60,
		"command": policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(w.sessions) + " --config-dir " + policy.ShellQuote(w.cfg) +
			" --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook claude-code"}
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "*", "hooks": []any{hook}}}}})
	settingsFile := filepath.Join(root, "settings.json")
	write(settingsFile, string(settings))
	runClaude := func(model *mockAnthropic, session ...string) {
		t.Helper()
		runClaudeHeadless(t, claude, root, w.proj, settingsFile, model, session...)
	}
	// checkRun checks the task's results from step first on: every step
	// ran but the credential read.
	checkRun := func(model *mockAnthropic, first int, run string) {
		t.Helper()
		if r := model.result(first); r.isError || !strings.Contains(r.content, "outside input") {
			t.Errorf("%s: Read outside the project: %+v", run, r)
		}
		if r := model.result(first + 1); r.isError {
			t.Errorf("%s: Write outside the project: %+v", run, r)
		}
		if data, err := os.ReadFile(filepath.Join(outside, "out.txt")); err != nil || string(data) != "written in "+run {
			t.Errorf("%s: the file written outside the project: %q, %v", run, data, err)
		}
		if r := model.result(first + 2); r.isError || !strings.Contains(r.content, "second\nfirst") {
			t.Errorf("%s: Bash tac: %+v", run, r)
		}
		if r := model.result(first + 3); r.isError || !strings.Contains(r.content, "1 "+filepath.Join(outside, "in.txt")) {
			t.Errorf("%s: Bash wc outside the project: %+v", run, r)
		}
		if r := model.result(first + 4); !strings.Contains(r.content, "is denied by paths.deny") {
			t.Errorf("%s: credential Read: tool result %q, want scopegate's denial", run, r.content)
		}
		if model.sawAnywhere(credentialCanary) {
			t.Errorf("%s: the credential reached the model", run)
		}
	}

	// 1. Observe: the task runs; what enforce would deny is recorded.
	first := newMockAnthropic(t, task("observe"))
	runClaude(first, "--session-id", claudeSession)
	checkRun(first, 0, "observe")
	observed := 0
	for _, e := range w.entries() {
		if e.Decision == audit.DecisionObserved {
			observed++
		}
		if e.Decision == audit.DecisionDenied && !strings.Contains(e.Resource, ".aws") {
			t.Errorf("observe run: denied %s %s (%s)", e.Tool, e.Summary, e.Reason)
		}
	}
	if observed < 4 {
		t.Errorf("observe run: %d observed entries, want one per step but the credential read", observed)
	}

	// 2. Suggest and apply; 3. enforce.
	out := w.run(0, "scope", "suggest", "--session", claudeSession, "--json")
	for _, want := range []string{`"--allow-command","value":"tac"`, `"--allow-command","value":"wc"`,
		`"--read","value":"` + filepath.Join(outside, "in.txt") + `"`, `"--write","value":"` + filepath.Join(outside, "out.txt") + `"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("scope suggest: %s, want %s in it", out, want)
		}
	}
	if strings.Contains(string(out), ".aws") {
		t.Errorf("scope suggest proposed the credential: %s", out)
	}
	w.run(0, "scope", "suggest", "--session", claudeSession, "--apply")
	w.run(0, "scope", "mode", "--session", claudeSession, "enforce")
	before := len(w.entries())

	// 4. The same task again, enforced, in the same Claude Code session.
	second := newMockAnthropic(t, append(make([]toolStep, 5), task("enforce")...))
	runClaude(second, "--resume", claudeSession)
	checkRun(second, 5, "enforce")
	later := w.entries()[before:]
	if len(later) == 0 {
		t.Fatal("the enforced run left no entries: it did not reach scopegate's session")
	}
	for _, e := range later {
		switch {
		case e.Decision == audit.DecisionObserved:
			t.Errorf("enforce run: observed %s %s", e.Tool, e.Summary)
		case e.Decision == audit.DecisionDenied && !strings.Contains(e.Resource, ".aws"):
			t.Errorf("enforce run: denied %s %s (%s)", e.Tool, e.Summary, e.Reason)
		}
	}
}
