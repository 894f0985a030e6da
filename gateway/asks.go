package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// AsksDir is the directory of a branch holding the calls a hook left to
// the agent's own permission dialog, until what became of them is known
// (the agent reports the tool ran, its turn ends, or the ask expires). It
// lies in the branch, which no tool call can write.
const AsksDir = "hook-asks"

// pendingAsk is a call a hook left to the agent's user.
type pendingAsk struct {
	CallID string `json:"call_id"`
	// ToolUseID is the agent's id of the tool call, which its PostToolUse
	// names again.
	ToolUseID string      `json:"tool_use_id,omitempty"`
	AgentTool string      `json:"agent_tool"`
	Call      policy.Call `json:"call"`
	// Shell: the call runs as the `scopegate exec` of its stored call,
	// which records its run; otherwise the agent runs the tool itself.
	Shell bool `json:"shell,omitempty"`
	// Reason, Rule, Resource and Message are the decision's that the
	// agent's user was asked about; Offered the widening the ask names.
	Reason   string `json:"reason,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Resource string `json:"resource,omitempty"`
	Message  string `json:"message,omitempty"`
	Offered  string `json:"offered,omitempty"`
	// Reported says that the agent runs scopegate's PostToolUse hook,
	// which reports the call ran: a turn that ends without that report
	// means the user said no.
	Reported bool      `json:"reported,omitempty"`
	Expires  time.Time `json:"expires"`
}

// storeAsk records a call left to the agent's user, atomically and readable
// only by the owner.
func storeAsk(branchDir string, a pendingAsk) error {
	return storeRecord(branchDir, AsksDir, "ask", a.CallID, a, true)
}

// pendingAsks lists the calls of a branch left to the agent's user, oldest
// first. A record that cannot be read is skipped with an error beside the
// others: it is settled by nobody, and expires with its grant.
func pendingAsks(branchDir string) ([]pendingAsk, error) {
	dir := filepath.Join(branchDir, AsksDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list asks: %w", err)
	}
	var out []pendingAsk
	var errs []error
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validCallID(id) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // settled meanwhile
		}
		var a pendingAsk
		if err == nil {
			err = json.Unmarshal(data, &a)
		}
		if err != nil || a.CallID != id {
			errs = append(errs, fmt.Errorf("ask %s: %v", id, err))
			continue
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CallID < out[j].CallID })
	return out, errors.Join(errs...)
}

// claimAsk takes the record of an ask for settling it: of two processes
// settling it at once, exactly one gets found.
func claimAsk(branchDir, callID string) (found bool, err error) {
	dir := filepath.Join(branchDir, AsksDir)
	stored, claimed := filepath.Join(dir, callID+".json"), filepath.Join(dir, callID+".settling")
	if err := os.Rename(stored, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("claim ask %s: %w", callID, err)
	}
	if err := os.Remove(claimed); err != nil {
		return true, fmt.Errorf("remove ask %s: %w", callID, err)
	}
	return true, nil
}

// The outcomes of a call left to the agent's user.
type askOutcome int

const (
	// askRan: the agent reports the tool ran (PostToolUse), or failed
	// (PostToolUseFailure).
	askRan askOutcome = iota + 1
	askFailed
	// askDeclined: the agent's turn ended and the call did not run: the
	// user said no, or stopped the turn.
	askDeclined
	// askExpired: nobody answered within the approval timeout.
	askExpired
)

// hookEvent answers an agent's event that decides nothing: it settles the
// calls of the agent's session left to its user. A session scopegate does
// not know has none.
func (g *Gateway) hookEvent(ctx context.Context, in agents.Input) (agents.Answer, error) {
	store := &sessions.Store{Root: g.opts.SessionsDir, Warn: g.opts.Warn}
	id := HookSessionID(in.SessionID)
	if _, err := os.Stat(store.SessionDir(id)); err != nil {
		return agents.Ack(), nil
	}
	dir, err := store.Resolve(id, "")
	if err != nil {
		return agents.Answer{}, err
	}
	g.settleAsks(ctx, Target{BranchDir: dir, Via: ViaHook}, in)
	return agents.Ack(), nil
}

// settleExpired settles the asks of t's branch that expired.
func (g *Gateway) settleExpired(ctx context.Context, t Target) {
	g.settleAsks(ctx, t, agents.Input{})
}

// settleAsks settles the calls of t's branch left to the agent's user,
// after the agent's event in (the zero Input: none): the call the agent
// reports run, every call at the end of a turn, every call whose ask
// expired.
func (g *Gateway) settleAsks(ctx context.Context, t Target, in agents.Input) {
	asks, err := pendingAsks(t.BranchDir)
	if err != nil {
		g.opts.Warn(err.Error())
	}
	now := g.opts.Now()
	for _, a := range asks {
		switch {
		case (in.Event == agents.EventPostToolUse || in.Event == agents.EventPostToolUseFailure) && in.ToolUseID != "" && a.ToolUseID == in.ToolUseID:
			outcome := askRan
			if in.Event == agents.EventPostToolUseFailure {
				outcome = askFailed
			}
			g.settleAsk(ctx, t, a, outcome)
		case in.Event == agents.EventUserPromptSubmit || in.Event == agents.EventStop || in.Event == agents.EventSessionEnd:
			g.settleAsk(ctx, t, a, askDeclined)
		case now.After(a.Expires):
			g.settleAsk(ctx, t, a, askExpired)
		}
	}
}

// settleAsk ends a call left to the agent's user: its stored call and
// grant, if still there, are removed, so that nothing outlives the offer,
// and its outcome is recorded under its call id (:MODE: hook). A shell
// call that ran was recorded by its `scopegate exec`; a file tool's
// outcome the agent does not report stays unknown, as its asked entry
// says.
func (g *Gateway) settleAsk(ctx context.Context, t Target, a pendingAsk, outcome askOutcome) {
	dir := t.BranchDir
	if found, err := claimAsk(dir, a.CallID); err != nil || !found {
		if err != nil {
			g.opts.Warn(err.Error())
		}
		return
	}
	if a.Shell {
		// exec takes the stored call when it runs: one still stored did
		// not run.
		stored, err := dropStored(dir, StoredCallsDir, a.CallID)
		if err != nil {
			g.opts.Warn(err.Error())
		}
		if _, err := dropStored(dir, GrantsDir, a.CallID); err != nil {
			g.opts.Warn(err.Error())
		}
		if !stored {
			return
		}
		if outcome == askRan || outcome == askFailed {
			// The agent ran another command in its place (the user edited
			// it in the dialog): this call did not run.
			outcome = askDeclined
		}
	} else if !a.Reported && (outcome == askDeclined || outcome == askExpired) {
		return
	}
	e := audit.Entry{CallID: a.CallID, Time: g.opts.Now(), Tool: a.Call.Tool, Reason: a.Reason, Rule: a.Rule, Resource: a.Resource,
		Cwd: a.Call.Cwd, Mode: audit.ModeHook, AgentTool: a.AgentTool, Args: a.Call.Args, Offered: a.Offered, Channel: ChannelHookAsk}
	if len(e.Args) == 0 || !json.Valid(e.Args) {
		e.Args = json.RawMessage("{}")
	}
	who := "the agent"
	if a.AgentTool != "" {
		who = "the agent's " + a.AgentTool
	}
	switch outcome {
	case askRan, askFailed:
		e.Decision, e.Reason, e.Answer, e.Approved = audit.DecisionAllowed, string(policy.ReasonAllowed), AnswerOnce, AnswerOnce
		e.Message = "the user approved it in the agent's dialog, and " + who + " ran it"
		if outcome == askFailed {
			e.Error = "the agent reports that the tool failed"
		}
	case askDeclined:
		e.Decision, e.Answer = audit.DecisionDenied, AnswerDecline
		e.Message = strings.TrimSuffix(a.Message, ".") + "; the agent's turn ended without the user approving it (No, Esc, or a new prompt)"
	case askExpired:
		e.Decision, e.Answer = audit.DecisionDenied, AnswerTimeout
		e.Message = strings.TrimSuffix(a.Message, ".") + fmt.Sprintf("; the ask expired at %s with no run", a.Expires.UTC().Format(time.RFC3339))
	}
	g.opts.Observer.ObserveApproval(e.Answer)
	log := g.log(dir)
	if err := g.record(ctx, log, audit.EventDecision, t, e); err != nil {
		g.opts.Warn(fmt.Sprintf("record the outcome of ask %s: %v", a.CallID, err))
	}
}

// dropStored removes the record callID of a branch's directory sub (a
// stored call, a grant): of two processes removing it at once, exactly one
// sees it there.
func dropStored(branchDir, sub, callID string) (bool, error) {
	dir := filepath.Join(branchDir, sub)
	stored, dropped := filepath.Join(dir, callID+".json"), filepath.Join(dir, callID+".dropped")
	if err := os.Rename(stored, dropped); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("remove %s %s: %w", sub, callID, err)
	}
	if err := os.Remove(dropped); err != nil {
		return true, fmt.Errorf("remove %s %s: %w", sub, callID, err)
	}
	return true, nil
}
