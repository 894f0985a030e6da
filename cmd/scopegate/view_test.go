package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const (
	viewCanary  = "CANARY-SECRET-8812"
	viewAllowed = "CANARY-ALLOWED-3"
)

// requireProgram fails under CI=true when a program the test runs is
// missing (scripts/install-test-deps.sh installs it), and skips elsewhere.
func requireProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (scripts/install-test-deps.sh installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// TestRecursiveReadersConfined runs the recursive readers an agent uses
// most, and a project script, through `call` over a worktree holding
// denied files, links out of it and planted programs. Decided for
// confined execution they are allowed, and the private view keeps every
// denied byte out of their output; decided for external execution
// (`check`), the same commands are refused.
func TestRecursiveReadersConfined(t *testing.T) {
	for _, p := range []string{"rg", "git", "python3", "tar"} {
		requireProgram(t, p)
	}
	w := newWorkspace(t)
	outside, err := os.MkdirTemp("/var/tmp", "scopegate-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	home := filepath.Join(w.root, "home")
	marker := filepath.Join(w.root, "planted-ran")
	files := map[string]string{
		"sub/a.txt":                 "an " + viewAllowed + " line\n",
		"notes.md":                  viewAllowed + " in notes\n",
		".gitignore":                ".env\nnode_modules/\n",
		".env":                      viewCanary + "\n",
		"sub/.env":                  viewCanary + "\n",
		"node_modules/x/secret.txt": viewCanary + "\n",
		"probe.py": strings.Join([]string{
			"import glob, os",
			"paths = [os.path.join(d, f) for d, _, fs in os.walk('.', followlinks=True) for f in fs]",
			"paths += ['out/secret.txt', '/etc/shadow', '/etc/gshadow', os.path.expanduser('~/.ssh/id_rsa')]",
			"paths += glob.glob('/proc/*/environ')",
			"for p in paths:",
			"    try: print(p, open(p, errors='replace').read())",
			"    except OSError as e: print(p, e)",
		}, "\n") + "\n",
		"grep": "#!/bin/sh\ntouch " + marker + "\n",
		"rg":   "#!/bin/sh\ntouch " + marker + "\n",
	}
	for name, content := range files {
		p := filepath.Join(w.proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.txt"):  viewCanary + "\n",
		filepath.Join(home, ".ssh", "id_rsa"): viewCanary + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"out": outside, "sshlink": filepath.Join(home, ".ssh"), "envlink": ".env",
		"sub/outlink": outside} {
		if err := os.Symlink(target, filepath.Join(w.proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", w.proj, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "sub/a.txt", "notes.md", ".gitignore")
	git("commit", "-qm", "init")
	// The worktree's scope, as session create writes it, with the programs.
	scope := "paths:\n  read: ['" + w.proj + "/**']\n  write: ['" + w.proj + "/**']\n" +
		"  deny: ['**/.git/**', '**/.env', '**/node_modules/**', '**/.ssh/**']\n" +
		"shell_commands:\n  allow: [grep, rg, git, tar, cp, find, cat, python3, sh]\n"
	if err := os.WriteFile(filepath.Join(w.branch, "scope.yml"), []byte(scope), 0o644); err != nil {
		t.Fatal(err)
	}
	// A process outside the call whose environment holds the canary.
	sleeper := exec.Command("sleep", "60")
	sleeper.Env = []string{"OUTSIDE=" + viewCanary}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })

	run := func(mode, command string) (map[string]any, int) {
		t.Helper()
		call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": command}, "cwd": w.proj})
		cmd := w.cmd(mode, "--session", w.id, string(call))
		// The worktree first on PATH: its planted grep and rg must not run.
		cmd.Env = append(cmd.Env, "PATH="+w.proj+":/usr/local/bin:/usr/bin:/bin")
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s %q: output %q: %v", mode, command, out, err)
		}
		return res, code
	}
	for _, tc := range []struct {
		command string
		// recursive: a reader check refuses (external execution).
		recursive bool
		want      string
	}{
		{"grep -r CANARY .", true, "sub/a.txt:an " + viewAllowed},
		{"grep -R CANARY .", true, "sub/a.txt:an " + viewAllowed},
		{"grep -rn --include='*.md' CANARY .", false, "notes.md:1:" + viewAllowed},
		{"rg CANARY .", false, viewAllowed},
		{"rg -uuu CANARY .", true, viewAllowed},
		{"rg -L -uuu CANARY .", true, viewAllowed},
		{"find -L . -type f -name '*.txt'", false, "sub/a.txt"},
		{"git grep CANARY", false, "sub/a.txt:an " + viewAllowed},
		{"tar -ch . | tar -xO | grep -a CANARY", true, viewAllowed},
		{"cp -rL sub copy 2>/dev/null; grep -r CANARY copy", true, viewAllowed},
		{"python3 probe.py", false, viewAllowed},
	} {
		t.Run(tc.command, func(t *testing.T) {
			res, code := run("call", tc.command)
			dec := res["decision"].(map[string]any)
			if dec["allowed"] != true || dec["execution"] != "confined" {
				t.Fatalf("call: decision %v, want allowed and confined", dec)
			}
			result, _ := res["result"].(map[string]any)
			out := strings.Join([]string{fmtAny(result["stdout"]), fmtAny(result["stderr"]), fmtAny(result["refused"])}, "\n")
			if strings.Contains(out, viewCanary) {
				t.Errorf("a denied byte reached the output:\n%s", out)
			}
			if result["confinement"] != "namespaces+landlock" {
				t.Errorf("confinement %v", result["confinement"])
			}
			if !strings.Contains(fmtAny(result["stdout"]), tc.want) {
				t.Errorf("exit %d: stdout lacks %q:\n%s", code, tc.want, out)
			}
			check, code := run("check", tc.command)
			if check["execution"] != "external" {
				t.Errorf("check: execution %v, want external", check["execution"])
			}
			if refused := check["allowed"] == false; refused != tc.recursive {
				t.Errorf("check: exit %d, decision %v; want refused %v", code, check, tc.recursive)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a planted program ran")
	}
}

func fmtAny(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHardLinksConfined: a worktree holding hard links made beforehand,
// one to a denied file of the worktree and one to a file outside the
// scope. The file tools refuse both (more than one link); so does the
// private view: recursive readers run through `call` read neither.
// Package managers' and git's own hard-linked stores keep working for
// their owners: a node_modules file linked to a store outside, a
// repository cloned with --local (its objects are links).
func TestHardLinksConfined(t *testing.T) {
	for _, p := range []string{"rg", "git", "tar", "node"} {
		requireProgram(t, p)
	}
	w := newWorkspace(t)
	outside := filepath.Join(w.root, "outside")
	store := filepath.Join(w.root, "store")
	src := filepath.Join(w.root, "src")
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.txt"):     viewCanary + " outside\n",
		filepath.Join(store, "pkg", "index.js"):  "module.exports = 'STORE-' + 'OK'\n",
		filepath.Join(src, "sub", "a.txt"):       "an " + viewAllowed + " line\n",
		filepath.Join(src, ".gitignore"):         ".env\nnode_modules/\n",
		filepath.Join(src, "sub", "tracked.txt"): "tracked\n",
		filepath.Join(src, "main.js"):            "console.log(require('./node_modules/pkg'))\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(src, "init", "-q")
	git(src, "add", ".")
	git(src, "commit", "-qm", "init")
	if err := os.Remove(w.proj); err != nil {
		t.Fatal(err)
	}
	git(w.root, "clone", "-q", "--local", src, w.proj)
	if err := os.WriteFile(filepath.Join(w.proj, "sub", ".env"), []byte(viewCanary+" env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.proj, "node_modules", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"hard-env":                  filepath.Join(w.proj, "sub", ".env"),
		"sub/hard-out":              filepath.Join(outside, "secret.txt"),
		"node_modules/pkg/index.js": filepath.Join(store, "pkg", "index.js"),
	} {
		if err := os.Link(target, filepath.Join(w.proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	linked := 0
	_ = filepath.WalkDir(filepath.Join(w.proj, ".git", "objects"), func(p string, d os.DirEntry, err error) error {
		if fi, e := os.Lstat(p); err == nil && e == nil && fi.Mode().IsRegular() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				linked++
			}
		}
		return nil
	})
	if linked == 0 {
		t.Fatal("git clone --local made no hard-linked objects")
	}
	scope := "paths:\n  read: ['" + w.proj + "/**']\n  write: ['" + w.proj + "/**']\n" +
		"  deny: ['**/.git/**', '**/.env', '**/node_modules/**', '**/.ssh/**']\n" +
		"shell_commands:\n  allow: [grep, rg, git, tar, cat, node]\n"
	if err := os.WriteFile(filepath.Join(w.branch, "scope.yml"), []byte(scope), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(mode string, call map[string]any) (map[string]any, []byte) {
		t.Helper()
		b, _ := json.Marshal(call)
		out, err := w.cmd(mode, "--session", w.id, string(b)).Output()
		if _, ok := err.(*exec.ExitError); !ok && err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s %s: output %q: %v", mode, b, out, err)
		}
		return res, out
	}
	shell := func(command string) map[string]any {
		return map[string]any{"tool": "shell", "args": map[string]any{"command": command}, "cwd": w.proj}
	}
	for _, command := range []string{
		"grep -r CANARY .",
		"grep -ra CANARY .",
		"rg CANARY .",
		"rg -uuu CANARY .",
		"tar -c . | tar -xO | grep -a CANARY",
	} {
		t.Run(command, func(t *testing.T) {
			res, out := run("call", shell(command))
			dec := res["decision"].(map[string]any)
			if dec["allowed"] != true || dec["execution"] != "confined" {
				t.Fatalf("call: decision %v, want allowed and confined", dec)
			}
			result, _ := res["result"].(map[string]any)
			if result["confinement"] != "namespaces+landlock" {
				t.Errorf("confinement %v", result["confinement"])
			}
			if strings.Contains(string(out), viewCanary) {
				t.Errorf("a hard link's bytes reached the output:\n%s", out)
			}
			if !strings.Contains(fmtAny(result["stdout"]), viewAllowed) {
				t.Errorf("stdout lacks the allowed line:\n%s", out)
			}
			// Decided for external execution, where nothing masks them.
			if check, _ := run("check", shell(command)); check["allowed"] != false {
				t.Errorf("check: %v, want refused", check)
			}
		})
	}
	// The file tools and a named operand refuse them.
	for _, call := range []map[string]any{
		{"tool": "read_file", "args": map[string]any{"path": "hard-env"}, "cwd": w.proj},
		{"tool": "read_file", "args": map[string]any{"path": "sub/hard-out"}, "cwd": w.proj},
		shell("cat hard-env"),
	} {
		if res, out := run("call", call); res["decision"].(map[string]any)["allowed"] != false || strings.Contains(string(out), viewCanary) {
			t.Errorf("%v: %s, want refused", call, out)
		}
	}
	// The owners of the hard-linked stores still use them.
	for command, want := range map[string]string{
		"git log --oneline":  " init",
		"git status --short": "",
		"node main.js":       "STORE-OK",
	} {
		res, out := run("call", shell(command))
		result, _ := res["result"].(map[string]any)
		if result == nil || result["exit_code"] != float64(0) || !strings.Contains(fmtAny(result["stdout"]), want) {
			t.Errorf("%s: %s", command, out)
		}
	}
}
