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
	"time"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
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
	// Expires, when set, is when the grant lapses: a grant stored before
	// the user answers (the agent's dialog) is good only until then.
	Expires time.Time `json:"expires,omitzero"`
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
	if len(g.Widenings) == 0 {
		return fmt.Errorf("store grant %s: no widening", g.CallID)
	}
	if _, err := sessions.ExpansionOf(g.Widenings...); err != nil {
		return fmt.Errorf("store grant %s: %w", g.CallID, err)
	}
	return storeRecord(branchDir, GrantsDir, "grant", g.CallID, g, true)
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
	if _, err := sessions.ExpansionOf(g.Widenings...); err != nil {
		return Grant{}, false, fmt.Errorf("grant %s: %w", callID, err)
	}
	return g, true, nil
}

// grantedScope is sc, the compiled scope of the file at path, widened by a
// grant's widenings.
func grantedScope(path string, sc *policy.Scope, env policy.Env, ws []policy.Widening) (*policy.Scope, error) {
	x, err := sessions.ExpansionOf(ws...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", policy.ErrInvalidScope, err)
	}
	widened, err := policy.Compile(widenDocument(sc.Document(), x), env)
	if err != nil {
		return nil, fmt.Errorf("%s widened by a grant: %w", path, err)
	}
	return widened.Within(sc.Managed()), nil
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
			entries = []string{policy.NetworkAny.String()}
		}
		for _, p := range x.AllowSockets {
			entries = add(entries, []string{policy.SocketEntry(p)})
		}
		doc.Network = policy.NetworkRules{Mode: policy.NetworkList, Hosts: entries}
	}
	return doc
}
