package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestGroupCommitKeepsEveryEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.org")
	var g Group
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &Log{Path: path, Group: &g}
			code := 0
			e := Entry{CallID: fmt.Sprintf("call-%03d", i), Time: time.Unix(1_800_000_000, 0), Tool: "shell",
				Decision: DecisionAllowed, Args: []byte(fmt.Sprintf(`{"command":"echo %d"}`, i)), ExitCode: &code,
				Stdout: fmt.Sprintf("* fake heading %d\n#+end_example\n", i)}
			if err := l.Append(context.Background(), e); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	es, err := ReadFile(path, Filter{Warn: func(err error) { t.Errorf("unreadable entry: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n {
		t.Fatalf("%d entries, want %d", len(es), n)
	}
	seen := map[string]bool{}
	for _, e := range es {
		seen[e.CallID] = true
		var i int
		fmt.Sscanf(e.CallID, "call-%d", &i)
		if want := fmt.Sprintf("* fake heading %d\n#+end_example\n", i); e.Stdout != want {
			t.Errorf("%s: stdout %q, want %q", e.CallID, e.Stdout, want)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct entries, want %d", len(seen), n)
	}
	if len(g.queues) != 0 {
		t.Fatalf("queues left: %d", len(g.queues))
	}
}

// A batch is synced when any entry in it asks to be: a call's entry that
// joins the batch of a check (written, not synced) is on disk all the same.
func TestGroupBatchSyncedWhenAnyEntryAsks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		syncs []bool
		want  bool
	}{
		{"one check", []bool{false}, false},
		{"one call", []bool{true}, true},
		{"checks", []bool{false, false, false}, false},
		{"a call joins a check", []bool{false, true}, true},
		{"a check joins a call", []bool{true, false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var batch []groupReq
			var want []string
			for i, s := range tc.syncs {
				text := fmt.Sprintf("* entry %d\n", i)
				batch = append(batch, groupReq{text: []byte(text), sync: s})
				want = append(want, text)
			}
			texts, sync := batchTexts(batch)
			var got []string
			for _, t := range texts {
				got = append(got, string(t))
			}
			if !slices.Equal(got, want) || sync != tc.want {
				t.Fatalf("batchTexts = %q, %v; want %q, %v", got, sync, want, tc.want)
			}
		})
	}
}

func TestRecoverRemovesStaleTempRecords(t *testing.T) {
	dir := t.TempDir()
	j := &Journal{Dir: dir}
	old := filepath.Join(dir, ".tmp-123")
	fresh := filepath.Join(dir, ".tmp-456")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Recover(context.Background(), &Log{Path: filepath.Join(dir, "tools.org")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("stale temp record left: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a temp record being written was removed: %v", err)
	}
}
