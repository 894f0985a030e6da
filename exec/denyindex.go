package exec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/internal/watch"
)

// The deny walk and its index.
//
// The private view masks what the deny globs match below every tree it
// shows whole, and every regular file there with more than one hard link
// (its other names may be denied or outside the scope). Finding them means
// looking at every entry of those trees, which a project of a million
// entries cannot afford on every call. So what the walk finds is kept per
// directory (dirRecord: the names to mask, the directories to enter),
// keyed by the directory's device, inode, mtime and ctime in nanoseconds.
// A later walk stats each directory and lists again only those whose key
// changed: a name added, removed or renamed in a directory (a new hard
// link, a file renamed into place) changes its mtime and ctime, and no
// program can set a ctime back. Listing is parallel (one getdents stream
// per worker), and only regular files are stat'ed, for their link count,
// and only in directories being listed.
//
// A directory that changed within racyWindow of the walk is not kept: a
// change in the same tick of the file system's clock would leave its times
// as they were.
//
// In a process that watches directories (Host.Dirs: serve), a directory
// whose inotify watch saw no event since it was looked at, reached through
// a parent that saw none naming it, is taken from the index without a
// system call; and a tree none of whose directories saw an event gives the
// masks it gave last, with one stat of its root. What raises no event (an
// overflowed queue, a mount) makes every directory looked at before it
// count as changed (watch.Dirs).
//
// The index lives in the Host (shared by the process: serve keeps it in
// memory) and, per walked tree and deny set, in a cache file below
// Options.IndexDir, which no tool call can write (the sessions root): it is
// trusted only when it is a regular file owned by this user, mode 0600, in
// a directory owned by this user that no one else can write, and whole
// (its checksum holds). Anything else is ignored and the tree walked anew.

// dirKey is a directory's identity and change times.
type dirKey struct {
	dev, ino     uint64
	mtime, ctime int64 // nanoseconds
}

func keyOf(st *unix.Stat_t) dirKey {
	return dirKey{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// dirRecord is what the walk keeps of one directory.
type dirRecord struct {
	key dirKey
	// masked are the entries the view masks: deny matches (a directory
	// whole) and regular files with more than one hard link.
	masked []string
	// subdirs are the entries the walk enters: directories no glob matches.
	subdirs []string
	// sockets are the unix sockets among the entries (sockets.go masks
	// the host's sockets).
	sockets []string
	// git: the directory holds an entry named .git that is no symbolic
	// link (repos.go).
	git bool
	// self: the directory cannot be listed (searchable, perhaps, but not
	// readable): it is masked whole, since what it holds cannot be known.
	self bool
	// kids, in a process that does not watch directories, are where the
	// cache file from holds records of subdirs, by the same index (0
	// where it holds none): the walk tries them before the index's
	// records by path. Like those, each holds only while its key is its
	// directory's.
	kids []uint32
	from *indexFile
	// watch, in a process that watches directories, is the directory's
	// watch and parent its parent's, when the record was last found true,
	// at epoch seen; nil when it is not watched. Not in cache files.
	watch, parent *watch.Dir
	seen          uint64
}

// denyIndex is the index of one deny set: the records of every directory
// walked with it, by path.
type denyIndex struct {
	m *denyMatcher
	// id names the deny set in cache files.
	id string

	// watcher, when set, watches the directories walked (Host.Dirs).
	watcher *watch.Dirs

	mu   sync.RWMutex
	dirs map[string]*dirRecord
	// files are, by tree, the cache files read, in a process that does
	// not watch directories: their records are reached through their
	// parents' kids, not by path.
	files map[string]*indexFile
	// loaded are the trees whose cache file this process has read.
	loaded map[string]bool
	// trees are the last results of the trees walked with every directory
	// watched.
	trees map[treeKey]*treeCache
	// savedAt are the times cache files were last written, with a watcher.
	savedAt map[string]time.Time
}

// treeKey names a tree walked to a depth (0: whole).
type treeKey struct {
	root  string
	depth int
}

// treeCache is what a walk of a tree found with every directory watched:
// it holds while the root is the same directory and none of deps saw an
// event after stamp, nor the watcher a reset.
type treeCache struct {
	dev, ino             uint64
	stamp                uint64
	masks, gits, sockets []string
	deps                 []*watch.Dir
}

// fresh reports whether the tree's last result still holds for a root
// (dev, ino) at the watcher's reset.
func (c *treeCache) fresh(w *watch.Dirs, dev, ino, reset uint64) bool {
	if c.dev != dev || c.ino != ino || reset > c.stamp {
		return false
	}
	if w.Last() <= c.stamp {
		return true
	}
	for _, d := range c.deps {
		if d.Changed() > c.stamp {
			return false
		}
	}
	return true
}

// maxIndexDirs bounds the directories a process keeps in one index;
// past it the index starts over (and reads the cache files again).
const maxIndexDirs = 2_000_000

// index returns the Host's index of a deny set (lower-case globs). Globs
// below the kernel's file systems (/proc/<pid>, which differs from process
// to process) are left out: no walk goes there.
func (h *Host) index(deny []string) *denyIndex {
	deny = slices.DeleteFunc(slices.Clone(deny), func(p string) bool {
		base, _ := doublestar.SplitPattern(p)
		return strings.HasPrefix(p, "/") && (within(base, "/proc") || within(base, "/sys") || within(base, "/dev"))
	})
	sum := sha256.Sum256([]byte(strings.Join(deny, "\x00")))
	id := hex.EncodeToString(sum[:16])
	h.mu.Lock()
	defer h.mu.Unlock()
	if ix, ok := h.indexes[id]; ok {
		return ix
	}
	if h.indexes == nil {
		h.indexes = map[string]*denyIndex{}
	}
	ix := &denyIndex{m: compileDeny(deny), id: id, watcher: h.Dirs, dirs: map[string]*dirRecord{}, files: map[string]*indexFile{},
		loaded: map[string]bool{}, trees: map[treeKey]*treeCache{}, savedAt: map[string]time.Time{}}
	h.indexes[id] = ix
	return ix
}

func (ix *denyIndex) get(dir string) *dirRecord {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.dirs[dir]
}

func (ix *denyIndex) put(dir string, rec *dirRecord) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.dirs) >= maxIndexDirs {
		ix.dirs, ix.files, ix.loaded, ix.trees = map[string]*dirRecord{}, map[string]*indexFile{}, map[string]bool{}, map[treeKey]*treeCache{}
	}
	ix.dirs[dir] = rec
}

// known reports whether the index holds a record of a tree's root: by
// its path, or in its cache file.
func (ix *denyIndex) known(tree string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.dirs[tree] != nil || ix.files[tree].top().off != 0
}

// cached returns the last result of a tree whose root is the directory
// (dev, ino), when it still holds.
func (ix *denyIndex) cached(key treeKey, dev, ino, reset uint64) *treeCache {
	ix.mu.RLock()
	c := ix.trees[key]
	ix.mu.RUnlock()
	if c == nil || !c.fresh(ix.watcher, dev, ino, reset) {
		return nil
	}
	return c
}

// treeResult is what a walk found below one tree.
type treeResult struct {
	root string
	// masks are the paths to mask, sorted.
	masks []string
	// gits are the .git entries below the tree, not below another .git;
	// sockets the unix sockets below it.
	gits, sockets []string
	// err, when set, says why the tree's masks are not all known.
	err error
	// listed counts the directories listed (not taken from the index),
	// entries the entries they held; looked the directories looked at
	// (stat'ed or opened: all of them, but where a watch vouches for one).
	listed, entries, looked int
}

// walkTrees finds what the view must mask below each tree (absolute,
// clean; a file is a tree of one): in parallel, from the index where
// directories did not change. depth, when not 0, is how many levels below
// each tree's root are looked at. store, when set, is the directory of the
// cache files; what changed is written there by the returned function,
// which the caller runs once the view no longer waits for it.
func (ix *denyIndex) walkTrees(ctx context.Context, trees []string, depth int, store string, now time.Time) ([]treeResult, func()) {
	w := &walker{ix: ix, ctx: ctx, now: now, depth: depth, res: make([]treeResult, len(trees)), changed: make([]bool, len(trees)),
		listed: make([]atomic.Int64, len(trees)), entries: make([]atomic.Int64, len(trees)), looked: make([]atomic.Int64, len(trees))}
	w.cond = sync.NewCond(&w.mu)
	if ix.watcher != nil {
		w.watcher = ix.watcher
		w.epoch, w.reset = ix.watcher.Sync()
		w.deps = make([][]*watch.Dir, len(trees))
		w.unwatched = make([]atomic.Bool, len(trees))
	}
	cached := make([]bool, len(trees))
	for i, t := range trees {
		w.res[i].root = t
		if store != "" {
			ix.load(store, t)
		}
		task, ok := w.start(i, t)
		if !ok {
			continue
		}
		if w.watcher != nil {
			if c := ix.cached(treeKey{t, depth}, task.dev, task.ino, w.reset); c != nil {
				r := &w.res[i]
				r.masks, r.gits, r.sockets = c.masks, c.gits, c.sockets
				cached[i] = true
				continue
			}
		}
		w.queue = append(w.queue, task)
	}
	w.workers = min(max(4, 2*runtime.GOMAXPROCS(0)), 16)
	w.failed = make([]atomic.Bool, len(trees))
	for i := range w.res {
		if w.res[i].err != nil {
			w.failed[i].Store(true)
		}
	}
	var wg sync.WaitGroup
	if len(w.queue) > 0 {
		for range w.workers {
			wg.Go(w.work)
		}
	}
	wg.Wait()
	for i := range w.res {
		r := &w.res[i]
		if cached[i] {
			continue
		}
		slices.Sort(r.masks)
		slices.Sort(r.gits)
		slices.Sort(r.sockets)
		r.masks, r.gits, r.sockets = slices.Clip(r.masks), slices.Clip(r.gits), slices.Clip(r.sockets)
		r.listed, r.entries, r.looked = int(w.listed[i].Load()), int(w.entries[i].Load()), int(w.looked[i].Load())
		if w.watcher != nil && r.err == nil && !w.unwatched[i].Load() && len(w.deps[i]) > 0 {
			ix.mu.Lock()
			ix.trees[treeKey{trees[i], depth}] = &treeCache{dev: w.rootDev[i], ino: w.rootIno[i], stamp: w.epoch,
				masks: r.masks, gits: r.gits, sockets: r.sockets, deps: slices.Clip(w.deps[i])}
			ix.mu.Unlock()
		}
	}
	save := func() {}
	if store != "" {
		var changed []string
		for i, c := range w.changed {
			if (c || !ix.savedOnce(store, trees[i])) && ix.known(trees[i]) && ix.saveDue(store, trees[i]) {
				changed = append(changed, trees[i])
			}
		}
		if len(changed) > 0 {
			save = func() {
				for _, t := range changed {
					_ = ix.save(store, t) // a cache: a failed write costs the next walk time, never a mask
				}
			}
		}
	}
	return w.res, save
}

// walker is one walk of several trees.
type walker struct {
	ix    *denyIndex
	ctx   context.Context
	now   time.Time
	depth int

	// watcher, when set, watches the directories walked; epoch and reset
	// are what its Sync before the walk returned.
	watcher      *watch.Dirs
	epoch, reset uint64

	mu    sync.Mutex
	cond  *sync.Cond
	queue []walkTask
	// workers is how many work; waiting how many wait in take; done is
	// set once all wait with nothing queued.
	workers int
	waiting atomic.Int32
	done    bool
	res     []treeResult
	// failed says which trees have an error (their directories are
	// skipped).
	failed []atomic.Bool
	// changed says which trees had a directory listed anew.
	changed []bool
	// listed and entries count, per tree, the directories listed anew
	// and the entries they held; looked those looked at.
	listed, entries, looked []atomic.Int64
	// With a watcher: deps are, per tree, the watches of the directories
	// walked; unwatched says which trees had a directory without one;
	// rootDev and rootIno are each root's identity.
	deps             [][]*watch.Dir
	unwatched        []atomic.Bool
	rootDev, rootIno []uint64
}

// walkTask is a directory to visit: its path (or its parent's path and
// its name: the path is then made in the worker's buffer, and kept only
// where it must be) and the tree it belongs to.
type walkTask struct {
	dir, parentDir, base string
	// borrowed: dir is in the worker's buffer, valid until its next task.
	borrowed bool
	tree     int
	// level is how far below the tree's root dir lies.
	level int
	// parent, with a watcher, is the watch of the directory holding dir
	// (nil: not watched, or dir is the root); dev and ino are a root's
	// identity, from its stat.
	parent   *watch.Dir
	dev, ino uint64
	// pre says what its parent's visit found of dir with one stat
	// relative to the parent (statChildren): preNone, preDir (key is its
	// identity and times) or preGone (gone, or no longer a directory).
	pre uint8
	key dirKey
	// hint, when set, is a record of dir in a cache file (its parent's
	// kids), tried before the index's record by path.
	hint fileRef
}

// What a parent's visit found of a subdirectory (walkTask.pre).
const (
	preNone = iota
	preDir
	preGone
)

// path sets t.dir, in buf when it is not made yet.
func (t *walkTask) path(buf *dirBuf) {
	if t.dir != "" {
		return
	}
	buf.path = append(append(append(buf.path[:0], t.parentDir...), '/'), t.base...)
	t.dir = unsafe.String(unsafe.SliceData(buf.path), len(buf.path))
	t.borrowed = true
}

// keep makes t.dir a string of its own.
func (t *walkTask) keep() {
	if t.borrowed {
		t.dir, t.borrowed = strings.Clone(t.dir), false
	}
}

// name is the last component of the task's directory.
func (t *walkTask) name() string {
	if t.base != "" {
		return t.base
	}
	return t.dir[strings.LastIndexByte(t.dir, '/')+1:]
}

// start looks at a tree's root: gone, a link (its target is decided by its
// own root), matched whole, a file, or a directory to walk (returned).
func (w *walker) start(i int, root string) (walkTask, bool) {
	var st unix.Stat_t
	err := unix.Lstat(root, &st)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES):
		return walkTask{}, false // gone, or out of every program's reach
	case err != nil:
		w.res[i].err = fmt.Errorf("stat %s: %w", root, err)
		return walkTask{}, false
	}
	lower := strings.ToLower(root)
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
	case w.ix.m.full(lower):
		w.res[i].masks = append(w.res[i].masks, root)
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		if w.watcher != nil {
			if w.rootDev == nil {
				w.rootDev, w.rootIno = make([]uint64, len(w.res)), make([]uint64, len(w.res))
			}
			w.rootDev[i], w.rootIno[i] = st.Dev, st.Ino
		}
		t := walkTask{dir: root, tree: i, dev: st.Dev, ino: st.Ino}
		if w.watcher == nil {
			w.ix.mu.RLock()
			t.hint = w.ix.files[root].top()
			w.ix.mu.RUnlock()
		}
		return t, true
	case st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1:
		w.res[i].masks = append(w.res[i].masks, root)
	}
	return walkTask{}, false
}

// work visits directories until none is left: depth first on a stack of
// its own, handing half of it to the shared queue when another worker
// waits for work.
func (w *walker) work() {
	var buf dirBuf
	var out walkOut
	var local []walkTask
	masks := make([][]string, len(w.res))
	gits := make([][]string, len(w.res))
	sockets := make([][]string, len(w.res))
	var deps [][]*watch.Dir
	if w.watcher != nil {
		deps = make([][]*watch.Dir, len(w.res))
	}
	for {
		if len(local) == 0 {
			t, ok := w.take()
			if !ok {
				break
			}
			local = append(local, t)
		}
		t := local[len(local)-1]
		local = local[:len(local)-1]
		if w.failed[t.tree].Load() {
			continue
		}
		out.reset()
		rec, err := w.visit(t, &buf, &out)
		if err != nil {
			w.fail(t.tree, err)
			continue
		}
		if rec != nil && deps != nil {
			if rec.watch == nil {
				w.unwatched[t.tree].Store(true)
			} else if !w.unwatched[t.tree].Load() {
				deps[t.tree] = append(deps[t.tree], rec.watch)
			}
		}
		masks[t.tree] = append(masks[t.tree], out.masks...)
		gits[t.tree] = append(gits[t.tree], out.gits...)
		sockets[t.tree] = append(sockets[t.tree], out.sockets...)
		local = append(local, out.subs...)
		if len(local) > 1 && w.waiting.Load() > 0 {
			local = w.share(local)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.res {
		w.res[i].masks = append(w.res[i].masks, masks[i]...)
		w.res[i].gits = append(w.res[i].gits, gits[i]...)
		w.res[i].sockets = append(w.res[i].sockets, sockets[i]...)
		if deps != nil {
			w.deps[i] = append(w.deps[i], deps[i]...)
		}
	}
}

// take waits for a directory in the shared queue; false once every
// worker waits and the queue is empty.
func (w *walker) take() (walkTask, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting.Add(1)
	defer w.waiting.Add(-1)
	for len(w.queue) == 0 {
		if w.done || int(w.waiting.Load()) == w.workers {
			w.done = true
			w.cond.Broadcast()
			return walkTask{}, false
		}
		w.cond.Wait()
	}
	t := w.queue[len(w.queue)-1]
	w.queue = w.queue[:len(w.queue)-1]
	return t, true
}

// share moves the bottom half of a worker's stack (the directories
// nearest the root, with the most below them) to the shared queue.
func (w *walker) share(local []walkTask) []walkTask {
	half := len(local) / 2
	w.mu.Lock()
	w.queue = append(w.queue, local[:half]...)
	w.mu.Unlock()
	w.cond.Broadcast()
	return append(local[:0], local[half:]...)
}

// fail records the first error of a tree; its other directories are
// skipped.
func (w *walker) fail(tree int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.res[tree].err == nil {
		w.res[tree].err = err
	}
	w.failed[tree].Store(true)
}

// walkOut is what one directory's visit found.
type walkOut struct {
	masks, gits, sockets []string
	subs                 []walkTask
}

func (o *walkOut) reset() {
	o.masks, o.gits, o.sockets, o.subs = o.masks[:0], o.gits[:0], o.sockets[:0], o.subs[:0]
}

// visit takes one directory's record from the index, or lists it anew,
// and returns it (nil: the directory is gone or no longer one).
func (w *walker) visit(t walkTask, buf *dirBuf, out *walkOut) (*dirRecord, error) {
	t.path(buf)
	if err := w.ctx.Err(); err != nil {
		return nil, fmt.Errorf("stopped in %s: %w", t.dir, err)
	}
	var rec *dirRecord
	var err error
	if w.watcher != nil {
		rec, err = w.watched(&t, buf)
	} else {
		rec, err = w.stated(&t, buf)
	}
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.self || len(rec.masked)+len(rec.sockets)+len(rec.subdirs) > 0 || rec.git {
		t.keep()
	}
	if rec.self {
		out.masks = append(out.masks, t.dir)
		return rec, nil
	}
	for _, name := range rec.masked {
		out.masks = append(out.masks, t.dir+"/"+name)
	}
	for _, name := range rec.sockets {
		out.sockets = append(out.sockets, t.dir+"/"+name)
	}
	if rec.git && !strings.Contains(t.dir+"/", "/.git/") {
		out.gits = append(out.gits, t.dir+"/.git")
	}
	if w.depth > 0 && t.level+1 >= w.depth {
		return rec, nil
	}
	start := len(out.subs)
	for j, name := range rec.subdirs {
		var hint fileRef
		if j < len(rec.kids) {
			hint = fileRef{rec.from, rec.kids[j]}
		}
		out.subs = append(out.subs, walkTask{parentDir: t.dir, base: name, tree: t.tree, level: t.level + 1, parent: rec.watch, hint: hint})
	}
	if w.watcher == nil && len(rec.subdirs) >= statBatch {
		if err := w.statChildren(t.dir, out.subs[start:], buf); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// statBatch is how many subdirectories a directory has at least for its
// visit to stat them relative to it (statChildren): a stat that resolves
// one name costs less than one that resolves the whole path, by more than
// the open and close of the directory once it has this many.
const statBatch = 8

// statChildren stats the subdirectories subs of dir relative to dir, open
// once, and sets what it found in each task; one that fails otherwise
// than gone is left to its own visit, which stats it by its path. A
// directory that cannot be opened leaves them all to theirs.
func (w *walker) statChildren(dir string, subs []walkTask, buf *dirBuf) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	for i := range subs {
		s := &subs[i]
		buf.name = append(append(buf.name[:0], s.base...), 0)
		var st unix.Stat_t
		var e unix.Errno
		for {
			_, _, e = unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(&buf.name[0])),
				uintptr(unsafe.Pointer(&st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
			if e != unix.EINTR {
				break
			}
		}
		switch {
		case e == 0 && st.Mode&unix.S_IFMT == unix.S_IFDIR:
			s.pre, s.key = preDir, keyOf(&st)
		case e == 0 || e == unix.ENOENT || e == unix.ENOTDIR:
			s.pre = preGone // replaced since its parent was listed, or gone
		}
	}
	w.looked[subs[0].tree].Add(int64(len(subs)))
	return nil
}

// stated returns a directory's record, checked against its stat, or
// listed anew.
func (w *walker) stated(t *walkTask, buf *dirBuf) (*dirRecord, error) {
	switch t.pre {
	case preGone:
		return nil, nil
	case preDir:
		rec, old := w.known(t, t.key, buf)
		if rec != nil {
			return rec, nil
		}
		t.keep()
		return w.list(*t, buf, old)
	}
	w.looked[t.tree].Add(1)
	var st unix.Stat_t
	if err := unix.Lstat(t.dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
			return nil, nil
		}
		return nil, fmt.Errorf("stat %s: %w", t.dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, nil // replaced since its parent was listed (a link is decided by its own root)
	}
	rec, old := w.known(t, keyOf(&st), buf)
	if rec != nil {
		return rec, nil
	}
	t.keep()
	return w.list(*t, buf, old)
}

// known returns the record of t's directory whose key is key: its hint
// (decoded into buf.rec, valid until the worker's next task), or the
// index's record by its path. Otherwise it returns, as old, the
// directory's last record, whose kids a new listing keeps.
func (w *walker) known(t *walkTask, key dirKey, buf *dirBuf) (rec, old *dirRecord) {
	if t.hint.off != 0 && t.hint.f.record(t.hint.off, &buf.rec) {
		if buf.rec.key == key {
			return &buf.rec, nil
		}
		old = &buf.rec
	}
	if r := w.ix.get(t.dir); r != nil {
		if r.key == key {
			return r, nil
		}
		return nil, r
	}
	return nil, old
}

// watched returns a directory's record with no system call when its watch
// and its parent's saw no event since it was found true; otherwise the
// directory is opened and watched, and its record checked against its
// stat (an event of its own: listed anew).
func (w *walker) watched(t *walkTask, buf *dirBuf) (*dirRecord, error) {
	rec := w.ix.get(t.dir)
	if w.clean(*t, rec) {
		return rec, nil
	}
	t.keep()
	w.looked[t.tree].Add(1)
	if rec != nil && rec.watch != nil && rec.watch.Changed() <= rec.seen {
		// In doubt only about what its path leads to (a reset, a parent
		// looked at anew): the watched directory is still there when its
		// stat finds the same inode, which the watch holds, unchanged.
		var st unix.Stat_t
		if err := unix.Lstat(t.dir, &st); err == nil && rec.key == keyOf(&st) {
			found := *rec
			found.parent, found.seen = t.parent, w.epoch
			w.ix.put(t.dir, &found)
			return &found, nil
		}
	}
	fd, err := unix.Open(t.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	readable := err == nil
	if errors.Is(err, unix.EACCES) {
		// Searchable perhaps, not readable: masked whole, watched if it can be.
		fd, err = unix.Open(t.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EACCES):
		return nil, nil // gone, replaced (a link is decided by its own root), or out of reach
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", t.dir, err)
	}
	defer unix.Close(fd)
	// The watch first: a change after it is an event, one before it is in
	// the stat and the listing below.
	x := w.watcher.Watch(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat %s: %w", t.dir, err)
	}
	own := rec != nil && rec.watch != nil && rec.watch == x && x.Changed() > rec.seen
	if rec != nil && rec.key == keyOf(&st) && rec.self == !readable && !own {
		found := *rec
		found.watch, found.parent, found.seen = x, t.parent, w.epoch
		w.ix.put(t.dir, &found)
		return &found, nil
	}
	if readable {
		rec, err = w.listOpen(*t, fd, &st, buf)
		if err != nil {
			return nil, err
		}
	} else {
		rec = &dirRecord{key: keyOf(&st), self: true}
	}
	rec.watch, rec.parent, rec.seen = x, t.parent, w.epoch
	w.keep(*t, rec)
	return rec, nil
}

// clean reports whether a record holds with no look at its directory: it
// is watched, no event of its own came after it was found true, nor a
// reset, and it was found through the directory that holds it now, whose
// watch saw no event naming it since (the root: the directory its stat
// found).
func (w *walker) clean(t walkTask, rec *dirRecord) bool {
	if rec == nil || rec.watch == nil || rec.seen < w.reset || rec.watch.Changed() > rec.seen {
		return false
	}
	if t.level == 0 {
		return rec.key.dev == t.dev && rec.key.ino == t.ino
	}
	return t.parent != nil && rec.parent == t.parent &&
		(t.parent.Changed() <= rec.seen || t.parent.NameChanged(t.name()) <= rec.seen)
}

// list reads a directory anew and keeps its record unless it changed
// within racyWindow. A directory that cannot be read is masked whole. old,
// when set, is the directory's last record: the new one takes its kids
// where the names are the same.
func (w *walker) list(t walkTask, buf *dirBuf, old *dirRecord) (*dirRecord, error) {
	fd, err := unix.Open(t.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
		return nil, nil
	case errors.Is(err, unix.EACCES):
		var st unix.Stat_t
		if err := unix.Lstat(t.dir, &st); err != nil {
			return nil, nil
		}
		rec := &dirRecord{key: keyOf(&st), self: true}
		w.keep(t, rec)
		return rec, nil
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", t.dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat %s: %w", t.dir, err)
	}
	rec, err := w.listOpen(t, fd, &st, buf)
	if err != nil {
		return nil, err
	}
	if old != nil {
		rec.kids, rec.from = sameKids(rec.subdirs, old), old.from
	}
	w.keep(t, rec)
	return rec, nil
}

// sameKids returns old's kids by the index of their names in subdirs
// (both sorted); nil when none is left.
func sameKids(subdirs []string, old *dirRecord) []uint32 {
	if len(old.kids) == 0 {
		return nil
	}
	var kids []uint32
	j := 0
	for i, name := range subdirs {
		for j < len(old.subdirs) && old.subdirs[j] < name {
			j++
		}
		if j < len(old.subdirs) && old.subdirs[j] == name && j < len(old.kids) && old.kids[j] != 0 {
			if kids == nil {
				kids = make([]uint32, len(subdirs))
			}
			kids[i] = old.kids[j]
		}
	}
	return kids
}

// dirBuf are a worker's buffers: for getdents, made when first needed (a
// walk from the index lists nothing), for the path of its directory, for
// a name with its NUL, and for a record decoded from a cache file.
type dirBuf struct {
	b, path, name []byte
	rec           dirRecord
}

func (d *dirBuf) get() []byte {
	if d.b == nil {
		d.b = make([]byte, 64<<10)
	}
	return d.b
}

// listOpen lists the directory open as fd, whose stat is st.
func (w *walker) listOpen(t walkTask, fd int, st *unix.Stat_t, dbuf *dirBuf) (*dirRecord, error) {
	buf := dbuf.get()
	rec := &dirRecord{key: keyOf(st)}
	m := w.ix.m
	// Deny globs ignore case: they match the lower-cased path.
	lower := strings.ToLower(t.dir)
	fulls := m.fullFor(lower)
	n := 0
	for {
		nb, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t.dir, err)
		}
		if nb == 0 {
			break
		}
		err = parseDirents(buf[:nb], func(name []byte, typ uint8) error {
			n++
			s := unsafe.String(&name[0], len(name)) // valid until buf is read into again
			if s == "." || s == ".." {
				return nil
			}
			if typ == unix.DT_UNKNOWN || typ == unix.DT_REG {
				var err error
				var nlink uint32
				if typ, nlink, err = statAt(fd, name); err != nil {
					return fmt.Errorf("stat %s/%s: %w", t.dir, s, err)
				}
				if typ == unix.DT_REG && nlink > 1 {
					rec.masked = append(rec.masked, strings.Clone(s))
					return nil
				}
			}
			if typ == unix.DT_LNK || typ == 0 {
				return nil // a link's target is decided by its own root; 0: gone
			}
			if typ == unix.DT_SOCK {
				rec.sockets = append(rec.sockets, strings.Clone(s))
				return nil
			}
			lowerName := strings.ToLower(s)
			if m.entry(lower, lowerName, fulls) {
				rec.masked = append(rec.masked, strings.Clone(s))
				return nil
			}
			if s == ".git" {
				rec.git = true
			}
			if typ == unix.DT_DIR {
				rec.subdirs = append(rec.subdirs, strings.Clone(s))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Sorted: the cache file keeps them so, and its reader checks it.
	slices.Sort(rec.masked)
	slices.Sort(rec.subdirs)
	slices.Sort(rec.sockets)
	w.listed[t.tree].Add(1)
	w.entries[t.tree].Add(int64(n))
	return rec, nil
}

// keep stores a record that did not change within racyWindow of the walk,
// and marks the tree changed.
func (w *walker) keep(t walkTask, rec *dirRecord) {
	w.mu.Lock()
	w.changed[t.tree] = true
	w.mu.Unlock()
	changed := max(rec.key.mtime, rec.key.ctime)
	if w.now.UnixNano()-changed > int64(racyWindow) {
		w.ix.put(t.dir, rec)
	}
}

// racyWindow: a directory is kept only when it did not change for this
// long before the walk, since a change within the timestamp granularity of
// the file system would leave its times as they were.
const racyWindow = 2 * time.Second

// statAt returns the type (a DT_ constant, 0 when the entry is gone) and
// link count of an entry of the directory dirfd; name is followed by a NUL
// in its buffer (a getdents record), which statx reads as the path.
func statAt(dirfd int, name []byte) (uint8, uint32, error) {
	var stx unix.Statx_t
	p := unsafe.Pointer(&name[0])
	for {
		_, _, e := unix.Syscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(p),
			unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_NLINK, uintptr(unsafe.Pointer(&stx)), 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENOENT, unix.EACCES, unix.ENOTDIR:
			return 0, 0, nil
		default:
			return 0, 0, e
		}
		break
	}
	switch uint32(stx.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
		return unix.DT_REG, stx.Nlink, nil
	case unix.S_IFDIR:
		return unix.DT_DIR, stx.Nlink, nil
	case unix.S_IFLNK:
		return unix.DT_LNK, stx.Nlink, nil
	case unix.S_IFSOCK:
		return unix.DT_SOCK, stx.Nlink, nil
	}
	return unix.DT_FIFO, stx.Nlink, nil // devices, fifos: nothing to mask or enter
}

// parseDirents calls fn for each linux_dirent64 record of buf, with the
// entry's name (the NUL after it stays in buf) and type.
func parseDirents(buf []byte, fn func(name []byte, typ uint8) error) error {
	const nameOff = 19 // d_ino 8, d_off 8, d_reclen 2, d_type 1
	for len(buf) > 0 {
		if len(buf) < nameOff+1 {
			return errors.New("list: short directory entry")
		}
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < nameOff+1 || reclen > len(buf) {
			return errors.New("list: bad directory entry length")
		}
		name := buf[nameOff:reclen]
		i := bytes.IndexByte(name, 0)
		if i <= 0 {
			return errors.New("list: directory entry without a name")
		}
		if err := fn(name[:i], buf[18]); err != nil {
			return err
		}
		buf = buf[reclen:]
	}
	return nil
}

// The cache files.

// indexMagic starts every cache file; a change of format changes it.
const indexMagic = "scopegate deny index v2\n"

// maxIndexFile bounds a cache file read back.
const maxIndexFile = 1 << 30

// file is the cache file of a tree.
func (ix *denyIndex) file(store, tree string) string {
	sum := sha256.Sum256([]byte(indexMagic + tree + "\x00" + ix.id))
	return filepath.Join(store, hex.EncodeToString(sum[:16])+".idx")
}

// savedOnce reports whether the tree's cache file was read or written by
// this index, so that an unchanged tree need not be written again.
func (ix *denyIndex) savedOnce(store, tree string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.loaded[ix.file(store, tree)]
}

// saveEvery is how often a process that watches directories writes a
// tree's cache file at most: its index lives in memory, and the file, for
// processes to come, may lag that much behind (what changed since is
// listed again by the next process to read it).
const saveEvery = 30 * time.Second

// saveDue reports whether the tree's cache file is to be written now: in a
// process that does not watch directories, whenever it changed; in one
// that does, not within saveEvery of the last write (which it books).
func (ix *denyIndex) saveDue(store, tree string) bool {
	if ix.watcher == nil {
		return true
	}
	path := ix.file(store, tree)
	now := time.Now()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if last, ok := ix.savedAt[path]; ok && now.Sub(last) < saveEvery {
		return false
	}
	ix.savedAt[path] = now
	return true
}

// load reads the tree's cache file into the index, once per process; a
// file that cannot be trusted or read whole is ignored. A process that
// does not watch directories keeps the file (files), whose records the
// walk decodes where it reaches them, through their parents; one that
// watches directories decodes them all into its records by path.
func (ix *denyIndex) load(store, tree string) {
	path := ix.file(store, tree)
	ix.mu.RLock()
	done := ix.loaded[path]
	ix.mu.RUnlock()
	if done {
		return
	}
	data, err := readPrivate(path)
	var f *indexFile
	if err == nil {
		var root, id string
		root, id, f, err = decodeIndex(data)
		if err == nil && (root != tree || id != ix.id) {
			f = nil
		}
	}
	var recs []pathRecord
	if f != nil && ix.watcher != nil {
		recs = f.records(tree, nil)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err == nil {
		ix.loaded[path] = true
	}
	if f == nil {
		return
	}
	if ix.watcher == nil {
		ix.files[tree] = f
		return
	}
	if len(ix.dirs) == 0 {
		ix.dirs = make(map[string]*dirRecord, len(recs))
	}
	for _, r := range recs {
		if _, ok := ix.dirs[r.path]; !ok && len(ix.dirs) < maxIndexDirs {
			ix.dirs[r.path] = r.rec
		}
	}
}

// save writes the records of a tree to its cache file, atomically.
func (ix *denyIndex) save(store, tree string) error {
	ix.mu.RLock()
	data := encodeIndex(tree, ix.id, ix.dirs, ix.files[tree].top())
	ix.mu.RUnlock()
	path := ix.file(store, tree)
	if err := writePrivate(path, data); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.loaded[path] = true
	ix.mu.Unlock()
	return nil
}

// pathRecord is a record with its directory's path.
type pathRecord struct {
	path string
	rec  *dirRecord
}

// indexFile is a cache file read whole (decodeIndex), whose records are
// decoded one at a time, where a walk reaches them.
type indexFile struct {
	data []byte
	// start and end bound the records in data; root is where the tree's
	// root's record starts (0: the file holds none).
	start, end, root uint32
}

// fileRef is where a cache file holds a record (off 0: nowhere).
type fileRef struct {
	f   *indexFile
	off uint32
}

// top is where the file holds its root's record (nowhere when f is nil).
func (f *indexFile) top() fileRef {
	if f == nil {
		return fileRef{}
	}
	return fileRef{f, f.root}
}

// keySize is the bytes of a record's key: four 64-bit fields.
const keySize = 32

// record decodes the record at off into rec, reusing its lists (an empty
// one stays as it is, not made nil); false when there is none there that
// is whole and valid: its names valid and in increasing order, its kids
// before it.
func (f *indexFile) record(off uint32, rec *dirRecord) bool {
	if f == nil || off < f.start || off >= f.end || f.end-off < keySize+1 {
		return false
	}
	b := f.data[off:f.end]
	rec.key = dirKey{
		dev: binary.LittleEndian.Uint64(b), ino: binary.LittleEndian.Uint64(b[8:]),
		mtime: int64(binary.LittleEndian.Uint64(b[16:])), ctime: int64(binary.LittleEndian.Uint64(b[24:])),
	}
	flags := b[keySize]
	if flags&^3 != 0 {
		return false
	}
	rec.git, rec.self = flags&1 != 0, flags&2 != 0
	rec.from = f
	d := decoder{b: b[keySize+1:]}
	rec.masked = d.names(rec.masked[:0], nil, 0, 0)
	rec.kids = rec.kids[:0]
	rec.subdirs = d.names(rec.subdirs[:0], &rec.kids, f.start, off)
	rec.sockets = d.names(rec.sockets[:0], nil, 0, 0)
	return d.err == nil
}

// records returns the records of the file, each decoded anew, with their
// paths below root, in the order encodeIndex visits them; each only once,
// none whose path is longer than PATH_MAX, and at most maxIndexDirs.
func (f *indexFile) records(root string, recs []pathRecord) []pathRecord {
	var seen []uint64
	var paths pathArena
	var visit func(path string, off uint32)
	visit = func(path string, off uint32) {
		rec := new(dirRecord)
		if len(path) > unix.PathMax || len(recs) >= maxIndexDirs || !f.record(off, rec) || !markOnce(&seen, off) {
			return
		}
		recs = append(recs, pathRecord{path: path, rec: rec})
		for j, name := range rec.subdirs {
			if rec.kids[j] != 0 {
				visit(paths.join(path, name), rec.kids[j])
			}
		}
		rec.kids, rec.from = nil, nil
	}
	if f != nil && f.root != 0 {
		visit(root, f.root)
	}
	return recs
}

// markOnce marks off in a set of bits; false when it was already.
func markOnce(set *[]uint64, off uint32) bool {
	i, bit := int(off/64), uint64(1)<<(off%64)
	if i >= len(*set) {
		*set = append(*set, make([]uint64, i+1-len(*set))...)
	}
	if (*set)[i]&bit != 0 {
		return false
	}
	(*set)[i] |= bit
	return true
}

// encodeIndex encodes the records reachable from tree: each directory's
// record is dirs' by its path, or else the one its parent's kids point to
// in their cache file (top for tree's); each file record once, none whose
// path is longer than PATH_MAX, at most maxIndexDirs:
//
//	magic, root, deny-set id, where the root's record starts (4 bytes,
//	0: none), the records, each after those of its subdirectories; then
//	the CRC-32C of all of it.
//
// A record is dev, inode, mtime and ctime (8 bytes each), flags (1 git,
// 2 self), the masked names, the subdirectory names each followed by
// where its record starts (0: none), the socket names (each list sorted).
// Strings are a uvarint length and the bytes; counts and offsets are
// uvarints; fixed-size numbers little-endian.
func encodeIndex(tree, id string, dirs map[string]*dirRecord, top fileRef) []byte {
	b := []byte(indexMagic)
	b = appendString(b, tree)
	b = appendString(b, id)
	head := len(b)
	b = append(b, 0, 0, 0, 0)
	var seen []uint64
	n := 0
	// enc writes the record of path and those below it, and returns where
	// it starts (0: none).
	var enc func(path string, hint fileRef) uint32
	enc = func(path string, hint fileRef) uint32 {
		if len(path) > unix.PathMax || n >= maxIndexDirs {
			return 0
		}
		rec := dirs[path]
		if rec == nil {
			rec = new(dirRecord)
			if hint.off == 0 || !hint.f.record(hint.off, rec) || !markOnce(&seen, hint.off) {
				return 0
			}
		}
		n++
		kids := make([]uint32, len(rec.subdirs))
		for j, name := range rec.subdirs {
			var h fileRef
			if j < len(rec.kids) {
				h = fileRef{rec.from, rec.kids[j]}
			}
			kids[j] = enc(joinPath(path, name), h)
		}
		off := uint32(len(b))
		b = binary.LittleEndian.AppendUint64(b, rec.key.dev)
		b = binary.LittleEndian.AppendUint64(b, rec.key.ino)
		b = binary.LittleEndian.AppendUint64(b, uint64(rec.key.mtime))
		b = binary.LittleEndian.AppendUint64(b, uint64(rec.key.ctime))
		var flags byte
		if rec.git {
			flags |= 1
		}
		if rec.self {
			flags |= 2
		}
		b = append(b, flags)
		b = appendStrings(b, rec.masked)
		b = binary.AppendUvarint(b, uint64(len(rec.subdirs)))
		for j, name := range rec.subdirs {
			b = binary.AppendUvarint(appendString(b, name), uint64(kids[j]))
		}
		b = appendStrings(b, rec.sockets)
		return off
	}
	root := enc(tree, top) // grows b
	binary.LittleEndian.PutUint32(b[head:], root)
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

// joinPath returns dir + "/" + name ("/" + name for the root).
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// errBadIndex: a cache file that is not one, or not whole.
var errBadIndex = errors.New("not a whole deny index")

// decodeIndex checks a cache file (encodeIndex) and decodes its header;
// its records are decoded where they are used (indexFile.record), and the
// names in them share the bytes of data, which must not change
// afterwards.
func decodeIndex(data []byte) (root, id string, f *indexFile, err error) {
	if len(data) < len(indexMagic)+4 || len(data) > maxIndexFile || string(data[:len(indexMagic)]) != indexMagic {
		return "", "", nil, errBadIndex
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32c(body) != sum {
		return "", "", nil, errBadIndex
	}
	d := decoder{b: body[len(indexMagic):]}
	root, id = strings.Clone(d.view()), strings.Clone(d.view())
	if d.err != nil || len(d.b) < 4 || !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return "", "", nil, errBadIndex
	}
	f = &indexFile{data: data, start: uint32(len(body) - len(d.b) + 4), end: uint32(len(body))}
	f.root = binary.LittleEndian.Uint32(d.b)
	if f.root != 0 && (f.root < f.start || f.root >= f.end) {
		return "", "", nil, errBadIndex
	}
	return root, id, f, nil
}

// pathArena makes paths in shared blocks of bytes.
type pathArena struct{ block []byte }

// join returns dir + "/" + name (joinPath).
func (a *pathArena) join(dir, name string) string {
	if dir == "/" {
		dir = ""
	}
	n := len(dir) + 1 + len(name)
	if cap(a.block)-len(a.block) < n {
		a.block = make([]byte, 0, max(n, 64<<10))
	}
	start := len(a.block)
	a.block = append(append(append(a.block, dir...), '/'), name...)
	return unsafe.String(&a.block[start], n)
}

// validName reports whether s can be a directory entry's name.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && strings.IndexByte(s, '/') < 0 && strings.IndexByte(s, 0) < 0
}

// decoder reads a cache file's fields; the first fault sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errBadIndex
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count no larger than the bytes left could hold.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

// names appends a list of entry names to out, each valid, in increasing
// order (so each is given once). With kids set, each name is followed by
// an offset, appended to kids, which is 0 or in [lo, hi).
func (d *decoder) names(out []string, kids *[]uint32, lo, hi uint32) []string {
	n := d.count()
	start := len(out)
	for i := 0; i < n && d.err == nil; i++ {
		s := d.view()
		if !validName(s) || i > 0 && s <= out[start+i-1] {
			d.fail()
			return out
		}
		out = append(out, s)
		if kids != nil {
			k := d.uvarint()
			if k != 0 && (k < uint64(lo) || k >= uint64(hi)) {
				d.fail()
				return out
			}
			*kids = append(*kids, uint32(k))
		}
	}
	return out
}

// view reads a string that shares the decoder's bytes.
func (d *decoder) view() string {
	n := d.count()
	if d.err != nil || n == 0 {
		return ""
	}
	s := unsafe.String(&d.b[0], n)
	d.b = d.b[n:]
	return s
}

// readPrivate reads a file only if it is a regular file owned by this
// user that no one else can read or write, in a directory owned by this
// user that no one else can write.
func readPrivate(path string) ([]byte, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 || st.Size > maxIndexFile {
		return nil, fmt.Errorf("%s: not a private file of this user", path)
	}
	data := make([]byte, st.Size)
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, err
	}
	markUsed(path, &st, time.Now())
	return data, nil
}

// usedEvery is how often a read of a cache file moves its access time
// (whatever the mount's atime option): `scopegate gc` removes the files no
// process read or wrote for a while.
const usedEvery = 12 * time.Hour

// markUsed sets a cache file's access time to now when it is older than
// usedEvery; a failure costs the file an early removal, nothing more.
func markUsed(path string, st *unix.Stat_t, now time.Time) {
	if now.Sub(time.Unix(st.Atim.Unix())) < usedEvery {
		return
	}
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{unix.NsecToTimespec(now.UnixNano()), {Nsec: unix.UTIME_OMIT}}, unix.AT_SYMLINK_NOFOLLOW)
}

// IndexFile is one file of the directory where the deny walk keeps its
// index (Options.IndexDir).
type IndexFile struct {
	Path string
	// Tree is the tree the file indexes; "" when it is not an index file
	// (a temporary file left by a write that did not finish, or another).
	Tree string
	// Used is when the file was last written or read (a read marks it at
	// most every twelve hours).
	Used time.Time
}

// IndexFiles lists the files of dir, a directory of deny index files
// (none when it does not exist).
func IndexFiles(dir string) ([]IndexFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the deny index: %w", err)
	}
	var out []IndexFile
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			continue // removed meanwhile
		}
		f := IndexFile{Path: p, Used: time.Unix(st.Mtim.Unix())}
		if at := time.Unix(st.Atim.Unix()); at.After(f.Used) {
			f.Used = at
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && strings.HasSuffix(e.Name(), ".idx") {
			f.Tree = indexTree(p)
		}
		out = append(out, f)
	}
	return out, nil
}

// indexTree reads the tree an index file names in its header ("" when it
// is not one).
func indexTree(path string) string {
	// O_NOATIME: reading it is no use of it.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOATIME|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	head := make([]byte, len(indexMagic)+binary.MaxVarintLen64+unix.PathMax)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if len(head) < len(indexMagic) || string(head[:len(indexMagic)]) != indexMagic {
		return ""
	}
	d := decoder{b: head[len(indexMagic):]}
	root := strings.Clone(d.view())
	if d.err != nil || !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return ""
	}
	return root
}

// privateDir checks that dir is a directory (not a link) owned by this
// user that no one else can write.
func privateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s: not a private directory of this user", dir)
	}
	return nil
}

// writePrivate writes a file mode 0600 (atomicfile), making its directory
// mode 0700. A cache: a file lost in a crash, or torn (its CRC fails), is
// walked again.
func writePrivate(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := privateDir(dir); err != nil {
		return err
	}
	return atomicfile.Write(path, data, atomicfile.Options{})
}

// crc32c is the Castagnoli CRC of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
