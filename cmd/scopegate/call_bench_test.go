package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	out, err := cmdWith(env, "session", "create", "--name", "bench", "--worktree", proj).Output()
	if err != nil {
		b.Fatalf("session create: %v", err)
	}
	var created struct {
		ID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &created); err != nil {
		b.Fatal(err)
	}
	if err := cmdWith(env, "scope", "expand", "--session", created.ID, "--allow-command", "true", "--read", "/usr/bin/**").Run(); err != nil {
		b.Fatal(err)
	}
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
				return cmdWith(env, "--confine", confine, "call", "--session", created.ID, callJSON("shell", map[string]any{"command": "true"}))
			})
		})
		b.Run("call_shell_bin_true/"+confine, func(b *testing.B) {
			run(b, func() *exec.Cmd {
				return cmdWith(env, "--confine", confine, "call", "--session", created.ID, callJSON("shell", map[string]any{"command": "/usr/bin/true"}))
			})
		})
		b.Run("call_read_file/"+confine, func(b *testing.B) {
			run(b, func() *exec.Cmd {
				return cmdWith(env, "--confine", confine, "call", "--session", created.ID, callJSON("read_file", map[string]any{"path": small}))
			})
		})
	}
}

// BenchmarkCLICallNetwork measures `scopegate call` of shell `true` (the
// interpreter's builtin) and `/usr/bin/true` (a program, in its own
// network namespace unless the network is the host's) on three branches
// whose scopes differ only in network: none, a host list, any. Run with
// -count to alternate; report none and list over any.
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
	for _, network := range []struct {
		name   string
		expand []string
	}{
		{"none", nil},
		{"list", []string{"--allow-host", "example.com", "--allow-host", "proxy.golang.org:443"}},
		{"any", []string{"--network", "any"}},
	} {
		out, err := command("session", "create", "--name", "net-"+network.name, "--worktree", proj).Output()
		if err != nil {
			b.Fatalf("session create: %v", err)
		}
		var created struct {
			ID string `json:"session_id"`
		}
		if err := json.Unmarshal(out, &created); err != nil {
			b.Fatal(err)
		}
		expand := append([]string{"scope", "expand", "--session", created.ID, "--allow-command", "true", "--read", "/usr/bin/**"}, network.expand...)
		if out, err := command(expand...).CombinedOutput(); err != nil {
			b.Fatalf("scope expand: %v: %s", err, out)
		}
		for _, program := range []string{"true", "/usr/bin/true"} {
			call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": program}, "cwd": proj})
			b.Run(filepath.Base(program)+"_"+map[bool]string{true: "builtin", false: "program"}[program == "true"]+"/"+network.name, func(b *testing.B) {
				for b.Loop() {
					if out, err := command("call", "--session", created.ID, string(call)).CombinedOutput(); err != nil {
						b.Fatalf("%v: %s", err, out)
					}
				}
			})
		}
	}
}
