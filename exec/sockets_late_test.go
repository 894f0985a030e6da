package exec

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

// TestShellLateDatagramSocket binds a host datagram socket in the project
// after the call's view was made, so that no mask covers it, and sends to
// it from a datagram socket pair, which needs no socket(2): a scope that
// names no unix socket reaches none.
func TestShellLateDatagramSocket(t *testing.T) {
	requireNamespaces(t)
	needTool(t, systemPython)
	proj := realDir(t)
	sock := filepath.Join(proj, "late.sock")
	started, ready := filepath.Join(proj, "started"), filepath.Join(proj, "ready")
	probe := `
import socket
for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, kind)
        a.sendto(b"reached", "late.sock")
        print("sent")
    except OSError as e:
        print("ERR", e.errno)
a, b = socket.socketpair()
a.send(b"pair")
print(b.recv(4).decode())
`
	cmd := "touch started; while [ ! -e ready ]; do sleep 0.02; done; " + systemPython + " -c " + policy.ShellQuote(probe)
	for name, mode := range map[string]netScope{"none": {mode: "none"}, "any": {mode: "any"}} {
		t.Run(name, func(t *testing.T) {
			os.Remove(started)
			os.Remove(ready)
			os.Remove(sock)
			got := make(chan string, 1)
			go func() {
				for !exists(started) {
					time.Sleep(10 * time.Millisecond)
				}
				c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
				if err != nil {
					got <- err.Error()
					return
				}
				defer c.Close()
				_ = os.WriteFile(ready, nil, 0o644)
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				b := make([]byte, 64)
				n, _ := c.Read(b)
				got <- string(b[:n])
			}()

			r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: mode})
			res, err := run(t, r, policy.ToolShell, map[string]any{"command": cmd, "timeout_ms": 20000}, proj)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Stdout, "pair") {
				t.Errorf("a stream socket pair no longer works: %+v", res)
			}
			if strings.Contains(res.Stdout, "sent") {
				t.Errorf("a host datagram socket bound after the view was made was reached: %+v", res)
			}
			select {
			case m := <-got:
				if m == "reached" {
					t.Errorf("the host socket received %q", m)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the host socket was never bound")
			}
		})
	}
}
