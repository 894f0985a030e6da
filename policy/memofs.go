package policy

import (
	"errors"
	"io/fs"
)

// memoFS remembers, for the length of one decision, what the filesystem
// answered about each path: a shell command names the working directory,
// its operands' directories and git's search upward several times over.
// A decision is taken on one view of the filesystem; asking twice could
// only let a change in between make its parts disagree.
//
// It is not safe for concurrent use; each decision makes its own (see
// withMemo).
type memoFS struct {
	fs      FS
	entries []memoEntry
}

// memoEntry is one remembered answer.
type memoEntry struct {
	op    memoOp
	path  string
	clean string
	info  fs.FileInfo
	err   error
}

// memoOp is the question a memoEntry answers.
type memoOp uint8

const (
	memoLstat memoOp = iota
	memoStat
	memoResolve
)

// maxMemo bounds the entries kept; past it, answers are not remembered
// (a linear search stays cheaper than a map for a decision's few paths).
const maxMemo = 64

// errNoResolver is what memoFS's resolveNoSymlinks answers over a
// filesystem that cannot resolve in one step: the caller walks the path.
var errNoResolver = errors.New("no one-step resolution")

// withMemo returns the filesystem one decision asks: fsys remembered when
// it is the running system's, whose answers cost a system call each, and
// fsys itself otherwise (a filesystem in memory answers faster than the
// memory would).
func withMemo(fsys FS) FS {
	if _, ok := fsys.(OSFS); ok {
		return &memoFS{fs: fsys}
	}
	return fsys
}

func (m *memoFS) find(op memoOp, path string) (*memoEntry, bool) {
	for i := range m.entries {
		if e := &m.entries[i]; e.op == op && e.path == path {
			return e, true
		}
	}
	return nil, false
}

func (m *memoFS) remember(e memoEntry) {
	if len(m.entries) < maxMemo {
		if m.entries == nil {
			m.entries = make([]memoEntry, 0, 16)
		}
		m.entries = append(m.entries, e)
	}
}

// Lstat answers as the wrapped filesystem did the first time.
func (m *memoFS) Lstat(name string) (fs.FileInfo, error) {
	if e, ok := m.find(memoLstat, name); ok {
		return e.info, e.err
	}
	info, err := m.fs.Lstat(name)
	m.remember(memoEntry{op: memoLstat, path: name, info: info, err: err})
	return info, err
}

// Stat answers as the wrapped filesystem did the first time.
func (m *memoFS) Stat(name string) (fs.FileInfo, error) {
	if e, ok := m.find(memoStat, name); ok {
		return e.info, e.err
	}
	info, err := m.fs.Stat(name)
	m.remember(memoEntry{op: memoStat, path: name, info: info, err: err})
	return info, err
}

// Readlink is the wrapped filesystem's.
func (m *memoFS) Readlink(name string) (string, error) { return m.fs.Readlink(name) }

// ReadDir is the wrapped filesystem's.
func (m *memoFS) ReadDir(name string) ([]fs.DirEntry, error) { return m.fs.ReadDir(name) }

// ReadFile is the wrapped filesystem's.
func (m *memoFS) ReadFile(name string) ([]byte, error) { return m.fs.ReadFile(name) }

// resolveNoSymlinks answers as the wrapped filesystem did the first time,
// or errNoResolver when it cannot resolve in one step.
func (m *memoFS) resolveNoSymlinks(path string) (string, fs.FileInfo, error) {
	r, ok := m.fs.(noSymlinkResolver)
	if !ok {
		return "", nil, errNoResolver
	}
	if e, ok := m.find(memoResolve, path); ok {
		return e.clean, e.info, e.err
	}
	clean, info, err := r.resolveNoSymlinks(path)
	m.remember(memoEntry{op: memoResolve, path: path, clean: clean, info: info, err: err})
	return clean, info, err
}
