//go:build unix

package roam

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockedDir is a directory held with an exclusive flock. Locking the
// directory rather than the file survives the rename that replaces the file,
// and flock locks of separate opens exclude goroutines of one process as much
// as other processes.
type lockedDir struct{ f *os.File }

func lockDir(root *os.Root, name string) (*lockedDir, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open directory %q: %w", name, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock directory %q: %w", name, err)
	}
	return &lockedDir{f: f}, nil
}

// unlock releases the lock by closing the directory.
func (d *lockedDir) unlock() { d.f.Close() }
