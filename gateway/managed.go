package gateway

import (
	"errors"
	"fmt"
	"sync"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// The machine's managed policy (docs/managed.md) as the gateway applies it:
// read once per call into the call's branch value (config caches it while
// the file is unchanged), every scope decided within it (policy), scope
// changes beyond it refused, and tools.org told when it changed.

// ErrManagedRefused marks a scope change the managed policy refuses: an
// expansion beyond its ceiling, observe mode where it forbids it.
var ErrManagedRefused = errors.New("refused by the managed policy")

// managedLayer is the managed policy as one call read it.
type managedLayer struct {
	m   *config.Managed
	err error
}

// loadManaged reads the managed policy (from the loader's cache while it
// is unchanged); no loader is no policy.
func (g *Gateway) loadManaged() managedLayer {
	if g.opts.Managed == nil {
		return managedLayer{}
	}
	m, err := g.opts.Managed.Load()
	return managedLayer{m: m, err: err}
}

// policy is the compiled layer, nil for none.
func (l managedLayer) policy() *policy.Managed {
	if l.m == nil {
		return nil
	}
	return l.m.Policy
}

// observeAllowed reports whether the layer lets a branch be observed.
func (l managedLayer) observeAllowed() bool { return l.err == nil && l.m.ObserveAllowed() }

// approvalsAllowed reports whether the layer lets a denial be offered.
func (l managedLayer) approvalsAllowed() bool { return l.err == nil && l.m.ApprovalsAllowed() }

// sum is what tools.org records of the layer: its SHA-256, "none" when
// there is no policy, "" when it cannot be used (nothing is recorded).
func (l managedLayer) sum() string {
	switch {
	case l.err != nil:
		return ""
	case l.m == nil:
		return managedNone
	}
	return l.m.SHA256
}

// managedNone is :MANAGED: once a branch's policy is gone.
const managedNone = "none"

// withinKey is what a scope within the managed layer is made of.
type withinKey struct {
	own *policy.Scope
	m   *policy.Managed
}

// withinManaged is the loaded scope of path within the layer: the layer's
// error when it cannot be used, the combined scope (made once per scope
// and layer) otherwise.
func (g *Gateway) withinManaged(path string, l loadedScope, m managedLayer) loadedScope {
	switch {
	case m.err != nil:
		return loadedScope{err: m.err}
	case l.err != nil || m.policy() == nil:
		return l
	}
	key := withinKey{own: l.scope, m: m.policy()}
	if sc, ok := g.withins.get(path, key); ok {
		return loadedScope{scope: sc}
	}
	sc := l.scope.Within(key.m)
	g.withins.put(path, key, sc)
	return loadedScope{scope: sc}
}

// refuseExpansion returns why the managed layer refuses to let add into a
// scope (ErrManagedRefused, and sessions.ErrInvalidExpansion: the change is
// not made), nil when it lets it.
func (g *Gateway) refuseExpansion(add sessions.Expansion) error {
	l := g.loadManaged()
	if l.err != nil {
		return fmt.Errorf("%w: %w: the managed policy cannot be used: %v", ErrManagedRefused, sessions.ErrInvalidExpansion, l.err)
	}
	m := l.policy()
	if m == nil {
		return nil
	}
	env := g.env(nil, "")
	for _, w := range add.Widenings() {
		if rule := m.Refuses(w, env); rule != "" {
			return fmt.Errorf("%w: %w: %s %s reaches beyond %s of the managed policy %s; its extra entries would have no effect",
				ErrManagedRefused, sessions.ErrInvalidExpansion, w.Flag, policy.ShellQuote(w.Value), rule, l.m.Path)
		}
	}
	return nil
}

// RefuseMode returns why the machine's managed policy refuses a branch
// mode (ErrManagedRefused), nil when it lets it: observe mode where
// modes.observe is false, or the policy cannot be used.
func (g *Gateway) RefuseMode(mode string) error {
	if mode != sessions.ModeObserve {
		return nil
	}
	g.syncFiles()
	l := g.loadManaged()
	if l.err != nil {
		return fmt.Errorf("%w: observe mode: the managed policy cannot be used: %v", ErrManagedRefused, l.err)
	}
	if !l.m.ObserveAllowed() {
		return fmt.Errorf("%w: observe mode is refused by %s: false of the managed policy %s", ErrManagedRefused, policy.RuleManagedObserve, l.m.Path)
	}
	return nil
}

// managedMarks remember, per branch directory, the managed policy its
// tools.org last recorded (audit.ReadManagedMark), so that an entry reads
// the mark file only until this process knows it.
type managedMarks struct {
	mu    sync.Mutex
	known map[string]string
}

// mark returns the :MANAGED: value of the next entry of the tools.org at
// logPath when the policy is sum: sum when the log last recorded another
// one, "" otherwise (also for a branch that never had a policy).
func (mk *managedMarks) mark(logPath, sum string) string {
	if sum == "" {
		return ""
	}
	mk.mu.Lock()
	known, ok := mk.known[logPath]
	mk.mu.Unlock()
	if !ok {
		var err error
		if known, err = audit.ReadManagedMark(logPath); err != nil {
			known = ""
		}
		mk.remember(logPath, known)
	}
	if known == sum || known == "" && sum == managedNone {
		return ""
	}
	return sum
}

// recorded notes that the tools.org at logPath has recorded sum.
func (mk *managedMarks) recorded(logPath, sum string) error {
	mk.remember(logPath, sum)
	return audit.WriteManagedMark(logPath, sum)
}

func (mk *managedMarks) remember(logPath, sum string) {
	mk.mu.Lock()
	defer mk.mu.Unlock()
	if mk.known == nil {
		mk.known = map[string]string{}
	}
	mk.known[logPath] = sum
}
