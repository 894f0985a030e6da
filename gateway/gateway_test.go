package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// counter is an Observer that counts decisions.
type counter struct {
	mu              sync.Mutex
	allowed, denied map[string]int
	loadErrors      int
}

func newCounter() *counter {
	return &counter{allowed: map[string]int{}, denied: map[string]int{}}
}

func (c *counter) ObserveDecision(tool string, allowed bool, reason, via string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if allowed {
		c.allowed[tool]++
	} else {
		c.denied[reason]++
	}
}
func (c *counter) ObserveCallDuration(string, float64) {}
func (c *counter) ObserveDecisionDuration(float64)     {}
func (c *counter) ScopeLoadError()                     { c.mu.Lock(); c.loadErrors++; c.mu.Unlock() }
func (c *counter) InflightInc()                        {}
func (c *counter) InflightDec()                        {}
func (c *counter) AuditWriteError()                    {}

// branch makes a branch directory with a scope over proj.
func branch(t *testing.T) (dir, proj string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "sessions", "s", "branches", "main")
	proj = filepath.Join(root, "proj")
	for _, d := range []string{dir, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeScope(t, dir, "paths:\n  read: [\""+proj+"/**\"]\n  write: [\""+proj+"/**\"]\nshell_commands:\n  allow: [echo, cat]\n")
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, proj
}

func writeScope(t *testing.T, dir, text string) {
	t.Helper()
	// Rename into place, as scope expansion does, so the cache sees a new inode.
	tmp := filepath.Join(dir, ".scope.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "scope.yml")); err != nil {
		t.Fatal(err)
	}
}

func call(tool string, args map[string]any, cwd string) policy.Call {
	raw, _ := json.Marshal(args)
	return policy.Call{Tool: tool, Args: raw, Cwd: cwd}
}

func TestCheckAuditsOnBranchOnly(t *testing.T) {
	dir, proj := branch(t)
	obs := newCounter()
	g := gateway.New(gateway.Options{Observer: obs})
	ctx := context.Background()
	res, err := g.Check(ctx, gateway.Target{BranchDir: dir}, call("read_file", map[string]any{"path": "a.txt"}, proj))
	if err != nil || !res.Decision.Allowed || res.CallID == "" {
		t.Fatalf("check: %+v %v", res, err)
	}
	res, err = g.Check(ctx, gateway.Target{ScopeFile: filepath.Join(dir, "scope.yml")}, call("shell", map[string]any{"command": "curl x"}, proj))
	if err != nil || res.Decision.Allowed {
		t.Fatalf("check --scope: %+v %v", res, err)
	}
	es, err := audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Mode != audit.ModeCheck || es[0].Decision != audit.DecisionAllowed {
		t.Fatalf("entries: %+v", es)
	}
	if obs.allowed["read_file"] != 1 || obs.denied["command_not_allowed"] != 1 {
		t.Fatalf("observed %+v %+v", obs.allowed, obs.denied)
	}
}

func TestScopeChangesTakeEffectAtOnce(t *testing.T) {
	dir, proj := branch(t)
	obs := newCounter()
	g := gateway.New(gateway.Options{Observer: obs})
	ctx := context.Background()
	c := call("shell", map[string]any{"command": "ls"}, proj)
	if res, _ := g.Check(ctx, gateway.Target{BranchDir: dir}, c); res.Decision.Allowed {
		t.Fatal("ls allowed before the expansion")
	}
	writeScope(t, dir, "paths:\n  read: [\""+proj+"/**\"]\nshell_commands:\n  allow: [ls]\n")
	if res, _ := g.Check(ctx, gateway.Target{BranchDir: dir}, c); !res.Decision.Allowed {
		t.Fatalf("ls denied after the expansion: %s", res.Decision.Message)
	}
	writeScope(t, dir, "paths: [\n")
	res, _ := g.Check(ctx, gateway.Target{BranchDir: dir}, c)
	if res.Decision.Reason != policy.ReasonScopeInvalid {
		t.Fatalf("corrupt scope gave %s", res.Decision.Reason)
	}
	if obs.loadErrors != 1 {
		t.Fatalf("scope load errors = %d, want 1", obs.loadErrors)
	}
	if err := os.Remove(filepath.Join(dir, "scope.yml")); err != nil {
		t.Fatal(err)
	}
	if res, _ := g.Check(ctx, gateway.Target{BranchDir: dir}, c); res.Decision.Reason != policy.ReasonScopeMissing {
		t.Fatalf("missing scope gave %s", res.Decision.Reason)
	}
}

func TestCallRunsAndAudits(t *testing.T) {
	dir, proj := branch(t)
	g := gateway.New(gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
	ctx := context.Background()
	res, err := g.Call(ctx, gateway.Target{BranchDir: dir}, call("write_file", map[string]any{"path": "b.txt", "content": "beta\n"}, proj))
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("write_file: %+v %v", res, err)
	}
	if data, _ := os.ReadFile(filepath.Join(proj, "b.txt")); string(data) != "beta\n" {
		t.Fatalf("b.txt = %q", data)
	}
	res, err = g.Call(ctx, gateway.Target{BranchDir: dir}, call("write_file", map[string]any{"path": "/etc/x", "content": "x"}, proj))
	if err != nil || res.Decision.Allowed || res.Result != nil {
		t.Fatalf("denied write: %+v %v", res, err)
	}
	res, err = g.Call(ctx, gateway.Target{BranchDir: dir}, call("edit_file", map[string]any{"path": "a.txt", "old_string": "zzz", "new_string": "y"}, proj))
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("edit_file: %+v %v", res, err)
	}
	if r, ok := res.Result.(exec.Result); !ok || r.ExitCode == 0 || r.Stderr == "" {
		t.Fatalf("a failed edit must report its error: %#v", res.Result)
	}
	es, err := audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Decision != "allowed" || es[1].Decision != "denied" || es[2].Error == "" {
		t.Fatalf("entries: %+v", es)
	}
	if files, _ := filepath.Glob(filepath.Join(audit.InflightDir(dir), "*")); len(files) != 0 {
		t.Fatalf("in-flight records left: %v", files)
	}
	if _, err := g.Call(ctx, gateway.Target{ScopeFile: filepath.Join(dir, "scope.yml")}, call("read_file", map[string]any{"path": "a.txt"}, proj)); err != gateway.ErrNoBranch {
		t.Fatalf("call without a branch: %v", err)
	}
}

// helperPath is an executable for the gateway to re-run as the Landlock
// helper; these tests run file tools, which need none.
func helperPath(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
