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
	"github.com/scopegate/scopegate/policy"
)

// StoredCallsDir is the directory of a branch holding the shell calls hooks
// decided, until `scopegate exec` runs them. It lies in the branch, which no
// tool call can write.
const StoredCallsDir = "hook-calls"

// ErrCallNotFound is returned by Exec for a call id that was never stored on
// the branch or has already run.
var ErrCallNotFound = errors.New("no stored call with this id (it never was, or it has already run)")

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
// and readable only by the owner.
func StoreCall(branchDir, callID string, call policy.Call) error {
	if !validCallID(callID) {
		return fmt.Errorf("store call: invalid call id %q", callID)
	}
	data, err := json.Marshal(call)
	if err != nil {
		return fmt.Errorf("store call: %w", err)
	}
	if err := writeStored(filepath.Join(branchDir, StoredCallsDir), callID+".json", data, false); err != nil {
		return fmt.Errorf("store call: %w", err)
	}
	return nil
}

// writeStored writes data as dir/name atomically (temp file, rename), the
// directory made 0700 and the file readable only by the owner. Durable
// adds an fsync of the file before the rename and of the directory after
// it, so that what the user's answer stored is there after a crash, whole;
// a stored call, which is lost to the same effect as a torn one (its run
// is refused), is left to the kernel's writeback.
func writeStored(dir, name string, data []byte, durable bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil || !durable {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
// spent by this run and lets it run under the widening granted.
func (g *Gateway) Exec(ctx context.Context, t Target, callID string, stdout, stderr io.Writer) (CallResult, error) {
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
	return g.call(ctx, t, call, runOptions{callID: callID, mode: audit.ModeExec, stdout: stdout, stderr: stderr, grant: true})
}
