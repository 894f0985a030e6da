package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// The answers to an offer (CONTRACT §9), also the answer label of
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
	CallID    string
	Call      policy.Call
	Decision  policy.Decision
	Widenings []policy.Widening
}

// Asker puts an offer to the user through one channel and returns their
// answer, one of the Answer constants. It must return when ctx ends.
type Asker interface {
	Channel() string
	Ask(ctx context.Context, o Offer) string
}

// Widening is the offer's widening as `scope expand` flags
// (`--allow-command curl`).
func (o Offer) Widening() string {
	return strings.TrimPrefix(strings.TrimPrefix(policy.ExpandHint(o.Widenings...), policy.ExpandCommand), " ")
}

// Summary is what the call is about, on one line, for a person: the tool
// and its command, path or pattern; never the content it would write.
func (o Offer) Summary() string {
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
	s := o.Call.Tool + ": " + what
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
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
}

// offerable returns the widenings of a denial that may be offered, or nil:
// exactly a widenable denial (policy.Decision.Widenable) whose every
// widening scopegate knows how to apply, and whose paths are absolute.
func offerable(d policy.Decision) []policy.Widening {
	ws := d.Widenings()
	if len(ws) == 0 {
		return nil
	}
	if _, err := expansionOf(ws); err != nil {
		return nil
	}
	return ws
}

// expansionOf is the scope expansion of widenings. A flag it does not know
// is an error: such a widening is never offered nor applied.
func expansionOf(ws []policy.Widening) (sessions.Expansion, error) {
	var x sessions.Expansion
	for _, w := range ws {
		var list *[]string
		path := false
		switch w.Flag {
		case "--read":
			list, path = &x.Read, true
		case "--write":
			list, path = &x.Write, true
		case "--allow-command":
			list = &x.AllowCommands
		case "--roam-subdirectory":
			list = &x.RoamSubdirectories
		case "--roam-tag":
			list = &x.RoamTags
		case "--roam-node-id":
			list = &x.RoamNodeIDs
		case "--allow-host":
			if err := policy.ValidateHostEntry(w.Value); err != nil {
				return x, fmt.Errorf("widening %s %q cannot be applied: %v", w.Flag, w.Value, err)
			}
			list = &x.AllowHosts
		case "--allow-socket":
			if err := policy.ValidateSocketPath(w.Value); err != nil {
				return x, fmt.Errorf("widening %s %q cannot be applied: %v", w.Flag, w.Value, err)
			}
			list = &x.AllowSockets
		default:
			return x, fmt.Errorf("widening %s %q cannot be applied", w.Flag, w.Value)
		}
		if strings.TrimSpace(w.Value) == "" || path && !filepath.IsAbs(w.Value) {
			return x, fmt.Errorf("widening %s %q cannot be applied", w.Flag, w.Value)
		}
		*list = append(*list, w.Value)
	}
	return x, nil
}

// widenDocument adds an expansion to a scope document in memory: the scope a
// one-time grant runs its call under.
func widenDocument(doc policy.Document, x sessions.Expansion) policy.Document {
	add := func(list []string, more []string) []string {
		return append(append([]string(nil), list...), more...)
	}
	doc.Paths.Read = add(doc.Paths.Read, x.Read)
	doc.Paths.Write = add(doc.Paths.Write, x.Write)
	doc.Shell.Allow = add(doc.Shell.Allow, x.AllowCommands)
	doc.OrgRoam.Subdirectory = add(doc.OrgRoam.Subdirectory, x.RoamSubdirectories)
	doc.OrgRoam.Tags = add(doc.OrgRoam.Tags, x.RoamTags)
	doc.OrgRoam.NodeIDs = add(doc.OrgRoam.NodeIDs, x.RoamNodeIDs)
	if len(x.AllowHosts) > 0 && doc.Network.Mode != policy.NetworkAny {
		hosts := doc.Network.Hosts
		if doc.Network.Mode != policy.NetworkList {
			hosts = nil
		}
		doc.Network = policy.NetworkRules{Mode: policy.NetworkList, Hosts: add(hosts, x.AllowHosts)}
	}
	if len(x.AllowSockets) > 0 {
		var entries []string
		switch doc.Network.Mode {
		case policy.NetworkList:
			entries = doc.Network.Hosts
		case policy.NetworkAny:
			entries = []string{policy.NetworkAny}
		}
		for _, p := range x.AllowSockets {
			entries = add(entries, []string{policy.SocketEntry(p)})
		}
		doc.Network = policy.NetworkRules{Mode: policy.NetworkList, Hosts: entries}
	}
	return doc
}

// offer puts a widenable denial to the user through t.Ask and acts on the
// answer: once runs the call under a one-time grant bound to callID,
// session widens the branch (an audited scope change naming the channel)
// and decides again; any other answer leaves the denial. It returns the
// decision to act on and how the offer went.
func (g *Gateway) offer(ctx context.Context, t Target, call policy.Call, dec decision, callID string) (decision, approval) {
	ws := offerable(dec.d)
	if t.Ask == nil || ws == nil {
		return dec, approval{}
	}
	o := Offer{CallID: callID, Call: call, Decision: dec.d, Widenings: ws}
	ap := approval{offered: o.Widening(), channel: t.Ask.Channel()}
	ap.answer = t.Ask.Ask(ctx, o)
	if ap.answer == "" {
		ap.answer = AnswerError
	}
	g.opts.Observer.ObserveApproval(ap.answer)
	switch ap.answer {
	case AnswerOnce:
		grant := Grant{CallID: callID, Channel: ap.channel, Widenings: ws, Call: CallSum(call)}
		if err := StoreGrant(t.BranchDir, grant); err != nil {
			g.opts.Warn(fmt.Sprintf("approval of %s: %v", callID, err))
			return dec, ap
		}
		if granted, _, ok := g.granted(t, call, dec, callID); ok {
			ap.approved = AnswerOnce
			return granted, ap
		}
	case AnswerSession:
		x, _ := expansionOf(ws)
		res, err := g.ExpandScope(ctx, t.BranchDir, x, ap.channel)
		if err != nil {
			g.opts.Warn(fmt.Sprintf("approval of %s: %v", callID, err))
			return dec, ap
		}
		for section, n := range res.Added {
			for range n {
				g.opts.Observer.ScopeExpansion(section)
			}
		}
		t.Synced = false
		again := g.decideWith(t, call, policy.ExecutionConfined, nil, nil)
		if again.d.Allowed {
			ap.approved = AnswerSession
		}
		return again, ap
	}
	return dec, ap
}

// granted claims the one-time grant of callID, if any, and decides call
// again under the branch's scope widened by it. ok is false when there is
// no grant, it is for another call, or the call is still denied.
func (g *Gateway) granted(t Target, call policy.Call, dec decision, callID string) (decision, Grant, bool) {
	grant, found, err := claimGrant(t.BranchDir, callID)
	if err != nil {
		g.opts.Warn(fmt.Sprintf("grant of %s: %v", callID, err))
		return dec, Grant{}, false
	}
	if !found || grant.Call != CallSum(call) {
		return dec, Grant{}, false
	}
	again := g.decideWith(t, call, policy.ExecutionConfined, grant.Widenings, nil)
	return again, grant, again.d.Allowed
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
	dec := g.decideWith(t, call, policy.ExecutionConfined, nil, nil)
	if dec.d.Allowed {
		return Offer{}, false
	}
	ws := offerable(dec.d)
	if ws == nil {
		return Offer{}, false
	}
	return Offer{Call: call, Decision: dec.d, Widenings: ws}, true
}
