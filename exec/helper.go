package exec

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// The helper's entry point and Landlock: this file runs in the helper,
// a re-exec of the scopegate binary (helper_protocol.go).

// RunHelper confines this process with Landlock as its arguments say and
// replaces it with the program, so the program and all its children run
// confined. It returns only on failure, with the exit status to use.
func RunHelper(args []string) int {
	if len(args) > 1 && args[1] == probeArg {
		return runProbe(args)
	}
	rl, program, argv, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
	}
	// Descriptors the gateway inherited from whoever started it (an
	// agent's socket, a file it had open) would pass on to the program,
	// past Landlock, which checks only opens: none but the standard
	// streams and the helper's own pipes survive the program's exec.
	first := 3
	if rl.View != nil {
		first = firstUnknownFD
	}
	if err := cloexecFrom(first); err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: close inherited descriptors: %v\n", err)
		return helperExitCode
	}
	if rl.View != nil {
		return runInView(rl, program, argv)
	}
	if err := restrict(rl); err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
	}
	if err := applySeccomp(!rl.UnixSockets); err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
	}
	// Die with the gateway, whatever happened to the parent-death signal
	// set at fork: if the gateway is already gone, do not start at all.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		fmt.Fprintln(os.Stderr, "scopegate: the gateway exited before the program started")
		return helperExitCode
	}
	err = syscall.Exec(program, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "scopegate: %s: %v\n", argv[0], err)
	if errors.Is(err, syscall.ENOENT) {
		return notFoundExitCode
	}
	return helperExitCode
}

// cloexecFrom marks every descriptor from first up close-on-exec: with
// one close_range, or where a seccomp filter refuses it, one by one as
// /proc/self/fd lists them.
func cloexecFrom(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) {
		return cloexecByProc(first)
	}
	return err
}

// cloexecByProc is cloexecFrom without close_range.
func cloexecByProc(first int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < first {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// restrict applies rl to this process in strict mode.
func restrict(rl rules) error {
	cfg, err := configFor(rl.ABI)
	if err != nil {
		return err
	}
	// Landlock takes directory rights only on directories: files (a
	// single file granted by the scope) get file rights.
	rwDirs, rwFiles := byKind(slices.Compact(slices.Sorted(slices.Values(rl.RW))))
	rw := landlock.RWDirs(rwDirs...).IgnoreIfMissing()
	if rl.ABI >= 2 {
		// Moving files between directories of the write roots.
		rw = rw.WithRefer()
	}
	roDirs, roFiles := byKind(rl.RO)
	// From ABI 6, signals and abstract unix sockets are scoped to the
	// domain: the program cannot stop, signal or talk to a process outside
	// it (the gateway, its parent under Landlock alone, which a SIGSTOP
	// would keep from ever enforcing the timeout).
	args := []any{cfg.HandledAccessFS}
	if rl.ABI >= 6 {
		args = append(args, cfg.Scoped)
	}
	full, err := landlock.NewConfig(args...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	grants := []landlock.Rule{
		landlock.RODirs(roDirs...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		rw,
		landlock.RWFiles(append(rwFiles, rl.RWFiles...)...).IgnoreIfMissing(),
	}
	if rl.ABI >= 9 && len(rl.Sockets) > 0 {
		// From ABI 9, connecting to a pathname socket made outside the
		// domain needs this right: the named sockets alone get it.
		grants = append(grants, landlock.ROFiles(rl.Sockets...).WithResolveUnix().IgnoreIfMissing())
	}
	err = full.Restrict(grants...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// byKind splits paths into directories and other files, as they are now
// (links followed); missing paths are left out.
func byKind(paths []string) (dirs, files []string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// configFor returns go-landlock's config for a kernel ABI: the highest the
// library knows that the kernel supports.
func configFor(abi int) (landlock.Config, error) {
	configs := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4,
		landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	if abi < 1 {
		return landlock.Config{}, ErrNoLandlock
	}
	return configs[min(abi, len(configs))-1], nil
}
