package watch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Dirs watches many directories for changes of their entries, for a
// caller that keeps what it found in each (the private view's deny index)
// and must know, without a system call per directory, which may have
// changed since.
//
// Time is counted in epochs: [Dirs.Sync] applies the events queued before
// it was called, each read of the queue under an epoch of its own, and
// returns the current epoch. A directory the caller looked at, its watch
// in place, after a Sync that returned e, is unchanged for as long as its
// [Dir.Changed] is at most e: a change made after the look is an event,
// and an event applied later carries a larger epoch. (An event applied
// later may also be older than the look: that costs a look, never a
// change missed.)
//
// What raises no event on a directory's watch is taken as a change of
// everything ([Dirs.Reset]): the queue overflowing (events were dropped),
// and a file system mounted or unmounted anywhere in this process's mount
// namespace (/proc/self/mountinfo is polled at each Sync). A directory
// whose watch the kernel drops (removed, unmounted) counts as changed for
// good.
//
// Watches are taken within a budget: half of the inotify watches the user
// has free when the first is taken (the limit is shared with the user's
// editors and build tools). Past it, and on a file system whose changes
// may not all go through this kernel (NFS, FUSE…), [Dirs.Watch] returns
// nil and the caller looks at the directory itself.
type Dirs struct {
	fd int // inotify, non-blocking; -1 once closed
	// mounts is /proc/self/mountinfo, polled for a change of the mount
	// table; -1 when it cannot be (then every Sync is a reset).
	mounts int

	// readMu makes Syncs one at a time: a Sync returns only after every
	// event read before it, by it or another, is applied.
	readMu sync.Mutex
	buf    []byte

	// epoch is the last epoch handed out; reset the epoch of the last
	// overflow or mount change; last the epoch of the last change of any
	// kind.
	epoch, reset, last atomic.Uint64

	mu     sync.Mutex
	byWd   map[int32]*Dir
	budget int // -1 until the first Watch
	broken bool
}

// Dir is one watched directory (an inode, whatever its path).
type Dir struct {
	changed atomic.Uint64

	mu sync.Mutex
	// names are the epochs of the last events that named an entry;
	// allNames stands for every name once names grew past maxNames.
	names    map[string]uint64
	allNames uint64
}

// maxNames bounds the entry names a Dir remembers events for.
const maxNames = 256

// dirsMask are the events of a watched directory: an entry created,
// removed, renamed or its attributes changed, the directory itself
// changed, moved or removed. IN_DONT_FOLLOW is not set: the directory is
// named by a /proc/self/fd link.
const dirsMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// DirsOptions configure a Dirs; the zero value is the default.
type DirsOptions struct {
	// Budget is how many directories may be watched; 0: half the watches
	// the user has free when the first is taken.
	Budget int
}

// NewDirs returns a Dirs. When inotify cannot be used it returns an error
// and no Dirs.
func NewDirs(opts DirsOptions) (*Dirs, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	budget := opts.Budget
	if budget <= 0 {
		budget = -1
	}
	d := &Dirs{fd: fd, mounts: -1, buf: make([]byte, 64<<10), byWd: map[int32]*Dir{}, budget: budget}
	if m, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		d.mounts = m
	}
	return d, nil
}

// Close releases the inotify descriptor: from then on nothing is watched
// and every Sync is a reset.
func (d *Dirs) Close() error {
	d.readMu.Lock()
	defer d.readMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken {
		return nil
	}
	d.broken = true
	if d.mounts >= 0 {
		unix.Close(d.mounts)
	}
	return unix.Close(d.fd)
}

// Sync applies every event queued before it was called and polls the
// mount table. It returns the current epoch, and the epoch of the last
// change that raised no event of its own (an overflow, a mount): what was
// looked at before reset counts as changed.
func (d *Dirs) Sync() (epoch, reset uint64) {
	d.readMu.Lock()
	defer d.readMu.Unlock()
	d.mu.Lock()
	broken := d.broken
	d.mu.Unlock()
	if broken || d.mounts < 0 || d.mountsChanged() {
		d.resetAll()
	}
	if !broken {
		d.drain()
	}
	return d.epoch.Load(), d.reset.Load()
}

// Last is the epoch of the last change of any kind.
func (d *Dirs) Last() uint64 { return d.last.Load() }

// Changed is the epoch of the last event on the directory: an entry
// created, removed, renamed or changed in mode, the directory itself
// changed, moved or removed.
func (x *Dir) Changed() uint64 { return x.changed.Load() }

// NameChanged is the epoch of the last event that named the entry name.
func (x *Dir) NameChanged(name string) uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return max(x.allNames, x.names[name])
}

// Watch watches the directory open as fd (any descriptor, O_PATH
// included) and returns it; nil when it cannot be watched (no watch left
// in the budget or the kernel, a file system that may change behind the
// kernel's back, Dirs closed). A directory already watched is the same
// Dir. A change made after Watch returns is an event.
func (d *Dirs) Watch(fd int) *Dir {
	var fs unix.Statfs_t
	if unix.Fstatfs(fd, &fs) != nil || !localType(uint32(fs.Type)) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken {
		return nil
	}
	if d.budget < 0 {
		d.budget = freeWatches() / 2
	}
	// Under mu: an event of the new watch read meanwhile is applied once
	// its Dir is known. A directory already watched gets its watch back,
	// the budget spent or not.
	wd, err := unix.InotifyAddWatch(d.fd, "/proc/self/fd/"+strconv.Itoa(fd), dirsMask)
	if err != nil {
		return nil
	}
	if x := d.byWd[int32(wd)]; x != nil {
		return x
	}
	if len(d.byWd) >= d.budget {
		unix.InotifyRmWatch(d.fd, uint32(wd))
		return nil
	}
	x := &Dir{}
	d.byWd[int32(wd)] = x
	return x
}

// Watched is how many directories are watched.
func (d *Dirs) Watched() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byWd)
}

// resetAll starts a new epoch in which everything looked at before counts
// as changed. Called with readMu held.
func (d *Dirs) resetAll() {
	e := d.epoch.Add(1)
	d.reset.Store(e)
	d.last.Store(e)
}

// mountsChanged reports whether the mount table changed since it was last
// polled: the kernel raises POLLPRI once per change. Called with readMu
// held.
func (d *Dirs) mountsChanged() bool {
	p := []unix.PollFd{{Fd: int32(d.mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(p, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0 && p[0].Revents&(unix.POLLPRI|unix.POLLERR|unix.POLLNVAL) != 0
	}
}

// drain reads the queue until it is empty, each read under an epoch of
// its own. Called with readMu held.
func (d *Dirs) drain() {
	for {
		n, err := unix.Read(d.fd, d.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return
		}
		if err != nil || n <= 0 {
			// The queue cannot be read: watch nothing from now on.
			d.mu.Lock()
			d.broken = true
			d.mu.Unlock()
			d.resetAll()
			return
		}
		e := d.epoch.Add(1)
		d.last.Store(e)
		d.mu.Lock()
		d.apply(d.buf[:n], e)
		d.mu.Unlock()
	}
}

// apply applies the events in buf under epoch e. Called with mu held.
func (d *Dirs) apply(buf []byte, e uint64) {
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			break
		}
		name := cString(buf[unix.SizeofInotifyEvent:end])
		buf = buf[end:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			d.reset.Store(e)
			continue
		}
		x := d.byWd[ev.Wd]
		if x == nil {
			continue
		}
		x.changed.Store(e)
		if len(name) > 0 {
			x.noteName(name, e)
		}
		if ev.Mask&unix.IN_IGNORED != 0 {
			// The kernel dropped the watch: its directory is gone or
			// unmounted. A record of it stays changed for good.
			delete(d.byWd, ev.Wd)
		}
	}
}

func (x *Dir) noteName(name []byte, e uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.names) >= maxNames {
		x.names, x.allNames = nil, e
		return
	}
	if x.names == nil {
		x.names = map[string]uint64{}
	}
	x.names[string(name)] = e
}

// freeWatches is how many inotify watches this user has left: the limit
// less the watches of the user's processes (their inotify descriptors'
// fdinfo lists one line a watch). 0 when the limit cannot be read.
func freeWatches() int {
	limit, err := readInt("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return 0
	}
	used := 0
	euid := os.Geteuid()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		dir := "/proc/" + p.Name()
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || int(st.Uid) != euid {
			continue
		}
		fds, _ := os.ReadDir(dir + "/fd")
		for _, f := range fds {
			if target, err := os.Readlink(dir + "/fd/" + f.Name()); err != nil || target != "anon_inode:inotify" {
				continue
			}
			used += countWatches(dir + "/fdinfo/" + f.Name())
		}
	}
	return max(0, min(limit, math.MaxInt32)-used)
}

// countWatches counts the watches an inotify descriptor's fdinfo lists.
func countWatches(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("inotify wd:")) {
			n++
		}
	}
	return n
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
