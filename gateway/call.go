package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// ErrNoBranch is returned for a call (not a check) without a session branch.
var ErrNoBranch = errors.New("a call needs a session branch")

// CallResult is what Check and Call return (docs/reference.md, The call and the decision): the decision,
// and for an allowed call the result of running it.
type CallResult struct {
	CallID   string          `json:"call_id"`
	Decision policy.Decision `json:"decision"`
	Result   any             `json:"result,omitempty"`
}

// Check decides a call without running it. On a branch the decision is
// audited in tools.org (:MODE: check); with a bare scope file nothing is
// written.
func (g *Gateway) Check(ctx context.Context, t Target, call policy.Call) (CallResult, error) {
	res, _, err := g.check(ctx, t, call, checkOptions{})
	return res, err
}

// ToolWebFetch is the tool of the entries of an agent's web fetch (Claude
// Code's WebFetch): a network decision on the URL's host, not a tool of
// docs/reference.md, The call and the decision (counted as tool "unknown").
const ToolWebFetch = "web_fetch"

// CheckHost decides, audits and counts a connection an agent's own tool
// makes (Claude Code's WebFetch) to host:port of url, against the network
// section of the branch's scope.
func (g *Gateway) CheckHost(ctx context.Context, t Target, url, host string, port int) (CallResult, error) {
	call, o, err := hostCheck(t, url, host, port)
	if err != nil {
		return CallResult{}, err
	}
	res, _, err := g.check(ctx, t, call, o)
	return res, err
}

// hostCheck is the call and the check options of CheckHost.
func hostCheck(t Target, url, host string, port int) (policy.Call, checkOptions, error) {
	args, err := json.Marshal(map[string]any{"url": url, "host": host, "port": port})
	if err != nil {
		return policy.Call{}, checkOptions{}, fmt.Errorf("check host: %w", err)
	}
	what := t.AgentTool + " fetches"
	return policy.Call{Tool: ToolWebFetch, Args: args}, checkOptions{summary: url, decide: func(sc *policy.Scope, env policy.Env) policy.Decision {
		return sc.DecideHost(ToolWebFetch, host, port, what)
	}}, nil
}

// checkOptions vary how check decides and records a call. The zero value
// is Check's.
type checkOptions struct {
	// channel, when set, is the channel through which the caller will
	// leave a denial that may be offered to the user.
	channel string
	// summary is the entry's headline summary (empty: derived from the
	// arguments).
	summary string
	// decide makes the scope's decision; nil decides the call.
	decide func(*policy.Scope, policy.Env) policy.Decision
	// opened, when set, is the branch as the caller has already opened it
	// (a hook, finding its session): the check reads its metadata no more.
	opened *sessions.Branch
	// asked, with a channel, tells after the decision whether an allowed
	// call is left to the user all the same (the agent's own rule asks),
	// and the rule and message its entry records.
	asked func() (rule, message string, ok bool)
	// askNote is added to the message of an asked entry.
	askNote string
}

// check is Check; with a channel, a denial that may be offered is recorded
// as left to the user through that channel (:DECISION: asked) and its
// widenings returned. With t.Ask (and no channel), such a denial is offered
// through it and the answer awaited: the widenings returned are then those
// of a call the user let run once, which its run needs granted.
func (g *Gateway) check(ctx context.Context, t Target, call policy.Call, o checkOptions) (CallResult, []policy.Widening, error) {
	now := g.opts.Now()
	res := CallResult{CallID: audit.NewCallID(now)}
	b := g.open(t)
	b.opened = o.opened
	dec := g.decide(b, call, decideOptions{execution: t.checkExecution(call), decide: o.decide})
	var ap approval
	switch {
	case o.channel != "":
		notOffered(&dec.d, call)
	case !dec.d.Allowed && t.Ask != nil && t.BranchDir != "":
		// The caller holds the call until the user answers through t.Ask
		// (an agent's hook that cannot ask its user itself).
		dec, ap = g.offer(ctx, t, call, dec, res.CallID)
	}
	g.countDecision(t, call, dec)
	res.Decision = dec.d
	if t.BranchDir == "" {
		return res, nil, nil
	}
	e := g.entry(res.CallID, now, call, dec)
	e.Summary = o.summary
	e.Mode, e.AgentTool = t.checkMode(), t.AgentTool
	e.Offered, e.Channel, e.Answer, e.Approved = ap.offered, ap.channel, ap.answer, ap.approved
	var ws []policy.Widening
	if ap.approved == AnswerOnce {
		// What the run of the call needs granted once.
		ws = dec.branch.grant.Widenings
	}
	if o.channel != "" && !dec.d.Allowed {
		if ws = b.offerable(dec.d, call); ws != nil {
			offer := Offer{Call: call, Decision: dec.d, Widenings: ws}
			e.Decision, e.Offered, e.Channel, e.Answer = audit.DecisionAsked, offer.Widening(), o.channel, AnswerAsk
			g.opts.Observer.ObserveApproval(AnswerAsk)
		}
	}
	if o.channel != "" && dec.d.Allowed && o.asked != nil {
		if rule, message, ok := o.asked(); ok {
			e.Decision, e.Rule, e.Message, e.Channel, e.Answer = audit.DecisionAsked, rule, message, o.channel, AnswerAsk
			g.opts.Observer.ObserveApproval(AnswerAsk)
		}
	}
	if e.Decision == audit.DecisionAsked && o.askNote != "" {
		e.Message = strings.TrimSuffix(e.Message, ".") + "; " + o.askNote
	}
	log := g.log(t.BranchDir)
	// A check changes nothing: its entry is written (and survives the
	// process) before the answer, but not forced to the disk; call entries,
	// which record effects, are.
	log.NoSync = true
	if err := g.record(ctx, log, audit.EventDecision, t, e); err != nil {
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
	b := g.open(t)
	if ro.grant {
		// The grant is spent by this run whether it is needed or not.
		g.takeGrant(b, call, res.CallID)
	}
	dec := g.decide(b, call, decideOptions{execution: policy.ExecutionConfined})
	var ap approval
	if ro.grant {
		if granted, ok := g.granted(call, dec); ok {
			dec, ap = granted, approval{approved: AnswerOnce, answer: AnswerOnce, channel: b.grant.Channel, widenings: b.grant.Widenings}
		} else if !dec.d.Allowed && !b.grantExpired.IsZero() {
			dec.d.Message = strings.TrimSuffix(dec.d.Message, ".") + fmt.Sprintf("; the one-time grant the user gave it expired at %s (approval_timeout_seconds after it was asked): ask again",
				b.grantExpired.UTC().Format(time.RFC3339))
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
		if err := g.record(ctx, log, audit.EventDecision, t, e); err != nil {
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
	if !dec.observe && dec.branch.observing() {
		// An allowed call on an observing branch runs as observe mode runs
		// calls: what its run-time checks would refuse is observed.
		if osc, err := g.observedScope(dec.branch.scopePath, dec.scope, dec.env); err == nil {
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
	if ap.approved != "" {
		// What the user granted to write and does not exist yet is made for
		// the run, which Landlock can then grant.
		made, err := makeGrantedFiles(ap.widenings)
		if err != nil {
			g.opts.Warn(fmt.Sprintf("approval of %s: %v", res.CallID, err))
		}
		defer removeUntouched(made)
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
	if err := g.record(context.WithoutCancel(ctx), log, audit.EventDecision, t, e); err != nil {
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
