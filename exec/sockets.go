package exec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Host unix sockets and IPC objects (the gateway's side). A host unix
// socket is a way to the service behind it (the Docker daemon, the D-Bus
// system bus, an agent in $HOME) that no path or network rule sees: a
// confined program reaches only those the scope names as unix: entries
// of network (policy.Network.Sockets), whatever the network mode.
//
//   - With no socket named, the helper's seccomp filter refuses
//     socket(AF_UNIX, …) (seccomp.go): the program makes no socket that
//     could connect. socketpair(2) still works.
//   - In the private view, /run and /var/run are empty tmpfs mounts: the
//     named sockets below them and the files /etc links to there
//     (resolv.conf) are put back at their paths ([view.Fresh],
//     [view.Keep]); and every other pathname socket the host lists in
//     /proc/net/unix, or the deny walk met below the roots, is masked
//     ([view.SocketMasks]), so that a socket made with AF_UNIX allowed,
//     or a datagram socket of a pair, reaches none of them.
//   - From Landlock ABI 9 on, Landlock refuses connect(2) and sendmsg(2)
//     to any pathname socket made outside the program but the named ones
//     ([rules.Sockets]), in the view and under Landlock alone.
//   - Abstract sockets: the network namespace cuts them off, and from
//     ABI 6 on Landlock's scope does, under `network: any` too
//     (landlock.go). SysV IPC objects and POSIX message queues: the
//     program's IPC namespace is its own (namespaceAttr), with its own
//     /dev/mqueue, and /dev/shm is an empty tmpfs.

// socketNamer is a NetworkPolicy that names unix sockets
// (policy.Network.Sockets).
type socketNamer interface {
	Sockets() []string
}

// procNetUnix lists the host's unix sockets.
const procNetUnix = "/proc/net/unix"

// namedSocket is one socket the scope names: the path it is named by
// (clean) and where its links lead, when that is a socket now.
type namedSocket struct {
	path, real string
	dev, ino   uint64
}

// namedSockets returns the sockets the scope names that are sockets now,
// and whether it names any.
func (r *Runner) namedSockets() ([]namedSocket, bool) {
	sn, ok := r.opts.Network.(socketNamer)
	if !ok {
		return nil, false
	}
	paths := sn.Sockets()
	var out []namedSocket
	for _, p := range paths {
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // gone: nothing to reach
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(real, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			continue
		}
		out = append(out, namedSocket{path: p, real: real, dev: st.Dev, ino: st.Ino})
	}
	return out, len(paths) > 0
}

// socketRules sets what rl grants of unix sockets: AF_UNIX sockets when
// the scope names one, and the named ones for Landlock.
func (r *Runner) socketRules(rl *rules) {
	named, names := r.namedSockets()
	rl.UnixSockets = names
	rl.Sockets = nil
	for _, s := range named {
		rl.Sockets = append(rl.Sockets, s.real)
	}
}

// ErrNoSocketView: the scope names unix sockets, and programs would run
// under Landlock alone, before ABI 9, where nothing would keep them from
// the host's other sockets: they do not run.
var ErrNoSocketView = errors.New("the scope names unix sockets, and without the private view (or Landlock ABI 9) programs would reach every host socket (run with --confine best-effort to let them)")

// planSockets keeps the programs of a call that runs under Landlock alone,
// before ABI 9, from running when the scope names unix sockets
// (ErrNoSocketView): seccomp then lets them make unix sockets, and nothing
// bounds which they reach. With --confine best-effort they run, and
// stderr says so. Called by prepare, after planNetwork.
func (sh *shell) planSockets() {
	if sh.rules.View != nil || !sh.rules.UnixSockets || sh.r.abi == 0 || sh.r.abi >= 9 {
		return
	}
	n := &sh.net
	if sh.r.opts.Confine == ConfineRequired {
		if n.err == nil {
			n.err = ErrNoSocketView
		}
		return
	}
	n.warn = strings.TrimPrefix(n.warn+"\n", "\n") + "scopegate: network: without the private view, programs can reach every host unix socket (the scope names some)"
}

// socketView fills in the host sockets of v: the fresh directories and
// what they keep, the sockets below the private /tmp that it carries,
// and the masks of every other socket (v.SocketMasks holds those the
// deny walk met).
func (r *Runner) socketView(v *view) error {
	named, _ := r.namedSockets()
	roots := outermost(append(slices.Clone(r.readRts), r.writeRts...))
	// A root that is one of them keeps it as it is (its sockets are
	// masked below).
	v.Fresh = slices.DeleteFunc(freshDirs(), func(d string) bool { return slices.Contains(roots, d) })
	below := func(p string) bool {
		return slices.ContainsFunc(v.Fresh, func(d string) bool { return within(p, d) })
	}
	carried := func(p string) bool {
		return slices.ContainsFunc(v.Carry, func(c string) bool { return within(p, c) })
	}
	for _, s := range named {
		for _, p := range slices.Compact([]string{s.path, s.real}) {
			switch {
			case below(p):
				v.Keep = append(v.Keep, p)
			case within(p, privateTmp) && !carried(p):
				v.Carry = append(v.Carry, p)
			}
		}
	}
	// The roots below them stay, as those below /tmp do (their sockets
	// are masked below), and so do those below /dev/shm (privateIPC),
	// whatever root holds them (a scope reading /** and writing one).
	for _, root := range append(slices.Clone(r.readRts), r.writeRts...) {
		if below(root) || within(root, "/dev/shm") && root != "/dev/shm" {
			v.Keep = append(v.Keep, root)
		}
	}
	v.Keep = outermost(append(v.Keep, r.host.etcLinksBelow("/etc", v.Fresh)...))
	kept := func(p string) bool {
		return slices.ContainsFunc(v.Keep, func(k string) bool { return within(p, k) })
	}
	data, err := os.ReadFile(procNetUnix)
	if err != nil {
		return fmt.Errorf("list the host's unix sockets: %w", err)
	}
	var masks []string
	for _, p := range append(parseProcNetUnix(data), v.SocketMasks...) {
		p = filepath.Clean(p)
		if below(p) && !kept(p) || within(p, privateTmp) && !carried(p) || within(p, "/proc") {
			continue // the view replaces what holds it
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			continue // gone, or a socket of another mount namespace's files
		}
		if slices.ContainsFunc(named, func(s namedSocket) bool { return s.dev == st.Dev && s.ino == st.Ino }) {
			continue
		}
		masks = append(masks, p)
	}
	slices.Sort(masks)
	v.SocketMasks = slices.Compact(masks)
	return nil
}

// freshDirs are the directories of host sockets that the view replaces
// with an empty tmpfs: /run, and /var/run where it is a directory of its
// own rather than a link to /run.
func freshDirs() []string {
	var out []string
	var run os.FileInfo
	for _, d := range []string{"/run", "/var/run"} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || run != nil && os.SameFile(fi, run) {
			continue
		}
		if run == nil {
			run = fi
		}
		out = append(out, d)
	}
	return out
}

// etcLinksBelow returns the files that links in etc lead to below dirs
// (/etc/resolv.conf → /run/systemd/resolve/stub-resolv.conf): the view
// keeps them, so that names still resolve.
func (h *Host) etcLinksBelow(etc string, dirs []string) []string {
	ents, err := os.ReadDir(etc)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type() != fs.ModeSymlink {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(etc, e.Name()))
		if err != nil || !slices.ContainsFunc(dirs, func(d string) bool { return within(real, d) }) {
			continue
		}
		if fi, err := os.Lstat(real); err == nil && fi.Mode().IsRegular() {
			out = append(out, real)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parseProcNetUnix returns the paths of the pathname sockets in the text
// of /proc/net/unix: the field after the seven of each line
// ("Num: RefCount Protocol Flags Type St Inode Path"), where it begins
// with a slash (an abstract name begins with @, an unbound socket has
// none). A line that does not have the form, the header among them,
// names nothing.
func parseProcNetUnix(data []byte) []string {
	var out []string
	for line := range bytes.Lines(data) {
		rest := bytes.TrimSuffix(line, []byte("\n"))
		ok := true
		for i := 0; i < 7 && ok; i++ {
			var field []byte
			field, rest, _ = bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
			tail := "" // what is left of the field but hex digits
			if i == 0 {
				tail = ":"
			}
			ok = string(field) != tail && string(bytes.Trim(field, "0123456789abcdefABCDEF")) == tail
		}
		if ok && bytes.HasPrefix(rest, []byte("/")) && bytes.IndexByte(rest, 0) < 0 {
			out = append(out, string(rest))
		}
	}
	return out
}
