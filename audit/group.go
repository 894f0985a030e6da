package audit

import (
	"bytes"
	"context"
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
	done chan error
}

func (g *Group) append(path string, text []byte, sync bool) error {
	r := groupReq{text: text, done: make(chan error, 1)}
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[string]*groupQueue{}
	}
	q := g.queues[path]
	if q == nil {
		q = &groupQueue{}
		g.queues[path] = q
	}
	q.pending = append(q.pending, r)
	if q.flushing {
		g.mu.Unlock()
		return <-r.done
	}
	q.flushing = true
	for {
		batch := q.pending
		q.pending = nil
		g.mu.Unlock()
		var buf bytes.Buffer
		for _, b := range batch {
			buf.Write(b.text)
		}
		err := appendEntry(context.Background(), path, buf.Bytes(), sync)
		for _, b := range batch {
			b.done <- err
		}
		g.mu.Lock()
		if len(q.pending) == 0 {
			q.flushing = false
			delete(g.queues, path)
			g.mu.Unlock()
			return <-r.done
		}
	}
}
