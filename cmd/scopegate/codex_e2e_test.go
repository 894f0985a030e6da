package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// mockResponses is a scripted stand-in for the OpenAI Responses API on
// loopback, streaming as the real API does (response.created, output items,
// response.completed). A request carrying n function call outputs is
// answered with step n of the script (an exec_command call), then a closing
// message; it records every function call output the agent sends back.
type mockResponses struct {
	t       *testing.T
	script  []string // commands, one exec_command call each
	url     string
	mu      sync.Mutex
	outputs map[string]string // by call id
	bodies  []string
}

func newMockResponses(t *testing.T, script []string) *mockResponses {
	t.Helper()
	m := &mockResponses{t: t, script: script, outputs: map[string]string{}}
	m.url = serveLoopback(t, http.HandlerFunc(m.serve)) + "/v1"
	return m
}

func (m *mockResponses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	n := 0
	m.mu.Lock()
	m.bodies = append(m.bodies, string(body))
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			n++
			m.outputs[in.CallID] = resultText(in.Output)
		}
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		d, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], d)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_mock"}})
	if n < len(m.script) {
		args, _ := json.Marshal(map[string]string{"cmd": m.script[n]})
		event(map[string]any{"type": "response.output_item.done", "item": map[string]any{"type": "function_call",
			"id": fmt.Sprintf("fc_%02d", n), "call_id": fmt.Sprintf("call_%02d", n), "name": "exec_command", "arguments": string(args)}})
	} else {
		event(map[string]any{"type": "response.output_item.done", "item": map[string]any{"type": "message", "role": "assistant",
			"id": "msg_mock", "content": []any{map[string]any{"type": "output_text", "text": "done"}}}})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_mock",
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
}

func (m *mockResponses) output(i int) string {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out, ok := m.outputs[fmt.Sprintf("call_%02d", i)]
	if !ok {
		m.t.Fatalf("codex sent no output for step %d (%s)", i, m.script[i])
	}
	return out
}

// TestCodexHooks drives the real Codex CLI (`codex exec`) against a scripted
// Responses API on loopback, with scopegate as its PreToolUse command hook
// in config.toml. Codex runs hooks only when trusted; the test passes its
// --dangerously-bypass-hook-trust, as an automation that vets its hooks does.
func TestCodexHooks(t *testing.T) {
	codex := npmclient.Bin(t, "codex")
	root := t.TempDir()
	sessionsDir, cfgDir, proj := filepath.Join(root, "sessions"), filepath.Join(root, "config"), filepath.Join(root, "proj")
	codexHome := filepath.Join(root, "codex")
	for _, d := range []string{proj, codexHome, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".env"), []byte("KEY="+secretCanary+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "list.txt"), []byte(".env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	// Codex's own rule forbids echo: under scopegate's hook, whose rewritten
	// command Codex would match its rules against, scopegate applies it to
	// the model's command.
	if err := os.MkdirAll(filepath.Join(codexHome, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "rules", "default.rules"),
		[]byte("prefix_rule(pattern = [\"echo\"], decision = \"forbidden\", justification = \"use printf\")\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	echoMarker := filepath.Join(proj, "echo-ran")
	script := []string{
		"printf 'codex-%s\\n' confined; exit 4",
		"curl http://example.invalid/x",
		"cat .env",
		"cat $(sort list.txt)",
		"echo ran > " + echoMarker,
	}
	model := newMockResponses(t, script)
	hookCmd := policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(sessionsDir) + " --config-dir " + policy.ShellQuote(cfgDir) +
		" --roam-dir " + policy.ShellQuote(filepath.Join(root, "roam")) + " hook codex"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, out := codexCommand(ctx, t, codex, codexHome, model.url, hookCmd, proj, filepath.Join(root, "home"))
	if err := cmd.Run(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out.String())
	}

	if o := model.output(0); !strings.Contains(o, "codex-confined") || !strings.Contains(o, "exited with code 4") {
		t.Errorf("allowed command: output %q, want its output and exit code 4", o)
	}
	if o := model.output(1); !strings.Contains(o, "blocked by PreToolUse hook") || !strings.Contains(o, "curl is not in shell_commands.allow") {
		t.Errorf("denied command: output %q, want scopegate's reason", o)
	}
	if o := model.output(2); !strings.Contains(o, "is denied by paths.deny") {
		t.Errorf("denied read of .env: output %q", o)
	}
	if o := model.output(3); !strings.Contains(o, "scopegate: denied") {
		t.Errorf("run-time escape: output %q, want a run-time refusal", o)
	}
	if o := model.output(4); !strings.Contains(o, "blocked by PreToolUse hook") || !strings.Contains(o, `prefix_rule(pattern=["echo"]`) || !strings.Contains(o, "use printf") {
		t.Errorf("a command Codex's own rule forbids: output %q, want scopegate's refusal naming the rule", o)
	}
	if _, err := os.Stat(echoMarker); err == nil {
		t.Error("echo ran, though Codex's own rule forbids it")
	}
	for _, b := range model.bodies {
		if strings.Contains(b, secretCanary) {
			t.Fatal("the denied file's content reached the model")
		}
	}
	files, _ := filepath.Glob(filepath.Join(sessionsDir, "*", "branches", "main", "tools.org"))
	if len(files) != 1 {
		t.Fatalf("want one session made by the hook, found %v", files)
	}
	entries, err := audit.ReadFile(files[0], audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]int{}
	for _, e := range entries {
		modes[e.Mode]++
	}
	if modes[audit.ModeHook] != len(script) || modes[audit.ModeExec] != 2 {
		t.Errorf("tools.org entries by mode %v, want %d hook and 2 exec", modes, len(script))
	}
}

// codexCommand is `codex exec` in dir, its model the scripted one at
// modelURL and hookCmd its PreToolUse command hook (config.toml in
// codexHome, trust bypassed as an automation that vets its hooks does),
// and the buffer its output goes to.
func codexCommand(ctx context.Context, t *testing.T, codex, codexHome, modelURL, hookCmd, dir, home string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	config := fmt.Sprintf(`model = "gpt-test"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
env_key = "SCOPEGATE_TEST_API_KEY"

[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
timeout = 60
`, modelURL, hookCmd)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"-s", "danger-full-access", "Work through the task.")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+codexHome, "SCOPEGATE_TEST_API_KEY=test")
	cmd.Stdin = strings.NewReader("")
	out := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}
