package exec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The protocol between the gateway and the helper.
//
// Every program of a confined shell call starts as a re-exec of the
// scopegate binary, the helper, which confines itself and then runs the
// program. Two processes take part, each with files of its own:
//
//   - the gateway: runner.go, proc.go, masks.go, sockets.go, landlock.go
//     (what is granted), view_gateway.go (starting the helper in its
//     namespaces, the namespace probe, the gateway's ends of the pipes)
//     and network.go (serving a proxy view's listeners);
//   - the helper: helper.go (its entry point, [RunHelper], Landlock
//     alone), view_helper.go (PID 1 of the private view's namespaces),
//     netns.go (the program's network namespace), sockets_helper.go and
//     seccomp.go (its filter, in both cases).
//
// This file is all they agree on: every descriptor, message byte, exit
// status, argument and listener of the protocol is declared here, and
// the functions that encode and decode its messages (TestProtocolInOneFile
// fails on a constant named as one of the protocol's, …FD, …Byte,
// …ExitCode, …Arg, …Listener, …Port, declared in another file). The helper
// is a fresh process image: it knows only its argv, its environment (the
// program's) and the descriptors below.
//
// # Argv
//
// The helper's argv is one of
//
//	scopegate helperArg RULES -- PROGRAM ARGV0 [ARG...]   (helperArgv)
//	scopegate probeArg UID GID                           (probeArgv)
//
// RULES is [rules] as JSON, with the private view ([view]) in it when the
// helper is to build one; PROGRAM is absolute, and so is every path of
// every list in RULES ([rules.pathLists]), or the helper refuses them. The
// view's masks, which a big tree makes too many for one argv string (Linux
// bounds it at 128 KiB), come on masksFD instead, absolute too.
//
// # Descriptors
//
// With Landlock alone the helper gets the standard streams only, and
// execs the program in place. For a private view it also gets the
// descriptors below, at their numbers (viewExtraFiles). It marks every
// descriptor from firstUnknownFD up close-on-exec before anything else,
// and its own ones before the program starts: the program inherits none
// of them.
//
//	livenessFD  gateway → helper  read end of a pipe; the gateway holds the
//	                              write end until the program has ended
//	viewFD      helper → gateway  write end of a pipe
//	netFD       helper → gateway  one end of a unix stream socket pair, for
//	                              a view whose network is "proxy" only
//	                              (closed otherwise)
//	masksFD     gateway → helper  a sealed memfd holding [view.Masks], each
//	                              path followed by a NUL
//
// # Messages
//
// On livenessFD the gateway writes interruptByte to ask for SIGINT to the
// program's process group (a timeout, a cancelled call); the gateway
// never signals the helper itself. A hang-up means the gateway is gone:
// the helper ends, and the kernel kills everything in its namespaces.
//
// On netFD, for a view whose network is NetworkProxy ([view.Network]),
// the helper sends listenersByte once (sendFDs, recvFDs), with the
// listening sockets it made in the program's new network namespace as
// SCM_RIGHTS, in the order of [nsListeners]: the HTTP proxy (TCP
// 127.0.0.1:3128), SOCKS5 (TCP 127.0.0.1:1080), the DNS stub over UDP and
// over TCP (127.0.0.1:53), then one TCP listener at 127.0.0.1 for each
// port of [view.Forward], which the gateway connects to the same port of
// the host's loopback. It sends them before
// viewBuiltByte: the gateway serves them (netproxy) before the program
// runs, and a program that connects at once waits in their backlog. A
// helper that cannot make them exits helperExitCode without sending them.
//
// On viewFD the helper writes, in this order:
//
//  1. viewBuiltByte, once the view is built, Landlock applied and
//     capabilities dropped, just before the program starts;
//  2. statusByte and one byte of status, once the program has ended and
//     no other process is left in the namespaces.
//
// # Exit status
//
// The helper exits with the program's status (128+signal when it was
// killed), notFoundExitCode when the program does not exist, and
// helperExitCode, with one line on stderr, when it could not confine or
// start the program. A helper that exits helperExitCode without having
// written viewBuiltByte failed to build the view: the gateway forgets its
// remembered probe (Host.forgetProbe).
//
// # Adding a party
//
// A third party of the view (the network namespace's listeners, say:
// sockets the helper opens inside the new namespace and hands to the
// gateway) joins here, so that neither side learns of it elsewhere:
//
//   - its descriptor, a constant before firstUnknownFD and an argument of
//     viewExtraFiles (a unix socket where descriptors pass: SCM_RIGHTS
//     does not cross a pipe);
//   - what the helper needs to know of it, a field of [view] (for the
//     listeners, the addresses to open);
//   - its messages, in a section above, with their place in the order of
//     viewFD's: what the gateway must have before the program runs is
//     sent before viewBuiltByte;
//   - a failure to set it up is a helperExitCode before viewBuiltByte,
//     like any other part of the view.

// Hidden first arguments of the helper's argv: helperArg runs a program
// confined, probeArg probes whether the host allows the private view.
const (
	helperArg = "__scopegate-confine"
	probeArg  = "__scopegate-probe-namespaces"
)

// Exit statuses of the helper besides the program's own.
const (
	// helperExitCode: the helper could not confine or start the program
	// (the shell's "cannot execute").
	helperExitCode = 126
	// notFoundExitCode: the program does not exist (the shell's "not
	// found").
	notFoundExitCode = 127
)

// The private view's descriptors, numbered from 3 up in the order the
// gateway passes them (viewExtraFiles).
const (
	// livenessFD is the helper's fd for the read end of a pipe whose
	// write end the gateway holds until the program ends: a hang-up means
	// the gateway died before the helper could arm its parent-death
	// signal, or since. The gateway writes interruptByte on it.
	livenessFD = 3 + iota
	// viewFD is the helper's fd for the write end of a pipe on which it
	// says that the view is built (viewBuiltByte), just before it starts
	// the program, and then, once the program has ended and no other
	// process is left in the namespace, the program's status (statusByte,
	// then the status). With the second the gateway has its answer: the
	// helper only exits after it, and the kernel's teardown of the
	// namespaces (about 2 ms) runs while the gateway goes on.
	viewFD
	// netFD is the helper's end of a unix socket pair on which it passes
	// the listeners of the program's network namespace (listenersByte);
	// closed in the helper unless the view's network is "proxy".
	netFD
	// masksFD is the helper's fd for a memfd the gateway wrote the view's
	// masks into (writeMasks) and sealed: each path, then a NUL.
	masksFD
	// A new party's descriptor goes here.

	// firstUnknownFD is the first descriptor that is not the protocol's:
	// from it up, everything the helper inherited is closed on exec.
	firstUnknownFD
)

// viewExtraFiles places the helper's ends of the private view's
// descriptors at their numbers: cmd.ExtraFiles[i] becomes descriptor 3+i.
// A nil file is closed in the helper.
func viewExtraFiles(liveness, status, network, masks *os.File) []*os.File {
	files := make([]*os.File, firstUnknownFD-3)
	files[livenessFD-3] = liveness
	files[viewFD-3] = status
	files[netFD-3] = network
	files[masksFD-3] = masks
	return files
}

// writeMasks returns a sealed memfd holding the masks, each followed by a
// NUL (masksFD).
func writeMasks(masks []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("scopegate-masks", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("make masks file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "masks")
	var b []byte
	for _, m := range masks {
		b = append(append(b, m...), 0)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write masks: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal masks: %w", err)
	}
	return f, nil
}

// readMasks reads the masks the gateway wrote on masksFD.
func readMasks() ([]string, error) {
	f := os.NewFile(masksFD, "masks")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(masksFD, &st); err != nil {
		return nil, fmt.Errorf("read masks: %w", err)
	}
	b := make([]byte, st.Size)
	if _, err := f.ReadAt(b, 0); err != nil && st.Size > 0 {
		return nil, fmt.Errorf("read masks: %w", err)
	}
	out, err := decodeMasks(b)
	if err != nil {
		return nil, fmt.Errorf("read masks: %w", err)
	}
	return out, nil
}

// decodeMasks reads what writeMasks wrote: absolute paths, each followed
// by a NUL.
func decodeMasks(b []byte) ([]string, error) {
	if len(b) > 0 && b[len(b)-1] != 0 {
		return nil, errors.New("not NUL-terminated")
	}
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	if err := checkPaths(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Messages on the descriptors.
const (
	// interruptByte, written by the gateway on livenessFD, asks the
	// helper to send SIGINT to the program's group. The gateway does not
	// signal the helper for it: a Go program that forwards signals pays
	// for os/signal's own thread and its handshake (2–3 ms per call on the
	// 2-core test VM).
	interruptByte = 'i'
	// viewBuiltByte, written by the helper on viewFD: the view is built
	// and the program starts.
	viewBuiltByte = 'v'
	// statusByte, written by the helper on viewFD, precedes the one byte
	// of the program's status.
	statusByte = 'x'
	// listenersByte, sent by the helper on netFD, carries the listeners
	// of the program's network namespace.
	listenersByte = 'n'
)

// The network of a proxy view (view.Network is NetworkProxy): the
// listeners the helper makes in the program's network namespace, at
// fixed addresses. Each program has a namespace of its own, so fixed ports
// collide with nothing but a program's own server on the same port.
const (
	nsHTTPPort  = 3128 // the HTTP proxy, TCP 127.0.0.1
	nsSOCKSPort = 1080 // SOCKS5, TCP 127.0.0.1
	nsDNSPort   = 53   // the DNS stub, UDP and TCP 127.0.0.1
)

// The listeners in the order the helper passes them with listenersByte,
// before one for each forwarded port ([view.Forward]).
const (
	httpListener   = iota // TCP nsHTTPPort
	socksListener         // TCP nsSOCKSPort
	dnsUDPListener        // UDP nsDNSPort
	dnsTCPListener        // TCP nsDNSPort
	// nsListenerCount is how many come before the forwarded ports'.
	nsListenerCount
)

// maxForwards bounds the loopback ports forwarded into one namespace.
const maxForwards = 64

// nsListener is one listener of a proxy view: its socket type and port.
type nsListener struct {
	typ, port int
}

// nsListeners are the listeners of a proxy view, indexed as above.
func nsListeners() [nsListenerCount]nsListener {
	var l [nsListenerCount]nsListener
	l[httpListener] = nsListener{unix.SOCK_STREAM, nsHTTPPort}
	l[socksListener] = nsListener{unix.SOCK_STREAM, nsSOCKSPort}
	l[dnsUDPListener] = nsListener{unix.SOCK_DGRAM, nsDNSPort}
	l[dnsTCPListener] = nsListener{unix.SOCK_STREAM, nsDNSPort}
	return l
}

// sendFDs sends fds with one byte b over the unix socket sock
// (SCM_RIGHTS): the helper's listenersByte on netFD.
func sendFDs(sock int, b byte, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(sock, []byte{b}, oob, nil, 0); err != nil {
		return fmt.Errorf("pass listeners: %w", err)
	}
	return nil
}

// recvFDs receives one byte and up to max descriptors sent with it from
// the unix socket f: the gateway's end of sendFDs. Descriptors beyond max are closed and make an error.
func recvFDs(f *os.File, max int) (byte, []*os.File, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*(max+1)))
	n, oobn, flags, _, err := unix.Recvmsg(int(f.Fd()), b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return 0, nil, fmt.Errorf("receive listeners: %w", err)
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return 0, nil, fmt.Errorf("receive listeners: %w", err)
		}
		for _, m := range msgs {
			rights, err := unix.ParseUnixRights(&m)
			if err == nil {
				fds = append(fds, rights...)
			}
		}
	}
	if n == 0 || flags&unix.MSG_CTRUNC != 0 || len(fds) > max {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if n == 0 {
			return 0, nil, errors.New("receive listeners: the helper said nothing")
		}
		return 0, nil, errors.New("receive listeners: too many descriptors")
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), fmt.Sprintf("listener-%d", i))
	}
	return b[0], files, nil
}

// privateTmp is where the private view mounts its fresh tmpfs: the
// gateway grants it and carries the roots below it ([view.Carry]), the
// helper mounts it.
const privateTmp = "/tmp"

// rules is what the helper grants, sent to it as JSON.
type rules struct {
	// ABI is the Landlock ABI version the gateway probed; the helper
	// enforces the matching go-landlock config in strict mode.
	ABI int `json:"abi"`
	// RW are directories granted full access (write roots, the private
	// temporary directory).
	RW []string `json:"rw,omitempty"`
	// RWFiles are single files granted read and write (device files, and
	// the files beside a protected root inside a write root).
	RWFiles []string `json:"rw_files,omitempty"`
	// RO are directories and files granted reading and executing.
	RO []string `json:"ro,omitempty"`
	// View, when set, is the private filesystem view the helper builds in
	// its new namespaces before applying Landlock.
	View *view `json:"view,omitempty"`
	// UnixSockets says that the scope names unix sockets: programs may
	// make AF_UNIX sockets. Without it the helper's seccomp filter refuses
	// socket(AF_UNIX, …) (seccomp.go). Sockets are the named ones that
	// exist, links resolved: with Landlock ABI 9 the only pathname
	// sockets made outside the program it may connect to.
	UnixSockets bool     `json:"unix_sockets,omitempty"`
	Sockets     []string `json:"sockets,omitempty"`
}

// view is the private view the helper builds, sent with its rules.
type view struct {
	// UID and GID are the gateway's: the helper maps them to themselves.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Carry are roots below /tmp that stay visible in the private /tmp.
	Carry []string `json:"carry,omitempty"`
	// Masks are the paths hidden behind empty files and directories,
	// sent on masksFD (not in the JSON).
	Masks []string `json:"-"`
	// Hide are directories replaced by an empty read-only tmpfs; Bind
	// are the trees bound back into them, Links the symbolic links
	// recreated in them on the way (viewplan.go).
	Hide  []string   `json:"hide,omitempty"`
	Bind  []string   `json:"bind,omitempty"`
	Links []viewLink `json:"links,omitempty"`
	// ReadOnly are the read roots no write root holds: bound read-only
	// over themselves. Writable are the write roots inside them, bound
	// over themselves first so that they stay writable.
	ReadOnly []string `json:"read_only,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// Pins are the directories between a write root and a repository
	// directory, bound over themselves so that no program can rename them
	// (a mount point cannot be); Repos are the repository directories and
	// .git files below the write roots, then bound read-only (repos.go).
	Pins  []string `json:"pins,omitempty"`
	Repos []string `json:"repos,omitempty"`
	// Network is the program's network: "" the host's (network: any, no
	// network namespace), NetworkNone a namespace with loopback alone,
	// NetworkProxy one whose way out are the listeners passed on netFD.
	Network NetworkMode `json:"network,omitempty"`
	// Forward are the host's loopback ports the scope names: for a proxy
	// view the helper also listens on each at 127.0.0.1 and passes the
	// listeners after the first four, in this order.
	Forward []int `json:"forward,omitempty"`
	// complete are the roots below which every path a deny glob matches
	// is masked, and every regular file with more than one hard link;
	// linksToo says that a program following links out of
	// them meets only masked or unreadable denied files (the read roots
	// were all walked, and Landlock keeps the rest out). The gateway's
	// own knowledge (masked), not sent to the helper.
	complete []string
	linksToo bool
	// partial are the toolchain roots bound into the view, walked only
	// toolchainDepth levels deep: no tree holding one is masked whole.
	partial []string
	// unmasked are the trees shown with their masks not all found, and
	// why (--confine best-effort only).
	unmasked []string
	// gitDirs are the repository directories of Repos (the gateway's own
	// knowledge, for ReadOnlyRepo).
	gitDirs []string

	// Host sockets (sockets.go). Fresh are the directories of host
	// sockets (/run, and /var/run where it is a directory of its own)
	// that get an empty tmpfs each; Keep are the files below them put
	// back at their paths: the sockets the scope names, and the files
	// /etc links to there (resolv.conf). SocketMasks are the other host
	// sockets, masked like Masks.
	Fresh       []string `json:"fresh,omitempty"`
	Keep        []string `json:"keep,omitempty"`
	SocketMasks []string `json:"socket_masks,omitempty"`
}

// viewLink is a symbolic link the view recreates in a hidden directory,
// on the way to a tree bound back into it.
type viewLink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// helperArgv returns the argv that runs program under the helper.
func helperArgv(helper string, rl rules, program string, args []string) ([]string, error) {
	b, err := json.Marshal(rl)
	if err != nil {
		return nil, fmt.Errorf("encode landlock rules: %w", err)
	}
	argv := make([]string, 0, 4+len(args))
	argv = append(argv, helper, helperArg, string(b), "--", program)
	return append(argv, args...), nil
}

// probeArgv returns the argv that runs the namespace probe for a gateway
// of uid and gid.
func probeArgv(helper string, uid, gid int) []string {
	return []string{helper, probeArg, strconv.Itoa(uid), strconv.Itoa(gid)}
}

// IsHelper reports whether args (os.Args) ask this process to be the
// Landlock helper. main calls it first thing.
func IsHelper(args []string) bool {
	return len(args) > 1 && (args[1] == helperArg || args[1] == probeArg)
}

// parseHelperArgs splits the helper's argv into its rules, the program
// path and the program's argv (argv[0] is the program as the user wrote it).
func parseHelperArgs(args []string) (rules, string, []string, error) {
	if len(args) < 5 || args[1] != helperArg || args[3] != "--" {
		return rules{}, "", nil, errors.New("usage: scopegate " + helperArg + " RULES -- PROGRAM ARGV0 [ARG...]")
	}
	var rl rules
	if err := json.Unmarshal([]byte(args[2]), &rl); err != nil {
		return rules{}, "", nil, fmt.Errorf("decode rules: %w", err)
	}
	if err := checkPaths(rl.pathLists()...); err != nil {
		return rules{}, "", nil, fmt.Errorf("decode rules: %w", err)
	}
	if rl.View != nil {
		for _, l := range rl.View.Links {
			if strings.IndexByte(l.Target, 0) >= 0 || l.Target == "" {
				return rules{}, "", nil, fmt.Errorf("decode rules: link target %q", l.Target)
			}
		}
		switch rl.View.Network {
		case "", NetworkNone, NetworkProxy:
		default:
			return rules{}, "", nil, fmt.Errorf("decode rules: network %q", rl.View.Network)
		}
		if len(rl.View.Forward) > maxForwards {
			return rules{}, "", nil, fmt.Errorf("decode rules: %d forwarded ports", len(rl.View.Forward))
		}
		for _, p := range rl.View.Forward {
			if p <= 0 || p > 65535 {
				return rules{}, "", nil, fmt.Errorf("decode rules: forwarded port %d", p)
			}
		}
	}
	if !filepath.IsAbs(args[4]) {
		return rules{}, "", nil, fmt.Errorf("program %q is not absolute", args[4])
	}
	argv := args[5:]
	if len(argv) == 0 {
		argv = []string{args[4]}
	}
	return rl, args[4], argv, nil
}

// pathLists are every list of paths the rules carry in their JSON: the
// helper refuses rules where one holds a path that is not absolute
// (parseHelperArgs). A new list of paths joins here.
func (rl *rules) pathLists() [][]string {
	lists := [][]string{rl.RW, rl.RWFiles, rl.RO, rl.Sockets}
	if v := rl.View; v != nil {
		lists = append(lists, v.Carry, v.Hide, v.Bind, v.ReadOnly, v.Writable, v.Pins, v.Repos,
			v.Fresh, v.Keep, v.SocketMasks)
		for _, l := range v.Links {
			lists = append(lists, []string{l.Path})
		}
	}
	return lists
}

// checkPaths returns an error naming the first path of lists that is not
// absolute or holds a NUL.
func checkPaths(lists ...[]string) error {
	for _, list := range lists {
		for _, p := range list {
			if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
				return fmt.Errorf("path %q is not absolute", p)
			}
		}
	}
	return nil
}

// parseProbeArgs reads the probe's argv: the gateway's uid and gid.
func parseProbeArgs(args []string) (uid, gid int, err error) {
	if len(args) != 4 || args[1] != probeArg {
		return 0, 0, errors.New("usage: scopegate " + probeArg + " UID GID")
	}
	uid, err1 := strconv.Atoi(args[2])
	gid, err2 := strconv.Atoi(args[3])
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	return uid, gid, nil
}
