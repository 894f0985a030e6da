package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Log appends entries to a tools.org file. The zero value of every field but
// Path works.
type Log struct {
	// Path is the tools.org file; it is created 0600 when missing.
	Path string
	// MaxOutput caps each of stdout and stderr kept in an entry, in bytes
	// (0 means DefaultMaxOutput). The cut is recorded as :TRUNCATED:.
	MaxOutput int
	// NoSync skips the fsync after each append (benchmarks, tests on a
	// throwaway disk). By default an appended entry is on disk when Append
	// returns.
	NoSync bool
	// Now stamps entries whose Time is zero (default time.Now).
	Now func() time.Time
	// Group, when set, commits concurrent appends to the same file
	// together (see Group).
	Group *Group
}

// Append writes e as one level-1 heading at the end of the log: a single
// write(2) of the whole entry on an O_APPEND descriptor, under an exclusive
// flock, so concurrent writers in any number of processes never interleave.
func (l *Log) Append(ctx context.Context, e Entry) error {
	if e.Time.IsZero() {
		e.Time = now(l.Now)
	}
	text := render(&e, l.MaxOutput)
	var err error
	if l.Group != nil {
		if err = ctx.Err(); err == nil {
			err = l.Group.append(l.Path, text, !l.NoSync)
		}
	} else {
		err = appendEntry(ctx, l.Path, text, !l.NoSync)
	}
	if err != nil {
		return fmt.Errorf("audit call %q: %w", e.CallID, err)
	}
	return nil
}

func now(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// appendEntry appends text to path as described at [Log.Append]. When the
// file does not end in a newline (a write torn by a crash), the entry is
// preceded by one so that its headline starts a line.
func appendEntry(ctx context.Context, path string, text []byte, sync bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	// Closing the descriptor releases the lock.

	if st, err := f.Stat(); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	} else if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil {
			return fmt.Errorf("read end of %s: %w", path, err)
		}
		if last[0] != '\n' {
			text = append([]byte{'\n'}, text...)
		}
	}
	if err := writeOnce(f, text); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// flock takes a lock on f, retrying when a signal interrupts the wait.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// writeOnce writes p with exactly one successful write(2): os.File.Write
// would loop over short writes and so could split an entry between two
// system calls. A short write is an error.
func writeOnce(f *os.File, p []byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), p)
			if !errors.Is(werr, syscall.EINTR) {
				return true
			}
		}
	}); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	if n != len(p) {
		return fmt.Errorf("%w: %d of %d bytes", ErrShortWrite, n, len(p))
	}
	return nil
}
