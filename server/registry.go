package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/sessions"
)

// registry maps "<session>/<branch>" to the branch's directory: one map
// lookup per request after the first, under a read lock held only for the
// lookup, so calls on different branches never wait on each other. The
// compiled scope is cached by the gateway and re-read when scope.yml
// changes (stat), so an expansion by another process is seen on the next
// request.
type registry struct {
	store *sessions.Store
	gw    *gateway.Gateway
	warn  func(string)

	mu       sync.RWMutex
	branches map[string]*branchEntry
}

// branchEntry is one opened branch.
type branchEntry struct {
	session, branch, dir string
	recovered            sync.Once
}

func newRegistry(store *sessions.Store, gw *gateway.Gateway, warn func(string)) *registry {
	return &registry{store: store, gw: gw, warn: warn, branches: map[string]*branchEntry{}}
}

// lookup returns the branch of session id named branch (empty: where the
// session's current link points, read on every request since it can be
// switched at any time). Ids and names are validated before any file is
// touched.
func (r *registry) lookup(ctx context.Context, id, branch string) (*branchEntry, error) {
	if err := sessions.ValidateID(id); err != nil {
		return nil, fmt.Errorf("session id %q: %w", id, err)
	}
	if branch == "" {
		cur, err := r.store.Current(id)
		if err != nil {
			return nil, err
		}
		branch = cur
	} else if err := sessions.ValidateBranch(branch); err != nil {
		return nil, fmt.Errorf("branch %q: %w", branch, err)
	}
	key := id + "/" + branch
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
			r.warn(fmt.Sprintf("recover interrupted calls of %s: %v", key, err))
		} else if n > 0 {
			r.warn(fmt.Sprintf("recorded %d interrupted call(s) of %s", n, key))
		}
	})
	return e, nil
}

// forget drops a branch (its directory went away), so the next request
// opens it anew.
func (r *registry) forget(e *branchEntry) {
	r.mu.Lock()
	if r.branches[e.session+"/"+e.branch] == e {
		delete(r.branches, e.session+"/"+e.branch)
	}
	r.mu.Unlock()
}
