// Package watch tells a long-running process whether a file it read, or a
// directory it listed, has changed since, without a system call per
// question: a [Watcher] follows a few paths (the files serve caches), a
// [Dirs] many directories (the trees the private view is walked on).
//
// A Watcher watches, with inotify, every directory the kernel passes through
// to reach a path (symbolic links followed as the kernel follows them) and
// the file at its end. The kernel queues an inotify event inside the system
// call that makes the change — write, truncate, rename, unlink, chmod —
// before that call returns. So once [Watcher.Sync] has read the queue, every
// change finished before Sync was called is reflected in [Watcher.Version]:
// a cache keyed by a path's version is never stale for a question asked
// after the change. Concurrent Syncs share one read of the queue.
//
// A path the Watcher cannot follow exactly (no inotify, no watch left, a
// file system that may change behind the kernel's back such as NFS or
// FUSE, a path it may not read) is reported as not watched, and the caller
// checks the file itself. Two changes raise no event and are not seen: a
// write through a shared memory mapping, and a file system mounted over a
// directory on the way.
package watch

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// Watcher follows the paths it is asked about. It is safe for concurrent
// use. Create it with New and Close it when done.
type Watcher struct {
	fd int // the inotify descriptor (non-blocking), or -1

	// readMu makes reads of the queue one at a time, each applying its
	// events before the next read starts: a read that finds the queue empty
	// must not overtake one holding events not yet applied.
	readMu sync.Mutex
	buf    []byte // read buffer, under readMu

	mu sync.Mutex
	// pending is the next read of the queue, which callers of Sync join
	// until it starts.
	pending *syncCall
	paths   map[trackKey]*track
	watches map[int32]*watchRefs
	// next is the last version handed out: versions never repeat, across
	// paths too.
	next uint64
	// broken is set when the queue could not be read: nothing is watched
	// from then on.
	broken bool
	// clock orders the uses of paths, to let go of the least recently
	// used beyond maxPaths.
	clock uint64
}

// maxPaths bounds the paths a Watcher follows, and so the inotify watches
// it holds: they count against a per-user limit shared with the user's
// other programs (editors watch their projects). A path let go is walked
// again when next asked about, under a new version.
const maxPaths = 1024

// trackKey names a tracked path and whether its last component is followed
// when it is a symbolic link.
type trackKey struct {
	path   string
	follow bool
}

// track is one path the Watcher follows.
type track struct {
	key     trackKey
	version uint64
	// stale says that something on the path changed: the path is walked
	// again, and watched anew, before its next version is given.
	stale bool
	// watched is false when the path cannot be followed exactly.
	watched bool
	refs    []ref
	// used is the clock of the last question about the path.
	used uint64
}

// ref is a track's interest in one watch: events on the watched inode
// itself (name "") or on one entry of a watched directory (name), or on
// every entry (anyEntry).
type ref struct {
	wd   int32
	t    *track
	name string
}

// anyEntry is the name of a ref that every entry of a directory concerns.
const anyEntry = "/"

// watchRefs are the refs of one watch descriptor.
type watchRefs struct {
	refs []ref
}

// syncCall is one read of the queue that Sync callers join until it starts.
type syncCall struct {
	done chan struct{}
}

// New returns a Watcher. When inotify cannot be used the Watcher still
// works, reporting every path as not watched, and the error says why.
func New() (*Watcher, error) {
	w := &Watcher{fd: -1, paths: map[trackKey]*track{}, watches: map[int32]*watchRefs{}}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		w.broken = true
		return w, fmt.Errorf("inotify: %w", err)
	}
	w.fd = fd
	w.buf = make([]byte, 64<<10)
	return w, nil
}

// Close releases the inotify descriptor; every path is then reported as not
// watched.
func (w *Watcher) Close() error {
	w.readMu.Lock()
	defer w.readMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return nil
	}
	err := syscall.Close(w.fd)
	w.fd = -1
	w.broken = true
	return err
}

// Sync applies every event queued before it was called. Callers that
// arrive while a read is waiting to start join it; a read that has started
// is never joined, since it may have missed their changes.
func (w *Watcher) Sync() {
	w.mu.Lock()
	if w.broken {
		w.mu.Unlock()
		return
	}
	if c := w.pending; c != nil {
		w.mu.Unlock()
		<-c.done
		return
	}
	c := &syncCall{done: make(chan struct{})}
	w.pending = c
	w.mu.Unlock()
	// Let the callers that are ready to run join this read; when nothing
	// else is runnable this returns at once.
	runtime.Gosched()

	w.readMu.Lock()
	w.mu.Lock()
	w.pending = nil // from here on, a new caller needs a new read
	w.mu.Unlock()
	w.drain()
	w.readMu.Unlock()
	close(c.done)
}

// drain reads the queue until it is empty and applies its events. Called
// with readMu held.
func (w *Watcher) drain() {
	for {
		n, err := syscall.Read(w.fd, w.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return
		}
		if err != nil || n <= 0 {
			// The queue cannot be read: forget every version and watch
			// nothing from now on.
			w.mu.Lock()
			w.broken = true
			w.changedAll()
			w.mu.Unlock()
			return
		}
		w.mu.Lock()
		w.apply(w.buf[:n])
		w.mu.Unlock()
	}
}

// apply applies the events in buf (whole events, as read(2) returns them).
// Called with mu held.
func (w *Watcher) apply(buf []byte) {
	for len(buf) >= syscall.SizeofInotifyEvent {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := syscall.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			break
		}
		w.event(ev.Wd, ev.Mask, cString(buf[syscall.SizeofInotifyEvent:end]))
		buf = buf[end:]
	}
}

// event applies one event. Called with mu held.
func (w *Watcher) event(wd int32, mask uint32, name []byte) {
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		w.changedAll()
		return
	}
	wr := w.watches[wd]
	if wr == nil {
		return
	}
	for _, r := range wr.refs {
		// An event without a name is about the watched inode itself, and
		// concerns every path through it.
		if len(name) == 0 || r.name == string(name) || r.name == anyEntry {
			w.changed(r.t)
		}
	}
	if mask&syscall.IN_IGNORED != 0 {
		// The kernel dropped the watch (its inode is gone).
		for _, r := range wr.refs {
			w.changed(r.t)
		}
		delete(w.watches, wd)
	}
}

// changed gives t a new version and has it walked again. Called with mu
// held.
func (w *Watcher) changed(t *track) {
	w.next++
	t.version = w.next
	t.stale = true
}

// changedAll marks every path changed. Called with mu held.
func (w *Watcher) changedAll() {
	for _, t := range w.paths {
		w.changed(t)
	}
}

// Version returns the version of path, an absolute path: a number that
// changes whenever the file at path, or any directory or symbolic link on
// the way to it, changes (created, written, truncated, replaced, removed,
// renamed, its mode or owner changed). A final symbolic link is followed.
// Call Sync first: Version reflects the events Sync applied. ok is false
// when the path cannot be watched exactly; the caller must then check the
// file itself.
//
// For a directory, the version changes when any of its entries is
// created, removed, renamed or changes mode, not when a file in it is
// written.
func (w *Watcher) Version(path string) (v uint64, ok bool) {
	return w.version(trackKey{path: path, follow: true})
}

// LinkVersion is Version for a path whose last component, when it is a
// symbolic link, is the link itself (what readlink reads), not its target.
func (w *Watcher) LinkVersion(path string) (v uint64, ok bool) {
	return w.version(trackKey{path: path, follow: false})
}

func (w *Watcher) version(key trackKey) (uint64, bool) {
	if !filepath.IsAbs(key.path) {
		return 0, false
	}
	key.path = filepath.Clean(key.path)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, false
	}
	t := w.paths[key]
	if t == nil {
		if len(w.paths) >= maxPaths {
			w.forgetOldest()
		}
		w.next++
		t = &track{key: key, version: w.next, stale: true}
		w.paths[key] = t
	}
	w.clock++
	t.used = w.clock
	if t.stale {
		w.walk(t)
	}
	return t.version, t.watched
}

// forgetOldest lets go of the least recently asked about path and of the
// watches only it needed. Called with mu held.
func (w *Watcher) forgetOldest() {
	var oldest *track
	for _, t := range w.paths {
		if oldest == nil || t.used < oldest.used {
			oldest = t
		}
	}
	delete(w.paths, oldest.key)
	w.release(oldest.refs)
}
