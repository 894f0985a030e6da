package audit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Group commits concurrent appends to the same tools.org together: the
// entries waiting while one append is on its way to disk go out as one
// write(2) and one fsync under the file lock. Every Append still returns
// only once its entry is on disk, and entries never interleave. A Group is
// shared by the Logs of a long-running process; its zero value is ready.
type Group struct {
	// KeepOpen is how many tools.org files the Group keeps open between
	// appends, each with its chain head (ChainHeadPath), the most recently
	// used, for as long as it lives; 0 opens both for each append. A
	// long-running process sets it before the first append.
	KeepOpen int

	// coarseTimes makes every kept log read its chain head as on a
	// filesystem without fine change times (tests).
	coarseTimes bool

	mu     sync.Mutex
	queues map[string]*groupQueue
	// logs are the tools.org files kept open with their chain heads, by
	// path; used lists their paths, least recently used first.
	logs map[string]*keptLog
	used []string
}

type groupQueue struct {
	pending  []groupReq
	flushing bool
}

type groupReq struct {
	text []byte
	// sync asks for the entry to be on disk (fsync) when append returns.
	sync bool
	done chan error
}

func (g *Group) append(path string, text []byte, sync bool) error {
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[string]*groupQueue{}
	}
	q := g.queues[path]
	if q == nil {
		q = &groupQueue{}
		g.queues[path] = q
	}
	if q.flushing {
		r := groupReq{text: text, sync: sync, done: make(chan error, 1)}
		q.pending = append(q.pending, r)
		g.mu.Unlock()
		return <-r.done
	}
	// This goroutine writes its own entry (first in the batch) and every
	// entry that queues up meanwhile.
	q.flushing = true
	q.pending = append(q.pending, groupReq{text: text, sync: sync})
	// Let the goroutines that are ready to run reach the queue first: under
	// load they join this batch instead of each paying for its own
	// open, lock, write and close; when nothing else is runnable this
	// returns at once.
	g.mu.Unlock()
	runtime.Gosched()
	g.mu.Lock()
	var own error
	first := true
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = nil
		g.mu.Unlock()
		texts, sync := batchTexts(batch)
		var err error
		if k := g.kept(path); k != nil {
			err = k.append(texts, sync)
		} else {
			err = appendChained(context.Background(), path, nil, texts, sync)
		}
		if first {
			own, first = err, false
		}
		for _, b := range batch {
			if b.done != nil {
				b.done <- err
			}
		}
		g.mu.Lock()
	}
	q.flushing = false
	delete(g.queues, path)
	g.mu.Unlock()
	return own
}

// batchTexts is the entries of a batch, written at once, each chained to
// the one before, and whether they must be synced: when any of them must (a
// call's entry that joined a check's batch is still on disk when its append
// returns).
func batchTexts(batch []groupReq) ([][]byte, bool) {
	sync := false
	texts := make([][]byte, len(batch))
	for i, b := range batch {
		sync = sync || b.sync
		texts[i] = b.text
	}
	return texts, sync
}

// kept returns the tools.org at path with its chain head, kept open,
// when the Group keeps them; nil otherwise (appendChained opens both). Only
// the goroutine that flushes path's queue calls it and uses what it
// returns, and a kept log is closed only when no queue of its path is
// flushing.
func (g *Group) kept(path string) *keptLog {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.KeepOpen <= 0 {
		return nil
	}
	if k := g.logs[path]; k != nil {
		// A head file removed or replaced (a restore, a hand edit) is
		// opened again: the kept descriptor would write where no reader
		// looks.
		var st syscall.Stat_t
		if err := syscall.Fstat(k.head.fd, &st); err == nil && st.Nlink > 0 {
			g.touch(path)
			return k
		}
		h, err := openHead(ChainHeadPath(path))
		if err != nil {
			k.close()
			delete(g.logs, path)
			g.used = slices.DeleteFunc(g.used, func(p string) bool { return p == path })
			return nil // appendChained opens it, and says why it cannot
		}
		k.head.close()
		k.head = h
		g.touch(path)
		return k
	}
	h, err := openHead(ChainHeadPath(path))
	if err != nil {
		return nil // appendChained opens it, and says why it cannot
	}
	if g.logs == nil {
		g.logs = map[string]*keptLog{}
	}
	for len(g.logs) >= g.KeepOpen {
		if !g.evict() {
			break
		}
	}
	g.logs[path] = &keptLog{path: path, fd: -1, head: h, coarse: g.coarseTimes}
	g.used = append(g.used, path)
	return g.logs[path]
}

// touch marks path's kept log as the most recently used. Called with g.mu
// held.
func (g *Group) touch(path string) {
	if i := slices.Index(g.used, path); i >= 0 {
		g.used = append(slices.Delete(g.used, i, i+1), path)
	}
}

// evict closes the least recently used kept log whose path no append is
// using, and reports whether there was one. Called with g.mu held.
func (g *Group) evict() bool {
	for i, p := range g.used {
		if g.queues[p] != nil {
			continue
		}
		g.logs[p].close()
		delete(g.logs, p)
		g.used = slices.Delete(g.used, i, i+1)
		return true
	}
	return false
}

// keptLog is a tools.org that a Group keeps open between appends, with its
// chain head, and the chain state after the Group's last append to it.
type keptLog struct {
	path string
	// fd is tools.org's descriptor, -1 when it is not open; dev and ino
	// are its file's.
	fd       int
	dev, ino uint64
	head     *headFile
	// state is the chain after the last append through this keptLog, and
	// size and ctime what tools.org's fstat showed right after it, under
	// the lock. A file changed in any way since has another size or
	// another change time (the kernel gives a change that follows a stat
	// a finer time than the one the stat read), so while the file's stat
	// shows both, state is what the head file would say and is not read.
	state chainHead
	size  int64
	ctime syscall.Timespec
	known bool
	// fine is whether the file's filesystem has fine change times (see
	// fineChangeTimes): only then is state used; coarse rules it out.
	fine, coarse bool
	// buf and sum are reused by the next append: the text of the last
	// one, and its SHA-256.
	buf []byte
	sum hash.Hash
}

// maxKeptBuf is the largest append text a keptLog keeps for reuse.
const maxKeptBuf = 1 << 20

// close closes the log and its head.
func (k *keptLog) close() {
	k.closeLog()
	k.head.close()
}

// closeLog closes tools.org's descriptor (which releases its lock) and
// forgets the state after the last append.
func (k *keptLog) closeLog() {
	if k.fd >= 0 {
		syscall.Close(k.fd)
	}
	k.fd, k.known = -1, false
}

// append appends texts to the log as appendChained does, on the kept
// descriptors: the exclusive flock is taken and released (LOCK_UN) instead
// of opening and closing the file. Under the lock, a stat of the path must
// show the kept file's inode: a tools.org renamed over (a restore, an
// editor that keeps the old file as a backup) or removed is opened again
// from its path.
func (k *keptLog) append(texts [][]byte, sync bool) error {
	var st syscall.Stat_t
	if k.fd >= 0 {
		if _, err := retry(func() (int, error) { return 0, syscall.Flock(k.fd, syscall.LOCK_EX) }); err != nil {
			k.closeLog()
			return fmt.Errorf("lock %s: %w", k.path, err)
		}
		err := syscall.Stat(k.path, &st)
		if err != nil && !errors.Is(err, syscall.ENOENT) {
			k.closeLog()
			return fmt.Errorf("stat %s: %w", k.path, err)
		}
		if err != nil || st.Dev != k.dev || st.Ino != k.ino {
			k.closeLog()
		}
	}
	if k.fd < 0 {
		fd, err := retry(func() (int, error) {
			return syscall.Open(k.path, syscall.O_RDWR|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
		})
		if err != nil {
			return fmt.Errorf("open %s: %w", k.path, err)
		}
		k.fd = fd
		if _, err := retry(func() (int, error) { return 0, syscall.Flock(k.fd, syscall.LOCK_EX) }); err != nil {
			k.closeLog()
			return fmt.Errorf("lock %s: %w", k.path, err)
		}
		if err := syscall.Fstat(k.fd, &st); err != nil {
			k.closeLog()
			return fmt.Errorf("stat %s: %w", k.path, err)
		}
		k.dev, k.ino = st.Dev, st.Ino
		k.fine = !k.coarse && fineChangeTimes(k.fd)
	}
	err := k.appendLocked(&st, texts, sync)
	if err == nil {
		_, err = retry(func() (int, error) { return 0, syscall.Flock(k.fd, syscall.LOCK_UN) })
		if err != nil {
			err = fmt.Errorf("unlock %s: %w", k.path, err)
		}
	}
	if err != nil {
		k.closeLog()
	}
	return err
}

// appendLocked is append under the lock, st the stat of tools.org.
func (k *keptLog) appendLocked(st *syscall.Stat_t, texts [][]byte, sync bool) error {
	h, exact := k.state, true
	if !k.fine || !k.known || st.Size != k.size || st.Ctim != k.ctime {
		var err error
		if h, exact, err = loadHead(k.fd, k.head, st.Size); err != nil {
			return fmt.Errorf("append to %s: %w", k.path, err)
		}
	}
	k.known = false
	return writeBuilt(k.fd, k.path, sync, st.Size, func(fd int, size int64) ([]byte, func(int64) error, error) {
		if k.sum == nil {
			k.sum = sha256.New()
		}
		text, done, err := sealAll(fd, k.path, k.head, h, exact, size, texts, k.buf, k.sum, func(h chainHead) {
			if !k.fine {
				return
			}
			var post syscall.Stat_t
			if err := syscall.Fstat(fd, &post); err == nil && post.Size == h.Size {
				k.state, k.size, k.ctime, k.known = h, post.Size, post.Ctim, true
			}
		})
		if cap(text) <= maxKeptBuf {
			k.buf = text[:0]
		}
		return text, done, err
	})
}

// fineChangeTimes reports whether the filesystem of fd stamps a change
// that follows a read of the file's times (a stat) with a finer time than
// the one read, so that any change after a stat shows another change time:
// the multigrain timestamps of Linux 6.13 and later, on ext4, xfs, btrfs
// and tmpfs. Elsewhere a change within the clock tick of the last one can
// keep its change time.
func fineChangeTimes(fd int) bool {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return false
	}
	release := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		release = append(release, byte(c))
	}
	if !kernelAtLeast(string(release), 6, 13) {
		return false
	}
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(fd, &fs); err != nil {
		return false
	}
	switch uint32(fs.Type) {
	// ext4's magic is ext3's and ext2's too: ext4 mounts ext3, and ext2
	// unless the kernel has the (deprecated) ext2 driver, which has no
	// fine change times.
	case 0xef53, // ext4
		0x58465342, // xfs
		0x9123683e, // btrfs
		0x01021994: // tmpfs
		return true
	}
	return false
}

// kernelAtLeast reports whether the kernel release (uname -r, e.g.
// "6.13.2-arch1-1") is major.minor or later; false when it does not parse.
func kernelAtLeast(release string, major, minor int) bool {
	notDigit := func(r rune) bool { return r < '0' || r > '9' }
	ma, rest, ok := strings.Cut(release, ".")
	if !ok || ma == "" || strings.IndexFunc(ma, notDigit) >= 0 {
		return false
	}
	mi := rest
	if i := strings.IndexFunc(rest, notDigit); i >= 0 {
		mi = rest[:i]
	}
	m1, err1 := strconv.Atoi(ma)
	m2, err2 := strconv.Atoi(mi)
	if err1 != nil || err2 != nil {
		return false
	}
	return m1 > major || m1 == major && m2 >= minor
}
