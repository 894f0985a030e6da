package gateway

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec/netproxy"
	"github.com/scopegate/scopegate/policy"
)

// log is the tools.org of a branch.
func (g *Gateway) log(branchDir string) audit.Log {
	return audit.Log{Path: filepath.Join(branchDir, audit.LogFile), MaxOutput: g.opts.AuditMaxOutput, Now: g.opts.Now, Group: &g.group}
}

// Recover turns the in-flight records of dead processes of a branch into
// INTERRUPTED entries; it returns how many.
func (g *Gateway) Recover(ctx context.Context, branchDir string) (int, error) {
	journal := &audit.Journal{Dir: audit.InflightDir(branchDir), Now: g.opts.Now}
	log := g.log(branchDir)
	return journal.Recover(ctx, &log)
}

// record appends e to log, a branch's tools.org, and hands it to the
// event sink whether or not the append worked. A failed append is
// counted; its error is returned as it is.
// e.Managed is the managed policy the entry was made under (managedLayer's
// sum): it stays in the entry (:MANAGED:) only when the branch's tools.org
// last recorded another one.
func (g *Gateway) record(ctx context.Context, log audit.Log, kind string, t Target, e audit.Entry) error {
	sum := e.Managed
	e.Managed = g.marks.mark(log.Path, sum)
	defer func() { g.emit(kind, t, e) }()
	if err := log.Append(ctx, e); err != nil {
		g.opts.Observer.AuditWriteError()
		return err
	}
	if e.Managed != "" {
		if err := g.marks.recorded(log.Path, sum); err != nil {
			g.opts.Warn(err.Error())
		}
	}
	return nil
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

// entry is the audit entry of a decision.
func (g *Gateway) entry(callID string, now time.Time, call policy.Call, dec decision) audit.Entry {
	e := audit.Entry{
		CallID: callID, Time: now, Tool: call.Tool, Reason: string(dec.d.Reason), Rule: dec.d.Rule,
		Resource: dec.d.Resource, Cwd: dec.cwd, Args: call.Args,
	}
	if dec.branch != nil {
		e.Managed = dec.branch.managed.sum()
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

// fill records in e what the run gave.
func (o outcome) fill(e *audit.Entry, elapsed time.Duration) {
	code := o.exitCode
	ms := elapsed.Milliseconds()
	e.ExitCode, e.DurationMS = &code, &ms
	e.Stdout, e.Stderr, e.Confinement, e.Error = o.stdout, o.stderr, o.confinement, o.err
	for _, c := range o.network {
		e.Network = append(e.Network, audit.Conn{Host: c.Host, Port: c.Port, Allowed: c.Allowed, Rule: c.Rule})
	}
}

// recordObserved marks e with the violations observe mode let through at
// run time: an allowed entry becomes observed (with the first one's reason,
// rule and resource), and their widenings join e's.
func recordObserved(e *audit.Entry, vs []policy.Violation) {
	if len(vs) == 0 {
		return
	}
	if e.Decision == audit.DecisionAllowed {
		e.Decision = audit.DecisionObserved
		e.Reason, e.Rule, e.Resource = string(vs[0].Reason), vs[0].Rule, vs[0].Resource
	}
	for _, v := range vs {
		for _, w := range v.Widen {
			if !slices.Contains(e.Widen, w) {
				e.Widen = append(e.Widen, w)
			}
		}
	}
}

// countDecision counts a decision (once per call, whatever was asked on the way).
func (g *Gateway) countDecision(t Target, call policy.Call, dec decision) {
	g.opts.Observer.ObserveDecision(call.Tool, dec.d.Allowed, string(dec.d.Reason), t.via())
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
