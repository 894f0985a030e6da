package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// The private view, the helper's side: this file runs in the helper
// (helper_protocol.go), started by the gateway in its new namespaces
// (view_gateway.go). The helper, PID 1 of its namespace:
//
//  0. maps its uid and gid to themselves (files keep their owners), with
//     setgroups denied, and makes itself not dumpable: the program runs
//     as the same user, and must not open the helper's pipes through
//     /proc/1/fd nor ptrace it;
//  1. makes every mount private, so nothing it does reaches the host;
//  2. mounts a fresh tmpfs on /tmp, after cloning the roots that live
//     below /tmp (read, write, the call's TMPDIR) and moving the clones
//     back to their paths inside it; then the same on /run and /var/run
//     with the sockets the scope names, and the IPC namespace's own
//     /dev/mqueue and an empty /dev/shm (sockets_helper.go); then the
//     same for each directory of [view.Hide] with the trees of
//     [view.Bind], recreating [view.Links] on the way, and makes each such
//     tmpfs read-only (view_hide.go);
//  3. masks every path of [view.Masks] (deny matches, host secrets) and
//     of [view.SocketMasks] (the other host sockets): an
//     empty read-only file bound over a file, an empty read-only tmpfs
//     over a directory; the target is opened without following links, so
//     a link swapped in since the walk cannot redirect a mask;
//  4. binds each read root that no write root holds read-only over
//     itself, the write roots inside it bound first so they stay writable;
//     then each repository below the write roots read-only, on directories
//     bound over themselves so that they cannot be renamed (repos.go);
//  5. mounts a fresh proc on /proc, which shows only the call's processes;
//  6. applies Landlock;
//  7. gives up, on every thread, its capabilities and those anything it
//     starts would get (ambient set cleared; with uid 0, root no longer
//     gains capabilities by exec), installs the seccomp filter
//     (seccomp.go), and starts the program as PID 2, in a
//     process group of its own, with no descriptor but the standard
//     streams (supervise), the signals the program could send it left at
//     their default action, which PID 1 does not receive from inside its
//     namespace. It passes on the gateway's interrupt (a byte on the
//     liveness pipe: SIGINT to the program's group on timeout), reaps every orphan, and when the
//     program has ended kills and reaps whatever is left in the
//     namespace, then tells the gateway the program's status (128+signal
//     when it was killed) and exits with it. When the helper exits or is
//     killed, the kernel kills every process left in the namespace, so
//     nothing outlives the call.
//
// The helper is not the program itself because PID 1 ignores signals it
// has no handler for: a program run as PID 1 would survive the SIGINT of a
// timeout and its own `kill $$`.
//
// Any failure before the program starts exits 126 with one line on
// stderr: the program never runs with a mask missing.

// runProbe is the helper's side of the probe: the steps of a private view
// on scratch files. args is its argv (probeArgv).
func runProbe(args []string) int {
	err := func() error {
		uid, gid, err := parseProbeArgs(args)
		if err != nil {
			return err
		}
		if err := mapSelf(uid, gid); err != nil {
			return err
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make mounts private: %w", err)
		}
		if err := mountTmp(nil); err != nil {
			return err
		}
		f, d := privateTmp+"/probe-file", privateTmp+"/probe-dir"
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			return err
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		ro, rw := privateTmp+"/probe-ro", privateTmp+"/probe-ro/rw"
		if err := os.MkdirAll(rw, 0o700); err != nil {
			return err
		}
		if err := bindReadOnly([]string{ro}, []string{rw}); err != nil {
			return err
		}
		if err := os.WriteFile(rw+"/x", []byte("x"), 0o600); err != nil {
			return fmt.Errorf("a writable bind below a read-only one: %w", err)
		}
		if err := os.WriteFile(ro+"/x", []byte("x"), 0o600); !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("a read-only bind took a write (%v)", err)
		}
		if err := maskAll([]string{f, d}); err != nil {
			return err
		}
		if b, err := os.ReadFile(f); err != nil || len(b) != 0 {
			return fmt.Errorf("mask did not hide the file (%q, %v)", b, err)
		}
		if err := mountProc(); err != nil {
			return err
		}
		if err := probeHostSockets(); err != nil {
			return err
		}
		if err := dropCaps(); err != nil {
			return err
		}
		return probeSeccomp()
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: probe namespaces: %v\n", err)
		return helperExitCode
	}
	return 0
}

// mapSelf maps this process's uid and gid in the parent user namespace
// to themselves in its own, setgroups denied: what an unprivileged
// process may write for itself. Until it is done the process's ids are
// unmapped (it could create no file).
func mapSelf(uid, gid int) error {
	for _, w := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
		{"/proc/self/uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
	} {
		fd, err := unix.Open(w.file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("map ids: %w", err)
		}
		_, err = unix.Write(fd, []byte(w.data))
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("map ids: write %s: %w", w.file, err)
		}
	}
	return nil
}

// runInView is the helper in its namespaces: it builds the view, applies
// Landlock and supervises the program. It returns the exit status.
func runInView(rl rules, program string, argv []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "scopegate: confine: "+format+"\n", a...)
		return helperExitCode
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	fds := []unix.PollFd{{Fd: livenessFD, Events: unix.POLLIN}}
	if _, err := unix.Poll(fds, 0); err != nil || fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
		return fail("the gateway exited before the program started")
	}
	if err := mapSelf(rl.View.UID, rl.View.GID); err != nil {
		return fail("private view: %v", err)
	}
	// The program runs as the same user: not dumpable, the helper's
	// /proc entries (its pipes under fd/) and ptrace stay closed to it.
	// (After mapSelf: a process that is not dumpable cannot open its own
	// uid_map for writing unless it is root.)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("private view: not dumpable: %v", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail("working directory: %v", err)
	}
	if rl.View.Masks, err = readMasks(); err != nil {
		return fail("private view: %v", err)
	}
	if err := buildView(*rl.View); err != nil {
		return fail("private view: %v", err)
	}
	if rl.View.Network != "" {
		if err := joinNetwork(rl.View.Network, rl.View.Forward); err != nil {
			return fail("network: %v", err)
		}
	}
	// The working directory may lie below a mount made since: enter it
	// again by name so relative paths meet the masks.
	if err := os.Chdir(cwd); err != nil {
		return fail("private view: enter %s: %v", cwd, err)
	}
	// Landlock gives each thread that restricts itself a domain of its
	// own (before ABI 8's thread sync), and scopes signals to a domain and
	// those below it: the thread that starts the program must be the one
	// that signals it. The helper keeps to this one.
	runtime.LockOSThread()
	if err := restrict(rl); err != nil {
		return fail("%v", err)
	}
	if err := dropCaps(); err != nil {
		return fail("%v", err)
	}
	if err := applySeccomp(!rl.UnixSockets); err != nil {
		return fail("%v", err)
	}
	if _, err := unix.Write(viewFD, []byte{viewBuiltByte}); err != nil {
		return fail("tell the gateway: %v", err)
	}
	// The program must not inherit the helper's pipes.
	unix.CloseOnExec(livenessFD)
	unix.CloseOnExec(viewFD)
	unix.CloseOnExec(netFD)
	code := supervise(program, argv)
	_, _ = unix.Write(viewFD, []byte{statusByte, byte(code)})
	return code
}

// buildView makes the mounts of v (steps 1 to 5 above).
func buildView(v view) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := mountTmp(v.Carry); err != nil {
		return err
	}
	// No host socket, no host IPC object (sockets_helper.go).
	if err := hideHostSockets(v.Fresh, v.Keep); err != nil {
		return err
	}
	if err := hideAll(v.Hide, v.Bind, v.Links); err != nil {
		return err
	}
	// The directories that hold masks or repositories below the write
	// roots, bound over themselves so that no program can move them
	// (masks.go, repos.go): before the masks, which each bind would
	// otherwise clone again.
	for _, p := range v.Pins {
		if err := bindOver(p, false, false); err != nil {
			return err
		}
	}
	// Masks next: they need the private /tmp writable (a read-only root
	// may hold it), and the read-only binds clone them with their trees.
	if err := maskAll(append(slices.Clip(v.Masks), v.SocketMasks...)); err != nil {
		return err
	}
	if err := bindReadOnly(v.ReadOnly, v.Writable); err != nil {
		return err
	}
	// The repositories below the write roots, read-only whole.
	for _, p := range v.Repos {
		if err := bindOver(p, true, true); err != nil {
			return err
		}
	}
	return mountProc()
}

// bindReadOnly binds each of the writable paths over itself, then each
// read-only root over itself with the read-only flag on its own mount
// alone: the writable binds below it keep their flags. Landlock denies the
// same writes; the read-only mount denies them to anything Landlock does
// not cover. A path that does not exist is skipped.
func bindReadOnly(ro, writable []string) error {
	for _, w := range writable {
		if err := bindOver(w, false, false); err != nil {
			return err
		}
	}
	for _, r := range ro {
		if err := bindOver(r, true, false); err != nil {
			return err
		}
	}
	return nil
}

// bindOver binds path (a directory or a file, with the mounts below it)
// over itself, read-only when readOnly is set: the new mount alone, or
// with every mount below it too when recursive is. A path that does not
// exist is skipped.
func bindOver(path string, readOnly, recursive bool) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	defer unix.Close(fd)
	if readOnly {
		flags := unix.AT_EMPTY_PATH
		if recursive {
			flags |= unix.AT_RECURSIVE
		}
		if err := unix.MountSetattr(fd, "", uint(flags), &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s read-only: %w", path, err)
		}
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	return nil
}

// mountTmp mounts a fresh tmpfs on /tmp and brings back the roots below
// it: directories and single files (a file granted by name), each on a
// mount point of its own kind.
func mountTmp(carry []string) error {
	return mountFresh(privateTmp, "1777", carry)
}

// mountFresh mounts an empty tmpfs of mode on dir and brings back the
// paths of carry, which lie below it, each on a mount point of its own
// kind (a directory, or an empty file for a file or socket).
func mountFresh(dir, mode string, carry []string) error {
	fds := make([]int, len(carry))
	dirs := make([]bool, len(carry))
	for i, root := range carry {
		fd, err := unix.OpenTree(unix.AT_FDCWD, root, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				fds[i] = -1
				continue
			}
			return fmt.Errorf("clone %s: %w", root, err)
		}
		defer unix.Close(fd)
		fds[i] = fd
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("clone %s: %w", root, err)
		}
		dirs[i] = st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+mode); err != nil {
		return fmt.Errorf("mount private %s: %w", dir, err)
	}
	for i, root := range carry {
		if fds[i] < 0 {
			continue
		}
		if err := mountPoint(root, dirs[i]); err != nil {
			return fmt.Errorf("carry %s into the private %s: %w", root, dir, err)
		}
		if err := unix.MoveMount(fds[i], "", unix.AT_FDCWD, root, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("carry %s into the private %s: %w", root, dir, err)
		}
	}
	return nil
}

// mountPoint makes path, with the directories above it, as a directory
// or as an empty file: a mount is moved only onto its own kind.
func mountPoint(path string, dir bool) error {
	if dir {
		return os.MkdirAll(path, 0o700)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// maskAll hides each path behind an empty read-only file or directory.
// The empty file they share lives in the private /tmp only until every
// mask is bound: it is then unlinked, leaving it reachable only through
// the read-only masks.
func maskAll(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	empty := privateTmp + "/.scopegate-mask"
	fd, err := unix.Open(empty, unix.O_CREAT|unix.O_EXCL|unix.O_RDONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("make mask file: %w", err)
	}
	var mst unix.Stat_t
	err = unix.Fstat(fd, &mst)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("stat mask file: %w", err)
	}
	for _, p := range paths {
		if err := mask(p, empty, &mst); err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	if err := unix.Unlink(empty); err != nil {
		return fmt.Errorf("remove mask file: %w", err)
	}
	return nil
}

const maskAttrs = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC

// mask hides path behind an empty read-only file (empty, whose stat is
// mst) or directory. A path masked already, under this name or another
// (a link on the way, a tree named twice), is left as it is: a second
// mask bound over the first would make the mask file a mount point,
// which cannot be removed.
func mask(path, empty string, mst *unix.Stat_t) error {
	tfd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // gone since the walk: nothing left to hide
		}
		return err
	}
	defer unix.Close(tfd)
	var st unix.Stat_t
	if err := unix.Fstat(tfd, &st); err != nil {
		return err
	}
	if st.Dev == mst.Dev && st.Ino == mst.Ino {
		return nil
	}
	var mfd int
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil // a link's target is decided by its own root
	case unix.S_IFDIR:
		fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err != nil {
			return fmt.Errorf("fsopen tmpfs: %w", err)
		}
		defer unix.Close(fsfd)
		if err := unix.FsconfigSetString(fsfd, "mode", "0555"); err != nil {
			return fmt.Errorf("configure tmpfs: %w", err)
		}
		if err := unix.FsconfigCreate(fsfd); err != nil {
			return fmt.Errorf("create tmpfs: %w", err)
		}
		if mfd, err = unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, maskAttrs); err != nil {
			return fmt.Errorf("fsmount tmpfs: %w", err)
		}
	default:
		if mfd, err = unix.OpenTree(unix.AT_FDCWD, empty, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); err != nil {
			return fmt.Errorf("clone mask file: %w", err)
		}
		if err := unix.MountSetattr(mfd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: maskAttrs}); err != nil {
			unix.Close(mfd)
			return fmt.Errorf("make mask read-only: %w", err)
		}
	}
	defer unix.Close(mfd)
	return unix.MoveMount(mfd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// mountProc mounts the PID namespace's own proc on /proc.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount private /proc: %w", err)
	}
	return nil
}

// Secure bits (linux/securebits.h): root gains no capabilities by exec,
// and that cannot be undone.
const (
	secbitNoRoot       = 1 << 0
	secbitNoRootLocked = 1 << 1
)

// dropCaps makes sure nothing the helper starts has a capability in the
// user namespace, and that no thread of the helper keeps one: the
// ambient set goes, with uid 0 (the gateway runs as root) exec no longer
// grants root its capabilities, and then every set is emptied. All three
// are per-thread, so each is made on every thread of the process at once
// (psx); a thread the runtime starts later is cloned from one of them.
func dropCaps() error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear ambient capabilities: %w", e)
	}
	if os.Getuid() == 0 {
		if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, secbitNoRoot|secbitNoRootLocked, 0, 0, 0, 0); e != 0 {
			return fmt.Errorf("set secure bits: %w", e)
		}
	}
	// Empty every set (the inheritable one holds CAP_SYS_ADMIN, which a
	// file with inheritable file capabilities would turn into a real one).
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("drop capabilities: %w", e)
	}
	return nil
}

// orphanReapInterval bounds how long an orphan of the program stays a
// zombie while the program runs.
const orphanReapInterval = time.Second

// defaultSignals sets every signal the program could send the helper to
// its default action, just before the program starts: the kernel does
// not deliver a signal sent from inside a PID namespace to its PID 1 when
// that signal's action is the default, so no signal of the program's
// (a kill, a queued "fault" signal) can end the helper or change the
// status it reports, and the program's exec, which resets handlers to
// the default anyway, inherits nothing ignored. SIGCHLD's default is to
// drop it, so an orphan's exit no longer interrupts the wait. Kept are
// the runtime's own: SIGURG (preemption), SIGPROF, and 32 and 33 (the C
// library's threads; 33 is also how Go and psx make a system call on
// every thread); a program sending them reaches a handler that does
// nothing with them. A real fault in
// the helper still ends it: the kernel forces those.
func defaultSignals() {
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		switch sig {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGURG, syscall.SIGPROF, 32, 33:
			continue
		}
		// struct sigaction: handler (0 = SIG_DFL), flags, restorer, mask.
		var act [4]uintptr
		_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0)
	}
}

// supervise starts the program in a process group of its own and waits,
// on one thread, for the program to end or the gateway to ask:
// interruptByte sends SIGINT to the program's group, a hang-up (the
// gateway died) ends the helper and everything in the namespace. Orphans
// are reaped at least every orphanReapInterval. Once the program has
// ended, or the helper gives up, every process left in the namespace is
// killed and reaped, and supervise returns the program's status
// (128+signal when it was killed; helperExitCode when the helper gave up).
// The helper gives its own standard streams up once the program has
// them, so that the gateway's pipes close with the last process that
// writes to them, not with the helper.
func supervise(program string, argv []string) int {
	pidfd := -1
	defaultSignals()
	pid, err := syscall.ForkExec(program, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: %s: %v\n", argv[0], err)
		if errors.Is(err, syscall.ENOENT) {
			return notFoundExitCode
		}
		return helperExitCode
	}
	releaseStdio()
	code := -1
	reap := func(flags int) {
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &ws, flags, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || wpid <= 0 {
				return
			}
			if wpid == pid && code < 0 {
				switch {
				case ws.Exited():
					code = ws.ExitStatus()
				case ws.Signaled():
					code = 128 + int(ws.Signal())
				}
			}
		}
	}
	// end kills and reaps what is left in the namespace, as the kernel
	// would when the helper exits, so that what the helper reports is
	// final.
	end := func(status int) int {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		reap(0)
		return status
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: livenessFD, Events: unix.POLLIN}}
	reaped := time.Now()
	for code < 0 {
		n, err := unix.Poll(fds, int(orphanReapInterval/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			n, err = 0, nil // as a timeout: a run of signals must not keep orphans from their reaping
			fds[0].Revents, fds[1].Revents = 0, 0
		}
		if err != nil {
			return end(helperExitCode)
		}
		if n == 0 || fds[0].Revents != 0 || time.Since(reaped) >= orphanReapInterval {
			reap(unix.WNOHANG)
			reaped = time.Now()
		}
		if fds[1].Revents != 0 {
			var b [1]byte
			if m, _ := unix.Read(livenessFD, b[:]); m <= 0 {
				return end(helperExitCode) // the gateway is gone
			}
			if b[0] == interruptByte {
				_ = syscall.Kill(-pid, syscall.SIGINT)
			}
		}
	}
	return end(code)
}

// releaseStdio points the helper's standard streams at /dev/null (closes
// them when it cannot be opened).
func releaseStdio() {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	for fd := 0; fd <= 2; fd++ {
		if err != nil || unix.Dup3(null, fd, 0) != nil {
			_ = unix.Close(fd)
		}
	}
	if err == nil && null > 2 {
		_ = unix.Close(null)
	}
}
