package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/sessions"
)

// registry maps "<session>/<branch>" to the branch's directory: one map
// lookup per request after the first, under a read lock held only for the
// lookup, so calls on different branches never wait on each other. The
// compiled scope is cached by the gateway and re-read when scope.yml
// changes, so an expansion by another process is seen on the next request.
type registry struct {
	store *sessions.Store
	gw    *gateway.Gateway
	warn  func(string)

	mu       sync.RWMutex
	branches map[branchKey]*branchEntry
	// currents are the branches the sessions' current links point to, by
	// session id, while the gateway's Watcher says the links are unchanged.
	currents map[string]currentBranch
}

// currentBranch is where a session's current link pointed when its watched
// version was version.
type currentBranch struct {
	version uint64
	branch  string
}

// branchKey names a branch of a session.
type branchKey struct{ session, branch string }

// branchEntry is one opened branch.
type branchEntry struct {
	session, branch, dir string
	recovered            sync.Once
}

func newRegistry(store *sessions.Store, gw *gateway.Gateway, warn func(string)) *registry {
	return &registry{store: store, gw: gw, warn: warn, branches: map[branchKey]*branchEntry{}, currents: map[string]currentBranch{}}
}

// lookup returns the branch of session id named branch (empty: where the
// session's current link points now, since it can be switched at any
// time). Ids and names are validated before any file is touched. It first
// syncs the gateway's Watcher, so that what it and then the gateway read
// is as fresh as the request: a gateway.Target made after it is Synced.
func (r *registry) lookup(ctx context.Context, id, branch string) (*branchEntry, error) {
	if err := sessions.ValidateID(id); err != nil {
		return nil, fmt.Errorf("session id %q: %w", id, err)
	}
	if w := r.gw.Watcher(); w != nil {
		w.Sync()
	}
	if branch == "" {
		cur, err := r.current(id)
		if err != nil {
			return nil, err
		}
		branch = cur
	} else if err := sessions.ValidateBranch(branch); err != nil {
		return nil, fmt.Errorf("branch %q: %w", branch, err)
	}
	key := branchKey{id, branch}
	r.mu.RLock()
	e := r.branches[key]
	r.mu.RUnlock()
	if e == nil {
		dir, err := r.store.Resolve(id, branch)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		if e = r.branches[key]; e == nil {
			e = &branchEntry{session: id, branch: branch, dir: dir}
			r.branches[key] = e
		}
		r.mu.Unlock()
	}
	e.recovered.Do(func() {
		if n, err := r.gw.Recover(ctx, e.dir); err != nil {
			r.warn(fmt.Sprintf("recover interrupted calls of %s/%s: %v", e.session, e.branch, err))
		} else if n > 0 {
			r.warn(fmt.Sprintf("recorded %d interrupted call(s) of %s/%s", n, e.session, e.branch))
		}
	})
	return e, nil
}

// current is the branch session id's current link points to. With the
// gateway's Watcher (synced by lookup) the link is read again only when it,
// or a directory on the way to it, changed; without one, on every request.
func (r *registry) current(id string) (string, error) {
	w := r.gw.Watcher()
	if w == nil {
		return r.store.Current(id)
	}
	link := r.store.CurrentLink(id)
	v, ok := w.LinkVersion(link)
	if !ok {
		return r.store.Current(id)
	}
	r.mu.RLock()
	c, hit := r.currents[id]
	r.mu.RUnlock()
	if hit && c.version == v {
		return c.branch, nil
	}
	cur, err := r.store.Current(id)
	if err != nil {
		return "", err
	}
	// A session found by its metadata's id (its directory is named
	// otherwise) has its link elsewhere: it is read every time.
	if _, err := os.Lstat(filepath.Dir(link)); err == nil {
		r.mu.Lock()
		r.currents[id] = currentBranch{version: v, branch: cur}
		r.mu.Unlock()
	}
	return cur, nil
}

// forget drops a branch (its directory went away), so the next request
// opens it anew.
func (r *registry) forget(e *branchEntry) {
	r.mu.Lock()
	if key := (branchKey{e.session, e.branch}); r.branches[key] == e {
		delete(r.branches, key)
	}
	r.mu.Unlock()
}
