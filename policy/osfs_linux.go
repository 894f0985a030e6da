package policy

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// resolveNoSymlinks asks the kernel, in one openat2 call, whether path
// exists with no symbolic link on the way. When it does, its cleaned
// spelling is already canonical. Any failure (a link, a missing component,
// an old kernel) is returned, and the caller walks the path itself; the
// error is ENOENT only when a component is missing, never for a link.
func (OSFS) resolveNoSymlinks(path string) (string, fs.FileInfo, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", nil, err
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", nil, err
	}
	clean := filepath.Clean(path)
	return clean, statInfo{name: filepath.Base(clean), st: st}, nil
}

// statInfo is the fs.FileInfo of a stat result.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i statInfo) Sys() any           { return &i.st }
func (i statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}
