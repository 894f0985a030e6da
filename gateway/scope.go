package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/scopegate/scopegate/policy"
)

// ErrScopeMissing is returned by LoadScope when there is no scope file.
var ErrScopeMissing = errors.New("scope file missing")

// loadedScope is what loading a scope file gave: the compiled scope, or
// why there is none.
type loadedScope struct {
	scope *policy.Scope
	err   error
}

// LoadScope returns the compiled scope of a file, from the cache while the
// file is unchanged (its watched version, else its inode, size and mtime),
// else read and compiled anew. A missing file is ErrScopeMissing; an
// unusable one wraps policy.ErrInvalidScope. Errors are never cached over a
// changed file.
func (g *Gateway) LoadScope(path string, env policy.Env) (*policy.Scope, error) {
	g.syncFiles()
	l := g.loadScope(path, env)
	return l.scope, l.err
}

// loadScope is LoadScope after syncFiles. Compiling needs only env's home
// directory and filesystem, which are the gateway's: what is cached for
// one call's env serves every call.
func (g *Gateway) loadScope(path string, env policy.Env) loadedScope {
	st, err := g.fileStamp(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return loadedScope{err: fmt.Errorf("%w: %s", ErrScopeMissing, path)}
		}
		return loadedScope{err: fmt.Errorf("%w: stat %s: %v", policy.ErrInvalidScope, path, err)}
	}
	if l, ok := g.scopes.get(path, st); ok {
		return l
	}
	l := g.readScope(path, env)
	g.scopes.put(path, st, l)
	return l
}

// readScope reads and compiles a scope file, counting a file that is there
// but unusable as a load error.
func (g *Gateway) readScope(path string, env policy.Env) loadedScope {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return loadedScope{err: fmt.Errorf("%w: %s", ErrScopeMissing, path)}
		}
		g.opts.Observer.ScopeLoadError()
		return loadedScope{err: fmt.Errorf("%w: read %s: %v", policy.ErrInvalidScope, path, err)}
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		g.opts.Observer.ScopeLoadError()
		return loadedScope{err: fmt.Errorf("%s: %w", path, err)}
	}
	return g.compileScope(path, doc, env)
}

// compileScope compiles the document of the scope file at path.
func (g *Gateway) compileScope(path string, doc policy.Document, env policy.Env) loadedScope {
	sc, err := policy.Compile(doc, env)
	if err != nil {
		g.opts.Observer.ScopeLoadError()
		return loadedScope{err: fmt.Errorf("%s: %w", path, err)}
	}
	return loadedScope{scope: sc}
}

// DenyFor is the decision for a call on a branch whose scope, or the
// managed policy over it, could not be loaded.
func DenyFor(tool string, err error) policy.Decision {
	if errors.Is(err, policy.ErrManagedInvalid) {
		return policy.DenyManaged(tool, err)
	}
	if errors.Is(err, ErrScopeMissing) {
		return policy.Deny(tool, policy.Violation{Reason: policy.ReasonScopeMissing, Rule: "scope.yml",
			Message: "this session has no scope.yml, so every call is denied: " + err.Error()})
	}
	return policy.DenyInvalidScope(tool, err)
}
