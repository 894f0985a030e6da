package exec

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Host sockets and IPC objects, the helper's side (sockets.go says why):
// this file runs in the helper, in the view's namespaces.

// hideHostSockets mounts an empty tmpfs on each directory of fresh (/run)
// with the paths of keep below it brought back, and gives the view the
// IPC namespace's own POSIX objects (privateIPC), keeping the scope's
// roots below /dev/shm.
func hideHostSockets(fresh, keep []string) error {
	for _, dir := range fresh {
		if err := mountFresh(dir, "0755", pathsWithin(keep, dir)); err != nil {
			return err
		}
	}
	return privateIPC(slices.DeleteFunc(pathsWithin(keep, "/dev/shm"), func(k string) bool { return k == "/dev/shm" }))
}

// privateIPC mounts the mqueue file system of the helper's IPC namespace
// on /dev/mqueue, and an empty tmpfs on /dev/shm (POSIX shared memory)
// with the paths of keep brought back (the scope's roots there), where the
// host has those directories: the host's message queues and shared memory
// objects are out of reach, by name and by path.
func privateIPC(keep []string) error {
	if fi, err := os.Lstat("/dev/mqueue"); err == nil && fi.IsDir() {
		if err := unix.Mount("mqueue", "/dev/mqueue", "mqueue", unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("mount private /dev/mqueue: %w", err)
		}
	}
	if fi, err := os.Lstat("/dev/shm"); err == nil && fi.IsDir() {
		return mountFresh("/dev/shm", "1777", keep)
	}
	return nil
}

// probeHostSockets is the probe's part for host sockets (runProbe): an
// empty tmpfs keeping one file, and the IPC namespace's own objects.
func probeHostSockets() error {
	run, kept := privateTmp+"/probe-run", privateTmp+"/probe-run/a/kept"
	if err := os.MkdirAll(run+"/a", 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(kept, []byte("x"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(run+"/gone", nil, 0o600); err != nil {
		return err
	}
	if err := mountFresh(run, "0755", []string{kept}); err != nil {
		return err
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "x" {
		return fmt.Errorf("a file kept in a fresh tmpfs is not there (%q, %v)", b, err)
	}
	if _, err := os.Lstat(run + "/gone"); err == nil {
		return errors.New("a fresh tmpfs shows what it covers")
	}
	return privateIPC(nil)
}

// probeSeccomp installs the filter refusing AF_UNIX sockets and checks
// that it holds, and that a socket pair still works.
func probeSeccomp() error {
	if err := applySeccomp(true); err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return errors.New("seccomp: the filter let an AF_UNIX socket be made")
	}
	if !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("seccomp: an AF_UNIX socket failed with %v, not EPERM", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("seccomp: socketpair: %w", err)
	}
	unix.Close(fds[0])
	unix.Close(fds[1])
	return nil
}
