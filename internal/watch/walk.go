package watch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The events asked for. A directory on the way to a path changes the path
// when an entry is created, removed, renamed or changes mode, or when the
// directory itself goes; a file at the end of a path, also when it is
// written or truncated. Writes to other files of a directory (tools.org
// beside scope.yml) are not asked for, so they cost nothing.
const (
	dirMask  = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW
	fileMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_DONT_FOLLOW
)

// maxLinks is how many symbolic links a walk follows, as the kernel's
// limit for one path.
const maxLinks = 40

// walk watches the path of t again: every directory the kernel passes
// through to reach it, and the file at its end. It goes top down, watching
// each directory before it looks up the next entry in it, so that a change
// made after the look-up is an event and one made before is seen by the
// look-up. The watches of the last walk that this one did not take again
// are let go. Called with mu held.
func (w *Watcher) walk(t *track) {
	old := t.refs
	t.refs = nil
	t.stale = false
	// An unwatched path keeps the watches it got so far: a change there
	// has it walked again.
	t.watched = w.follow(t)
	// The new refs, taken first, keep the watches both walks need.
	w.release(old)
}

// release drops the refs old and removes the watches left without refs.
// Called with mu held.
func (w *Watcher) release(old []ref) {
	for _, r := range old {
		w.unref(r)
	}
	for _, r := range old {
		if wr := w.watches[r.wd]; wr != nil && len(wr.refs) == 0 {
			syscall.InotifyRmWatch(w.fd, uint32(r.wd))
			delete(w.watches, r.wd)
		}
	}
}

// follow resolves t's path as the kernel would, watching on the way; it
// reports whether the path is followed exactly.
func (w *Watcher) follow(t *track) bool {
	dir := "/"
	wd, ok := w.watch(dir, dirMask)
	if !ok {
		return false
	}
	rest := components(t.key.path)
	if len(rest) == 0 {
		w.ref(wd, t, anyEntry)
		return true
	}
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		last := len(rest) == 0
		w.ref(wd, t, name)
		next := filepath.Join(dir, name)
		var st syscall.Stat_t
		if err := syscall.Lstat(next, &st); err != nil {
			// A missing entry is followed: its creation is an event of dir.
			return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR)
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFLNK:
			if last && !t.key.follow {
				// A link never changes in place: it is replaced, which is
				// an event of dir.
				return true
			}
			if links++; links > maxLinks {
				return false
			}
			target, err := os.Readlink(next)
			if err != nil {
				return false
			}
			if !filepath.IsAbs(target) {
				// dir has no link on it, so ".." in the target is its
				// parent, as the kernel resolves it.
				target = filepath.Join(dir, target)
			}
			rest = append(components(target), rest...)
			dir = "/"
			if wd, ok = w.watch(dir, dirMask); !ok {
				return false
			}
		case syscall.S_IFDIR:
			if wd, ok = w.watch(next, dirMask); !ok {
				return false
			}
			if last {
				w.ref(wd, t, anyEntry)
				return true
			}
			dir = next
		case syscall.S_IFREG:
			if !last {
				// The path goes through a file and resolves to nothing
				// until that entry of dir changes.
				return true
			}
			fwd, ok := w.watch(next, fileMask)
			if !ok {
				return false
			}
			w.ref(fwd, t, "")
			return true
		default:
			// Devices, pipes and sockets are not followed.
			return false
		}
	}
	return true
}

// watch adds (or finds) the watch of path, on a file system whose changes
// all go through this kernel.
func (w *Watcher) watch(path string, mask uint32) (int32, bool) {
	if !localFS(path) {
		return 0, false
	}
	wd, err := syscall.InotifyAddWatch(w.fd, path, mask)
	if err != nil {
		return 0, false
	}
	if w.watches[int32(wd)] == nil {
		w.watches[int32(wd)] = &watchRefs{}
	}
	return int32(wd), true
}

// ref records that t depends on entry name of watch wd ("" for the
// watched inode alone).
func (w *Watcher) ref(wd int32, t *track, name string) {
	r := ref{wd: wd, t: t, name: name}
	w.watches[wd].refs = append(w.watches[wd].refs, r)
	t.refs = append(t.refs, r)
}

// unref removes one occurrence of r from its watch.
func (w *Watcher) unref(r ref) {
	wr := w.watches[r.wd]
	if wr == nil {
		return
	}
	for i, x := range wr.refs {
		if x == r {
			wr.refs = append(wr.refs[:i], wr.refs[i+1:]...)
			return
		}
	}
}

// localFS reports whether every change to path's file system is made by
// this kernel, which then queues its events: local disk and memory file
// systems, not network or user-space ones (NFS, SMB, FUSE, 9p…), whose
// files can change behind its back.
func localFS(path string) bool {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err != nil {
		return false
	}
	return localType(uint32(fs.Type))
}

// localType reports whether a file system type's changes are all made by
// this kernel: local disk and memory file systems.
func localType(t uint32) bool {
	switch t {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.RAMFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC,
		zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is ZFS on Linux's file system type.
const zfsSuperMagic = 0x2fc12fc1

// components splits a clean absolute path into its names.
func components(path string) []string {
	path = strings.Trim(filepath.Clean(path), "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// cString is the name of an inotify event, without its NUL padding.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return b
}
