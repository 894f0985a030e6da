package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/orgcheck"
)

// workspace is a sessions root, config dir and project for process tests.
type workspace struct {
	t                         *testing.T
	root, sessions, cfg, proj string
	id, branch                string
	// bin is the scopegate binary run; default scopegateBin.
	bin string
}

func newWorkspace(t *testing.T, allow ...string) *workspace {
	t.Helper()
	root := t.TempDir()
	w := &workspace{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj")}
	if err := os.MkdirAll(w.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	out := w.run(0, "session", "create", "--name", "t", "--worktree", w.proj)
	var created struct{ SessionID, BranchDir string }
	if err := json.Unmarshal(out, &struct {
		SessionID *string `json:"session_id"`
		BranchDir *string `json:"branch_dir"`
	}{&created.SessionID, &created.BranchDir}); err != nil {
		t.Fatalf("session create output %q: %v", out, err)
	}
	w.id, w.branch = created.SessionID, created.BranchDir
	for _, c := range allow {
		w.run(0, "scope", "expand", "--session", w.id, "--allow-command", c)
	}
	return w
}

func (w *workspace) cmd(args ...string) *exec.Cmd {
	bin := scopegateBin
	if w.bin != "" {
		bin = w.bin
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+w.sessions, "SCOPEGATE_CONFIG_DIR="+w.cfg,
		"HOME="+filepath.Join(w.root, "home"))
	return cmd
}

// run runs scopegate and requires exit code want.
func (w *workspace) run(want int, args ...string) []byte {
	w.t.Helper()
	out, _ := w.runBoth(want, args...)
	return out
}

// runBoth runs scopegate, requires exit code want and returns its stdout
// and stderr.
func (w *workspace) runBoth(want int, args ...string) ([]byte, string) {
	w.t.Helper()
	cmd := w.cmd(args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	if code != want {
		w.t.Fatalf("scopegate %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, stderr.String())
	}
	return out, stderr.String()
}

func (w *workspace) call(want int, tool string, args map[string]any) map[string]any {
	w.t.Helper()
	call, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": w.proj})
	out := w.run(want, "call", "--session", w.id, string(call))
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		w.t.Fatalf("call output %q: %v", out, err)
	}
	return res
}

func (w *workspace) entries() []audit.Entry {
	w.t.Helper()
	es, err := audit.ReadFile(filepath.Join(w.branch, "tools.org"), audit.Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

func TestCallKilledIsInterrupted(t *testing.T) {
	w := newWorkspace(t, "sleep")
	call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": "sleep 60"}, "cwd": w.proj})
	cmd := w.cmd("call", "--session", w.id, string(call))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the in-flight record names the child.
	var rec audit.Record
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && rec.ChildPID == 0 {
		time.Sleep(50 * time.Millisecond)
		files, _ := filepath.Glob(filepath.Join(audit.InflightDir(w.branch), "*.json"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil {
				json.Unmarshal(data, &rec)
			}
		}
	}
	if rec.ChildPID == 0 {
		cmd.Process.Kill()
		t.Fatal("the in-flight record never named the child")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The child dies with its parent (the kernel's parent-death signal).
	for deadline := time.Now().Add(5 * time.Second); running(rec.ChildPID) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if running(rec.ChildPID) {
		syscall.Kill(rec.ChildPID, syscall.SIGKILL)
		t.Fatalf("child %d survived its SIGKILLed parent", rec.ChildPID)
	}
	// The next start records the call as INTERRUPTED.
	w.call(0, "shell", map[string]any{"command": "true"})
	var interrupted *audit.Entry
	for _, e := range w.entries() {
		if e.CallID == rec.CallID {
			e := e
			interrupted = &e
		}
	}
	if interrupted == nil || interrupted.Decision != audit.DecisionInterrupted {
		t.Fatalf("call %s not recorded as interrupted: %+v", rec.CallID, interrupted)
	}
	deadline = time.Now().Add(5 * time.Second)
	for running(rec.ChildPID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if running(rec.ChildPID) {
		syscall.Kill(rec.ChildPID, syscall.SIGKILL)
		t.Fatalf("child %d survived recovery", rec.ChildPID)
	}
	orgcheck.Require(t, filepath.Join(w.branch, "tools.org"))
}

// running reports whether a process exists and is not a zombie (an orphan
// is reaped by whatever adopted it, which may take a while, or never).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func TestConcurrentCalls(t *testing.T) {
	const n = 32
	w := newWorkspace(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": fmt.Sprintf("echo call-%d", i)}, "cwd": w.proj})
			out, err := w.cmd("call", "--session", w.id, string(call)).Output()
			if err != nil {
				errs <- fmt.Errorf("call %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	es := w.entries()
	if len(es) != n {
		t.Fatalf("%d entries, want %d", len(es), n)
	}
	seen := map[string]bool{}
	for _, e := range es {
		if e.Decision != audit.DecisionAllowed || e.ExitCode == nil || *e.ExitCode != 0 || !strings.HasPrefix(e.Stdout, "call-") {
			t.Errorf("entry not intact: %+v", e)
		}
		seen[strings.TrimSpace(e.Stdout)] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct outputs, want %d", len(seen), n)
	}
	hs := orgcheck.Require(t, filepath.Join(w.branch, "tools.org"))
	if len(hs) != n {
		t.Fatalf("Emacs found %d level-1 headlines, want %d", len(hs), n)
	}
}

func TestToolsOrgSurvivesHostileOutput(t *testing.T) {
	w := newWorkspace(t, "printf", "head", "tr")
	hostile := []string{
		`printf '* fake heading\n** another\n'`,
		`printf '#+end_example\n#+end_src\n:END:\n:PROPERTIES:\n:DECISION: denied\n'`,
		`printf '   * indented star\n  #+begin_src\n'`,
		`head -c 200000 /dev/zero | tr '\0' x`,
		`printf 'bad \377\376 utf8\n'`,
	}
	for _, c := range hostile {
		w.call(0, "shell", map[string]any{"command": c})
	}
	w.call(3, "shell", map[string]any{"command": "* fake; #+end_src\n:END:"})
	w.call(0, "write_file", map[string]any{"path": "x.org", "content": "* heading in content\n#+end_src\n"})
	w.call(0, "read_file", map[string]any{"path": "x.org"})
	want := len(hostile) + 3
	all := orgcheck.Require(t, filepath.Join(w.branch, "tools.org"))
	var hs []orgcheck.Headline
	for _, h := range all {
		if h.Decision != "expanded" { // the scope changes of newWorkspace
			hs = append(hs, h)
		}
	}
	if len(hs) != want {
		t.Fatalf("Emacs found %d level-1 call headlines, want %d", len(hs), want)
	}
	for _, h := range hs {
		if h.Level != 1 || (h.Decision != "allowed" && h.Decision != "denied") {
			t.Errorf("headline %+v", h)
		}
	}
	calls := 0
	for _, e := range w.entries() {
		if e.Decision != audit.DecisionExpanded {
			calls++
		}
	}
	if calls != want {
		t.Fatalf("reader found %d call entries, want %d", calls, want)
	}
}

func TestCallsNeverWriteSessionsOrConfig(t *testing.T) {
	// A scope whose write root contains the sessions root and config dir.
	w := newWorkspace(t)
	// A program in a writable root runs only by an entry naming its path.
	scope := fmt.Sprintf("paths:\n  read: [%q]\n  write: [%q]\nshell_commands:\n  allow: [ls, cat, echo, %q, sh]\n", w.root+"/**", w.root+"/**", filepath.Join(w.proj, "writer.sh"))
	if err := os.WriteFile(filepath.Join(w.branch, "scope.yml"), []byte(scope), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(w.branch, "scope.yml"))
	w.call(3, "write_file", map[string]any{"path": filepath.Join(w.branch, "scope.yml"), "content": "paths: {}\n"})
	w.call(3, "write_file", map[string]any{"path": filepath.Join(w.cfg, "presets.yml"), "content": "x"})
	w.call(3, "shell", map[string]any{"command": "echo x >> " + filepath.Join(w.branch, "tools.org")})
	// A program on the allow list that writes there by itself.
	script := filepath.Join(w.proj, "writer.sh")
	target := filepath.Join(w.branch, "scope.yml")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'paths: {}' > "+target+" && echo wrote\necho ok > "+filepath.Join(w.proj, "inside.txt")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := w.call(0, "shell", map[string]any{"command": "./writer.sh"})
	after, _ := os.ReadFile(target)
	if string(after) != string(before) {
		t.Fatalf("a confined child rewrote scope.yml: %q (result %v)", after, res)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "inside.txt")); err != nil {
		t.Fatalf("the same child could not write inside its scope: %v (result %v)", err, res)
	}
}

// A program is what the decision matched: a file named like an allowed
// program in the worktree runs neither by path nor by name, even with the
// worktree on PATH; the allowed name runs the file of the trusted PATH.
func TestPlantedProgramNeverRuns(t *testing.T) {
	w := newWorkspace(t, "cat")
	marker := filepath.Join(w.root, "planted-ran")
	for _, dir := range []string{w.proj, filepath.Join(w.proj, "bin")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cat"), []byte("#!/bin/sh\ntouch "+marker+"\necho planted\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.proj, "a.txt"), []byte("real content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"./cat a.txt", "bin/cat a.txt", filepath.Join(w.proj, "cat") + " a.txt"} {
		res := w.call(3, "shell", map[string]any{"command": cmd})
		if !strings.Contains(fmt.Sprint(res), "by path") {
			t.Errorf("%s: %v; want a denial naming the program by path", cmd, res)
		}
	}
	// The worktree first on PATH (and "."): "cat" is still the system's.
	c := w.cmd("call", "--session", w.id, `{"tool":"shell","args":{"command":"cat a.txt"},"cwd":"`+w.proj+`"}`)
	c.Env = append(c.Env, "PATH=.:"+filepath.Join(w.proj, "bin")+":"+w.proj+":"+os.Getenv("PATH"))
	out, err := c.Output()
	if err != nil || !strings.Contains(string(out), "real content") {
		t.Errorf("cat with the worktree on PATH: %v, %s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a planted program ran")
	}
}

func TestCheckOnBranchIsAudited(t *testing.T) {
	w := newWorkspace(t)
	call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": "curl x"}, "cwd": w.proj})
	w.run(3, "check", "--session", w.id, string(call))
	es := w.entries()
	if len(es) != 1 || es[0].Mode != audit.ModeCheck || es[0].Decision != audit.DecisionDenied {
		t.Fatalf("entries %+v", es)
	}
	_ = context.Background
}
