package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/scopegate/scopegate/audit"
)

// verifyChain runs `scopegate audit verify --json` on w's branch and fails
// unless it exits 0 with a report that holds.
func verifyChain(t *testing.T, w *workspace) audit.Report {
	t.Helper()
	out := w.run(0, "audit", "verify", "--session", w.id, "--json")
	var r audit.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("verify printed %q: %v", out, err)
	}
	if !r.OK || len(r.Breaks) != 0 || r.Head == nil || r.Head.Seq != uint64(r.Entries) {
		t.Fatalf("verify: %s", out)
	}
	return r
}

// TestAuditChainConcurrentProcesses: 32 scopegate processes write calls,
// checks, denials and scope changes to one branch at once; the chain holds
// and counts every entry.
func TestAuditChainConcurrentProcesses(t *testing.T) {
	const procs, each = 32, 3
	w := newWorkspace(t, "echo")
	before := verifyChain(t, w).Entries
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			for i := range each {
				switch (p + i) % 4 {
				case 0:
					w.run(0, "call", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"echo %d %d"},"cwd":%q}`, p, i, w.proj))
				case 1:
					w.run(0, "check", "--session", w.id, fmt.Sprintf(`{"tool":"shell","args":{"command":"echo %d"},"cwd":%q}`, p, w.proj))
				case 2:
					w.run(3, "check", "--session", w.id, `{"tool":"shell","args":{"command":"curl http://example.com"}}`)
				case 3:
					w.run(0, "scope", "expand", "--session", w.id, "--read", fmt.Sprintf("/srv/p%d-%d/**", p, i))
				}
			}
		})
	}
	wg.Wait()
	if r := verifyChain(t, w); r.Entries != before+procs*each {
		t.Errorf("%d chained entries, want %d", r.Entries, before+procs*each)
	}
}
