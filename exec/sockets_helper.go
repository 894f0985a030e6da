package exec

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Host sockets and IPC objects, the helper's side (sockets.go says why):
// this file runs in the helper, in the view's namespaces.

// hideHostSockets mounts an empty tmpfs on each directory of fresh (/run)
// with the paths of keep below it brought back, and gives the view the
// IPC namespace's own POSIX objects (privateIPC).
func hideHostSockets(fresh, keep []string) error {
	for _, dir := range fresh {
		var mine []string
		for _, k := range keep {
			if within(k, dir) {
				mine = append(mine, k)
			}
		}
		if err := mountFresh(dir, "0755", mine); err != nil {
			return err
		}
	}
	return privateIPC()
}

// privateIPC mounts the mqueue file system of the helper's IPC namespace
// on /dev/mqueue, and an empty tmpfs on /dev/shm (POSIX shared memory),
// where the host has those directories: the host's message queues and
// shared memory objects are out of reach, by name and by path.
func privateIPC() error {
	for _, m := range []struct{ dir, fstype, data string }{
		{"/dev/mqueue", "mqueue", ""},
		{"/dev/shm", "tmpfs", "mode=1777"},
	} {
		if fi, err := os.Lstat(m.dir); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount(m.fstype, m.dir, m.fstype, unix.MS_NOSUID|unix.MS_NODEV, m.data); err != nil {
			return fmt.Errorf("mount private %s: %w", m.dir, err)
		}
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
	return privateIPC()
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
