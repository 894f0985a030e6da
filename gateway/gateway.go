// Package gateway takes one tool call end to end: load the branch's scope,
// decide, run, audit, count. Every entry point (CLI, HTTP, hooks) goes
// through it, so there is exactly one decision path.
package gateway

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// Observer counts decisions and calls; *metrics.Metrics is one. Label values
// are bounded by the observer.
type Observer interface {
	ObserveDecision(tool string, allowed bool, reason, via string)
	ObserveCallDuration(tool string, seconds float64)
	ObserveDecisionDuration(seconds float64)
	ScopeLoadError()
	InflightInc()
	InflightDec()
	AuditWriteError()
	// ObserveApproval counts an answer to an offer (CONTRACT §9).
	ObserveApproval(answer string)
	// ScopeExpansion counts one entry added to a scope section
	// ("paths.read") by an approval.
	ScopeExpansion(section string)
}

// EventSink receives the audited events of a gateway: every entry it
// appends to a tools.org. Emit must return at once (queue or drop).
type EventSink interface {
	Emit(audit.Event)
}

// Options configure a Gateway. The zero value works: no protected roots, no
// home directory, nothing counted, shell calls refused where Landlock is
// missing.
type Options struct {
	// SessionsDir and ConfigDir are never writable by a tool call.
	SessionsDir string
	ConfigDir   string
	// PresetsDir holds gptel preset files (config.yml gptel_presets_dir),
	// for the sessions hooks create.
	PresetsDir string
	// RoamDir is the org-roam directory.
	RoamDir string
	// Home is the home directory ~ and $HOME expand to in calls.
	Home string
	// LookupHome resolves ~user; nil uses the system's user database.
	LookupHome func(name string) (string, bool)
	// Path is the PATH programs are looked up in, without the directories
	// a scope makes writable (policy.Scope.TrustedPath); nil uses this
	// process's PATH.
	Path []string
	// Observer counts decisions; nil counts nothing.
	Observer Observer
	// Events, when set, receives every audited event (telemetry export).
	// It must not block.
	Events EventSink
	// Confine says whether shell calls may run without Landlock.
	Confine exec.ConfineMode
	// HelperPath is the executable re-run as the Landlock helper (default:
	// this executable).
	HelperPath string
	// MaxOutput caps each of stdout and stderr of a call (default 1 MiB).
	MaxOutput int
	// AuditMaxOutput caps the output kept in tools.org (default 64 KiB).
	AuditMaxOutput int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Warn receives warnings (legacy sessions, recovered calls); nil drops them.
	Warn func(string)
	// Progress, when set, receives the stderr of shell calls as it comes.
	Progress io.Writer
	// ProbeCache, when set, is the file that remembers across processes
	// that this host can give programs the private view (exec.Host).
	ProbeCache string
	// Watcher, when set, tells when the files the gateway caches
	// (scope.yml, metadata.yml, the sessions root) change, so that a
	// decision needs no system call to know its cache is fresh; a
	// long-running process (serve, mcp) sets it. Without it, or for a path
	// it cannot watch, each decision stats the files (concurrent decisions
	// share the stat). Either way a file changed before a decision starts
	// is seen by it.
	Watcher *watch.Watcher
}

// Gateway decides and runs tool calls. It is safe for concurrent use.
type Gateway struct {
	opts  Options
	mu    sync.Mutex
	cache map[string]cachedScope
	meta  map[string]cachedCwd
	// group commits the concurrent audit appends of this process together.
	group audit.Group
	// stats shares the freshness stat of a scope file among concurrent
	// decisions.
	stats statGroup
	// rootCache is protectedNow's last answer.
	rootCache protectedCache
	// protected are the sessions root and config dir, canonical spellings
	// included: never writable by a tool call.
	protected []string
	// host is what the runners of this process learn about the host
	// (namespace probe, deny walk cache), shared across calls.
	host exec.Host
	// learn caches the branches' modes and observe mode's scopes.
	learn observeState
}

// cachedCwd is a branch's default working directory and the identity (or
// watched version) of the metadata.yml it was read from.
type cachedCwd struct {
	stamp stamp
	cwd   string
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

// cachedScope is a compiled scope and the stamp of the file it was read
// from.
type cachedScope struct {
	stamp stamp
	scope *policy.Scope
	err   error
}

// New returns a Gateway.
func New(opts Options) *Gateway {
	if opts.LookupHome == nil {
		opts.LookupHome = systemHome
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.Path == nil {
		opts.Path = filepath.SplitList(os.Getenv("PATH"))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	// The protected roots are resolved once: they are the gateway's own.
	g := &Gateway{opts: opts, cache: map[string]cachedScope{}, meta: map[string]cachedCwd{},
		protected: protectedRoots(opts.SessionsDir, opts.ConfigDir)}
	g.host.ProbeCache = opts.ProbeCache
	return g
}

// IndexDirName is the directory below the sessions root where the private
// view's deny walk keeps its index (exec.Options.IndexDir): a protected
// root, which no tool call can write.
const IndexDirName = ".scopegate-index"

// indexDir is where the deny walk keeps its index ("" without a sessions
// root: each process walks anew).
func (g *Gateway) indexDir() string {
	if g.opts.SessionsDir == "" {
		return ""
	}
	return filepath.Join(g.opts.SessionsDir, IndexDirName)
}

func systemHome(name string) (string, bool) {
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return u.HomeDir, true
}

// protectedRoots returns roots and, when a root is reached through a
// link, its canonical spelling too.
func protectedRoots(roots ...string) []string {
	var out []string
	for _, p := range roots {
		if p == "" {
			continue
		}
		out = append(out, filepath.Clean(p))
		if real, err := filepath.EvalSymlinks(p); err == nil && real != filepath.Clean(p) {
			out = append(out, real)
		}
	}
	return out
}

// Env returns the policy environment of a decision with default cwd; extra
// protected roots (a scope file given with --scope) are added.
func (g *Gateway) Env(cwd string, extraProtected ...string) policy.Env {
	g.syncFiles()
	return g.env(g.protectedNow(), cwd, extraProtected...)
}

// env is Env with the protected roots of the moment given.
func (g *Gateway) env(protected []string, cwd string, extraProtected ...string) policy.Env {
	if len(extraProtected) > 0 {
		protected = append(append([]string(nil), protected...), protectedRoots(extraProtected...)...)
	}
	return policy.Env{
		Home:      g.opts.Home,
		HomeOf:    g.opts.LookupHome,
		Protected: protected,
		RoamDir:   g.opts.RoamDir,
		Cwd:       cwd,
		Path:      g.opts.Path,
	}
}

// Watcher is Options.Watcher: nil when the gateway stats the files it
// caches. The server shares it for what it caches of the sessions.
func (g *Gateway) Watcher() *watch.Watcher { return g.opts.Watcher }

// ErrScopeMissing is returned by LoadScope when there is no scope file.
var ErrScopeMissing = errors.New("scope file missing")

// LoadScope returns the compiled scope of a file, from the cache while the
// file is unchanged (its watched version, else its inode, size and mtime),
// else read and compiled anew. A missing file is ErrScopeMissing; an
// unusable one wraps policy.ErrInvalidScope. Errors are never cached over a
// changed file.
func (g *Gateway) LoadScope(path string, env policy.Env) (*policy.Scope, error) {
	g.syncFiles()
	return g.loadScope(path, env)
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

// loadScope is LoadScope after syncFiles.
func (g *Gateway) loadScope(path string, env policy.Env) (*policy.Scope, error) {
	st, err := g.fileStamp(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrScopeMissing, path)
		}
		return nil, fmt.Errorf("%w: stat %s: %v", policy.ErrInvalidScope, path, err)
	}
	g.mu.Lock()
	c, ok := g.cache[path]
	g.mu.Unlock()
	if ok && c.stamp == st {
		return c.scope, c.err
	}
	sc, err := g.compile(path, env)
	if err != nil && !errors.Is(err, ErrScopeMissing) {
		g.opts.Observer.ScopeLoadError()
	}
	g.mu.Lock()
	g.cache[path] = cachedScope{stamp: st, scope: sc, err: err}
	g.mu.Unlock()
	return sc, err
}

func (g *Gateway) compile(path string, env policy.Env) (*policy.Scope, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrScopeMissing, path)
		}
		return nil, fmt.Errorf("%w: read %s: %v", policy.ErrInvalidScope, path, err)
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := policy.Compile(doc, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// DenyFor is the decision for a call on a branch whose scope could not be
// loaded.
func DenyFor(tool string, err error) policy.Decision {
	if errors.Is(err, ErrScopeMissing) {
		return policy.Deny(tool, policy.Violation{Reason: policy.ReasonScopeMissing, Rule: "scope.yml",
			Message: "this session has no scope.yml, so every call is denied: " + err.Error()})
	}
	return policy.DenyInvalidScope(tool, err)
}

type nopObserver struct{}

func (nopObserver) ObserveDecision(string, bool, string, string) {}
func (nopObserver) ObserveCallDuration(string, float64)          {}
func (nopObserver) ObserveDecisionDuration(float64)              {}
func (nopObserver) ScopeLoadError()                              {}
func (nopObserver) InflightInc()                                 {}
func (nopObserver) InflightDec()                                 {}
func (nopObserver) AuditWriteError()                             {}
func (nopObserver) ObserveApproval(string)                       {}
func (nopObserver) ScopeExpansion(string)                        {}

// protectedNow is the gateway's protected roots as they are now (after
// syncFiles). A sessions root that also holds directories that are not
// sessions (an Emacs activity directory: session/ with worktrees/ beside
// it) is protected child by child instead, so that those directories are
// the scope's to grant: every session, every hidden entry and every file of
// the root stay protected. The root is read again only when it changes.
func (g *Gateway) protectedNow() []string {
	root := g.opts.SessionsDir
	if root == "" {
		return g.protected
	}
	id, err := g.rootStamp(root)
	if err != nil {
		return g.protected
	}
	g.mu.Lock()
	c := g.rootCache
	g.mu.Unlock()
	if c.id == id && c.roots != nil {
		return c.roots
	}
	roots := g.protected
	if ents, err := os.ReadDir(root); err == nil {
		var children []string
		carved := false
		for _, e := range ents {
			child := filepath.Join(root, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !sessions.IsSessionDir(child) {
				carved = true
				continue
			}
			children = append(children, child)
		}
		if carved {
			spellings := protectedRoots(root)
			roots = nil
			for _, p := range g.protected {
				if !slices.Contains(spellings, p) {
					roots = append(roots, p)
				}
			}
			roots = append(roots, protectedRoots(children...)...)
		}
	}
	g.mu.Lock()
	g.rootCache = protectedCache{id: id, roots: roots}
	g.mu.Unlock()
	return roots
}

// rootStamp is the stamp of the sessions root: its watched version, which
// changes with its entries, else its identity, whose mtime does.
func (g *Gateway) rootStamp(root string) (stamp, error) {
	if g.opts.Watcher != nil {
		if v, ok := g.opts.Watcher.Version(root); ok {
			return stamp{watched: true, version: v}, nil
		}
	}
	id, err := statFile(root)
	return stamp{id: id}, err
}

// protectedCache is the protected roots worked out for one state of the
// sessions root.
type protectedCache struct {
	id    stamp
	roots []string
}
