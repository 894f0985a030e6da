package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// Target is where a call is decided: a session branch (audited), or a bare
// scope file (check only, nothing written).
type Target struct {
	BranchDir string
	ScopeFile string
	// Cwd is the working directory used when the call names none (before
	// the session's project root).
	Cwd string
	// Via is the entry point the call came through (the metrics' via
	// label); empty means ViaCLI.
	Via Via
	// AgentTool is the agent's own name of the tool, for calls that came
	// through an agent hook; it is recorded in tools.org.
	AgentTool string
	// Synced says that the caller synced the gateway's Watcher after the
	// call arrived, so that the decision need not do it again.
	Synced bool
	// Ask, when set, is the channel through which a call denied for a
	// scope reason is offered to the user (docs/approvals.md) before Call
	// refuses it. Nil refuses as always.
	Ask Asker
}

// Via names an entry point: the via label of the metrics (docs/reference.md, Metrics).
type Via string

// The entry points.
const (
	ViaCLI  Via = "cli"
	ViaHTTP Via = "http"
	ViaHook Via = "hook"
	ViaMCP  Via = "mcp"
)

func (t Target) via() string {
	if t.Via == "" {
		return string(ViaCLI)
	}
	return string(t.Via)
}

// checkMode is the :MODE: of a decision-only entry made through t.
func (t Target) checkMode() string {
	if t.Via == ViaHook {
		return audit.ModeHook
	}
	return audit.ModeCheck
}

// checkExecution is who runs a call decided without running it: the
// caller, except for a hook's shell command, which the hook rewrites into
// `scopegate exec` of the decided call.
func (t Target) checkExecution(call policy.Call) policy.Execution {
	if t.Via == ViaHook && call.Tool == policy.ToolShell {
		return policy.ExecutionConfined
	}
	return policy.ExecutionExternal
}

// callMode is the :MODE: of a run made through t.
func (t Target) callMode() string {
	if t.Via == ViaMCP {
		return audit.ModeMCP
	}
	return ""
}

// branch is what one call knows of its target, made by open when the call
// starts and handed to every step after: the decision, observe mode, an
// approval's decision, the run. Each file of the branch is read at most
// once for the call (and not at all while the gateway's cache of it is
// fresh): scope.yml when the call starts, metadata.yml and the mode file
// when a step first needs them.
type branch struct {
	// dir is the branch directory; "" for a bare scope file.
	dir string
	// scopePath is the scope file the call is decided by: the target's
	// scope file, else the branch's scope.yml.
	scopePath string
	// cwd is the working directory of a call that names none (Target.Cwd),
	// before the metadata's.
	cwd string
	// protected are the protected roots of the call: the gateway's, the
	// scope file and the branch's own session.
	protected []string
	// scope is the compiled scope within the managed layer, or why there
	// is none.
	scope loadedScope
	// managed is the machine's managed policy, read when the call starts.
	managed managedLayer
	// grant is the one-time grant the call may run under (nil: none):
	// claimed from the branch for a run of a stored call, or given by the
	// user's answer to an offer.
	grant *Grant
	// grantExpired is when the grant claimed for the run expired, if it
	// had: it is not taken.
	grantExpired time.Time

	// g reads the files below when a step first needs them, once.
	g *Gateway
	// opened is the branch as the call's caller opened it, whose metadata
	// the call then need not read (nil: read it).
	opened   *sessions.Branch
	metaOnce sync.Once
	metaOf   branchMeta
	modeOnce sync.Once
	observe  bool
}

// open reads the target of a call: the scope now, the rest when first
// needed. Unless t.Synced, the Watcher is synced first, so that every file
// read for the call is as fresh as the call.
func (g *Gateway) open(t Target) *branch {
	if !t.Synced {
		g.syncFiles()
	}
	b := &branch{dir: t.BranchDir, scopePath: t.ScopeFile, cwd: t.Cwd, g: g}
	if b.scopePath == "" {
		b.scopePath = filepath.Join(t.BranchDir, sessions.ScopeFile)
	}
	protected := g.protectedNow()
	var extra []string
	if t.ScopeFile != "" {
		extra = append(extra, t.ScopeFile)
	}
	if t.BranchDir != "" {
		extra = append(extra, unprotectedSession(protected, t.BranchDir)...)
	}
	b.protected = addProtected(protected, extra...)
	b.managed = g.loadManaged()
	b.scope = g.withinManaged(b.scopePath, g.loadScope(b.scopePath, g.env(b.protected, "")), b.managed)
	return b
}

// meta is what the call uses of the branch's metadata, read when first
// asked for.
func (b *branch) meta() branchMeta {
	b.metaOnce.Do(func() {
		switch {
		case b.dir == "":
		case b.opened != nil:
			b.metaOf = branchMetaOf(b.dir, b.opened.Metadata, b.opened.MetadataErr)
		default:
			b.metaOf = b.g.readMeta(b.dir)
		}
	})
	return b.metaOf
}

// observing reports whether the branch is in observe mode, read when
// first asked for; never where the managed policy refuses observe mode.
func (b *branch) observing() bool {
	b.modeOnce.Do(func() {
		b.observe = b.dir != "" && b.managed.observeAllowed() && b.g.Observing(b.dir)
	})
	return b.observe
}

// defaultCwd is the working directory of call: its own, else the
// target's, else the branch's project root (the metadata is read only
// then: a call's own cwd always wins over it).
func (b *branch) defaultCwd(call policy.Call) string {
	if call.Cwd != "" || b.cwd != "" {
		return b.cwd
	}
	return b.meta().cwd
}

// sessionStart is when the session of the branch began (its metadata's
// created), the zero time when that is not known.
func (b *branch) sessionStart() time.Time {
	return b.meta().created
}

// branchMeta is what a call uses of a branch's metadata.
type branchMeta struct {
	// root is where the session's relative paths are anchored: its
	// project root, else its first worktree (sessions.Metadata.Root).
	root string
	// cwd is the branch's default working directory: its root, else the
	// first worktree an activity session file lists.
	cwd string
	// created is when the session began.
	created time.Time
}

// readMeta returns what calls use of a branch's metadata, read again only
// when metadata.yml changes (after syncFiles). Without a metadata.yml it
// is read every time.
func (g *Gateway) readMeta(branchDir string) branchMeta {
	path := filepath.Join(branchDir, sessions.MetadataFile)
	st, err := g.fileStamp(path)
	cacheable := err == nil
	if cacheable {
		if m, ok := g.metadata.get(branchDir, st); ok {
			return m
		}
		if st.watched {
			// The version says nothing of the file's existence.
			_, err := os.Lstat(path)
			cacheable = err == nil
		}
	}
	md, err := sessions.ReadMetadata(branchDir, nil)
	m := branchMetaOf(branchDir, md, err)
	if cacheable {
		g.metadata.put(branchDir, st, m)
	}
	return m
}

// branchMetaOf is what calls use of md, a branch's metadata as read (err
// when it could not be).
func branchMetaOf(branchDir string, md sessions.Metadata, err error) branchMeta {
	var m branchMeta
	if err == nil {
		m.root, m.created = md.Root(), md.Created
	}
	m.cwd = m.root
	if m.cwd == "" {
		// An Emacs activity session lists its worktrees in its session file.
		if ws, err := sessions.ActivityWorktrees(branchDir); err == nil && len(ws) > 0 {
			m.cwd = ws[0]
		}
	}
	return m
}

// Observing reports whether a branch is in observe mode. A missing mode
// file is enforce; one that cannot be read or holds anything but a mode is
// enforce too (fail closed), with a warning.
func (g *Gateway) Observing(branchDir string) bool {
	path := filepath.Join(branchDir, sessions.ModeFile)
	st, err := g.fileStamp(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			g.opts.Warn(fmt.Sprintf("read mode of %s: %v; the branch is enforced", branchDir, err))
		}
		return false
	}
	if observe, ok := g.modes.get(branchDir, st); ok {
		return observe
	}
	mode, err := sessions.ReadMode(branchDir)
	if err != nil {
		g.opts.Warn(err.Error() + "; the branch is enforced")
	}
	g.modes.put(branchDir, st, mode == sessions.ModeObserve)
	return mode == sessions.ModeObserve
}
