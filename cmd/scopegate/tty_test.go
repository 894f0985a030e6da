package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side and the
// terminal a child gets.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}

// A terminal on stdin with no call is a usage error at once, not a wait.
func TestTerminalStdinIsUsageError(t *testing.T) {
	w := newWorkspace(t)
	_, pts := openPTY(t)
	cmd := w.cmd("check", "--session", w.id)
	cmd.Stdin = pts
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != exitUsage {
		t.Fatalf("exit %d (%v), want %d", code, err, exitUsage)
	}
	if !strings.Contains(stderr.String(), "no call given") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// On a terminal, call streams the command's stderr while it runs: the
// command waits for the test to have read its first line.
func TestCallStreamsStderrOnTerminal(t *testing.T) {
	w := newWorkspace(t, "sleep", "test")
	ptm, pts := openPTY(t)
	flag := filepath.Join(w.proj, "seen")
	script := `echo started >&2; i=0; while [ $i -lt 600 ]; do test -e seen && break; sleep 0.05; i=$((i+1)); done; test -e seen && echo streamed`
	call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": script}, "cwd": w.proj})
	w.run(0, "scope", "expand", "--session", w.id, "--write", w.proj+"/**")
	cmd := w.cmd("call", "--session", w.id, string(call))
	cmd.Env = append(cmd.Env, "SCOPEGATE_CONFINE=best-effort")
	cmd.Stderr = pts
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close() // the child's copy is the only one: its exit ends the reads
	line, err := bufio.NewReader(ptm).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "started") {
		t.Fatalf("first stderr line %q", line)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("call: %v\n%s", err, stdout.String())
	}
	var res struct {
		Result struct{ Stdout, Stderr string }
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if res.Result.Stdout != "streamed\n" || res.Result.Stderr != "started\n" {
		t.Fatalf("result %+v: the stderr did not come while the command ran", res.Result)
	}
}
