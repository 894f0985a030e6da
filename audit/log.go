package audit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"syscall"
	"time"
)

// LogFile is the name of a session branch's audit log in the branch
// directory.
const LogFile = "tools.org"

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
// Under the same lock the entry is sealed into the branch's chain (its
// :CHAIN_SEQ: and :CHAIN: properties) and the chain head beside the log
// (ChainHeadPath) is replaced.
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
		err = appendChained(ctx, l.Path, nil, [][]byte{text}, !l.NoSync)
	}
	if err != nil {
		return fmt.Errorf("audit call %q: %w", e.CallID, err)
	}
	return nil
}

// Writable reports whether an entry could be appended now: the file opens
// for appending (created if missing). A call is run only after this, so
// that nothing runs whose entry cannot be written.
func (l *Log) Writable() error {
	fd, err := retry(func() (int, error) {
		return syscall.Open(l.Path, syscall.O_RDWR|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return fmt.Errorf("open %s: %w", l.Path, err)
	}
	syscall.Close(fd)
	return nil
}

func now(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// appendEntry appends text to path as described at [Log.Append], without
// the chain (system-prompts.org). When the file does not end in a newline
// (a write torn by a crash), the text is preceded by one so that its
// headline starts a line.
func appendEntry(ctx context.Context, path string, text []byte, sync bool) error {
	return appendLocked(ctx, path, sync, func(fd int, size int64) ([]byte, func(int64) error, error) {
		buf, err := lineStart(fd, path, size)
		if err != nil {
			return nil, nil, err
		}
		return append(buf, text...), nil, nil
	})
}

// appendChained appends the rendered entries texts to the tools.org at
// path in one write, each sealed into the chain after the one before (see
// chain.go), and records the new chain head, all under the file's lock.
// head, when not nil, is the chain head of path, kept open by the caller.
func appendChained(ctx context.Context, path string, head *headFile, texts [][]byte, sync bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if head == nil {
		var err error
		if head, err = openHead(ChainHeadPath(path)); err != nil {
			return err
		}
		defer head.close()
	}
	return appendLocked(ctx, path, sync, func(fd int, size int64) ([]byte, func(int64) error, error) {
		h, exact, err := loadHead(fd, head, size)
		if err != nil {
			return nil, nil, err
		}
		return sealAll(fd, path, head, h, exact, size, texts, nil, nil, nil)
	})
}

// sealAll is the text that appends texts to the tools.org at path, fd of
// size bytes, after the chain state h (exact: h records that size, see
// loadHead), and what writes the new head once the text is written. Each
// entry is sealed after the one before. buf and sum, when not nil, are a
// buffer and a SHA-256 to reuse; after, when not nil, is told the state
// written.
func sealAll(fd int, path string, head *headFile, h chainHead, exact bool, size int64, texts [][]byte,
	buf []byte, sum hash.Hash, after func(chainHead)) ([]byte, func(int64) error, error) {
	buf = buf[:0]
	if !exact {
		var err error
		nl, err := lineStart(fd, path, size)
		if err != nil {
			return nil, nil, err
		}
		buf = append(buf, nl...)
	}
	n := len(buf)
	for _, t := range texts {
		n += len(t) + sealSpace
	}
	buf = slices.Grow(buf, n-len(buf))
	if sum == nil {
		sum = sha256.New()
	}
	for _, t := range texts {
		buf = h.seal(buf, t, sum)
	}
	return buf, func(end int64) error {
		h.Size = end
		if err := head.write(h); err != nil {
			return err
		}
		if after != nil {
			after(h)
		}
		return nil
	}, nil
}

// buildFunc makes the text of an append under the file's lock, for fd
// open on the file of size bytes: the entries, after a newline when the
// file's last line is not ended (see lineStart). done, when not nil, runs
// after the text is written (and synced), with the file's new size.
type buildFunc func(fd int, size int64) (text []byte, done func(end int64) error, err error)

// lineStart returns what must come before an entry appended to the file
// fd of size bytes so that its headline starts a line: nothing, or the
// newline that ends a torn last line (it reads the last byte).
func lineStart(fd int, path string, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	var last [1]byte
	n, err := retry(func() (int, error) { return syscall.Pread(fd, last[:], size-1) })
	if err != nil || n != 1 {
		return nil, fmt.Errorf("read end of %s: %w", path, cmp.Or(err, io.ErrUnexpectedEOF))
	}
	if last[0] != '\n' {
		return []byte{'\n'}, nil
	}
	return nil, nil
}

// appendLocked opens path for appending, takes its exclusive lock and
// writes what build makes in a single write(2). It works on the raw
// descriptor: a regular file gains nothing from the runtime poller, and
// registering with it would cost system calls on every append.
func appendLocked(ctx context.Context, path string, sync bool, build buildFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fd, err := retry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDWR|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	err = appendFD(fd, path, sync, build)
	// Closing the descriptor releases the lock.
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", path, cerr)
	}
	return err
}

// appendFD is appendLocked on the open descriptor of path.
func appendFD(fd int, path string, sync bool, build buildFunc) error {
	if _, err := retry(func() (int, error) { return 0, syscall.Flock(fd, syscall.LOCK_EX) }); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	return writeBuilt(fd, path, sync, st.Size, build)
}

// writeBuilt writes what build makes for fd, open and locked on path of
// size bytes, in a single write(2), syncs it when asked, and runs the
// build's done.
func writeBuilt(fd int, path string, sync bool, size int64, build buildFunc) error {
	text, done, err := build(fd, size)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	// Exactly one successful write(2): a loop over short writes could
	// split an entry between two system calls. A short write is an error.
	n, err := retry(func() (int, error) { return syscall.Write(fd, text) })
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if n != len(text) {
		return fmt.Errorf("append to %s: %w: %d of %d bytes", path, ErrShortWrite, n, len(text))
	}
	if sync {
		if _, err := retry(func() (int, error) { return 0, syscall.Fsync(fd) }); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	if done != nil {
		if err := done(size + int64(n)); err != nil {
			return fmt.Errorf("append to %s: %w", path, err)
		}
	}
	return nil
}

// retry runs a system call again while a signal interrupts it.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}
