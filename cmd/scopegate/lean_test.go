package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildLean builds the per-call build as released (CGO_ENABLED=0
// -trimpath -ldflags='-s -w' -tags lean) into a fresh directory, with this
// test's default build next to it as scopegate-full when withFull, and
// returns its path.
func buildLean(t testing.TB, withFull bool) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "scopegate")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-tags", "lean", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the per-call build: %v\n%s", err, out)
	}
	if withFull {
		if err := os.Symlink(scopegateBin, filepath.Join(dir, fullBinary)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// TestLeanBuild: the per-call build answers as the default build does, and
// its serve and mcp are the default build's, with the same help.
func TestLeanBuild(t *testing.T) {
	lean := buildLean(t, true)
	w := newWorkspace(t, "true")
	full := *w
	w.bin = lean
	for _, args := range [][]string{
		{"version"},
		{"--help"},
		{"serve", "--help"},
		{"mcp", "--help"},
		{"--sessions-dir", w.sessions, "serve", "--help"},
		{"check", "--help"},
		{"check", "--session", full.id, `{"tool":"shell","args":{"command":"curl x"}}`},
		{"serve", "--listen", "nonsense"},
		{"mcp", "--create", "--session", "x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			wantCode, wantOut, wantErr := exitCode(t, full.cmd(args...))
			code, out, stderr := exitCode(t, w.cmd(args...))
			if code != wantCode || out != wantOut || stderr != wantErr {
				t.Errorf("per-call build: exit %d\n%s\n%s\ndefault build: exit %d\n%s\n%s", code, out, stderr, wantCode, wantOut, wantErr)
			}
		})
	}
}

// TestLeanServeHandsOver: a serve started through the per-call build is the
// default build's, and the hooks it answers rewrite shell commands to the
// per-call build, whose exec runs them.
func TestLeanServeHandsOver(t *testing.T) {
	lean := buildLean(t, true)
	w := newWorkspace(t, "true")
	w.bin = lean
	s := startServe(t, w)
	if _, text := get(t, s.url+"/healthz"); text == "" {
		t.Fatal("no /healthz answer")
	}
	in, _ := json.Marshal(map[string]any{"session_id": w.id, "cwd": w.proj, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "true"}})
	cmd := w.cmd("hook", "claude-code")
	cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	var ans struct {
		H struct {
			Updated map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("hook answer %s: %v", out, err)
	}
	rewritten, _ := ans.H.Updated["command"].(string)
	real, err := filepath.EvalSymlinks(lean)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rewritten, real+" ") {
		t.Fatalf("rewritten command %q does not run the per-call build %s", rewritten, real)
	}
	run := exec.Command("sh", "-c", rewritten)
	run.Env = w.cmd().Env
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", rewritten, err, out)
	}
	_, text := get(t, s.url+"/metrics")
	if v := metricValue(t, text, "scopegate_tool_calls_total", `via="hook"`); v != 1 {
		t.Errorf("scopegate_tool_calls_total{via=hook} = %v, want 1 (the hook forwarded to serve)", v)
	}
	s.stop()
}

// TestLeanWithoutFull: without scopegate-full next to it, the per-call
// build's serve and mcp say what to build, and exit 1.
func TestLeanWithoutFull(t *testing.T) {
	lean := buildLean(t, false)
	w := newWorkspace(t)
	w.bin = lean
	for _, cmd := range []string{"serve", "mcp"} {
		code, _, stderr := exitCode(t, w.cmd(cmd, "--help"))
		if code != exitInternal || !strings.Contains(stderr, fullBinary) || !strings.Contains(stderr, "go build") {
			t.Errorf("%s without %s: exit %d, stderr %q", cmd, fullBinary, code, stderr)
		}
	}
}

// TestLeanDeadCode: nothing in the per-call build makes reflect's method
// lookup reachable (text/template does), which would keep every exported
// method of every linked type in the binary and slow every start.
func TestLeanDeadCode(t *testing.T) {
	lean := filepath.Join(t.TempDir(), "scopegate") // with its symbol table
	if out, err := exec.Command("go", "build", "-tags", "lean", "-o", lean, ".").CombinedOutput(); err != nil {
		t.Fatalf("build the per-call build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", lean).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, "reflect.Value.MethodByName") || strings.HasSuffix(line, "reflect.Value.Method") {
			t.Errorf("the per-call build links %s", strings.TrimSpace(line))
		}
	}
}
