package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/policy"
)

// StoredCallsDir is the directory of a branch holding the shell calls hooks
// decided, until `scopegate exec` runs them. It lies in the branch, which no
// tool call can write.
const StoredCallsDir = "hook-calls"

// ErrCallNotFound is returned by Exec for a call id that was never stored on
// the branch or has already run.
var ErrCallNotFound = errors.New("no stored call with this id (it never was, it has already run, or the ask it was stored for was declined or expired)")

// validCallID reports whether id has the shape of the call ids
// audit.NewCallID makes: 10 to 40 ASCII letters and digits. A loop, not a
// regexp, so that no process pays for compiling one at start-up.
func validCallID(id string) bool {
	if len(id) < 10 || len(id) > 40 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// StoreCall writes a decided call under callID in the branch, atomically
// and readable only by the owner. It is not Durable (atomicfile): a call
// lost in a crash is one exec refused.
func StoreCall(branchDir, callID string, call policy.Call) error {
	return storeRecord(branchDir, StoredCallsDir, "call", callID, call, false)
}

// storeRecord writes v as JSON under callID in the directory sub of the
// branch (writeStored); what names the record in errors.
func storeRecord(branchDir, sub, what, callID string, v any, sync bool) error {
	if !validCallID(callID) {
		return fmt.Errorf("store %s: invalid call id %q", what, callID)
	}
	data, err := json.Marshal(v)
	if err == nil {
		err = writeStored(filepath.Join(branchDir, sub), callID+".json", data, sync)
	}
	if err != nil {
		return fmt.Errorf("store %s %s: %w", what, callID, err)
	}
	return nil
}

// writeStored writes data as dir/name (atomicfile), the directory made
// 0700; with sync, Durable, so that what the answer names survives a
// crash.
func writeStored(dir, name string, data []byte, sync bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, name), data, atomicfile.Options{Durable: sync})
}

// claimCall takes the stored call callID for running: the file is renamed
// away first, so that of two concurrent claims exactly one wins, and a call
// id runs at most once.
func claimCall(branchDir, callID string) (policy.Call, error) {
	if !validCallID(callID) {
		return policy.Call{}, fmt.Errorf("invalid call id %q", callID)
	}
	dir := filepath.Join(branchDir, StoredCallsDir)
	stored, claimed := filepath.Join(dir, callID+".json"), filepath.Join(dir, callID+".run")
	if err := os.Rename(stored, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return policy.Call{}, fmt.Errorf("call %s: %w", callID, ErrCallNotFound)
		}
		return policy.Call{}, fmt.Errorf("claim call %s: %w", callID, err)
	}
	defer os.Remove(claimed)
	data, err := os.ReadFile(claimed)
	if err != nil {
		return policy.Call{}, fmt.Errorf("read call %s: %w", callID, err)
	}
	call, err := policy.ParseCall(data)
	if err != nil {
		return policy.Call{}, fmt.Errorf("stored call %s: %w", callID, err)
	}
	return call, nil
}

// Exec runs the shell call a hook stored under callID on the branch of t:
// it is decided again against the scope as it is now, then run exactly as
// Call runs it, its output copied to stdout and stderr as it comes, and
// recorded in tools.org under the same call id (:MODE: exec). A call id runs
// once; an unknown or spent one is ErrCallNotFound. A one-time grant stored
// under the same id (the user approved the call in the agent's dialog) is
// spent by this run and lets it run under the widening granted, unless it
// expired. command, when not empty, is the command the agent was told to
// run (and its dialog showed): a call whose stored command differs is
// refused, and nothing of it is left.
func (g *Gateway) Exec(ctx context.Context, t Target, callID, command string, stdout, stderr io.Writer) (CallResult, error) {
	if t.BranchDir == "" {
		return CallResult{}, ErrNoBranch
	}
	call, err := claimCall(t.BranchDir, callID)
	if err != nil {
		return CallResult{}, err
	}
	if call.Tool != policy.ToolShell {
		return CallResult{}, fmt.Errorf("call %s is a %s call; exec runs shell calls", callID, call.Tool)
	}
	t.Via = ViaHook
	// The run settles the ask the call was stored for, whatever it gives.
	defer func() {
		if _, err := claimAsk(t.BranchDir, callID); err != nil {
			g.opts.Warn(err.Error())
		}
	}()
	if stored := shellCommand(call); command != "" && command != stored {
		return g.refuseExec(ctx, t, callID, call, fmt.Sprintf("the command to run, %s, is not the command scopegate decided under call %s, %s: it was changed after the decision (in the agent's dialog?), and nothing ran",
			policy.ShellQuote(command), callID, policy.ShellQuote(stored)))
	}
	return g.call(ctx, t, call, runOptions{callID: callID, mode: audit.ModeExec, stdout: stdout, stderr: stderr, grant: true})
}

// refuseExec refuses the run of a stored call: its grant is dropped, and
// the refusal recorded under its call id.
func (g *Gateway) refuseExec(ctx context.Context, t Target, callID string, call policy.Call, why string) (CallResult, error) {
	if _, err := dropStored(t.BranchDir, GrantsDir, callID); err != nil {
		g.opts.Warn(err.Error())
	}
	d := policy.Deny(call.Tool, policy.Violation{Reason: policy.ReasonInvalidArguments, Resource: "command", Message: why})
	res := CallResult{CallID: callID, Decision: d}
	e := audit.Entry{CallID: callID, Time: g.opts.Now(), Tool: call.Tool, Decision: audit.DecisionDenied, Reason: string(d.Reason),
		Resource: d.Resource, Message: d.Message, Cwd: call.Cwd, Mode: audit.ModeExec, Args: call.Args}
	g.countDecision(t, call, decision{d: d})
	if err := g.record(ctx, g.log(t.BranchDir), audit.EventDecision, t, e); err != nil {
		return res, fmt.Errorf("audit: %w", err)
	}
	return res, nil
}
