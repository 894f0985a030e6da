package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// Modes of everything created under the sessions root.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// writeFile replaces path with data, durably (atomicfile): every file of
// a session survives a crash once written (docs/reference.md, Files).
func writeFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{Durable: true})
}

// lockBranch takes the branch's exclusive lock (flock on .scope.lock) and
// returns its release.
func lockBranch(branchDir string) (func(), error) {
	path := filepath.Join(branchDir, ".scope.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", branchDir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", branchDir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
