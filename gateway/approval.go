package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// The answers to an offer (docs/approvals.md), also the answer label of
// scopegate_approvals_total. Only AnswerOnce and AnswerSession let the call
// run; every other answer denies it as if it had not been offered.
const (
	// AnswerOnce runs this call under a one-time grant.
	AnswerOnce = "once"
	// AnswerSession applies the widening to the branch, then runs the call.
	AnswerSession = "session"
	// AnswerDeny is the user choosing "deny" in the offer.
	AnswerDeny = "deny"
	// AnswerDecline and AnswerCancel are the client's own refusals (the
	// user declined or dismissed the form).
	AnswerDecline = "decline"
	AnswerCancel  = "cancel"
	// AnswerTimeout is an offer nobody answered in time.
	AnswerTimeout = "timeout"
	// AnswerError is an offer that could not be made or read back.
	AnswerError = "error"
	// AnswerAsk is an offer left to the agent's own permission dialog,
	// whose answer scopegate does not see (Claude Code's hook "ask").
	AnswerAsk = "ask"
)

// Answers lists the answers, in a fixed order (the metric's label values).
func Answers() []string {
	return []string{AnswerOnce, AnswerSession, AnswerDeny, AnswerDecline, AnswerCancel, AnswerTimeout, AnswerError, AnswerAsk}
}

// The channels an offer goes through; a session answer's scope change names
// its channel as who widened the scope.
const (
	ChannelElicitation = "mcp:elicitation"
	ChannelHookAsk     = "hook:ask"
)

// Offer is a denied call put to the user: the call, why it was denied, and
// the exact widening that would let it run (the same narrow widening as the
// denial's hint, never a parent directory).
type Offer struct {
	CallID string
	// BranchDir is the session branch the call was made on.
	BranchDir string
	Call      policy.Call
	Decision  policy.Decision
	Widenings []policy.Widening
}

// Asker puts an offer to the user through one channel and returns their
// answer, one of the Answer constants. It must return when ctx ends.
// Channel names the channel in tools.org and in scope changes; it is read
// after Ask returns, so that an Asker of several channels names the one
// that answered.
type Asker interface {
	Channel() string
	Ask(ctx context.Context, o Offer) string
}

// Approvals is what the user's configuration says of approvals (config.yml
// approvals, approval_timeout_seconds). The long-running processes read it
// again for every call, so that a change needs no restart.
type Approvals struct {
	// Ask offers a widenable denial where a channel can ask the user.
	Ask bool
	// Timeout bounds the wait for an answer.
	Timeout time.Duration
}

// userAnswer reports whether an answer came from the user (or their
// client on their behalf), rather than from a channel that gave none.
func userAnswer(a string) bool {
	switch a {
	case AnswerOnce, AnswerSession, AnswerDeny, AnswerDecline, AnswerCancel:
		return true
	}
	return false
}

// FirstAnswer is an Asker of one offer that puts it through every given
// channel at once: the first answer a user gives through any of them is
// the answer, and the others are then cancelled, their context's cause an
// *Answered naming it. A channel that ends without a user's answer (it
// timed out, failed) leaves the others to answer; when none does, the first
// such ending is the answer. Channel, after Ask, is the channel of the
// answer. A channel whose user answers asynchronously (a button on a page)
// calls Claim with the context Ask gave it, so that of two answers at once
// exactly one counts and it can tell its user which.
func FirstAnswer(askers ...Asker) Asker {
	return &firstAnswer{askers: askers}
}

// Answered is the cause with which FirstAnswer cancels the channels that
// did not answer first.
type Answered struct {
	Answer, Channel string
}

func (a *Answered) Error() string {
	return fmt.Sprintf("answered %s through %s", a.Answer, a.Channel)
}

type firstAnswer struct {
	askers []Asker
	// answer and channel are the result, once Ask returns.
	answer, channel string
}

// race is one offer put through several channels: the first claim wins.
type race struct {
	mu              sync.Mutex
	done            bool
	answer, channel string
	cancel          context.CancelCauseFunc
}

func (r *race) claim(answer, channel string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.done, r.answer, r.channel = true, answer, channel
	r.cancel(&Answered{Answer: answer, Channel: channel})
	return true
}

// raceKey is the context key of the race an Asker is asked in.
type raceKey struct{}

// Claim makes answer, given through channel, the answer to the offer whose
// Ask was given ctx; false when another channel's answer came first. Outside
// FirstAnswer every claim wins.
func Claim(ctx context.Context, answer, channel string) bool {
	r, ok := ctx.Value(raceKey{}).(*race)
	return !ok || r.claim(answer, channel)
}

func (f *firstAnswer) Channel() string { return f.channel }

func (f *firstAnswer) Ask(ctx context.Context, o Offer) string {
	if len(f.askers) == 1 {
		f.answer = f.askers[0].Ask(ctx, o)
		f.channel = f.askers[0].Channel()
		return f.answer
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &race{cancel: cancel}
	rctx = context.WithValue(rctx, raceKey{}, r)
	type ended struct{ answer, channel string }
	ends := make(chan ended, len(f.askers))
	for _, a := range f.askers {
		go func() {
			ans := a.Ask(rctx, o)
			if userAnswer(ans) {
				r.claim(ans, a.Channel())
			}
			ends <- ended{ans, a.Channel()}
		}()
	}
	var first *ended
	for range f.askers {
		e := <-ends
		if first == nil {
			first = &e
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		f.answer, f.channel = r.answer, r.channel
	} else {
		f.answer, f.channel = first.answer, first.channel
	}
	return f.answer
}

// Widening is the offer's widening as `scope expand` flags
// (`--allow-command curl`).
func (o Offer) Widening() string {
	return strings.TrimPrefix(strings.TrimPrefix(policy.ExpandHint(o.Widenings...), policy.ExpandCommand), " ")
}

// Summary is what the call is about, on one line, for a person: the tool
// and its command, path or pattern; never the content it would write.
func (o Offer) Summary() string {
	s := o.Call.Tool + ": " + o.what()
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// what is what the call is about: its command, path or pattern, node id or
// title.
func (o Offer) what() string {
	var a struct {
		Command, Path, Pattern, Title string
		NodeID                        string `json:"node_id"`
		SourceID                      string `json:"source_id"`
	}
	_ = json.Unmarshal(o.Call.Args, &a)
	what := a.Command
	switch {
	case what != "":
	case a.Pattern != "" && a.Path != "":
		what = a.Pattern + " in " + a.Path
	case a.Pattern != "":
		what = a.Pattern
	case a.Path != "":
		what = a.Path
	case a.NodeID != "":
		what = a.NodeID
	case a.SourceID != "":
		what = a.SourceID
	default:
		what = a.Title
	}
	return what
}

// Text is the offer as a person reads it: the call, why it is denied, and
// what each answer does.
func (o Offer) Text() string {
	return fmt.Sprintf("The agent wants to run a call outside this session's scope.\n\nCall: %s\nDenied: %s\n"+
		"Widening: %s\n\nonce: run this call only; the scope stays as it is.\n"+
		"session: add the widening to this session's scope (recorded in tools.org), then run the call.\n"+
		"deny: refuse it.", o.Summary(), o.Decision.Message, o.Widening())
}

// approval is how an offer went: what was offered, through which channel,
// what the user answered, and how the call then ran.
type approval struct {
	offered, channel, answer string
	// approved is AnswerOnce or AnswerSession when the call ran because of
	// the answer.
	approved string
	// widenings are what the user granted.
	widenings []policy.Widening
}

// offerable returns the widenings of a denial of call that may be offered,
// or nil: exactly a widenable denial (policy.Decision.Widenable) whose
// every widening scopegate knows how to apply, whose paths are absolute,
// and which would let the call run once applied (unworkable); none where
// the managed policy refuses approvals or would refuse one of the
// widenings.
func (b *branch) offerable(d policy.Decision, call policy.Call) []policy.Widening {
	if !b.managed.approvalsAllowed() {
		return nil
	}
	ws := d.Widenings()
	if len(ws) == 0 {
		return nil
	}
	if _, err := sessions.ExpansionOf(ws...); err != nil {
		return nil
	}
	if unworkable(ws, call) != "" {
		return nil
	}
	if m := b.managed.policy(); m != nil {
		env := b.g.env(nil, "")
		for _, w := range ws {
			if m.Refuses(w, env) != "" {
				return nil
			}
		}
	}
	return ws
}

// notOffered adds to the message of a widenable denial that cannot be
// offered why, so that the user is not sent after a widening that would
// not let the call run.
func notOffered(d *policy.Decision, call policy.Call) {
	if d.Allowed || !d.Widenable() {
		return
	}
	if why := unworkable(d.Widenings(), call); why != "" {
		d.Message = strings.TrimSuffix(d.Message, ".") + "; it is not offered for approval: " + why
	}
}

// offer puts a widenable denial to the user through t.Ask and acts on the
// answer: once runs the call under a one-time grant, held by the call
// alone; session widens the branch (an audited scope change naming the
// channel) and decides again with the widened scope; any other answer
// leaves the denial. It returns the decision to act on and how the offer
// went.
func (g *Gateway) offer(ctx context.Context, t Target, call policy.Call, dec decision, callID string) (decision, approval) {
	ws := dec.branch.offerable(dec.d, call)
	if t.Ask == nil || ws == nil {
		if t.Ask != nil {
			notOffered(&dec.d, call)
		}
		return dec, approval{}
	}
	o := Offer{CallID: callID, BranchDir: t.BranchDir, Call: call, Decision: dec.d, Widenings: ws}
	ap := approval{offered: o.Widening(), widenings: ws}
	ap.answer = t.Ask.Ask(ctx, o)
	ap.channel = t.Ask.Channel()
	if ap.answer == "" {
		ap.answer = AnswerError
	}
	g.opts.Observer.ObserveApproval(ap.answer)
	b := dec.branch
	switch ap.answer {
	case AnswerOnce:
		b.grant = &Grant{CallID: callID, Channel: ap.channel, Widenings: ws, Call: CallSum(call)}
		if granted, ok := g.granted(call, dec); ok {
			ap.approved = AnswerOnce
			return granted, ap
		}
	case AnswerSession:
		x, _ := sessions.ExpansionOf(ws...)
		res, err := g.expandScope(ctx, b.dir, func() string { return b.meta().root }, x, ap.channel)
		if err != nil {
			g.opts.Warn(fmt.Sprintf("approval of %s: %v", callID, err))
			return dec, ap
		}
		for section, n := range res.Added {
			for range n {
				g.opts.Observer.ScopeExpansion(section)
			}
		}
		// The call goes on with the scope just written.
		b.scope = g.compileScope(b.scopePath, res.Scope, g.env(b.protected, ""))
		again := g.decide(b, call, decideOptions{execution: policy.ExecutionConfined, decide: dec.decideWith})
		if again.d.Allowed {
			ap.approved = AnswerSession
		}
		return again, ap
	}
	return dec, ap
}

// takeGrant claims for a run of the stored call callID its one-time grant,
// if any: the grant is spent whether or not the run needs it. A grant for
// another call is spent and not taken.
func (g *Gateway) takeGrant(b *branch, call policy.Call, callID string) {
	grant, found, err := claimGrant(b.dir, callID)
	if err != nil {
		g.opts.Warn(fmt.Sprintf("grant of %s: %v", callID, err))
		return
	}
	if !found || grant.Call != CallSum(call) {
		return
	}
	if !grant.Expires.IsZero() && g.opts.Now().After(grant.Expires) {
		b.grantExpired = grant.Expires
		return
	}
	b.grant = &grant
}

// granted decides a denied call again under the one-time grant of its
// branch, if it has one. ok is false when there is none, or the call is
// still denied.
func (g *Gateway) granted(call policy.Call, dec decision) (decision, bool) {
	b := dec.branch
	if dec.d.Allowed || b.grant == nil {
		return dec, false
	}
	again := g.decide(b, call, decideOptions{execution: policy.ExecutionConfined, grant: b.grant.Widenings, decide: dec.decideWith})
	return again, again.d.Allowed
}

// Offerable decides call on t's branch without running, recording or
// counting it, and returns the offer a client would put to its user: for
// channels that ask first and call again with the answer (MCP's
// multi-round-trip requests). ok is false when the call would not be
// offered (allowed, or not a widenable denial).
func (g *Gateway) Offerable(t Target, call policy.Call) (Offer, bool) {
	if t.BranchDir == "" {
		return Offer{}, false
	}
	b := g.open(t)
	dec := g.decide(b, call, decideOptions{execution: policy.ExecutionConfined})
	if dec.d.Allowed {
		return Offer{}, false
	}
	ws := b.offerable(dec.d, call)
	if ws == nil {
		return Offer{}, false
	}
	return Offer{BranchDir: t.BranchDir, Call: call, Decision: dec.d, Widenings: ws}, true
}

// Unanswered records an offer that was put to the user and never answered
// through channel (a client that was sent the offer and never came back):
// the call is denied as it was when offered, with answer (AnswerTimeout),
// recorded in tools.org and counted, as if it had been refused then. The
// offer's CallID names the entry when it has one.
func (g *Gateway) Unanswered(ctx context.Context, t Target, o Offer, channel, answer string) (CallResult, error) {
	if t.BranchDir == "" {
		return CallResult{}, ErrNoBranch
	}
	now := g.opts.Now()
	res := CallResult{CallID: o.CallID, Decision: o.Decision}
	if !validCallID(res.CallID) {
		res.CallID = audit.NewCallID(now)
	}
	b := g.open(t)
	dec := decision{d: o.Decision, branch: b, cwd: o.Call.Cwd}
	if dec.cwd == "" {
		dec.cwd = b.defaultCwd(o.Call)
	}
	g.opts.Observer.ObserveApproval(answer)
	g.countDecision(t, o.Call, dec)
	e := g.entry(res.CallID, now, o.Call, dec)
	e.Mode, e.AgentTool = t.callMode(), t.AgentTool
	e.Offered, e.Channel, e.Answer = o.Widening(), channel, answer
	if err := g.record(ctx, g.log(t.BranchDir), audit.EventDecision, t, e); err != nil {
		return res, fmt.Errorf("audit: %w", err)
	}
	return res, nil
}
