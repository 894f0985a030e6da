package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/exec/netproxy"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/roam"
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
	// scope reason is offered to the user (CONTRACT §9) before Call
	// refuses it. Nil refuses as always.
	Ask Asker
}

// Via names an entry point: the via label of the metrics (CONTRACT §6).
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

// ErrNoBranch is returned for a call (not a check) without a session branch.
var ErrNoBranch = errors.New("a call needs a session branch")

// CallResult is what Check and Call return (CONTRACT.md §3): the decision,
// and for an allowed call the result of running it.
type CallResult struct {
	CallID   string          `json:"call_id"`
	Decision policy.Decision `json:"decision"`
	Result   any             `json:"result,omitempty"`
}

// decision is one decision and what it was made with.
type decision struct {
	d     policy.Decision
	scope *policy.Scope
	env   policy.Env
	cwd   string
	// observe says the call runs in observe mode (scope is then observe
	// mode's); widen, for an observed decision, what lifts its would-be
	// denial.
	observe bool
	widen   []policy.Widening
	// branchDir is the branch the call belongs to ("" for none).
	branchDir string
}

func (g *Gateway) scopePath(t Target) string {
	if t.ScopeFile != "" {
		return t.ScopeFile
	}
	return filepath.Join(t.BranchDir, sessions.ScopeFile)
}

// countDecision counts a decision (once per call, whatever was asked on the way).
func (g *Gateway) countDecision(t Target, call policy.Call, dec decision) {
	g.opts.Observer.ObserveDecision(call.Tool, dec.d.Allowed, string(dec.d.Reason), t.via())
}

// decideWith is the one decision path of every entry point; ex says who
// will run the call. It decides without counting: each entry point counts
// the decision it acts on once (countDecision). With grant, the call is
// decided against the branch's scope widened by grant (a one-time grant),
// never written to scope.yml. fn makes the scope's decision (nil: the
// scope decides the call).
func (g *Gateway) decideWith(t Target, call policy.Call, ex policy.Execution, grant []policy.Widening, fn func(*policy.Scope, policy.Env) policy.Decision) decision {
	start := time.Now()
	// Once per call: every file read below is then as fresh as the call.
	if !t.Synced {
		g.syncFiles()
	}
	protected := g.protectedNow()
	defaultCwd := t.Cwd
	// The branch's default is read only when the call names no directory:
	// a call's own cwd always wins over it.
	if call.Cwd == "" && defaultCwd == "" && t.BranchDir != "" {
		defaultCwd = g.branchCwd(t.BranchDir)
	}
	var extra []string
	if t.ScopeFile != "" {
		extra = append(extra, t.ScopeFile)
	}
	if t.BranchDir != "" {
		extra = append(extra, unprotectedSession(protected, t.BranchDir)...)
	}
	env := g.env(protected, defaultCwd, extra...)
	env.Execution = ex
	out := decision{env: env, branchDir: t.BranchDir}
	sc, err := g.loadScope(g.scopePath(t), env)
	if err == nil && grant != nil {
		sc, err = g.widened(g.scopePath(t), env, grant)
	}
	if err == nil && ex == policy.ExecutionConfined {
		env.ReadOnlyRepo = g.expectReadOnlyRepo(sc, env, t.BranchDir)
	}
	if err != nil {
		out.d = DenyFor(call.Tool, err)
	} else {
		out.scope = sc
		if fn == nil {
			out.d = sc.Decide(call, env)
		} else {
			out.d = fn(sc, env)
		}
	}
	out.cwd = call.Cwd
	if out.cwd == "" {
		out.cwd = defaultCwd
	}
	if !policy.KnownTool(out.d.Tool) {
		out.d.Tool = call.Tool
	}
	out.d.Execution = ex
	if !out.d.Allowed && t.BranchDir != "" {
		g.selectHints(&out.d, t.BranchDir)
		// The mode is read only for what observe mode would let through.
		if out.d.Widenable() && g.Observing(t.BranchDir) {
			g.observe(t, call, &out)
		}
	}
	g.opts.Observer.ObserveDecisionDuration(time.Since(start).Seconds())
	return out
}

// widened compiles the scope file widened by a grant's widenings.
func (g *Gateway) widened(path string, env policy.Env, ws []policy.Widening) (*policy.Scope, error) {
	x, err := expansionOf(ws)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", policy.ErrInvalidScope, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", policy.ErrInvalidScope, path, err)
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := policy.Compile(widenDocument(doc, x), env)
	if err != nil {
		return nil, fmt.Errorf("%s widened by a grant: %w", path, err)
	}
	return sc, nil
}

// Check decides a call without running it. On a branch the decision is
// audited in tools.org (:MODE: check); with a bare scope file nothing is
// written.
func (g *Gateway) Check(ctx context.Context, t Target, call policy.Call) (CallResult, error) {
	res, _, err := g.check(ctx, t, call, "", "", nil)
	return res, err
}

// ToolWebFetch is the tool of the entries of an agent's web fetch (Claude
// Code's WebFetch): a network decision on the URL's host, not a tool of
// CONTRACT §3 (counted as tool "unknown").
const ToolWebFetch = "web_fetch"

// CheckHost decides, audits and counts a connection an agent's own tool
// makes (Claude Code's WebFetch) to host:port of url, against the network
// section of the branch's scope.
func (g *Gateway) CheckHost(ctx context.Context, t Target, url, host string, port int) (CallResult, error) {
	args, err := json.Marshal(map[string]any{"url": url, "host": host, "port": port})
	if err != nil {
		return CallResult{}, fmt.Errorf("check host: %w", err)
	}
	call := policy.Call{Tool: ToolWebFetch, Args: args}
	what := t.AgentTool + " fetches"
	res, _, err := g.check(ctx, t, call, "", url, func(sc *policy.Scope, env policy.Env) policy.Decision {
		return sc.DecideHost(ToolWebFetch, host, port, what)
	})
	return res, err
}

// check is Check; with a channel, a denial that may be offered is recorded
// as left to the user through that channel (:DECISION: asked) and its
// widenings returned. fn makes the scope's decision (nil: the scope decides
// the call), summary is the entry's headline summary (empty: derived from
// the arguments).
func (g *Gateway) check(ctx context.Context, t Target, call policy.Call, channel, summary string, fn func(*policy.Scope, policy.Env) policy.Decision) (CallResult, []policy.Widening, error) {
	now := g.opts.Now()
	res := CallResult{CallID: audit.NewCallID(now)}
	dec := g.decideWith(t, call, t.checkExecution(call), nil, fn)
	g.countDecision(t, call, dec)
	res.Decision = dec.d
	if t.BranchDir == "" {
		return res, nil, nil
	}
	e := g.entry(res.CallID, now, call, dec)
	e.Summary = summary
	e.Mode, e.AgentTool = t.checkMode(), t.AgentTool
	var ws []policy.Widening
	if channel != "" && !dec.d.Allowed {
		if ws = offerable(dec.d); ws != nil {
			o := Offer{Call: call, Decision: dec.d, Widenings: ws}
			e.Decision, e.Offered, e.Channel, e.Answer = audit.DecisionAsked, o.Widening(), channel, AnswerAsk
			g.opts.Observer.ObserveApproval(AnswerAsk)
		}
	}
	log := g.log(t.BranchDir)
	// A check changes nothing: its entry is written (and survives the
	// process) before the answer, but not forced to the disk; call entries,
	// which record effects, are.
	log.NoSync = true
	defer g.emit(audit.EventDecision, t, e)
	if err := log.Append(ctx, e); err != nil {
		g.opts.Observer.AuditWriteError()
		return res, nil, fmt.Errorf("audit: %w", err)
	}
	return res, ws, nil
}

// Call decides a call on a session branch and, when allowed, runs it
// confined. Every call that starts ends in tools.org: an in-flight record is
// written before it runs and removed after its entry is written, and the
// records of processes that died become INTERRUPTED entries when a later
// call starts.
func (g *Gateway) Call(ctx context.Context, t Target, call policy.Call) (CallResult, error) {
	return g.call(ctx, t, call, runOptions{})
}

// runOptions vary how call runs and records a call.
type runOptions struct {
	// callID is the id to record the call under (default: a new one).
	callID string
	// mode overrides the :MODE: of the entry.
	mode string
	// stdout and stderr receive a shell call's output as it comes.
	stdout, stderr io.Writer
	// grant says that the call may run under the one-time grant stored
	// under its call id (claimed, and so spent, whatever the decision).
	grant bool
}

func (g *Gateway) call(ctx context.Context, t Target, call policy.Call, ro runOptions) (CallResult, error) {
	if t.BranchDir == "" {
		return CallResult{}, ErrNoBranch
	}
	log := g.log(t.BranchDir)
	journal := &audit.Journal{Dir: audit.InflightDir(t.BranchDir), Now: g.opts.Now}
	if n, err := journal.Recover(ctx, &log); err != nil {
		g.opts.Warn(fmt.Sprintf("recover interrupted calls of %s: %v", t.BranchDir, err))
	} else if n > 0 {
		g.opts.Warn(fmt.Sprintf("recorded %d interrupted call(s) in %s", n, filepath.Join(t.BranchDir, audit.LogFile)))
	}
	now := g.opts.Now()
	res := CallResult{CallID: ro.callID}
	if res.CallID == "" {
		res.CallID = audit.NewCallID(now)
	}
	dec := g.decideWith(t, call, policy.ExecutionConfined, nil, nil)
	var ap approval
	if ro.grant {
		// The grant is spent by this run whether it is needed or not.
		if granted, grant, ok := g.granted(t, call, dec, res.CallID); ok && !dec.d.Allowed {
			dec, ap = granted, approval{approved: AnswerOnce, answer: AnswerOnce, channel: grant.Channel}
		}
	} else if !dec.d.Allowed {
		dec, ap = g.offer(ctx, t, call, dec, res.CallID)
	}
	g.countDecision(t, call, dec)
	res.Decision = dec.d
	e := g.entry(res.CallID, now, call, dec)
	e.Mode, e.AgentTool = t.callMode(), t.AgentTool
	e.Offered, e.Channel, e.Answer, e.Approved = ap.offered, ap.channel, ap.answer, ap.approved
	if ro.mode != "" {
		e.Mode = ro.mode
	}
	if !dec.d.Allowed {
		defer g.emit(audit.EventDecision, t, e)
		if err := log.Append(ctx, e); err != nil {
			g.opts.Observer.AuditWriteError()
			return res, fmt.Errorf("audit: %w", err)
		}
		return res, nil
	}
	// A read-only tool changes nothing: if the process dies while it runs,
	// nobody got its answer (which comes after its entry), so it needs no
	// in-flight record, and its entry, like a check's, is written but not
	// forced to the disk. Calls with effects get both.
	if err := log.Writable(); err != nil {
		g.opts.Observer.AuditWriteError()
		return res, fmt.Errorf("audit: the call was not run, its tools.org entry could not be written: %w", err)
	}
	if !dec.observe && g.Observing(t.BranchDir) {
		// An allowed call on an observing branch runs as observe mode runs
		// calls: what its run-time checks would refuse is observed.
		if osc, err := g.observedScope(g.scopePath(t), dec.scope, dec.env); err == nil {
			dec.scope, dec.observe = osc, true
		} else {
			g.opts.Warn(err.Error())
		}
	}
	readOnly := readOnlyTool(call.Tool)
	if readOnly {
		log.NoSync = true
	} else {
		rec := audit.Record{CallID: res.CallID, Started: now, Tool: call.Tool, Args: call.Args, Cwd: dec.cwd,
			Reason: string(dec.d.Reason), Rule: dec.d.Rule}
		if err := journal.Begin(ctx, rec); err != nil {
			return res, fmt.Errorf("in-flight record: %w", err)
		}
	}
	g.opts.Observer.InflightInc()
	start := time.Now()
	out := g.run(ctx, dec, call, ro, func(pid int) {
		if err := journal.SetChild(res.CallID, pid); err != nil {
			g.opts.Warn(fmt.Sprintf("in-flight record of %s: %v", res.CallID, err))
		}
	})
	elapsed := time.Since(start)
	g.opts.Observer.InflightDec()
	g.opts.Observer.ObserveCallDuration(call.Tool, elapsed.Seconds())
	res.Result = out.result
	out.fill(&e, elapsed)
	recordObserved(&e, out.observed)
	g.observeConnections(out.network)
	if ctx.Err() != nil {
		e.Decision = audit.DecisionInterrupted
	}
	defer g.emit(audit.EventDecision, t, e)
	if err := log.Append(context.WithoutCancel(ctx), e); err != nil {
		g.opts.Observer.AuditWriteError()
		// The in-flight record stays: the next start records the call.
		return res, fmt.Errorf("audit: %w", err)
	}
	if readOnly {
		return res, nil
	}
	if err := journal.End(res.CallID); err != nil {
		g.opts.Warn(fmt.Sprintf("remove in-flight record %s: %v", res.CallID, err))
	}
	return res, nil
}

// readOnlyTool reports whether a tool only reads (policy.ToolSpecs' hint).
func readOnlyTool(tool string) bool {
	spec, ok := policy.LookupTool(tool)
	return ok && spec.Hints.ReadOnly
}

// Recover turns the in-flight records of dead processes of a branch into
// INTERRUPTED entries; it returns how many.
func (g *Gateway) Recover(ctx context.Context, branchDir string) (int, error) {
	journal := &audit.Journal{Dir: audit.InflightDir(branchDir), Now: g.opts.Now}
	log := g.log(branchDir)
	return journal.Recover(ctx, &log)
}

// emit hands an audited entry of a branch to the event sink, if any.
func (g *Gateway) emit(kind string, t Target, e audit.Entry) {
	if g.opts.Events == nil {
		return
	}
	ev := audit.Event{Kind: kind, Via: t.via(), Entry: e}
	if t.BranchDir != "" {
		ev.Branch = filepath.Base(t.BranchDir)
		ev.Session = filepath.Base(filepath.Dir(filepath.Dir(t.BranchDir)))
	}
	g.opts.Events.Emit(ev)
}

func (g *Gateway) log(branchDir string) audit.Log {
	return audit.Log{Path: filepath.Join(branchDir, audit.LogFile), MaxOutput: g.opts.AuditMaxOutput, Now: g.opts.Now, Group: &g.group}
}

// branchCwd is a branch's default working directory: its project root, else
// its first worktree (metadata's, else an activity session file's); read
// again only when metadata.yml changes (after syncFiles). Without a
// metadata.yml it is read every time.
func (g *Gateway) branchCwd(branchDir string) string {
	meta := filepath.Join(branchDir, sessions.MetadataFile)
	st, err := g.fileStamp(meta)
	ok := err == nil
	if ok {
		g.mu.Lock()
		c, hit := g.meta[branchDir]
		g.mu.Unlock()
		if hit && c.stamp == st {
			return c.cwd
		}
		if st.watched {
			// The version says nothing of the file's existence.
			_, err := os.Lstat(meta)
			ok = err == nil
		}
	}
	cwd := ""
	if md, err := sessions.ReadMetadata(branchDir, nil); err == nil {
		if md.ProjectRoot != "" {
			cwd = md.ProjectRoot
		} else if len(md.Worktrees) > 0 {
			cwd = md.Worktrees[0]
		}
	}
	if cwd == "" {
		// An Emacs activity session lists its worktrees in its session file.
		if ws, err := sessions.ActivityWorktrees(branchDir); err == nil && len(ws) > 0 {
			cwd = ws[0]
		}
	}
	if ok {
		g.mu.Lock()
		g.meta[branchDir] = cachedCwd{stamp: st, cwd: cwd}
		g.mu.Unlock()
	}
	return cwd
}

// entry is the audit entry of a decision.
func (g *Gateway) entry(callID string, now time.Time, call policy.Call, dec decision) audit.Entry {
	e := audit.Entry{
		CallID: callID, Time: now, Tool: call.Tool, Reason: string(dec.d.Reason), Rule: dec.d.Rule,
		Resource: dec.d.Resource, Cwd: dec.cwd, Args: call.Args,
	}
	switch {
	case dec.d.Observed != nil:
		o := dec.d.Observed
		e.Decision, e.Reason, e.Rule, e.Resource = audit.DecisionObserved, string(o.Reason), o.Rule, o.Resource
		e.Message, e.Widen = dec.d.Message, dec.widen
	case dec.d.Allowed:
		e.Decision = audit.DecisionAllowed
	default:
		e.Decision = audit.DecisionDenied
		e.Message = dec.d.Message
		e.Widen = dec.d.Widenings()
	}
	if len(e.Args) == 0 || !json.Valid(e.Args) {
		e.Args = json.RawMessage("{}")
	}
	return e
}

// outcome is what running an allowed call gave.
type outcome struct {
	result      any
	exitCode    int
	stdout      string
	stderr      string
	confinement string
	err         string
	// observed are the run-time violations observe mode let through.
	observed []policy.Violation
	network  []netproxy.Conn
}

func (o outcome) fill(e *audit.Entry, elapsed time.Duration) {
	code := o.exitCode
	ms := elapsed.Milliseconds()
	e.ExitCode, e.DurationMS = &code, &ms
	e.Stdout, e.Stderr, e.Confinement, e.Error = o.stdout, o.stderr, o.confinement, o.err
	for _, c := range o.network {
		e.Network = append(e.Network, audit.Conn{Host: c.Host, Port: c.Port, Allowed: c.Allowed, Rule: c.Rule})
	}
}

// connObserver is an Observer that also counts a call's connections
// (metrics does; observers that do not are left alone).
type connObserver interface {
	ObserveConnections(allowed, denied int)
}

// observeConnections counts the connections of a call's result.
func (g *Gateway) observeConnections(conns []netproxy.Conn) {
	o, ok := g.opts.Observer.(connObserver)
	if !ok || len(conns) == 0 {
		return
	}
	allowed := 0
	for _, c := range conns {
		if c.Allowed {
			allowed++
		}
	}
	o.ObserveConnections(allowed, len(conns)-allowed)
}

// checker adapts a compiled scope to exec's run-time checks; in observe
// mode (observe set) what observe mode lets through is recorded there
// instead of refused.
type checker struct {
	scope   *policy.Scope
	env     policy.Env
	observe *observed
}

func (c checker) CheckExec(argv []string, cwd string, view exec.View) []policy.Violation {
	env := c.env
	env.Execution = policy.ExecutionConfined
	env.Masked = func(string, bool) bool { return false }
	env.ReadOnlyRepo = nil
	if view != nil {
		env.Masked, env.ReadOnlyRepo = view.Masked, view.ReadOnlyRepo
	}
	return c.observe.filter(c.scope.CheckExec(argv, cwd, env))
}

func (c checker) CheckPath(path string, access policy.Access, cwd string) []policy.Violation {
	return c.observe.filter(c.scope.CheckPath(path, access, cwd, c.env))
}

func (c checker) LookPath(word, cwd string) (string, error) {
	return c.scope.LookPath(word, cwd, c.env)
}

func (c checker) TrustedPath() []string { return c.scope.TrustedPath(c.env) }

// roamResult is the result of a roam_* tool.
type roamResult struct {
	ExitCode   int        `json:"exit_code"`
	Node       *roam.Node `json:"node,omitempty"`
	Stderr     string     `json:"stderr,omitempty"`
	DurationMS int64      `json:"duration_ms"`
}

func (g *Gateway) run(ctx context.Context, dec decision, call policy.Call, ro runOptions, onStart func(int)) outcome {
	switch call.Tool {
	case policy.ToolRoamCreateNode, policy.ToolRoamReadNode, policy.ToolRoamAddTags, policy.ToolRoamLinkNodes:
		return g.runRoam(ctx, call)
	}
	read, write := dec.scope.Roots()
	helper := g.opts.HelperPath
	if helper == "" {
		helper, _ = os.Executable()
	}
	var seen *observed
	network := dec.scope.Network()
	if dec.observe {
		seen = new(observed)
		read, write = observedRoots(read, write, dec.widen)
		// Observe mode runs with the bounds of the user's own account: the
		// host's network (its connections are not recorded), and the unix
		// sockets the scope names.
		network = network.WithAnyHost()
	}
	runner, err := exec.New(exec.Options{
		Checker: checker{scope: dec.scope, env: dec.env, observe: seen}, ReadRoots: read, WriteRoots: write, Broad: dec.observe,
		Protected: dec.env.Protected, Deny: dec.scope.DenyPatterns(), Network: network, Host: &g.host, Home: g.opts.Home,
		Confine: g.opts.Confine, MaxOutput: g.opts.MaxOutput, SessionStart: sessionStart(dec.branchDir),
		HelperPath: helper, OnStart: onStart, Now: g.opts.Now, Stdout: ro.stdout, Stderr: ro.stderr, Progress: g.opts.Progress,
	})
	if err != nil {
		return failed(err)
	}
	res, err := runner.Run(ctx, call, dec.cwd)
	res.Observed = seen.list()
	if err != nil {
		var denied *exec.DeniedError
		if errors.As(err, &denied) {
			out := failed(err)
			out.exitCode = exec.ExitRefused
			out.result = exec.Result{ExitCode: exec.ExitRefused, Stderr: "scopegate: " + err.Error(), Refused: denied.Violations, Observed: res.Observed}
			out.observed = res.Observed
			return out
		}
		return failed(err)
	}
	out := outcome{result: res, exitCode: res.ExitCode, stdout: res.Stdout, stderr: res.Stderr,
		confinement: res.Confinement, observed: res.Observed, network: res.Network}
	if call.Tool != policy.ToolShell {
		// File tools: their payload is the result.
		payload, _ := json.Marshal(res)
		out.stdout = string(payload)
	}
	return out
}

// expectReadOnlyRepo is policy.Env.ReadOnlyRepo before a confined call
// runs: whether its programs' views will keep a repository directory
// read-only and unchanged since the session began (exec.Runner.ExpectReadOnlyRepo).
func (g *Gateway) expectReadOnlyRepo(sc *policy.Scope, env policy.Env, branchDir string) func(string) error {
	return func(gitDir string) error {
		read, write := sc.Roots()
		runner, err := exec.New(exec.Options{
			Checker: checker{scope: sc, env: env}, ReadRoots: read, WriteRoots: write, Host: &g.host,
			Confine: g.opts.Confine, HelperPath: g.opts.HelperPath, SessionStart: sessionStart(branchDir),
		})
		if err != nil {
			return err
		}
		return runner.ExpectReadOnlyRepo(gitDir)
	}
}

// sessionStart returns when the session of a branch began (its
// metadata's created), the zero time when that is not known.
func sessionStart(branchDir string) func() time.Time {
	return func() time.Time {
		if branchDir == "" {
			return time.Time{}
		}
		md, err := sessions.ReadMetadata(branchDir, nil)
		if err != nil {
			return time.Time{}
		}
		return md.Created
	}
}

func failed(err error) outcome {
	return outcome{exitCode: 1, stderr: err.Error(), err: err.Error(), result: exec.Result{ExitCode: 1, Stderr: err.Error()}}
}

func (g *Gateway) runRoam(ctx context.Context, call policy.Call) outcome {
	start := time.Now()
	store := &roam.Store{Dir: g.opts.RoamDir, Now: g.opts.Now}
	var node roam.Node
	var err error
	switch call.Tool {
	case policy.ToolRoamCreateNode:
		var a policy.RoamCreateNodeArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			node, err = store.Create(ctx, a.Title, a.Subdirectory, a.Tags)
		}
	case policy.ToolRoamReadNode:
		var a policy.RoamReadNodeArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			node, err = store.Read(ctx, a.NodeID)
		}
	case policy.ToolRoamAddTags:
		var a policy.RoamAddTagsArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			node, err = store.AddTags(ctx, a.NodeID, a.Tags)
		}
	case policy.ToolRoamLinkNodes:
		var a policy.RoamLinkNodesArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			node, err = store.Link(ctx, a.SourceID, a.TargetID)
		}
	}
	r := roamResult{DurationMS: time.Since(start).Milliseconds()}
	if err != nil {
		r.ExitCode, r.Stderr = 1, err.Error()
		return outcome{result: r, exitCode: 1, stderr: err.Error(), err: err.Error()}
	}
	r.Node = &node
	payload, _ := json.Marshal(node)
	return outcome{result: r, stdout: string(payload)}
}

// unprotectedSession returns the session directory around a branch (or the
// branch directory itself, outside the session layout) when it lies outside
// the protected roots — a branch selected with --branch-dir elsewhere, an
// Emacs activity session: no tool call may write the scope it is decided
// by, its audit or its metadata, wherever they are. protected are the
// protected roots of the moment.
func unprotectedSession(protected []string, branchDir string) []string {
	dir := filepath.Clean(branchDir)
	if parent := filepath.Dir(dir); filepath.Base(parent) == "branches" {
		dir = filepath.Dir(parent)
	}
	for _, p := range protected {
		if strings.HasPrefix(dir, p) && (len(dir) == len(p) || dir[len(p)] == filepath.Separator) {
			return nil
		}
	}
	return []string{dir}
}
