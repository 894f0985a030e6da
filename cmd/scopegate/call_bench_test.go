package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCLICall measures a whole `scopegate call` process of the
// per-call build (start, load the branch, decide, run, audit with fsync)
// beside running the same work directly, in the same run. Report ratios,
// e.g. call_shell_true/landlock over direct/sh_c_true.
func BenchmarkCLICall(b *testing.B) {
	bin := buildLean(b, false)
	cmdWith := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		return cmd
	}
	root := b.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	small := filepath.Join(proj, "small.txt")
	if err := os.WriteFile(small, []byte("hello scopegate\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+filepath.Join(root, "sessions"),
		"SCOPEGATE_CONFIG_DIR="+filepath.Join(root, "config"), "HOME="+filepath.Join(root, "home"))
	id := benchSession(b, func(args ...string) *exec.Cmd { return cmdWith(env, args...) }, proj, "bench")
	callJSON := func(tool string, args map[string]any) string {
		c, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": proj})
		return string(c)
	}
	run := func(b *testing.B, cmd func() *exec.Cmd) {
		b.ReportAllocs()
		for b.Loop() {
			if out, err := cmd().CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	}
	b.Run("direct/sh_c_true", func(b *testing.B) { run(b, func() *exec.Cmd { return exec.Command("sh", "-c", "true") }) })
	b.Run("direct/cat_small", func(b *testing.B) { run(b, func() *exec.Cmd { return exec.Command("cat", small) }) })
	for _, confine := range []string{"landlock", "off"} {
		b.Run("call_shell_true/"+confine, func(b *testing.B) {
			run(b, func() *exec.Cmd {
				return cmdWith(env, "--confine", confine, "call", "--session", id, callJSON("shell", map[string]any{"command": "true"}))
			})
		})
		b.Run("call_shell_bin_true/"+confine, func(b *testing.B) {
			run(b, func() *exec.Cmd {
				return cmdWith(env, "--confine", confine, "call", "--session", id, callJSON("shell", map[string]any{"command": "/usr/bin/true"}))
			})
		})
		b.Run("call_read_file/"+confine, func(b *testing.B) {
			run(b, func() *exec.Cmd {
				return cmdWith(env, "--confine", confine, "call", "--session", id, callJSON("read_file", map[string]any{"path": small}))
			})
		})
	}
}

// BenchmarkCLICallNetwork measures `scopegate call` of shell `true` (the
// interpreter's builtin) and `/usr/bin/true` (a program, in its own
// network namespace unless the network is the host's) on three branches
// whose scopes differ only in network: none, a host list, any. Each
// iteration makes one call of each, in turn, so that the three share the
// machine's moments; it reports each one's median and the ratios to any.
func BenchmarkCLICallNetwork(b *testing.B) {
	bin := buildLean(b, false)
	root := b.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+filepath.Join(root, "sessions"),
		"SCOPEGATE_CONFIG_DIR="+filepath.Join(root, "config"), "HOME="+filepath.Join(root, "home"))
	command := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		return cmd
	}
	modes := []struct {
		name   string
		expand []string
		id     string
	}{
		{name: "none"},
		{name: "list", expand: []string{"--allow-host", "example.com", "--allow-host", "proxy.golang.org:443"}},
		{name: "any", expand: []string{"--network", "any"}},
	}
	for i, m := range modes {
		modes[i].id = benchSession(b, command, proj, "net-"+m.name, m.expand...)
	}
	for _, program := range []struct{ name, command string }{{"builtin_true", "true"}, {"program_true", "/usr/bin/true"}} {
		call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": program.command}, "cwd": proj})
		b.Run(program.name, func(b *testing.B) {
			took := make([][]time.Duration, len(modes))
			n := 0
			for b.Loop() {
				for k := range modes {
					m := (n + k) % len(modes) // each mode first in turn
					start := time.Now()
					if out, err := command("call", "--session", modes[m].id, string(call)).CombinedOutput(); err != nil {
						b.Fatalf("%s: %v: %s", modes[m].name, err, out)
					}
					took[m] = append(took[m], time.Since(start))
				}
				n++
			}
			median := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			med := make([]float64, len(modes))
			for m := range modes {
				med[m] = median(took[m])
				b.ReportMetric(med[m], modes[m].name+"-ms")
			}
			b.ReportMetric(med[0]/med[2], "none/any")
			b.ReportMetric(med[1]/med[2], "list/any")
		})
	}
}

// benchSession creates a session of the worktree proj with command (the
// binary under test), allows `true` and reading /usr/bin, widens its scope
// with expand, and returns its id.
func benchSession(b *testing.B, command func(args ...string) *exec.Cmd, proj, name string, expand ...string) string {
	b.Helper()
	out, err := command("session", "create", "--name", name, "--worktree", proj).Output()
	if err != nil {
		b.Fatalf("session create: %v", err)
	}
	var created struct {
		ID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &created); err != nil {
		b.Fatal(err)
	}
	args := append([]string{"scope", "expand", "--session", created.ID, "--allow-command", "true", "--read", "/usr/bin/**"}, expand...)
	if out, err := command(args...).CombinedOutput(); err != nil {
		b.Fatalf("scope expand: %v: %s", err, out)
	}
	return created.ID
}
