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
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
)

// counter is an Observer that counts decisions.
type counter struct {
	mu              sync.Mutex
	allowed, denied map[string]int
	loadErrors      int
	answers         map[string]int
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
func (c *counter) ObserveApproval(answer string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[string]int{}
	}
	c.answers[answer]++
}
func (c *counter) ScopeExpansion(string) {}

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

// A scope edited on disk is seen by the next decision, however it was
// written: with the Watcher serve uses, and with the stat every decision
// makes without one.
func TestScopeChangesTakeEffectAtOnce(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "stat", true: "watched"}[watched], func(t *testing.T) {
			dir, proj := branch(t)
			scope := filepath.Join(dir, "scope.yml")
			obs := newCounter()
			opts := gateway.Options{Observer: obs}
			if watched {
				opts.Watcher = newWatcher(t)
			}
			g := gateway.New(opts)
			ctx := context.Background()
			ls := call("shell", map[string]any{"command": "ls"}, proj)
			allow := func(cmd string) string {
				return "paths:\n  read: [\"" + proj + "/**\"]\nshell_commands:\n  allow: [" + cmd + "]\n"
			}
			steps := []struct {
				name string
				edit func()
				want policy.Reason
				stat bool // also run without a Watcher
			}{
				{name: "before", edit: func() {}, want: policy.ReasonCommandNotAllowed, stat: true},
				{name: "atomic replace by rename", edit: func() { writeScope(t, dir, allow("ls")) }, want: policy.ReasonAllowed, stat: true},
				{name: "in-place rewrite", edit: func() { writeFile(t, scope, allow("cat"), os.O_TRUNC) }, want: policy.ReasonCommandNotAllowed, stat: true},
				// Same size, same inode, maybe the same mtime tick: only
				// the Watcher is sure to see this one on every kernel.
				{name: "in-place write of the same size", edit: func() { writeFile(t, scope, allow("ls "), 0) }, want: policy.ReasonAllowed},
				{name: "append", edit: func() { writeFile(t, scope, "paths: {}\n", os.O_APPEND) }, want: policy.ReasonScopeInvalid, stat: true},
				{name: "invalid", edit: func() { writeScope(t, dir, "paths: [\n") }, want: policy.ReasonScopeInvalid, stat: true},
				{name: "removed", edit: func() { os.Remove(scope) }, want: policy.ReasonScopeMissing, stat: true},
				{name: "created again in place", edit: func() { writeFile(t, scope, allow("ls"), os.O_CREATE) }, want: policy.ReasonAllowed, stat: true},
			}
			for _, s := range steps {
				if !watched && !s.stat {
					continue
				}
				s.edit()
				res, err := g.Check(ctx, gateway.Target{BranchDir: dir}, ls)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if res.Decision.Reason != s.want {
					t.Fatalf("%s: %s (%s), want %s", s.name, res.Decision.Reason, res.Decision.Message, s.want)
				}
			}
			// A duplicate key after "append", the parse error after
			// "invalid": each counted once.
			if obs.loadErrors != 2 {
				t.Fatalf("scope load errors = %d, want 2", obs.loadErrors)
			}
		})
	}
}

// writeFile writes text to path opened for writing with flag added (at its
// start unless flag has O_APPEND), as an editor saving in place does.
func writeFile(t *testing.T, path, text string, flag int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func newWatcher(t *testing.T) *watch.Watcher {
	t.Helper()
	w, err := watch.New()
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
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

// BenchmarkCall runs an allowed read_file through a gateway that has the
// branch's files cached, as serve does: the whole way of a call (target,
// decision, run, tools.org entry) but the helper.
func BenchmarkCall(b *testing.B) {
	root := b.TempDir()
	dir, proj := filepath.Join(root, "sessions", "s", "branches", "main"), filepath.Join(root, "proj")
	for _, d := range []string{dir, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	scope := "paths:\n  read: [\"" + proj + "/**\"]\n  write: [\"" + proj + "/**\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "scope.yml"), []byte(scope), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	g := gateway.New(gateway.Options{Confine: exec.ConfineAllowUnconfined})
	c := call("read_file", map[string]any{"path": "a.txt"}, proj)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := g.Call(context.Background(), gateway.Target{BranchDir: dir}, c); err != nil || !res.Decision.Allowed {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
