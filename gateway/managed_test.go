package gateway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// managedFile writes a managed policy as root's (0644 in a directory only
// root writes) and returns its path: the tests run as root, here and in
// CI.
func managedFile(t *testing.T, text string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root: a managed policy is trusted only as root's")
		}
		t.Skip("needs root: a managed policy is trusted only as root's")
	}
	path := filepath.Join(t.TempDir(), "managed.yml")
	rewriteManaged(t, path, text)
	return path
}

// rewriteManaged replaces the managed policy at path (by rename, as an
// administrator's tool does).
func rewriteManaged(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// managedGateway is a gateway under the managed policy at path (installed
// there: no fallback).
func managedGateway(t *testing.T, path string, opts gateway.Options) *gateway.Gateway {
	t.Helper()
	opts.Managed = &config.ManagedLoader{Path: path}
	return gateway.New(opts)
}

// Every decision on a branch is made within the managed policy, and its
// denials are hard; tools.org notes the policy's digest on the first entry
// after it changed, and once it is gone.
func TestManagedDecisionsAndMarks(t *testing.T) {
	dir, proj := branch(t)
	path := managedFile(t, "paths:\n  deny: [\"**/a.txt\"]\n")
	c := newCounter()
	g := managedGateway(t, path, gateway.Options{Observer: c})
	ctx := context.Background()
	check := func(args map[string]any) policy.Decision {
		t.Helper()
		res, err := g.Check(ctx, gateway.Target{BranchDir: dir}, call("read_file", args, proj))
		if err != nil {
			t.Fatal(err)
		}
		return res.Decision
	}
	if d := check(map[string]any{"path": "a.txt"}); d.Allowed || d.Reason != policy.ReasonManaged || d.Rule != "managed.paths.deny[0] **/a.txt" || d.Widenings() != nil {
		t.Fatalf("managed deny: %+v", d)
	}
	if d := check(map[string]any{"path": "b.txt"}); !d.Allowed {
		t.Fatalf("b.txt: %+v", d)
	}
	if c.denied[string(policy.ReasonManaged)] != 1 {
		t.Errorf("counted denials %v, want one managed", c.denied)
	}
	rewriteManaged(t, path, "paths:\n  deny: [\"**/b.txt\"]\n")
	if d := check(map[string]any{"path": "b.txt"}); d.Reason != policy.ReasonManaged {
		t.Fatalf("after the policy changed: %+v", d)
	}
	check(map[string]any{"path": "a.txt"})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if d := check(map[string]any{"path": "b.txt"}); !d.Allowed {
		t.Fatalf("without a policy: %+v", d)
	}
	check(map[string]any{"path": "a.txt"})
	es, err := audit.ReadFile(filepath.Join(dir, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	for _, e := range es {
		marks = append(marks, e.Managed)
	}
	if len(marks) != 6 || len(marks[0]) != 64 || marks[1] != "" || len(marks[2]) != 64 || marks[2] == marks[0] ||
		marks[3] != "" || marks[4] != "none" || marks[5] != "" {
		t.Fatalf(":MANAGED: of the entries = %q, want a digest on the first, a new one after the change, none once gone", marks)
	}
	// Another process (a fresh gateway) knows what the log recorded.
	rewriteManaged(t, path, "paths:\n  deny: [\"**/b.txt\"]\n")
	g = managedGateway(t, path, gateway.Options{})
	check(map[string]any{"path": "a.txt"})
	check(map[string]any{"path": "a.txt"})
	es, _ = audit.ReadFile(filepath.Join(dir, audit.LogFile), audit.Filter{})
	if got := es[len(es)-2].Managed; got != marks[2] || es[len(es)-1].Managed != "" {
		t.Fatalf("a fresh gateway marked %q then %q, want %s then nothing", got, es[len(es)-1].Managed, marks[2])
	}
}

// A policy that cannot be used denies every call, naming the file and the
// fault; it refuses every scope change too.
func TestManagedUnusable(t *testing.T) {
	dir, proj := branch(t)
	path := managedFile(t, "paths:\n  deny: [\"**/.env\"]\n")
	for _, tc := range []struct {
		name    string
		prepare func()
		want    string
	}{
		{"group-writable", func() { os.Chmod(path, 0o664) }, "writable by group"},
		{"invalid YAML", func() { rewriteManaged(t, path, "paths:\n  deny: [\n") }, "line"},
		{"unknown key", func() { rewriteManaged(t, path, "paths:\n  dney: []\n") }, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare()
			g := managedGateway(t, path, gateway.Options{})
			res, err := g.Check(context.Background(), gateway.Target{BranchDir: dir}, call("read_file", map[string]any{"path": "a.txt"}, proj))
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decision
			if d.Allowed || d.Reason != policy.ReasonManaged || !strings.Contains(d.Message, path) || !strings.Contains(d.Message, tc.want) {
				t.Fatalf("decision %+v, want managed naming %s and %q", d, path, tc.want)
			}
			_, err = g.ExpandScope(context.Background(), dir, sessions.Expansion{AllowCommands: []string{"ls"}}, "test")
			if !errors.Is(err, gateway.ErrManagedRefused) {
				t.Fatalf("expand under an unusable policy: %v", err)
			}
		})
	}
}

// Scope changes beyond the policy are refused and leave scope.yml as it
// was; observe mode is refused where the policy says so, and a branch
// already observing is enforced; approvals are never offered where the
// policy refuses them.
func TestManagedScopeChanges(t *testing.T) {
	dir, proj := branch(t)
	root := filepath.Dir(proj)
	path := managedFile(t, "paths:\n  ceiling:\n    read: [\""+root+"/**\"]\n    write: [\""+proj+"/**\"]\n"+
		"shell_commands:\n  deny: [curl]\nnetwork: [\".corp.example.com:443\"]\nmodes: {observe: false}\napprovals: deny\n")
	g := managedGateway(t, path, gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
	ctx := context.Background()
	scope := filepath.Join(dir, sessions.ScopeFile)
	before, _ := os.ReadFile(scope)
	for _, x := range []sessions.Expansion{
		{Read: []string{"/etc/**"}},
		{Write: []string{root + "/other/**"}},
		{AllowCommands: []string{"curl"}},
		{AllowHosts: []string{"github.com"}},
		{Network: policy.NetworkAny},
	} {
		_, err := g.ExpandScope(ctx, dir, x, "test")
		if !errors.Is(err, gateway.ErrManagedRefused) || !errors.Is(err, sessions.ErrInvalidExpansion) || !strings.Contains(err.Error(), "managed.") {
			t.Errorf("expand %+v: %v, want refused naming the managed rule", x, err)
		}
	}
	if after, _ := os.ReadFile(scope); string(after) != string(before) {
		t.Fatalf("a refused expansion changed scope.yml:\n%s", after)
	}
	if _, err := g.ExpandScope(ctx, dir, sessions.Expansion{Read: []string{root + "/docs/**"}, AllowHosts: []string{"git.corp.example.com:443"}}, "test"); err != nil {
		t.Fatalf("an expansion within the policy: %v", err)
	}
	if _, err := g.SetMode(ctx, dir, sessions.ModeObserve, "test"); !errors.Is(err, gateway.ErrManagedRefused) || !strings.Contains(err.Error(), policy.RuleManagedObserve) {
		t.Fatalf("observe mode: %v", err)
	}
	// A branch put in observe mode before the policy is enforced.
	if _, err := sessions.WriteMode(dir, sessions.ModeObserve); err != nil {
		t.Fatal(err)
	}
	outside := call("read_file", map[string]any{"path": filepath.Join(root, "outside.txt")}, proj)
	res, err := g.Check(ctx, gateway.Target{BranchDir: dir}, outside)
	if err != nil || res.Decision.Allowed || res.Decision.Observed != nil {
		t.Fatalf("observing branch under modes.observe false: %+v %v", res.Decision, err)
	}
	ask := &answering{answer: gateway.AnswerOnce}
	res, err = g.Call(ctx, gateway.Target{BranchDir: dir, Ask: ask}, outside)
	if err != nil || res.Decision.Allowed || len(ask.offers) != 0 {
		t.Fatalf("approvals: deny: %+v, offers %d, %v", res.Decision, len(ask.offers), err)
	}
	if _, ok := g.Offerable(gateway.Target{BranchDir: dir}, outside); ok {
		t.Fatal("Offerable under approvals: deny")
	}
}

// Approvals beyond the ceiling are never offered, and a one-time grant
// runs within it.
func TestManagedOffersWithinCeiling(t *testing.T) {
	dir, proj := branch(t)
	root := filepath.Dir(proj)
	path := managedFile(t, "paths:\n  ceiling:\n    read: [\""+proj+"/**\", \""+root+"/in/**\"]\n    write: [\""+proj+"/**\"]\n")
	for _, d := range []string{"in", "out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "f.txt"), []byte(d+"-content\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g := managedGateway(t, path, gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
	ctx := context.Background()
	ask := &answering{answer: gateway.AnswerOnce}
	res, err := g.Call(ctx, gateway.Target{BranchDir: dir, Ask: ask}, call("read_file", map[string]any{"path": filepath.Join(root, "out", "f.txt")}, proj))
	if err != nil || res.Decision.Allowed || res.Decision.Reason != policy.ReasonManaged || len(ask.offers) != 0 {
		t.Fatalf("beyond the ceiling: %+v, offers %d, %v", res.Decision, len(ask.offers), err)
	}
	res, err = g.Call(ctx, gateway.Target{BranchDir: dir, Ask: ask}, call("read_file", map[string]any{"path": filepath.Join(root, "in", "f.txt")}, proj))
	if err != nil || !res.Decision.Allowed || len(ask.offers) != 1 {
		t.Fatalf("within the ceiling, approved once: %+v, offers %d, %v", res.Decision, len(ask.offers), err)
	}
}

// BenchmarkDecideManaged decides the same read_file (without audit) with
// no managed policy and with one, the files stat'ed for every decision
// (the CLI) or followed by a Watcher (serve). The scope and the policy are
// cached; within the policy, the combined scope is made once.
func BenchmarkDecideManaged(b *testing.B) {
	root := b.TempDir()
	dir, proj := filepath.Join(root, "sessions", "s", "branches", "main"), filepath.Join(root, "proj")
	for _, d := range []string{dir, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	scope := filepath.Join(dir, sessions.ScopeFile)
	if err := os.WriteFile(scope, []byte("paths:\n  read: [\""+proj+"/**\"]\n  deny: [\"**/.env\"]\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	policyFile := filepath.Join(root, "managed.yml")
	if err := os.WriteFile(policyFile, []byte("paths:\n  deny: [\"**/secrets/**\", \"**/.ssh/**\"]\n  ceiling:\n    read: [\""+root+"/**\", \"/usr/**\"]\n    write: [\""+proj+"/**\"]\nshell_commands:\n  deny: [ssh, scp]\nnetwork: [\".corp.example.com:443\"]\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	c := call("read_file", map[string]any{"path": "a.txt"}, proj)
	for _, bc := range []struct {
		name    string
		managed bool
		watched bool
	}{{"files=stat/policy=none", false, false}, {"files=stat/policy=managed", true, false},
		{"files=watched/policy=none", false, true}, {"files=watched/policy=managed", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			opts := gateway.Options{}
			if bc.managed {
				opts.Managed = &config.ManagedLoader{Path: policyFile}
			}
			if bc.watched {
				w, err := watch.New()
				if err != nil {
					b.Skipf("no inotify: %v", err)
				}
				defer w.Close()
				opts.Watcher = w
			}
			g := gateway.New(opts)
			if d := g.Redecide(dir, scope, c, policy.ExecutionConfined); !d.Allowed {
				b.Fatalf("%+v", d)
			}
			b.ReportAllocs()
			for b.Loop() {
				g.Redecide(dir, scope, c, policy.ExecutionConfined)
			}
		})
	}
}

// In observe mode under a ceiling, a call beyond the scope but within the
// ceiling runs and is observed; one beyond the ceiling is denied, by the
// decision and at run time (the runner's roots are the ceiling's).
func TestManagedObserveWithinCeiling(t *testing.T) {
	dir, proj := branch(t)
	root := filepath.Dir(proj)
	for _, d := range []string{"in", "out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "f.txt"), []byte(d+"-content\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := managedFile(t, "paths:\n  ceiling:\n    read: [\""+proj+"/**\", \""+root+"/in/**\"]\n    write: [\""+proj+"/**\"]\n")
	g := managedGateway(t, path, gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
	ctx := context.Background()
	if _, err := g.SetMode(ctx, dir, sessions.ModeObserve, "test"); err != nil {
		t.Fatal(err)
	}
	shell := func(cmd string) gateway.CallResult {
		t.Helper()
		res, err := g.Call(ctx, gateway.Target{BranchDir: dir}, call("shell", map[string]any{"command": cmd}, proj))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := shell("cat " + filepath.Join(root, "in", "f.txt"))
	r, _ := res.Result.(exec.Result)
	if !res.Decision.Allowed || res.Decision.Observed == nil || !strings.Contains(r.Stdout, "in-content") {
		t.Fatalf("within the ceiling: %+v %+v", res.Decision, res.Result)
	}
	res = shell("cat " + filepath.Join(root, "out", "f.txt"))
	if res.Decision.Allowed || res.Decision.Reason != policy.ReasonManaged {
		t.Fatalf("beyond the ceiling: %+v", res.Decision)
	}
	// A path read from a file: refused by the managed rule, before or at
	// run time.
	if err := os.WriteFile(filepath.Join(proj, "list.txt"), []byte(filepath.Join(root, "out", "f.txt")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = shell("cat $(cat list.txt)")
	r, _ = res.Result.(exec.Result)
	refused := res.Decision.Reason == policy.ReasonManaged || len(r.Refused) > 0 && r.Refused[0].Reason == policy.ReasonManaged
	if strings.Contains(r.Stdout, "out-content") || !refused {
		t.Fatalf("a path read from a file beyond the ceiling: %+v %+v", res.Decision, res.Result)
	}
}
