package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// observedScope is sc as observe mode decides with it: the credential deny
// list of the built-in profiles added to paths.deny, so that a credential
// store stays a hard denial (path_denied) whatever the scope file says.
// Compiled once per compiled scope of a file.
func (g *Gateway) observedScope(path string, sc *policy.Scope, env policy.Env) (*policy.Scope, error) {
	if derived, ok := g.observeScopes.get(path, sc); ok {
		return derived, nil
	}
	doc := sc.Document()
	deny := slices.Clone(doc.Paths.Deny)
	for _, p := range profiles.CredentialDeny() {
		if !slices.Contains(deny, p) {
			deny = append(deny, p)
		}
	}
	doc.Paths.Deny = deny
	derived, err := policy.Compile(doc, env)
	if err != nil {
		return nil, fmt.Errorf("%s: observe mode: %w", path, err)
	}
	derived = derived.Within(sc.Managed())
	g.observeScopes.put(path, sc, derived)
	return derived, nil
}

// observe turns dec, a decision on a branch in observe mode, into what
// observe mode makes of it: decided again with the observe scope, a
// widenable denial becomes an allowed, observed decision; a hard denial
// stays denied. When the observe scope cannot be made, the decision is
// left as enforce made it.
func (g *Gateway) observe(call policy.Call, dec *decision) {
	osc, err := g.observedScope(dec.branch.scopePath, dec.scope, dec.env)
	if err != nil {
		g.opts.Warn(err.Error())
		return
	}
	d := osc.Decide(call, dec.env)
	if !policy.KnownTool(d.Tool) {
		d.Tool = call.Tool
	}
	d.Execution = dec.d.Execution
	if !d.Allowed {
		g.selectHints(&d, dec.branch.dir)
	}
	dec.scope, dec.observe = osc, true
	dec.widen = d.Widenings()
	dec.d = d.Observe()
}

// observed collects the run-time violations observe mode let through.
type observed struct {
	mu sync.Mutex
	vs []policy.Violation
}

// filter returns nil for violations observe mode lets through (recording
// them), and vs itself otherwise; a nil o observes nothing.
func (o *observed) filter(vs []policy.Violation) []policy.Violation {
	if o == nil || len(vs) == 0 {
		return vs
	}
	if policy.ObservedViolations(vs) == nil {
		return vs
	}
	o.mu.Lock()
	o.vs = append(o.vs, vs...)
	o.mu.Unlock()
	return nil
}

func (o *observed) list() []policy.Violation {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.vs)
}

// SetMode sets a branch's mode (sessions.ModeEnforce or ModeObserve) and
// records the change in its tools.org as a scope change (:MODE: scope),
// naming who made it. Setting the mode a branch already has records
// nothing. Observe mode where the managed policy refuses it is
// ErrManagedRefused, and nothing changes. If the entry cannot be written the mode has already changed:
// the error says so.
func (g *Gateway) SetMode(ctx context.Context, branchDir, mode, who string) (changed bool, err error) {
	if err := g.RefuseMode(mode); err != nil {
		return false, err
	}
	old, err := sessions.WriteMode(branchDir, mode)
	if err != nil {
		return false, err
	}
	if old == mode {
		return false, nil
	}
	raw, _ := json.Marshal(map[string]string{"from": old, "to": mode})
	now := g.opts.Now()
	e := audit.Entry{CallID: audit.NewCallID(now), Time: now, Tool: audit.ToolScopeMode,
		Decision: audit.DecisionExpanded, Mode: audit.ModeScope, Resource: who,
		Message: "mode set to " + mode + " by " + who, Args: raw, Summary: old + " → " + mode, Managed: g.loadManaged().sum()}
	if err := g.record(ctx, g.log(branchDir), audit.EventScopeChange, Target{BranchDir: branchDir, Via: ViaCLI}, e); err != nil {
		return true, fmt.Errorf("the mode was set to %s, but the change could not be recorded in tools.org: %w", mode, err)
	}
	return true, nil
}

// observedRoots adds to the scope's roots the directories of the paths an
// observed call names outside them (its widenings), so that the private
// view carries them in when they lie below /tmp, like the scope's own.
// Observe mode's runner grants the whole filesystem anyway (exec.Options
// Broad); these only shape the view.
func observedRoots(read, write []string, widen []policy.Widening) ([]string, []string) {
	read, write = slices.Clone(read), slices.Clone(write)
	for _, w := range widen {
		var to *[]string
		switch w.Flag {
		case policy.WidenRead:
			to = &read
		case policy.WidenWrite:
			to = &write
		default:
			continue
		}
		p := strings.TrimSuffix(w.Value, "/**")
		if !filepath.IsAbs(p) || strings.ContainsAny(p, "*?[{}\\") {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			p = filepath.Dir(p)
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
		}
		if !slices.Contains(*to, p) {
			*to = append(*to, p)
		}
	}
	return read, write
}
