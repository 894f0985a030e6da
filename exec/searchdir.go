package exec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// searchEnt is one directory entry as the search tools need it.
type searchEnt struct {
	name string
	// typ is the entry's type as fs.FileMode.Type says it: fs.ModeDir,
	// fs.ModeSymlink, 0 for a regular file, the bits of a pipe, socket or
	// device.
	typ fs.FileMode
}

// listing is one directory's entries, sorted by name as fs.ReadDir sorts
// them, or why they could not be read.
type listing struct {
	done chan struct{}
	ents []searchEnt
	err  error
}

// Bounds of a dirLister.
const (
	// listAhead bounds the listings read ahead and not yet taken.
	listAhead = 1024
	// recentListings is how many taken listings stay for a second read
	// (doublestar reads a directory twice for "**/NAME").
	recentListings = 64
	// direntBuf is the size of one getdents(2) buffer.
	direntBuf = 32 << 10
)

// dirLister lists the directories below one directory, the start of a
// search, and reads ahead in parallel the directories the search will
// ask for next. Every directory is opened with openat2(2) relative to
// the start, never above it (RESOLVE_BENEATH) and through no symbolic
// link (RESOLVE_NO_SYMLINKS): what it lists is what the path names, as
// the search's checks assume. Where openat2 is missing it opens through
// the os.Root of the start instead.
type dirLister struct {
	ctx   context.Context
	start int // the start directory, open
	// root and startRel open below the start without openat2.
	root     *os.Root
	startRel string
	// ahead says whether to read ahead at all, skip which directories not
	// to read ahead (what a deny glob matches: the search will not go in).
	ahead bool
	skip  func(rel string) bool
	// listed counts the entries listed, for the caller's progress.
	listed func(n int)

	mu      sync.Mutex
	wake    *sync.Cond
	pending map[string]*listing // read or being read ahead, not yet taken
	stack   []string            // directories to read ahead, the next on top
	taken   map[string]bool     // directories listed for the search itself
	pruned  map[string]bool     // directories the search does not enter
	recent  []recentListing
	closed  bool
	workers sync.WaitGroup

	bufs    sync.Pool
	noAt2Mu sync.Mutex
	noAt2   bool
}

// recentListing is a listing already taken, kept for a second read.
type recentListing struct {
	rel string
	l   *listing
}

// newDirLister returns a lister of the directory start (an open file of
// the directory at startRel below root). It takes ownership of start,
// which close releases. With ahead set it starts workers that read ahead.
func newDirLister(ctx context.Context, root *os.Root, startRel string, start *os.File, ahead bool, skip func(string) bool, listed func(int)) (*dirLister, error) {
	fd, err := dupFD(start)
	start.Close()
	if err != nil {
		return nil, err
	}
	l := &dirLister{ctx: ctx, start: fd, root: root, startRel: startRel, ahead: ahead, skip: skip, listed: listed,
		pending: map[string]*listing{}, taken: map[string]bool{}, pruned: map[string]bool{}}
	l.wake = sync.NewCond(&l.mu)
	l.bufs.New = func() any { b := make([]byte, direntBuf); return &b }
	if ahead {
		for range aheadWorkers() {
			l.workers.Go(l.work)
		}
	}
	return l, nil
}

// dupFD returns a descriptor of its own for f's file.
func dupFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("search: %w", err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, fmt.Errorf("search: %w", err)
	}
	if derr != nil {
		return -1, fmt.Errorf("search: dup: %w", derr)
	}
	return fd, nil
}

// close stops the workers and releases the start directory.
func (l *dirLister) close() {
	l.mu.Lock()
	l.closed = true
	l.pending, l.stack = map[string]*listing{}, nil
	l.wake.Broadcast()
	l.mu.Unlock()
	l.workers.Wait()
	unix.Close(l.start)
}

// openBelow opens rel (a slash-separated path below the start, "." for
// the start itself) with flags, through no symbolic link and never above
// the start.
func (l *dirLister) openBelow(rel string, flags int) (int, error) {
	l.noAt2Mu.Lock()
	noAt2 := l.noAt2
	l.noAt2Mu.Unlock()
	if !noAt2 {
		fd, err := unix.Openat2(l.start, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err == nil || !(errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)) {
			return fd, err
		}
		// No openat2 (an old kernel, a seccomp filter): the os.Root opens
		// component by component, refusing symbolic links in the last one.
		l.noAt2Mu.Lock()
		l.noAt2 = true
		l.noAt2Mu.Unlock()
	}
	f, err := l.root.OpenFile(path.Join(l.startRel, rel), flags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return dupFD(f)
}

// read lists rel now.
func (l *dirLister) read(rel string) ([]searchEnt, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := l.openBelow(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	defer unix.Close(fd)
	bp := l.bufs.Get().(*[]byte)
	defer l.bufs.Put(bp)
	var ents []searchEnt
	for {
		n, err := unix.Getdents(fd, *bp)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: rel, Err: err}
		}
		if n <= 0 {
			break
		}
		var unknown []int
		err = parseDirents((*bp)[:n], func(name []byte, typ uint8) error {
			if string(name) == "." || string(name) == ".." {
				return nil
			}
			t, known := direntType(typ)
			if !known {
				unknown = append(unknown, len(ents))
			}
			ents = append(ents, searchEnt{name: string(name), typ: t})
			return nil
		})
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: rel, Err: err}
		}
		for _, i := range unknown {
			// The filesystem did not say the type: ask, as os.ReadDir does.
			var st unix.Stat_t
			if err := unix.Fstatat(fd, ents[i].name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				ents[i].name = "" // gone: os.ReadDir leaves it out too
				continue
			}
			ents[i].typ = modeType(st.Mode)
		}
		if len(unknown) > 0 {
			ents = slices.DeleteFunc(ents, func(e searchEnt) bool { return e.name == "" })
		}
	}
	slices.SortFunc(ents, func(a, b searchEnt) int { return strings.Compare(a.name, b.name) })
	if l.listed != nil {
		l.listed(len(ents))
	}
	return ents, nil
}

// direntType is the type of a getdents(2) entry as os.FileMode.Type says
// it, and whether the filesystem gave one (DT_UNKNOWN: ask, as os.ReadDir
// does).
func direntType(typ uint8) (fs.FileMode, bool) {
	switch typ {
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_REG:
		return 0, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// modeType is the type of a stat mode as os.FileMode.Type says it.
func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return 0
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// aheadWorkers is how many goroutines read ahead.
func aheadWorkers() int { return 2 }

// work reads ahead: it takes the directory on top of the stack, lists it,
// and puts its subdirectories on the stack, the first on top, so that the
// reads run ahead of a depth-first walk in its order.
func (l *dirLister) work() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for !l.closed && (len(l.stack) == 0 || len(l.pending) >= listAhead) {
			l.wake.Wait()
		}
		if l.closed {
			return
		}
		rel := l.stack[len(l.stack)-1]
		l.stack = l.stack[:len(l.stack)-1]
		if l.taken[rel] || l.pending[rel] != nil || l.isPruned(rel) {
			continue
		}
		ls := &listing{done: make(chan struct{})}
		l.pending[rel] = ls
		l.mu.Unlock()
		ls.ents, ls.err = l.read(rel)
		close(ls.done)
		l.mu.Lock()
		l.pushChildren(rel, ls.ents)
	}
}

// pushChildren puts the subdirectories of rel on the read-ahead stack.
// Called with l.mu held.
func (l *dirLister) pushChildren(rel string, ents []searchEnt) {
	if !l.ahead || l.closed {
		return
	}
	pushed := false
	for i := len(ents) - 1; i >= 0; i-- {
		if ents[i].typ != fs.ModeDir {
			continue
		}
		child := joinRel(rel, ents[i].name)
		if l.skip != nil && l.skip(child) {
			continue
		}
		l.stack = append(l.stack, child)
		pushed = true
	}
	if pushed {
		l.wake.Broadcast()
	}
}

// isPruned reports whether rel is at or below a pruned directory. Called
// with l.mu held.
func (l *dirLister) isPruned(rel string) bool {
	if len(l.pruned) == 0 {
		return false
	}
	for i := 0; i <= len(rel); i++ {
		if (i == len(rel) || rel[i] == '/') && l.pruned[rel[:i]] {
			return true
		}
	}
	return false
}

// take returns the listing of rel for the search: the one read ahead,
// else one read now. A taken listing is not read ahead again; the last
// few taken stay for a second read.
func (l *dirLister) take(rel string) ([]searchEnt, error) {
	l.mu.Lock()
	for _, r := range l.recent {
		if r.rel == rel {
			l.mu.Unlock()
			<-r.l.done
			return r.l.ents, r.l.err
		}
	}
	ls, ahead := l.pending[rel]
	if ahead {
		delete(l.pending, rel)
		l.wake.Broadcast()
	} else {
		ls = &listing{done: make(chan struct{})}
	}
	l.taken[rel] = true
	if len(l.recent) == recentListings {
		l.recent = slices.Delete(l.recent, 0, 1)
	}
	l.recent = append(l.recent, recentListing{rel: rel, l: ls})
	l.mu.Unlock()
	if !ahead {
		ls.ents, ls.err = l.read(rel)
		close(ls.done)
		l.mu.Lock()
		l.pushChildren(rel, ls.ents)
		l.mu.Unlock()
	}
	<-ls.done
	return ls.ents, ls.err
}

// prune says that the search does not enter rel: nothing at or below it
// is read ahead any more, and what was is dropped.
func (l *dirLister) prune(rel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ahead {
		return
	}
	l.pruned[rel] = true
	for k := range l.pending {
		if k == rel || strings.HasPrefix(k, rel) && k[len(rel)] == '/' {
			delete(l.pending, k)
		}
	}
	l.wake.Broadcast()
}

// joinRel joins a slash-separated path below the start ("." for the start)
// and a name.
func joinRel(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}
