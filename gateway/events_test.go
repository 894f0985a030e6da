package gateway_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/sessions"
)

// events is an EventSink that keeps what it gets.
type events struct {
	mu  sync.Mutex
	got []audit.Event
}

func (e *events) Emit(ev audit.Event) { e.mu.Lock(); e.got = append(e.got, ev); e.mu.Unlock() }

// Every entry written to tools.org is also an event, with the same
// content: a call, a denial, a check and a scope change.
func TestEventsFollowAudit(t *testing.T) {
	dir, proj := branch(t)
	sink := &events{}
	g := gateway.New(gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t), Events: sink})
	ctx := context.Background()
	if _, err := g.Call(ctx, gateway.Target{BranchDir: dir, Via: gateway.ViaMCP}, call("read_file", map[string]any{"path": "a.txt"}, proj)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Call(ctx, gateway.Target{BranchDir: dir}, call("write_file", map[string]any{"path": "/etc/x", "content": "x"}, proj)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Check(ctx, gateway.Target{BranchDir: dir, Via: gateway.ViaHook, AgentTool: "Bash"}, call("shell", map[string]any{"command": "rm -rf /"}, proj)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.ExpandScope(ctx, dir, sessions.Expansion{AllowCommands: []string{"ls"}}, "cli:test"); err != nil {
		t.Fatal(err)
	}
	es, err := audit.ReadFile(filepath.Join(dir, audit.LogFile), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.got) != 4 || len(es) != 4 {
		t.Fatalf("%d events for %d entries: %+v", len(sink.got), len(es), sink.got)
	}
	kinds := []string{audit.EventDecision, audit.EventDecision, audit.EventDecision, audit.EventScopeChange}
	for i, ev := range sink.got {
		if ev.Kind != kinds[i] || ev.Entry.CallID != es[i].CallID || ev.Entry.Decision != es[i].Decision ||
			ev.Session != "s" || ev.Branch != "main" {
			t.Errorf("event %d = %+v, entry %+v", i, ev, es[i])
		}
	}
	if ev := sink.got[0]; ev.Via != "mcp" || ev.Entry.DurationMS == nil || ev.Entry.ExitCode == nil {
		t.Errorf("call event lacks via, duration or exit code: %+v", ev)
	}
	if ev := sink.got[1]; ev.Entry.Reason != "path_not_in_scope" || ev.Entry.Rule == "" {
		t.Errorf("denial event: %+v", ev.Entry)
	}
	if ev := sink.got[2]; ev.Via != "hook" || ev.Entry.AgentTool != "Bash" || ev.Entry.Decision != "denied" {
		t.Errorf("hook check event: %+v", ev)
	}
}
