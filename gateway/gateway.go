// Package gateway takes one tool call end to end: load the branch's scope,
// decide, run, audit, count. Every entry point (CLI, HTTP, hooks) goes
// through it, so there is exactly one decision path.
//
// A call's way through it is a file a step. call.go holds the entry
// points (Check, Call) and their steps in order: target.go reads what the
// call is decided against, each branch file at most once, into one value
// the later steps share; decide.go decides; approval.go offers a denial
// to the user; grant.go keeps one-time grants and the scope a grant
// widens; run.go runs the call; record.go writes tools.org, hands the
// event on and counts. Beside them: observe.go (observe mode), hook.go
// (agents' hooks), stored.go (the calls a hook leaves to `scopegate
// exec`), expand.go and replay.go; scope.go, protected.go and cache.go are
// what the gateway keeps across calls, each with the rule that says when
// it is stale.
package gateway

import (
	"io"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
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
	// ObserveApproval counts an answer to an offer (docs/approvals.md).
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
	// Dirs, when set, watches the directories the private view's deny walk
	// looks at, so that a walk of an unchanged tree costs no system call
	// per directory (exec.Host.Dirs); a long-running process sets it.
	Dirs *watch.Dirs
	// Managed reads the machine's managed policy for every call
	// (config.NewManagedLoader); nil is none. With a Watcher, the loader
	// is given its Version unless it has one.
	Managed *config.ManagedLoader
	// KeepAuditOpen is how many branches' tools.org files stay open, each
	// with its chain head, between audit appends (audit.Group.KeepOpen); a
	// long-running process (serve) sets it.
	KeepAuditOpen int
}

// Gateway decides and runs tool calls. It is safe for concurrent use.
type Gateway struct {
	opts Options
	// scopes are the compiled scopes of scope files, by path, each with
	// the stamp of the file it was compiled from.
	scopes cache[stamp, loadedScope]
	// observeScopes are observe mode's scopes, by scope file, each with the
	// compiled scope it was derived from.
	observeScopes cache[*policy.Scope, *policy.Scope]
	// metadata is what calls use of each branch's metadata.yml, by branch
	// directory, with the file's stamp.
	metadata cache[stamp, branchMeta]
	// modes say whether each branch is in observe mode, by branch
	// directory, with the mode file's stamp.
	modes cache[stamp, bool]
	// rootChildren are the protected roots worked out for the sessions
	// root (protectedNow), with the root's stamp.
	rootChildren cache[stamp, []string]
	// withins are the scopes within the managed layer, by scope file, each
	// with the scope and layer it was made of.
	withins cache[withinKey, *policy.Scope]
	// marks know what each branch's tools.org last recorded of the managed
	// policy.
	marks managedMarks
	// group commits the concurrent audit appends of this process together.
	group audit.Group
	// stats shares the freshness stat of a file among concurrent
	// decisions.
	stats statGroup
	// protected are the sessions root and config dir, canonical spellings
	// included: never writable by a tool call.
	protected []string
	// host is what the runners of this process learn about the host
	// (namespace probe, deny walk cache), shared across calls.
	host exec.Host
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
	if opts.Managed != nil && opts.Watcher != nil && opts.Managed.Version == nil {
		opts.Managed.Version = opts.Watcher.Version
	}
	// The protected roots are resolved once: they are the gateway's own.
	g := &Gateway{opts: opts, protected: protectedRoots(opts.SessionsDir, opts.ConfigDir)}
	g.host.ProbeCache = opts.ProbeCache
	g.host.Dirs = opts.Dirs
	g.group.KeepOpen = opts.KeepAuditOpen
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

// Env returns the policy environment of a decision with default cwd; extra
// protected roots (a scope file given with --scope) are added.
func (g *Gateway) Env(cwd string, extraProtected ...string) policy.Env {
	g.syncFiles()
	return g.env(g.protectedNow(), cwd, extraProtected...)
}

// env is Env with the protected roots of the moment given.
func (g *Gateway) env(protected []string, cwd string, extraProtected ...string) policy.Env {
	return policy.Env{
		Home:      g.opts.Home,
		HomeOf:    g.opts.LookupHome,
		Protected: addProtected(protected, extraProtected...),
		RoamDir:   g.opts.RoamDir,
		Cwd:       cwd,
		Path:      g.opts.Path,
	}
}

// Watcher is Options.Watcher: nil when the gateway stats the files it
// caches. The server shares it for what it caches of the sessions.
func (g *Gateway) Watcher() *watch.Watcher { return g.opts.Watcher }

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
