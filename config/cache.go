package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
)

// Cache is config.yml as the long-running processes (serve, mcp) read it
// for every call: parsed again only when the file changes, which a stat
// tells (its device, inode, size, modification and change times), so an
// edit takes effect on the next call without a restart. It is safe for
// concurrent use; the zero value with Dir set works.
type Cache struct {
	// Dir is the config dir ([Load]'s dir).
	Dir string

	mu    sync.Mutex
	ok    bool
	stamp fileStamp
	cfg   Config
	err   error
}

// fileStamp is what a stat says of a file's identity and content.
type fileStamp struct {
	exists               bool
	dev, ino             uint64
	size                 int64
	mtime, ctime         int64
	mtimeNsec, ctimeNsec int64
}

// statFile stamps path; a missing file is a stamp of its own (the defaults).
func statFile(path string) (fileStamp, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileStamp{}, nil
		}
		return fileStamp{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileStamp{exists: true, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec, mtimeNsec: st.Mtim.Nsec, ctime: st.Ctim.Sec, ctimeNsec: st.Ctim.Nsec}, nil
}

// Load is [Load] of c.Dir, from the cache while config.yml is unchanged.
// An unusable file is an error every time until it changes (never the
// last good configuration).
func (c *Cache) Load() (Config, error) {
	if c.Dir == "" {
		return Default(), nil
	}
	st, err := statFile(filepath.Join(c.Dir, FileName))
	if err != nil {
		return Default(), err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.stamp == st {
		return c.cfg, c.err
	}
	cfg, err := Load(c.Dir)
	// A file changed while it was read has a stamp the next stat differs
	// from: it is read again then.
	c.ok, c.stamp, c.cfg, c.err = true, st, cfg, err
	return cfg, err
}
