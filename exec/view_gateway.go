package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// The private view, the gateway's side: this file runs in the gateway.
//
// With namespaces, the gateway starts the helper in new user, mount, PID
// and IPC namespaces with CAP_SYS_ADMIN (and, for a gateway running as root,
// CAP_SETPCAP) as ambient capabilities, the only ones the helper needs in
// its user namespace. The clone is a vfork, as for any
// program Go starts: the helper maps its own uid and gid, which a process
// may do for its own ids, so the gateway has nothing to write between the
// clone and the exec. (Go's own mapping, written by the parent, needs a
// full fork of the gateway, 3 ms more per call on the 2-core test VM.)
// What the helper then does is in view_helper.go, what they say to each
// other in helper_protocol.go.

// Masked reports whether a program reading every file below dir meets
// nothing denied in this call's view (policy.Env.Masked).
func (sh *shell) Masked(dir string, follow bool) bool {
	if sh.prepare() != nil {
		return false
	}
	v := sh.rules.View
	if v == nil || (follow && !v.linksToo) {
		return false
	}
	if slices.ContainsFunc(v.partial, func(p string) bool { return within(dir, p) || within(p, dir) }) {
		return false
	}
	for _, root := range v.complete {
		if within(dir, root) {
			return true
		}
	}
	return false
}

// namespaceAttr returns the process attributes that start the helper in
// its namespaces, in its own process group.
// The clone flags ask for a vfork explicitly: Go adds them itself unless
// CLONE_NEWUSER is set, because its parent-written mappings need the
// parent to run between the clone and the exec. With no mappings asked
// for, nothing does: the helper maps itself (mapSelf).
//
// With netns the helper gets a network namespace of its own too, and the
// capabilities to bring its loopback up and listen on port 53 in it.
func namespaceAttr(netns bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC |
		syscall.CLONE_VM | syscall.CLONE_VFORK)
	caps := ambientCaps()
	if netns {
		flags |= syscall.CLONE_NEWNET
		caps = append(caps, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE)
	}
	return &syscall.SysProcAttr{
		Setpgid:     true,
		Cloneflags:  flags,
		AmbientCaps: caps,
		// No Pdeathsig here: the child's parent lies outside its PID
		// namespace, so the fork code would take it for dead. The helper
		// arms it itself and checks the liveness pipe.
	}
}

// namespacesOK probes once whether the helper can build a private view on
// this host: entering the namespaces, mounting tmpfs and proc, masking.
// Hosts that forbid unprivileged user namespaces (sysctl, AppArmor) fail
// here and get Landlock alone.
//
// A process that makes one call (the CLI, a hook) would pay a whole helper
// process for the probe on every call, so a success is remembered in
// ProbeCache, keyed by everything the answer depends on (probeKey): the
// boot, the kernel, the namespaces the gateway runs in, the switches of
// user namespaces, the user and the helper binary. Only a success is
// remembered: a forged or stale entry can make the view fail, and the call
// with it (the helper never starts a program without its view), never
// make a program run without the view the host allows. A view that fails
// to build forgets the entry (forgetProbe).
func (h *Host) namespacesOK(helper string) error {
	h.probeOnce.Do(func() {
		key := probeKey(helper)
		if h.ProbeCache != "" && key != "" {
			if b, err := os.ReadFile(h.ProbeCache); err == nil && string(b) == key {
				h.probeCached.Store(true)
				h.probeDone.Store(true)
				return
			}
		}
		h.probeErr = probeNamespaces(helper)
		if h.probeErr == nil && h.ProbeCache != "" && key != "" {
			// A cache: a file lost or torn is probed again.
			if os.MkdirAll(filepath.Dir(h.ProbeCache), 0o700) == nil {
				_ = atomicfile.Write(h.ProbeCache, []byte(key), atomicfile.Options{})
			}
		}
		h.probeDone.Store(true)
	})
	return h.probeErr
}

// forgetProbe removes a remembered probe whose view then failed to build,
// so that the next process probes again.
func (h *Host) forgetProbe() {
	if h.ProbeCache != "" && h.probeCached.Load() {
		_ = os.Remove(h.ProbeCache)
	}
}

// probeKey describes what the probe's answer depends on, or "" when it
// cannot be read (then nothing is remembered).
func probeKey(helper string) string {
	var b strings.Builder
	b.WriteString("scopegate namespace probe v4\n")
	for _, p := range []string{
		"/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/osrelease",
		"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	} {
		v, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		fmt.Fprintf(&b, "%s=%s\n", p, strings.TrimSpace(string(v)))
	}
	for _, ns := range []string{"mnt", "user", "pid", "ipc"} {
		v, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			return ""
		}
		fmt.Fprintf(&b, "%s=%s\n", ns, v)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(helper, &st); err != nil {
		return ""
	}
	fmt.Fprintf(&b, "uid=%d gid=%d\nhelper=%s %d:%d %d %d.%09d\n", os.Getuid(), os.Getgid(),
		helper, st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
	return b.String()
}

// probed reports whether the host was probed, and the probe's answer.
func (h *Host) probed() (bool, error) {
	if !h.probeDone.Load() {
		return false, nil
	}
	return true, h.probeErr
}

// userNamespacesEnabled reads the switches that turn unprivileged user
// namespaces off (the limit, Debian's knob, Ubuntu's AppArmor
// restriction): what the probe would find, without starting a process.
func userNamespacesEnabled() bool {
	read := func(p string) (string, bool) {
		b, err := os.ReadFile(p)
		return strings.TrimSpace(string(b)), err == nil
	}
	if v, ok := read("/proc/sys/user/max_user_namespaces"); ok && v == "0" {
		return false
	}
	if v, ok := read("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == "0" {
		return false
	}
	if v, ok := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && v == "1" && os.Getuid() != 0 {
		return false
	}
	return true
}

func probeNamespaces(helper string) error {
	if helper == "" {
		return errors.New("probe namespaces: no helper")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	argv := probeArgv(helper, os.Getuid(), os.Getgid())
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.SysProcAttr = namespaceAttr(false)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("probe namespaces: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// ambientCaps are the helper's capabilities in its user namespace:
// CAP_SYS_ADMIN for the mounts, and for a gateway running as root
// CAP_SETPCAP, to lock the secure bits (dropCaps).
func ambientCaps() []uintptr {
	if os.Getuid() == 0 {
		return []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return []uintptr{unix.CAP_SYS_ADMIN}
}

// viewConn is the gateway's side of a private view's helper: the ends of
// its pipes that stay here (helper_protocol.go).
type viewConn struct {
	// held is the write end of the liveness pipe, kept open until the
	// program has ended; alive is its read end, the helper's livenessFD.
	held, alive *os.File
	// status is the read end of the helper's viewFD; said is its write
	// end, closed here once the helper has it.
	status, said *os.File
	// netSock and netPeer are the gateway's and the helper's ends of the
	// socket pair of netFD, for a view whose network is "proxy".
	netSock, netPeer *os.File
	// masks is the memfd of masksFD.
	masks *os.File
}

// startView makes the pipes of a private view and sets cmd to start the
// helper with them in its namespaces. The caller closes the result.
// v is the program's view.
func startView(cmd *osexec.Cmd, v *view) (*viewConn, error) {
	network := v.Network
	var vc viewConn
	var err error
	if vc.masks, err = writeMasks(v.Masks); err != nil {
		return nil, err
	}
	if vc.alive, vc.held, err = os.Pipe(); err != nil {
		vc.close()
		return nil, fmt.Errorf("make liveness pipe: %w", err)
	}
	if vc.status, vc.said, err = os.Pipe(); err != nil {
		vc.close()
		return nil, fmt.Errorf("make view pipe: %w", err)
	}
	if network == NetworkProxy {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			vc.close()
			return nil, fmt.Errorf("make listener socket pair: %w", err)
		}
		vc.netSock, vc.netPeer = os.NewFile(uintptr(fds[0]), "net"), os.NewFile(uintptr(fds[1]), "net-helper")
	}
	cmd.ExtraFiles = viewExtraFiles(vc.alive, vc.said, vc.netPeer, vc.masks)
	cmd.SysProcAttr = namespaceAttr(network != "")
	return &vc, nil
}

// listeners receives, once the helper has started, the listeners it made
// in the program's network namespace (helper_protocol.go: netFD). A helper
// that fails first sends none: an error, and the view's status says why.
// want is how many.
func (vc *viewConn) listeners(want int) ([]*os.File, error) {
	vc.netPeer.Close() // so that the read sees the helper's end alone
	b, files, err := recvFDs(vc.netSock, want)
	if err != nil {
		return nil, err
	}
	if b != listenersByte || len(files) != want {
		for _, f := range files {
			f.Close()
		}
		return nil, fmt.Errorf("receive listeners: message %q with %d descriptors", b, len(files))
	}
	return files, nil
}

// interrupt asks the helper to send SIGINT to the program's group. It
// does not block: the helper may be gone.
func (vc *viewConn) interrupt() {
	go vc.held.Write([]byte{interruptByte})
}

// wait reads, once the helper has started, what it says on its status
// pipe (readStatus).
func (vc *viewConn) wait() (built bool, code int) {
	vc.said.Close() // so that the read sees the helper's end alone
	return readStatus(vc.status)
}

// close releases the pipes.
func (vc *viewConn) close() {
	for _, f := range []*os.File{vc.said, vc.status, vc.alive, vc.held, vc.netSock, vc.netPeer, vc.masks} {
		if f != nil {
			f.Close()
		}
	}
}

// readStatus reads what the helper says on its status pipe: whether the
// view was built, and the program's status once everything in the
// namespace has ended (-1 when the helper exited without saying it).
func readStatus(f *os.File) (built bool, code int) {
	var b [3]byte
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			break
		}
	}
	built = n >= 1 && b[0] == viewBuiltByte
	if built && n == 3 && b[1] == statusByte {
		return true, int(b[2])
	}
	return built, -1
}
