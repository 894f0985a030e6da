package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/exec/netproxy"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/roam"
)

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

func failed(err error) outcome {
	return outcome{exitCode: 1, stderr: err.Error(), err: err.Error(), result: exec.Result{ExitCode: 1, Stderr: err.Error()}}
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

func (c checker) CheckWalked(path, resolved string, dir bool, links uint64, access policy.Access) []policy.Violation {
	return c.observe.filter(c.scope.CheckWalked(path, resolved, dir, links, access, c.env))
}

func (c checker) LookPath(word, cwd string) (string, error) {
	return c.scope.LookPath(word, cwd, c.env)
}

func (c checker) TrustedPath() []string { return c.scope.TrustedPath(c.env) }

// runnerOptions are the options of the runner of a decided call, the one
// place they are made: for its run, and before it, for the decision's
// question whether git's repository will be read-only (asked of a decision
// to be, never observe mode's). The helper is Options.HelperPath, whose
// default exec applies. In observe mode the runner has the bounds of the
// user's own account, and seen collects what observe mode lets through.
func (g *Gateway) runnerOptions(dec decision) (opts exec.Options, seen *observed) {
	read, write := dec.scope.Roots()
	network := dec.scope.Network()
	broad := dec.observe
	if dec.observe {
		seen = new(observed)
		read, write = observedRoots(read, write, dec.widen)
		// Observe mode runs with the bounds of the user's own account: the
		// host's network (its connections are not recorded), and the unix
		// sockets the scope names; under a managed ceiling, the ceiling's
		// (the network's ceiling stays in it).
		network = network.WithAnyHost()
		if r, w, ok := dec.scope.Managed().CeilingRoots(); ok {
			read, write, broad = r, w, false
		}
	}
	return exec.Options{
		Checker:      checker{scope: dec.scope, env: dec.env, observe: seen},
		ReadRoots:    read,
		WriteRoots:   write,
		Broad:        broad,
		Protected:    dec.env.Protected,
		Deny:         dec.scope.DenyPatterns(),
		Network:      network,
		Host:         &g.host,
		Home:         g.opts.Home,
		ProjectRoot:  dec.branch.meta().cwd,
		IndexDir:     g.indexDir(),
		Confine:      g.opts.Confine,
		MaxOutput:    g.opts.MaxOutput,
		SessionStart: dec.branch.sessionStart,
		HelperPath:   g.opts.HelperPath,
		Now:          g.opts.Now,
		Progress:     g.opts.Progress,
	}, seen
}

// run runs an allowed call: a roam tool against the org-roam directory,
// any other through exec's runner.
func (g *Gateway) run(ctx context.Context, dec decision, call policy.Call, ro runOptions, onStart func(int)) outcome {
	switch call.Tool {
	case policy.ToolRoamCreateNode, policy.ToolRoamReadNode, policy.ToolRoamAddTags, policy.ToolRoamLinkNodes:
		return g.runRoam(ctx, call)
	}
	opts, seen := g.runnerOptions(dec)
	opts.OnStart, opts.Stdout, opts.Stderr = onStart, ro.stdout, ro.stderr
	runner, err := exec.New(opts)
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

// roamResult is the result of a roam_* tool.
type roamResult struct {
	ExitCode   int        `json:"exit_code"`
	Node       *roam.Node `json:"node,omitempty"`
	Stderr     string     `json:"stderr,omitempty"`
	DurationMS int64      `json:"duration_ms"`
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
