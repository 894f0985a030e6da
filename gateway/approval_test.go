package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
)

// answering is a channel whose user always gives the same answer; it keeps
// the offers it was given.
type answering struct {
	answer string
	mu     sync.Mutex
	offers []gateway.Offer
}

func (a *answering) Channel() string { return "test:answer" }

func (a *answering) Ask(_ context.Context, o gateway.Offer) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.offers = append(a.offers, o)
	return a.answer
}

func TestApprovals(t *testing.T) {
	outsideCall := func(root string) (string, map[string]any) {
		p := filepath.Join(root, "outside", "notes.txt")
		return p, map[string]any{"path": p}
	}
	for _, tt := range []struct {
		answer               string
		ran, widened, denied bool
	}{
		{answer: gateway.AnswerOnce, ran: true},
		{answer: gateway.AnswerSession, ran: true, widened: true},
		{answer: gateway.AnswerDeny, denied: true},
		{answer: gateway.AnswerDecline, denied: true},
		{answer: gateway.AnswerTimeout, denied: true},
		{answer: "", denied: true},
	} {
		t.Run("answer "+tt.answer, func(t *testing.T) {
			dir, proj := branch(t)
			root := filepath.Dir(proj)
			path, args := outsideCall(root)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("outside\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			obs := newCounter()
			g := gateway.New(gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t), Observer: obs})
			ask := &answering{answer: tt.answer}
			before, _ := os.ReadFile(filepath.Join(dir, "scope.yml"))
			res, err := g.Call(context.Background(), gateway.Target{BranchDir: dir, Ask: ask}, call("read_file", args, proj))
			if err != nil {
				t.Fatal(err)
			}
			if len(ask.offers) != 1 {
				t.Fatalf("%d offers, want 1", len(ask.offers))
			}
			o := ask.offers[0]
			if o.Widening() != "--read "+path || !strings.Contains(o.Text(), path) || !strings.Contains(o.Summary(), "read_file") {
				t.Errorf("offer widening %q, text %q: want the exact file", o.Widening(), o.Text())
			}
			if res.Decision.Allowed != tt.ran {
				t.Fatalf("allowed = %v, want %v: %+v", res.Decision.Allowed, tt.ran, res.Decision)
			}
			if r, ok := res.Result.(exec.Result); tt.ran && (!ok || r.Content == nil || *r.Content != "outside\n") {
				t.Errorf("result %#v, want the file's content", res.Result)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "scope.yml"))
			if changed := string(after) != string(before); changed != tt.widened {
				t.Errorf("scope.yml changed = %v, want %v:\n%s", changed, tt.widened, after)
			}
			if tt.widened && !strings.Contains(string(after), path) {
				t.Errorf("scope.yml lacks %s:\n%s", path, after)
			}
			es, err := audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var callEntry *audit.Entry
			var expanded int
			for i, e := range es {
				switch e.Decision {
				case audit.DecisionExpanded:
					expanded++
					if e.Resource != "test:answer" {
						t.Errorf("scope change by %q, want the channel", e.Resource)
					}
				default:
					callEntry = &es[i]
				}
			}
			if (expanded == 1) != tt.widened || callEntry == nil {
				t.Fatalf("entries %+v", es)
			}
			wantAnswer := tt.answer
			if wantAnswer == "" {
				wantAnswer = gateway.AnswerError
			}
			if callEntry.Offered != "--read "+path || callEntry.Channel != "test:answer" || callEntry.Answer != wantAnswer {
				t.Errorf("entry offered %q channel %q answer %q", callEntry.Offered, callEntry.Channel, callEntry.Answer)
			}
			wantApproved := ""
			if tt.ran {
				wantApproved = tt.answer
			}
			if callEntry.Approved != wantApproved || (callEntry.Decision == audit.DecisionDenied) != tt.denied {
				t.Errorf("entry approved %q decision %q", callEntry.Approved, callEntry.Decision)
			}
			if obs.answers[wantAnswer] != 1 {
				t.Errorf("answers counted %v", obs.answers)
			}
			if n := obs.allowed["read_file"] + len(obs.denied); n != 1 {
				t.Errorf("%d decisions counted, want the call's one", n)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, gateway.GrantsDir, "*")); len(left) != 0 {
				t.Errorf("grants left after the run: %v", left)
			}
			// The scope after the answer: once left it as it was, so the
			// same call is offered again; session widened it, so it is not.
			if _, err := g.Call(context.Background(), gateway.Target{BranchDir: dir, Ask: ask}, call("read_file", args, proj)); err != nil {
				t.Fatal(err)
			}
			if again := len(ask.offers) == 2; again == tt.widened {
				t.Errorf("the same call again: offered %v after answer %q", again, tt.answer)
			}
		})
	}
}

// TestApprovalsNeverOfferHardDenials: paths.deny, a protected root and a
// denied command are refused without asking.
func TestApprovalsNeverOfferHardDenials(t *testing.T) {
	dir, proj := branch(t)
	writeScope(t, dir, "paths:\n  read: [\""+proj+"/**\"]\n  write: [\""+proj+"/**\"]\n  deny: [\"**/.env\"]\nshell_commands:\n  allow: [echo, cat]\n  deny: [\"rm -rf\"]\n")
	if err := os.WriteFile(filepath.Join(proj, ".env"), []byte("KEY=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(gateway.Options{Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t),
		SessionsDir: filepath.Dir(filepath.Dir(filepath.Dir(dir)))})
	ask := &answering{answer: gateway.AnswerSession}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": filepath.Join(proj, ".env")}},
		{"write_file", map[string]any{"path": filepath.Join(dir, "scope.yml"), "content": "paths: {}\n"}},
		{"shell", map[string]any{"command": "rm -rf /tmp/x"}},
		{"read_file", map[string]any{"path": "relative/without/cwd"}},
	} {
		res, err := g.Call(context.Background(), gateway.Target{BranchDir: dir, Ask: ask}, call(c.tool, c.args, ""))
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision.Allowed {
			t.Errorf("%s %v allowed", c.tool, c.args)
		}
	}
	if len(ask.offers) != 0 {
		t.Errorf("hard denials offered: %+v", ask.offers)
	}
}
