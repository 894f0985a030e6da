package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
)

// pidsOf returns the pids of processes whose command line is exactly cmdline.
func pidsOf(t *testing.T, cmdline string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.TrimRight(strings.ReplaceAll(string(data), "\x00", " "), " ") == cmdline {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestCallInterrupted sends real signals to a real `scopegate call` running
// a real child: the child's group is killed, the call is INTERRUPTED in
// tools.org before scopegate exits, and the exit code is 128+signal. A
// SIGKILLed scopegate takes its child with it.
func TestCallInterrupted(t *testing.T) {
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newWorkspace(t, "sleep")
			secs := fmt.Sprintf("%d.%d", 40+i, os.Getpid()%1000)
			cmd := w.cmd("call", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"sleep %s"},"cwd":%q}`, secs, w.proj))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			child := "sleep " + secs
			waitFor(t, "the child to start", func() bool { return len(pidsOf(t, child)) > 0 })
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if sig != syscall.SIGKILL && code != 128+int(sig) {
				t.Errorf("exit code %d (%v), want %d", code, err, 128+int(sig))
			}
			if sig == syscall.SIGKILL {
				waitFor(t, "the child to die with scopegate", func() bool { return len(pidsOf(t, child)) == 0 })
				// The next start records the call.
				w.run(0, "call", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"true"},"cwd":%q}`, w.proj))
			} else if pids := pidsOf(t, child); len(pids) > 0 {
				t.Errorf("child %v survived scopegate's exit", pids)
			}
			entries, err := audit.ReadFile(w.branch+"/tools.org", audit.Filter{Decision: audit.DecisionInterrupted})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || !strings.Contains(string(entries[0].Args), secs) {
				t.Errorf("tools.org INTERRUPTED entries: %+v, want the interrupted call", entries)
			}
			// The INTERRUPTED entry, written by this process or by the next
			// start, is in the chain.
			verifyChain(t, w)
		})
	}
}

// A call whose tools.org entry cannot be written does not run: the caller
// gets the error and exit 1, and what the call would have done is not done.
func TestCallNotRunWhenUnaudited(t *testing.T) {
	w := newWorkspace(t, "touch")
	if err := os.WriteFile(filepath.Join(w.proj, "a.txt"), []byte("SECRET-A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where tools.org should be: no one, root included, can
	// append to it.
	org := filepath.Join(w.branch, "tools.org")
	if err := os.Remove(org); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Mkdir(org, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(w.proj, "ran")
	code, _, stderr := exitCode(t, w.cmd("call", "--session", w.id,
		fmt.Sprintf(`{"tool":"shell","args":{"command":"touch %s"},"cwd":%q}`, marker, w.proj)))
	if code != exitInternal || !strings.Contains(stderr, "was not run") {
		t.Errorf("shell: exit %d, stderr %q; want 1 and the reason", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the call ran although its entry could not be written")
	}
	code, stdout, _ := exitCode(t, w.cmd("call", "--session", w.id,
		fmt.Sprintf(`{"tool":"read_file","args":{"path":%q}}`, filepath.Join(w.proj, "a.txt"))))
	if code != exitInternal || strings.Contains(stdout, "SECRET-A") {
		t.Errorf("read_file: exit %d, stdout %q; want 1 and no content", code, stdout)
	}
}

// TestForwardedCallInterrupted: a call forwarded to serve and interrupted
// in the CLI closes its connection; serve takes that as the client gone,
// kills the child and records the call INTERRUPTED.
func TestForwardedCallInterrupted(t *testing.T) {
	w := newWorkspace(t, "sleep")
	s := startServe(t, w)
	secs := fmt.Sprintf("%d.%d", 50, os.Getpid()%1000)
	cmd := w.cmd("call", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"sleep %s"},"cwd":%q}`, secs, w.proj))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := "sleep " + secs
	waitFor(t, "the child to start", func() bool { return len(pidsOf(t, child)) > 0 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit code %d (%v), want %d", code, err, 128+int(syscall.SIGINT))
	}
	waitFor(t, "serve to kill the child", func() bool { return len(pidsOf(t, child)) == 0 })
	waitFor(t, "the INTERRUPTED entry", func() bool {
		entries, err := audit.ReadFile(filepath.Join(w.branch, "tools.org"), audit.Filter{Decision: audit.DecisionInterrupted})
		return err == nil && len(entries) == 1 && strings.Contains(string(entries[0].Args), secs)
	})
	if _, text := get(t, s.url+"/metrics"); metricValue(t, text, "scopegate_tool_calls_total", `via="cli"`) != 1 {
		t.Error("the call was not forwarded to serve")
	}
}
