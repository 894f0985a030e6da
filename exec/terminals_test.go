package exec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/policy"
)

// TestShellOtherTerminals opens a terminal on the host, as the user's
// other shells are, and types into it: a program of a scope reading the
// whole system must not read what is typed there (a password), nor the
// console.
func TestShellOtherTerminals(t *testing.T) {
	requireNamespaces(t)
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the terminal's other end open, as a shell does.
	slave, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(slave)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				_, _ = unix.Write(master, []byte(canary+"\n"))
			}
		}
	}()
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}})
	cmd := fmt.Sprintf("head -c 40 /dev/pts/%d 2>&1; head -c 40 /dev/console 2>&1; ls /dev/pts", n)
	res, err := run(t, r, policy.ToolShell, map[string]any{"command": cmd, "timeout_ms": 3000}, proj)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout+res.Stderr, canary) {
		t.Errorf("what was typed in another terminal was read: %+v", res)
	}
}
