package gateway

import (
	"runtime"
	"sync"
)

// statGroup shares one stat(2) of a file among the concurrent decisions that
// need it, without weakening freshness: a request only ever joins a stat that
// has not started yet, so every answer comes from a stat issued after the
// request arrived. A scope.yml rewritten before a request starts is always
// seen by it, exactly as with a stat of its own. Its zero value is ready.
type statGroup struct {
	mu      sync.Mutex
	pending map[string]*statCall
}

// statCall is one stat that requests can join until it starts.
type statCall struct {
	done chan struct{}
	id   fileID
	err  error
}

// stat returns the identity of the file at path, sharing the system call
// with the requests that arrive while it is being gathered.
func (g *statGroup) stat(path string) (fileID, error) {
	g.mu.Lock()
	if c, ok := g.pending[path]; ok {
		g.mu.Unlock()
		<-c.done
		return c.id, c.err
	}
	if g.pending == nil {
		g.pending = map[string]*statCall{}
	}
	c := &statCall{done: make(chan struct{})}
	g.pending[path] = c
	g.mu.Unlock()
	// Let the requests that are ready to run join this stat; when nothing
	// else is runnable this returns at once.
	runtime.Gosched()
	g.mu.Lock()
	delete(g.pending, path) // from here on, a new request needs a new stat
	g.mu.Unlock()
	c.id, c.err = statFile(path)
	close(c.done)
	return c.id, c.err
}
