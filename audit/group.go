package audit

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"syscall"
)

// Group commits concurrent appends to the same tools.org together: the
// entries waiting while one append is on its way to disk go out as one
// write(2) and one fsync under the file lock. Every Append still returns
// only once its entry is on disk, and entries never interleave. A Group is
// shared by the Logs of a long-running process; its zero value is ready.
type Group struct {
	// KeepOpen is how many chain heads (ChainHeadPath) the Group keeps open
	// between appends, the most recently used, for as long as it lives; 0
	// opens each for its append. A long-running process sets it before the
	// first append.
	KeepOpen int

	mu     sync.Mutex
	queues map[string]*groupQueue
	// heads are the chain heads kept open, by tools.org path; used lists
	// their paths, least recently used first.
	heads map[string]*headFile
	used  []string
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
		err := appendChained(context.Background(), path, g.head(path), texts, sync)
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

// head returns the chain head of the tools.org at path, open, when the
// Group keeps heads open; nil otherwise (appendChained opens it). Only the
// goroutine that flushes path's queue calls it and uses the head, and a
// head is closed only when no queue of its path is flushing.
func (g *Group) head(path string) *headFile {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.KeepOpen <= 0 {
		return nil
	}
	if h := g.heads[path]; h != nil {
		// A head file removed or replaced (a restore, a hand edit) is
		// opened again: the kept descriptor would write where no reader
		// looks.
		var st syscall.Stat_t
		if err := syscall.Fstat(h.fd, &st); err == nil && st.Nlink > 0 {
			g.touch(path)
			return h
		}
		h.close()
		delete(g.heads, path)
		g.used = slices.DeleteFunc(g.used, func(p string) bool { return p == path })
	}
	h, err := openHead(ChainHeadPath(path))
	if err != nil {
		return nil // appendChained opens it, and says why it cannot
	}
	if g.heads == nil {
		g.heads = map[string]*headFile{}
	}
	for len(g.heads) >= g.KeepOpen {
		if !g.evict() {
			break
		}
	}
	g.heads[path] = h
	g.used = append(g.used, path)
	return h
}

// touch marks path's head as the most recently used. Called with g.mu held.
func (g *Group) touch(path string) {
	if i := slices.Index(g.used, path); i >= 0 {
		g.used = append(slices.Delete(g.used, i, i+1), path)
	}
}

// evict closes the least recently used head whose path no append is
// using, and reports whether there was one. Called with g.mu held.
func (g *Group) evict() bool {
	for i, p := range g.used {
		if g.queues[p] != nil {
			continue
		}
		g.heads[p].close()
		delete(g.heads, p)
		g.used = slices.Delete(g.used, i, i+1)
		return true
	}
	return false
}
