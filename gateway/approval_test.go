package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scopegate/scopegate/agents"
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

// later is a channel whose user answers after a while, or never (answer
// ""): it returns when ctx ends, with the context's cause kept.
type later struct {
	name   string
	answer string
	after  time.Duration
	cause  chan error
}

func (l *later) Channel() string { return l.name }

func (l *later) Ask(ctx context.Context, _ gateway.Offer) string {
	var t <-chan time.Time
	if l.answer != "" {
		t = time.After(l.after)
	}
	select {
	case <-t:
		return l.answer
	case <-ctx.Done():
		if l.cause != nil {
			l.cause <- context.Cause(ctx)
		}
		return gateway.AnswerError
	}
}

// claiming is a channel whose user answers by a claim, as a page's button
// does: the first claim of the offer counts.
type claiming struct {
	asked chan context.Context
	done  chan string
}

func (c *claiming) Channel() string { return "test:claim" }

func (c *claiming) Ask(ctx context.Context, _ gateway.Offer) string {
	c.asked <- ctx
	select {
	case a := <-c.done:
		return a
	case <-ctx.Done():
		return gateway.AnswerTimeout
	}
}

// TestFirstAnswer: an offer put through several channels takes the first
// user's answer, names its channel, and cancels the others with it; a
// channel that gives up leaves the others to answer; a claim after the
// answer loses.
func TestFirstAnswer(t *testing.T) {
	ctx := context.Background()
	t.Run("first answer wins", func(t *testing.T) {
		slow := &later{name: "slow", answer: gateway.AnswerDeny, after: time.Hour, cause: make(chan error, 1)}
		a := gateway.FirstAnswer(slow, &later{name: "fast", answer: gateway.AnswerOnce, after: time.Millisecond})
		if got := a.Ask(ctx, gateway.Offer{}); got != gateway.AnswerOnce || a.Channel() != "fast" {
			t.Fatalf("answer %q through %q, want once through fast", got, a.Channel())
		}
		var ans *gateway.Answered
		if err := <-slow.cause; !errors.As(err, &ans) || ans.Answer != gateway.AnswerOnce || ans.Channel != "fast" {
			t.Errorf("the other channel was cancelled with %v", err)
		}
	})
	t.Run("a channel that gives up leaves the others", func(t *testing.T) {
		a := gateway.FirstAnswer(&later{name: "gone", answer: gateway.AnswerTimeout, after: time.Millisecond},
			&later{name: "user", answer: gateway.AnswerSession, after: 50 * time.Millisecond})
		if got := a.Ask(ctx, gateway.Offer{}); got != gateway.AnswerSession || a.Channel() != "user" {
			t.Fatalf("answer %q through %q, want session through user", got, a.Channel())
		}
	})
	t.Run("nobody answers", func(t *testing.T) {
		a := gateway.FirstAnswer(&later{name: "a", answer: gateway.AnswerTimeout, after: time.Millisecond},
			&later{name: "b", answer: gateway.AnswerTimeout, after: 20 * time.Millisecond})
		if got := a.Ask(ctx, gateway.Offer{}); got != gateway.AnswerTimeout || a.Channel() != "a" {
			t.Fatalf("answer %q through %q, want the first timeout", got, a.Channel())
		}
	})
	t.Run("a claim after the answer loses", func(t *testing.T) {
		c := &claiming{asked: make(chan context.Context, 1), done: make(chan string, 1)}
		a := gateway.FirstAnswer(c, &later{name: "fast", answer: gateway.AnswerDecline, after: 20 * time.Millisecond})
		got := make(chan string)
		go func() { got <- a.Ask(ctx, gateway.Offer{}) }()
		actx := <-c.asked
		if ans := <-got; ans != gateway.AnswerDecline {
			t.Fatalf("answer %q, want decline", ans)
		}
		if gateway.Claim(actx, gateway.AnswerOnce, c.Channel()) {
			t.Fatal("a claim after the answer won")
		}
	})
	t.Run("a claim first wins", func(t *testing.T) {
		c := &claiming{asked: make(chan context.Context, 1), done: make(chan string, 1)}
		slow := &later{name: "slow", answer: gateway.AnswerDeny, after: time.Hour}
		a := gateway.FirstAnswer(c, slow)
		got := make(chan string)
		go func() { got <- a.Ask(ctx, gateway.Offer{}) }()
		actx := <-c.asked
		if !gateway.Claim(actx, gateway.AnswerOnce, c.Channel()) {
			t.Fatal("the first claim lost")
		}
		c.done <- gateway.AnswerOnce
		if ans := <-got; ans != gateway.AnswerOnce || a.Channel() != c.Channel() {
			t.Fatalf("answer %q through %q", ans, a.Channel())
		}
		if gateway.Claim(actx, gateway.AnswerDeny, "another") {
			t.Fatal("a second claim won")
		}
	})
	t.Run("outside a race every claim wins", func(t *testing.T) {
		if !gateway.Claim(ctx, gateway.AnswerOnce, "x") {
			t.Fatal("claim lost")
		}
	})
}

// TestHookHeldOffer: where the agent does not ask its user (Codex), a
// hook's call denied for a scope reason is held and put through the hook's
// channel: once runs exactly that call once through exec under a grant,
// and the same call is offered again; session widens the branch; deny and
// no answer deny it. Every answer is in the hook's tools.org entry.
func TestHookHeldOffer(t *testing.T) {
	for _, tt := range []struct {
		answer           string
		allowed, widened bool
	}{
		{answer: gateway.AnswerOnce, allowed: true},
		{answer: gateway.AnswerSession, allowed: true, widened: true},
		{answer: gateway.AnswerDeny},
		{answer: gateway.AnswerTimeout},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			root := t.TempDir()
			proj := filepath.Join(root, "proj")
			if err := os.MkdirAll(proj, 0o700); err != nil {
				t.Fatal(err)
			}
			g := gateway.New(gateway.Options{SessionsDir: filepath.Join(root, "sessions"), ConfigDir: filepath.Join(root, "config"),
				Confine: exec.ConfineAllowUnconfined, HelperPath: helperPath(t)})
			ask := &answering{answer: tt.answer}
			in, _ := json.Marshal(map[string]any{"session_id": "held-1", "cwd": proj, "hook_event_name": "PreToolUse",
				"tool_name": "Bash", "tool_input": map[string]any{"command": "date +held"}})
			opts := gateway.HookOptions{Profile: "restricted", ProjectDir: proj, Approvals: true, Ask: ask,
				ExecCommand: func(s, b, c, _ string) string { return "exec " + c }}
			ctx := context.Background()
			ans := g.Hook(ctx, agents.Codex, in, opts)
			rewritten := strings.Contains(string(ans.Stdout), "exec ")
			if rewritten != tt.allowed || len(ask.offers) != 1 || ask.offers[0].Widening() != "--allow-command date" {
				t.Fatalf("answer %s (%d offers), want rewritten %v", ans.Stdout, len(ask.offers), tt.allowed)
			}
			dir := filepath.Join(root, "sessions", "held-1", "branches", "main")
			es, err := audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			hookEntry := es[len(es)-1]
			wantApproved, wantDecision := "", audit.DecisionDenied
			if tt.allowed {
				wantApproved, wantDecision = tt.answer, audit.DecisionAllowed
			}
			if hookEntry.Mode != audit.ModeHook || hookEntry.Channel != "test:answer" || hookEntry.Answer != tt.answer ||
				hookEntry.Offered != "--allow-command date" || hookEntry.Approved != wantApproved || hookEntry.Decision != wantDecision {
				t.Errorf("hook entry %+v", hookEntry)
			}
			grants, _ := filepath.Glob(filepath.Join(dir, gateway.GrantsDir, "*.json"))
			if (len(grants) == 1) != (tt.answer == gateway.AnswerOnce) {
				t.Errorf("grants %v after %s", grants, tt.answer)
			}
			if !tt.allowed {
				return
			}
			callID := hookEntry.CallID
			var out strings.Builder
			res, err := g.Exec(ctx, gateway.Target{BranchDir: dir}, callID, "date +held", &out, io.Discard)
			if err != nil || !res.Decision.Allowed || strings.TrimSpace(out.String()) != "held" {
				t.Fatalf("exec: %+v %v, output %q", res, err, out.String())
			}
			es, _ = audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
			if last := es[len(es)-1]; last.Mode != audit.ModeExec || (tt.answer == gateway.AnswerOnce) != (last.Approved == gateway.AnswerOnce && last.Channel == "test:answer") {
				t.Errorf("exec entry %+v", last)
			}
			g.Hook(ctx, agents.Codex, in, opts)
			if offeredAgain := len(ask.offers) == 2; offeredAgain == tt.widened {
				t.Errorf("the same call again after %s: offered %v", tt.answer, offeredAgain)
			}
		})
	}
}

// TestUnanswered: an offer nobody answered is recorded as denied with its
// answer, and counted.
func TestUnanswered(t *testing.T) {
	dir, proj := branch(t)
	obs := newCounter()
	g := gateway.New(gateway.Options{Observer: obs})
	c := call("shell", map[string]any{"command": "date"}, proj)
	o, ok := g.Offerable(gateway.Target{BranchDir: dir, Via: gateway.ViaMCP}, c)
	if !ok {
		t.Fatal("not offerable")
	}
	if _, err := g.Unanswered(context.Background(), gateway.Target{BranchDir: dir, Via: gateway.ViaMCP}, o, gateway.ChannelElicitation, gateway.AnswerTimeout); err != nil {
		t.Fatal(err)
	}
	es, err := audit.ReadFile(filepath.Join(dir, "tools.org"), audit.Filter{})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %+v %v", es, err)
	}
	if e := es[0]; e.Decision != audit.DecisionDenied || e.Answer != gateway.AnswerTimeout || e.Channel != gateway.ChannelElicitation ||
		e.Offered != "--allow-command date" || e.Mode != audit.ModeMCP || e.Reason != "command_not_allowed" || e.Cwd != proj {
		t.Errorf("entry %+v", e)
	}
	if obs.answers[gateway.AnswerTimeout] != 1 || obs.denied["command_not_allowed"] != 1 {
		t.Errorf("counted %v %v", obs.answers, obs.denied)
	}
}
