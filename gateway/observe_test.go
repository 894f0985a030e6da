package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// The mode is read once per change of its file: a switch takes effect on
// the next decision, and an unreadable mode file is enforce. Observed
// decisions are counted as allowed, not as denials.
func TestObserveModeSwitch(t *testing.T) {
	dir, proj := branch(t)
	c := newCounter()
	var warned []string
	g := gateway.New(gateway.Options{SessionsDir: filepath.Dir(filepath.Dir(filepath.Dir(dir))), Observer: c,
		Warn: func(s string) { warned = append(warned, s) }})
	ctx := context.Background()
	call := policy.Call{Tool: policy.ToolReadFile, Args: []byte(`{"path":"/etc/hostname"}`), Cwd: proj}
	check := func() policy.Decision {
		t.Helper()
		res, err := g.Check(ctx, gateway.Target{BranchDir: dir}, call)
		if err != nil {
			t.Fatal(err)
		}
		return res.Decision
	}
	if d := check(); d.Allowed {
		t.Fatalf("enforce: %+v", d)
	}
	if changed, err := g.SetMode(ctx, dir, sessions.ModeObserve, "test"); err != nil || !changed {
		t.Fatalf("SetMode: %v %v", changed, err)
	}
	if d := check(); !d.Allowed || d.Observed == nil || d.Observed.Rule != "paths.read" {
		t.Fatalf("observe: %+v", d)
	}
	if c.allowed[policy.ToolReadFile] != 1 || c.denied[string(policy.ReasonPathNotInScope)] != 1 {
		t.Errorf("counted allowed %v denied %v, want the observed call as allowed", c.allowed, c.denied)
	}
	if err := os.WriteFile(filepath.Join(dir, sessions.ModeFile), []byte("permissive\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := check(); d.Allowed {
		t.Fatalf("invalid mode file: %+v, want enforce", d)
	}
	if len(warned) == 0 {
		t.Error("an invalid mode file was not warned of")
	}
	es, err := audit.ReadFile(filepath.Join(dir, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, e := range es {
		decisions = append(decisions, e.Decision)
	}
	want := []string{audit.DecisionDenied, audit.DecisionExpanded, audit.DecisionObserved, audit.DecisionDenied}
	if len(decisions) != len(want) {
		t.Fatalf("entries %q, want %q", decisions, want)
	}
	for i := range want {
		if decisions[i] != want[i] {
			t.Fatalf("entries %q, want %q", decisions, want)
		}
	}
	if len(es[2].Widen) != 1 || es[2].Widen[0].Flag != "--read" || len(es[0].Widen) != 1 {
		t.Errorf("widenings: observed %+v, denied %+v", es[2].Widen, es[0].Widen)
	}
}

// BenchmarkCheckObserved decides a call observe mode lets through: the
// decision, the observe scope (cached), the mode (cached by its stamp) and
// the audit entry.
func BenchmarkCheckObserved(b *testing.B) {
	for _, mode := range []string{sessions.ModeEnforce, sessions.ModeObserve} {
		b.Run(mode, func(b *testing.B) {
			root := b.TempDir()
			dir, proj := filepath.Join(root, "sessions", "s", "branches", "main"), filepath.Join(root, "proj")
			for _, d := range []string{dir, proj} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					b.Fatal(err)
				}
			}
			scope := "paths:\n  read: [\"" + proj + "/**\"]\nshell_commands:\n  allow: [echo]\n"
			if err := os.WriteFile(filepath.Join(dir, sessions.ScopeFile), []byte(scope), 0o600); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			g := gateway.New(gateway.Options{})
			if _, err := sessions.WriteMode(dir, mode); err != nil {
				b.Fatal(err)
			}
			call := policy.Call{Tool: policy.ToolReadFile, Args: []byte(`{"path":"/etc/hostname"}`), Cwd: proj}
			t := gateway.Target{BranchDir: dir}
			for b.Loop() {
				if _, err := g.Check(context.Background(), t, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
