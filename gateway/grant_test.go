package gateway

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
)

// TestGrantClaimedOnce: of concurrent claims of one grant exactly one wins,
// and a spent grant is gone.
func TestGrantClaimedOnce(t *testing.T) {
	dir := t.TempDir()
	id := audit.NewCallID(time.Now())
	c := policy.Call{Tool: policy.ToolShell, Args: []byte(`{"command":"cat /x"}`), Cwd: "/p"}
	if err := StoreGrant(dir, Grant{CallID: id, Call: CallSum(c), Channel: ChannelHookAsk,
		Widenings: []policy.Widening{{Flag: "--read", Value: "/x"}}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, GrantsDir, id+".json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stored grant: %v %v", fi, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			g, found, err := claimGrant(dir, id)
			if err != nil {
				t.Error(err)
			}
			if found {
				mu.Lock()
				won++
				mu.Unlock()
				if g.Call != CallSum(c) || g.Channel != ChannelHookAsk {
					t.Errorf("claimed %+v", g)
				}
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims won, want 1", won)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, GrantsDir, "*")); len(left) != 0 {
		t.Fatalf("left after the claim: %v", left)
	}
}

// TestGrantRefused: a grant that cannot be applied is never stored, and a
// grant for another call lets nothing run.
func TestGrantRefused(t *testing.T) {
	dir := t.TempDir()
	id := audit.NewCallID(time.Now())
	for _, ws := range [][]policy.Widening{nil, {{Flag: "--deny", Value: "/x"}}, {{Flag: "--read", Value: "relative"}},
		{{Flag: "--network", Value: "any"}}, {{Flag: "--read", Value: " "}}} {
		if err := StoreGrant(dir, Grant{CallID: id, Widenings: ws}); err == nil {
			t.Errorf("StoreGrant with %v stored", ws)
		}
	}
	if err := StoreGrant(dir, Grant{CallID: "../x/123456", Widenings: []policy.Widening{{Flag: "--read", Value: "/x"}}}); err == nil {
		t.Error("StoreGrant with a bad id stored")
	}
	g := New(Options{})
	c := policy.Call{Tool: policy.ToolReadFile, Args: []byte(`{"path":"/x"}`), Cwd: "/"}
	other := policy.Call{Tool: policy.ToolReadFile, Args: []byte(`{"path":"/y"}`), Cwd: "/"}
	if err := os.WriteFile(filepath.Join(dir, "scope.yml"), []byte("paths: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := StoreGrant(dir, Grant{CallID: id, Call: CallSum(c), Widenings: []policy.Widening{{Flag: "--read", Value: "/y"}}}); err != nil {
		t.Fatal(err)
	}
	b := g.open(Target{BranchDir: dir})
	g.takeGrant(b, other, id)
	dec := g.decide(b, other, decideOptions{execution: policy.ExecutionConfined})
	if _, ok := g.granted(other, dec); ok {
		t.Fatal("a grant for another call let this one run")
	}
	if _, found, _ := claimGrant(dir, id); found {
		t.Fatal("the mismatched grant was not spent")
	}
}
