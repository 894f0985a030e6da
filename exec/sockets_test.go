package exec

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/scopegate/scopegate/policy"
	"golang.org/x/sys/unix"
)

// systemPython is the python3 the socket tests run: the system's, which
// any scope's view can run (a toolchain shim under home needs more).
const systemPython = "/usr/bin/python3"

// sockScope is a netScope that names unix sockets, as policy.Network does.
type sockScope struct {
	netScope
	sockets []string
}

func (s sockScope) Sockets() []string { return s.sockets }

// hostSocket makes a directory below parent and a unix socket listening in
// it, of network "unix" (it answers "host <path>" on each connection) or
// "unixgram"; missing, it fails the test under CI=true and skips it
// otherwise. The directory is removed at the end.
func hostSocket(t *testing.T, parent, network string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, "scopegate-socket-test-")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a socket below %s: %v", parent, err)
		}
		t.Skipf("a socket below %s: %v", parent, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	if network == "unixgram" {
		c, err := net.ListenPacket(network, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return path
	}
	ln, err := net.Listen(network, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "host %s\n", path)
			c.Close()
		}
	}()
	return path
}

// socketProbe is a python3 program that tries each socket of its
// arguments: "connect PATH", "send PATH" (a datagram from a socket pair,
// which needs no socket(2)) and "abstract NAME"; and a socket pair. It
// prints one line each: OK and what the host said, or ERR and errno.
const socketProbe = `
import socket, sys
for arg in sys.argv[1:]:
    how, _, path = arg.partition(" ")
    try:
        if how == "send":
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            a.sendto(b"x", path)
            print(arg, "OK sent")
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect("\0" + path if how == "abstract" else path)
        print(arg, "OK", s.recv(200).decode().strip())
    except OSError as e:
        print(arg, "ERR", e.errno)
a, b = socket.socketpair()
a.send(b"pair")
print("socketpair", b.recv(4).decode())
`

// runSocketProbe runs socketProbe confined with args and returns its lines
// by argument.
func runSocketProbe(t *testing.T, r *Runner, cwd string, args ...string) map[string]string {
	t.Helper()
	cmd := systemPython + " -c " + policy.ShellQuote(socketProbe)
	for _, a := range args {
		cmd += " " + policy.ShellQuote(a)
	}
	res, err := run(t, r, policy.ToolShell, map[string]any{"command": cmd}, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		for _, a := range append(args, "socketpair") {
			if rest, ok := strings.CutPrefix(l, a+" "); ok {
				out[a] = rest
			}
		}
	}
	if out["socketpair"] != "pair" {
		t.Errorf("socketpair: %q\n%s", out["socketpair"], res.Stdout)
	}
	return out
}

// TestShellHostSockets checks that no host unix socket is reachable
// from a confined program unless the scope names it: listeners under
// /run, in $HOME and in the project, stream and datagram, under network
// none, a host list and any; named, that one alone. The scope reads the
// whole system, as the coding profile does.
func TestShellHostSockets(t *testing.T) {
	requireNamespaces(t)
	needTool(t, systemPython)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	proj := realDir(t)
	run := hostSocket(t, "/run", "unix")
	inHome := hostSocket(t, home, "unix")
	inProj := hostSocket(t, proj, "unix")
	gram := hostSocket(t, "/run", "unixgram")
	gramHome := hostSocket(t, home, "unixgram")
	abstract := fmt.Sprintf("scopegate-socket-test-%d", rand.Uint64())
	aln, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer aln.Close()
	go func() {
		for {
			c, err := aln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "host abstract")
			c.Close()
		}
	}()
	args := []string{"connect " + run, "connect " + inHome, "connect " + inProj,
		"send " + gram, "send " + gramHome, "abstract " + abstract}
	modes := map[string]netScope{"none": {mode: "none"}, "list": {mode: "list", hosts: []string{"example.com:443"}}, "any": {mode: "any"}}
	for _, named := range []string{"", run, inHome} {
		for name, mode := range modes {
			t.Run(fmt.Sprintf("%s named %q", name, named), func(t *testing.T) {
				var scope NetworkPolicy = mode
				if named != "" {
					scope = sockScope{mode, []string{named}}
				}
				r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: scope, Home: home})
				got := runSocketProbe(t, r, proj, args...)
				for _, a := range args {
					reached := strings.HasPrefix(got[a], "OK")
					if want := named != "" && a == "connect "+named; reached != want {
						t.Errorf("%s: %q, want reached %v", a, got[a], want)
					}
				}
				if named != "" && got["connect "+named] != "OK host "+named {
					t.Errorf("the named socket answered %q", got["connect "+named])
				}
			})
		}
	}
}

// TestShellHostSocketsLandlockAlone checks what holds without namespaces:
// the seccomp filter refuses AF_UNIX sockets to a scope that names none,
// and io_uring always; a socket pair works.
func TestShellHostSocketsLandlockAlone(t *testing.T) {
	requireLandlock(t)
	needTool(t, systemPython)
	proj := realDir(t)
	run := hostSocket(t, "/run", "unix")
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: hostNetwork, Namespaces: NamespacesOff})
	got := runSocketProbe(t, r, proj, "connect "+run)
	if want := "ERR " + strconv.Itoa(int(syscall.EPERM)); got["connect "+run] != want {
		t.Errorf("connect %s: %q, want %q", run, got["connect "+run], want)
	}
	// io_uring_setup(1, &params): refused, not run.
	res, err := runCmd(t, r, proj, `/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); p=ctypes.create_string_buffer(120); print(l.syscall(425, 1, p), ctypes.get_errno())'`)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("-1 %d\n", syscall.EPERM); res != want {
		t.Errorf("io_uring_setup: %q, want %q", res, want)
	}
}

// TestShellHostIPC checks that a SysV message queue and a POSIX message
// queue made on the host cannot be opened by a confined program: it has
// an IPC namespace of its own.
func TestShellHostIPC(t *testing.T) {
	requireNamespaces(t)
	needTool(t, systemPython)
	key := 0x5c09e000 + rand.IntN(0xfff)
	id, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), unix.IPC_CREAT|unix.IPC_EXCL|0o600, 0)
	if e != 0 {
		t.Fatalf("msgget: %v", e)
	}
	defer unix.Syscall(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0)
	probe := fmt.Sprintf(`/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(l.msgget(%d, 0), ctypes.get_errno())'`, key)
	// The probe itself finds the queue on the host.
	if out, err := osexec.Command("sh", "-c", probe).Output(); err != nil || strings.HasPrefix(string(out), "-1") {
		t.Fatalf("msgget on the host: %q, %v", out, err)
	}
	name := fmt.Sprintf("scopegate-ipc-test-%d", key)
	cname, err := unix.BytePtrFromString(name)
	if err != nil {
		t.Fatal(err)
	}
	mq, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(cname)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, 0, 0, 0)
	if e != 0 {
		t.Fatalf("mq_open: %v", e)
	}
	unix.Close(int(mq))
	defer unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(cname)), 0, 0)
	mqProbe := fmt.Sprintf(`/usr/bin/python3 -c 'import ctypes, ctypes.util; l=ctypes.CDLL(ctypes.util.find_library("rt"), use_errno=True); print(l.mq_open(b"/%s", 0), ctypes.get_errno())'`, name)
	if out, err := osexec.Command("sh", "-c", mqProbe).Output(); err != nil || strings.HasPrefix(string(out), "-1") {
		t.Fatalf("mq_open on the host: %q, %v", out, err)
	}
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: hostNetwork})
	want := fmt.Sprintf("-1 %d\n", syscall.ENOENT)
	for what, cmd := range map[string]string{"msgget": probe, "mq_open": mqProbe} {
		out, err := runCmd(t, r, proj, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if out != want {
			t.Errorf("%s in the view: %q, want %q (no such queue)", what, out, want)
		}
	}
}

// runCmd runs a shell command confined and returns its stdout; a failure
// to run it or a non-zero exit is an error.
func runCmd(t *testing.T, r *Runner, cwd, cmd string) (string, error) {
	t.Helper()
	res, err := run(t, r, policy.ToolShell, map[string]any{"command": cmd}, cwd)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return res.Stdout, errors.New("exit " + strconv.Itoa(res.ExitCode) + ": " + res.Stderr)
	}
	return res.Stdout, nil
}

// TestShellHostSocketsBelowRoot checks a scope that reads a directory
// below /run: its files stay in the view, its sockets are masked unless
// named.
func TestShellHostSocketsBelowRoot(t *testing.T) {
	requireNamespaces(t)
	needTool(t, systemPython)
	sock := hostSocket(t, "/run", "unix")
	dir := filepath.Dir(sock)
	writeFile(t, filepath.Join(dir, "notes.txt"), allowed+"\n", 0o644)
	proj := realDir(t)
	for _, named := range []bool{false, true} {
		scope := sockScope{netScope: netScope{mode: "none"}}
		if named {
			scope.sockets = []string{sock}
		}
		r := newRunner(t, Options{ReadRoots: []string{dir}, WriteRoots: []string{proj}, Network: scope})
		out, err := runCmd(t, r, proj, "cat "+filepath.Join(dir, "notes.txt"))
		if err != nil || out != allowed+"\n" {
			t.Errorf("named %v: a file of the read root below /run: %q, %v", named, out, err)
		}
		got := runSocketProbe(t, r, proj, "connect "+sock)
		if reached := strings.HasPrefix(got["connect "+sock], "OK"); reached != named {
			t.Errorf("named %v: connect %s: %q", named, sock, got["connect "+sock])
		}
	}
}

// TestShellHostSocketsLandlockAloneNamed checks a scope that names a
// socket under Landlock alone: before ABI 9 nothing would bound which
// host sockets its programs reach, so they do not run (exit 126) unless
// the confinement is best effort; from ABI 9, Landlock lets them reach the
// named one alone.
func TestShellHostSocketsLandlockAloneNamed(t *testing.T) {
	requireLandlock(t)
	needTool(t, systemPython)
	proj := realDir(t)
	named, other := hostSocket(t, "/run", "unix"), hostSocket(t, "/run", "unix")
	scope := sockScope{hostNetwork, []string{named}}
	args := []string{"connect " + named, "connect " + other}
	if landlockABI() >= 9 {
		r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: scope, Namespaces: NamespacesOff})
		got := runSocketProbe(t, r, proj, args...)
		if !strings.HasPrefix(got[args[0]], "OK") || strings.HasPrefix(got[args[1]], "OK") {
			t.Errorf("Landlock ABI %d: %q", landlockABI(), got)
		}
		return
	}
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: scope, Namespaces: NamespacesOff})
	res, err := run(t, r, policy.ToolShell, map[string]any{"command": "/bin/true"}, proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitRefused || !strings.Contains(res.Stderr, ErrNoSocketView.Error()) {
		t.Errorf("exit %d, stderr %q; want %d and %q", res.ExitCode, res.Stderr, ExitRefused, ErrNoSocketView)
	}
	r = newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Network: scope, Namespaces: NamespacesOff, Confine: ConfineAllowUnconfined})
	res, err = run(t, r, policy.ToolShell, map[string]any{"command": "/bin/true"}, proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stderr, "can reach every host unix socket") {
		t.Errorf("best effort: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}
