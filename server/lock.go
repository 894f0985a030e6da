package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the name of the serve lock inside the sessions root.
const LockFile = ".scopegate-serve.lock"

// ErrLocked reports that another server holds the sessions root.
var ErrLocked = errors.New("sessions root is already served")

// LockedError names the process holding the serve lock.
type LockedError struct {
	Path string
	// PID is the holder's pid as written in the lock file (0 if unreadable).
	PID int
}

func (e *LockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("%s: held by %s (lock %s)", ErrLocked, holder, e.Path)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is the held serve lock of a sessions root: an flock on
// <root>/.scopegate-serve.lock, which holds the holder's pid. The kernel
// releases it when the process dies, so a crash never leaves a stale lock.
// CLI commands never take it.
type Lock struct {
	f *os.File
}

// AcquireLock takes the serve lock of the sessions root without waiting; a
// held lock is a *LockedError naming the holder.
func AcquireLock(root string) (*Lock, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create sessions root: %w", err)
	}
	path := filepath.Join(root, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open serve lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			data, _ := os.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write serve lock: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write serve lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays: removing it would race with a
// server starting now.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
