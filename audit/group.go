package audit

import (
	"context"
	"runtime"
	"sync"
)

// Group commits concurrent appends to the same tools.org together: the
// entries waiting while one append is on its way to disk go out as one
// write(2) and one fsync under the file lock. Every Append still returns
// only once its entry is on disk, and entries never interleave. A Group is
// shared by the Logs of a long-running process; its zero value is ready.
type Group struct {
	mu     sync.Mutex
	queues map[string]*groupQueue
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
		err := appendChained(context.Background(), path, texts, sync)
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
