package gateway

import (
	"time"

	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/policy"
)

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
	// branch is what the call knows of its target.
	branch *branch
	// decideWith is the scope's decision function it was made with (nil:
	// the call's), which a decision of the same call made again after an
	// approval uses too.
	decideWith func(*policy.Scope, policy.Env) policy.Decision
}

// decideOptions vary a decision. The zero value decides the call with the
// branch's scope, for a caller that runs it itself.
type decideOptions struct {
	// execution says who will run the call.
	execution policy.Execution
	// grant, when set, widens the branch's scope for this decision only (a
	// one-time grant); scope.yml is never written.
	grant []policy.Widening
	// decide makes the scope's decision; nil decides the call.
	decide func(*policy.Scope, policy.Env) policy.Decision
}

// decide is the one decision path of every entry point. It decides without
// counting: each entry point counts the decision it acts on once
// (countDecision). A widenable denial on a branch in observe mode becomes
// observe mode's decision.
func (g *Gateway) decide(b *branch, call policy.Call, o decideOptions) decision {
	start := time.Now()
	out := g.decideScope(b, call, o)
	if !out.d.Allowed && b.dir != "" {
		g.selectHints(&out.d, b.dir)
		// The mode is read only for what observe mode would let through.
		if out.d.Widenable() && b.observing() {
			g.observe(call, &out)
		}
	}
	g.opts.Observer.ObserveDecisionDuration(time.Since(start).Seconds())
	return out
}

// decideScope is the scope's decision of call, as enforce mode makes it.
func (g *Gateway) decideScope(b *branch, call policy.Call, o decideOptions) decision {
	defaultCwd := b.defaultCwd(call)
	env := g.env(b.protected, defaultCwd)
	env.Execution = o.execution
	out := decision{env: env, branch: b, cwd: call.Cwd, decideWith: o.decide}
	if out.cwd == "" {
		out.cwd = defaultCwd
	}
	sc, err := b.scope.scope, b.scope.err
	if err == nil && o.grant != nil {
		sc, err = grantedScope(b.scopePath, sc, env, o.grant)
	}
	if err == nil && o.execution == policy.ExecutionConfined {
		env.ReadOnlyRepo = g.expectReadOnlyRepo(b, sc, env)
	}
	switch {
	case err != nil:
		out.d = DenyFor(call.Tool, err)
	case o.decide != nil:
		out.scope = sc
		out.d = o.decide(sc, env)
	default:
		out.scope = sc
		out.d = sc.Decide(call, env)
	}
	if !policy.KnownTool(out.d.Tool) {
		out.d.Tool = call.Tool
	}
	out.d.Execution = o.execution
	return out
}

// expectReadOnlyRepo is policy.Env.ReadOnlyRepo before a confined call
// runs: whether its programs' views will keep a repository directory
// read-only and unchanged since the session began
// (exec.Runner.ExpectReadOnlyRepo), asked of a runner built as the call's
// will be.
func (g *Gateway) expectReadOnlyRepo(b *branch, sc *policy.Scope, env policy.Env) func(string) error {
	return func(gitDir string) error {
		opts, _ := g.runnerOptions(decision{scope: sc, env: env, branch: b})
		runner, err := exec.New(opts)
		if err != nil {
			return err
		}
		return runner.ExpectReadOnlyRepo(gitDir)
	}
}
