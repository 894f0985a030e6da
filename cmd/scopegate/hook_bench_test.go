package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkHook measures one hook decision as an agent pays for it: a whole
// `scopegate hook claude-code` process (command hook), and one POST to a
// running serve (HTTP hook), for an allowed Read and an allowed Bash (which
// also stores the call). It reports p50 and p99 per decision.
func BenchmarkHook(b *testing.B) {
	root := b.TempDir()
	w := &workspace{root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	if err := os.MkdirAll(filepath.Join(w.proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	input := func(tool string, in map[string]any) string {
		d, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": w.proj, "hook_event_name": "PreToolUse",
			"tool_name": tool, "tool_input": in})
		return string(d)
	}
	calls := map[string]string{
		"read": input("Read", map[string]any{"file_path": filepath.Join(w.proj, "a.txt")}),
		"bash": input("Bash", map[string]any{"command": "go test ./... | tail -5"}),
	}
	report := func(b *testing.B, ds []time.Duration) {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
	}
	for _, name := range []string{"read", "bash"} {
		b.Run("command/"+name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				cmd := w.cmd("hook", "claude-code")
				cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+w.proj)
				cmd.Stdin = strings.NewReader(calls[name])
				start := time.Now()
				out, err := cmd.Output()
				ds = append(ds, time.Since(start))
				if err != nil || !strings.Contains(string(out), `"allow"`) {
					b.Fatalf("hook: %v %s", err, out)
				}
			}
			report(b, ds)
		})
	}
	s := startServe(b, w).url
	client := &http.Client{}
	for _, name := range []string{"read", "bash"} {
		b.Run("http/"+name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				req, _ := http.NewRequest("POST", s+"/v1/hooks/claude-code", strings.NewReader(calls[name]))
				req.Header.Set("X-Scopegate-Project-Dir", w.proj)
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var ans map[string]any
				json.NewDecoder(resp.Body).Decode(&ans)
				resp.Body.Close()
				ds = append(ds, time.Since(start))
			}
			report(b, ds)
		})
	}
}
