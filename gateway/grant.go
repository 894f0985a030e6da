package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scopegate/scopegate/policy"
)

// GrantsDir is the directory of a branch holding one-time grants until the
// run they are for consumes them. It lies in the branch, which no tool call
// can write.
const GrantsDir = "grants"

// Grant lets the one call it is bound to run once under the branch's scope
// widened by Widenings: the user's answer "once" to an offer.
type Grant struct {
	// CallID is the call id the grant is bound to; only the run of that id
	// can claim it.
	CallID string `json:"call_id"`
	// Call is CallSum of the call the user approved: a grant never lets a
	// different call run under its id.
	Call string `json:"call"`
	// Widenings are what the scope lacks for the call.
	Widenings []policy.Widening `json:"widenings"`
	// Channel is how the user was asked (ChannelElicitation, ChannelHookAsk).
	Channel string `json:"channel"`
}

// CallSum identifies a call for a grant: the SHA-256 of its tool,
// arguments (as a JSON value, whatever their spelling) and cwd.
func CallSum(c policy.Call) string {
	var args any
	if json.Unmarshal(c.Args, &args) != nil {
		args = string(c.Args)
	}
	data, _ := json.Marshal(struct {
		Tool string `json:"tool"`
		Args any    `json:"args"`
		Cwd  string `json:"cwd"`
	}{c.Tool, args, c.Cwd})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// StoreGrant writes a one-time grant under its call id in the branch,
// atomically and readable only by the owner.
func StoreGrant(branchDir string, g Grant) error {
	if !validCallID(g.CallID) {
		return fmt.Errorf("store grant: invalid call id %q", g.CallID)
	}
	if len(g.Widenings) == 0 {
		return fmt.Errorf("store grant %s: no widening", g.CallID)
	}
	if _, err := expansionOf(g.Widenings); err != nil {
		return fmt.Errorf("store grant %s: %w", g.CallID, err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("store grant %s: %w", g.CallID, err)
	}
	if err := writeStored(filepath.Join(branchDir, GrantsDir), g.CallID+".json", data); err != nil {
		return fmt.Errorf("store grant %s: %w", g.CallID, err)
	}
	return nil
}

// claimGrant takes the grant of callID for its one run: the file is renamed
// away first, so that of two concurrent claims exactly one wins, and then
// removed. found is false when there is none (never granted, or spent).
func claimGrant(branchDir, callID string) (g Grant, found bool, err error) {
	if !validCallID(callID) {
		return Grant{}, false, fmt.Errorf("invalid call id %q", callID)
	}
	dir := filepath.Join(branchDir, GrantsDir)
	stored, claimed := filepath.Join(dir, callID+".json"), filepath.Join(dir, callID+".claimed")
	if err := os.Rename(stored, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Grant{}, false, nil
		}
		return Grant{}, false, fmt.Errorf("claim grant %s: %w", callID, err)
	}
	defer os.Remove(claimed)
	data, err := os.ReadFile(claimed)
	if err != nil {
		return Grant{}, false, fmt.Errorf("read grant %s: %w", callID, err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return Grant{}, false, fmt.Errorf("grant %s: %w", callID, err)
	}
	if g.CallID != callID {
		return Grant{}, false, fmt.Errorf("grant %s names call %s", callID, g.CallID)
	}
	if _, err := expansionOf(g.Widenings); err != nil {
		return Grant{}, false, fmt.Errorf("grant %s: %w", callID, err)
	}
	return g, true, nil
}
