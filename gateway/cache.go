package gateway

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// cache keeps what the gateway made of a file (a compiled scope, what it
// uses of a branch's metadata, a branch's mode), one value a key, with the
// version of what it was made from: a lookup with another version misses,
// so a value is never served for a file that changed since. It is safe for
// concurrent use, and its zero value is ready.
type cache[V comparable, T any] struct {
	mu      sync.Mutex
	entries map[string]versioned[V, T]
}

// versioned is a cached value and the version it was made from.
type versioned[V comparable, T any] struct {
	version V
	value   T
}

// get returns the value of key made from version, if the cache holds it.
func (c *cache[V, T]) get(key string, version V) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.version != version {
		var zero T
		return zero, false
	}
	return e.value, true
}

// put keeps value as key's, made from version.
func (c *cache[V, T]) put(key string, version V, value T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]versioned[V, T]{}
	}
	c.entries[key] = versioned[V, T]{version: version, value: value}
}

// stamp tells whether a file changed since it was read: the version the
// Watcher gave it, or the identity a stat gave.
type stamp struct {
	watched bool
	version uint64
	id      fileID
}

// fileID tells whether a file changed: inode, size and modification time.
type fileID struct {
	ino, size uint64
	mtime     time.Time
}

// statFile returns the identity of a file.
func statFile(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	id := fileID{size: uint64(fi.Size()), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
	}
	return id, nil
}

// syncFiles applies the changes the Watcher has been told of: every file
// changed before it is called is seen as changed afterwards.
func (g *Gateway) syncFiles() {
	if g.opts.Watcher != nil {
		g.opts.Watcher.Sync()
	}
}

// fileStamp returns the stamp of path as it is now (after syncFiles): its
// watched version, else a stat shared with concurrent decisions.
func (g *Gateway) fileStamp(path string) (stamp, error) {
	if g.opts.Watcher != nil {
		if v, ok := g.opts.Watcher.Version(path); ok {
			return stamp{watched: true, version: v}, nil
		}
	}
	id, err := g.stats.stat(path)
	return stamp{id: id}, err
}
