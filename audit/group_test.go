package audit

import (
	"bytes"
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

// A Group that keeps chain heads open (serve) writes the same chain as
// appends that open theirs, with more branches than it keeps (heads
// closed and opened again), appends of other processes in between, a head
// file removed and one replaced meanwhile, and a cut file: verify holds
// with every entry recorded in the head, or finds the cut, as it does
// with heads opened per append.
func TestGroupKeptHeads(t *testing.T) {
	dir := t.TempDir()
	n := map[string]int{}
	appendTo := func(g *Group, path string) {
		t.Helper()
		n[path]++
		log := &Log{Path: path, NoSync: true, Group: g}
		if err := log.Append(t.Context(), chainEntry(n[path])); err != nil {
			t.Fatal(err)
		}
	}
	verified := func(path string) {
		t.Helper()
		r, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		// Every entry is recorded in the head: none was written to a head
		// file no longer there.
		if !r.OK || r.Entries != n[path] || r.Unrecorded != 0 {
			t.Errorf("%s: verify %+v, want %d entries, all recorded", filepath.Base(path), r, n[path])
		}
	}
	g := &Group{KeepOpen: 3}
	paths := []string{filepath.Join(dir, "a.org"), filepath.Join(dir, "b.org"), filepath.Join(dir, "c.org")}
	for round := range 6 {
		for i, p := range paths {
			appendTo(g, p)
			if i == 1 && round%2 == 0 {
				appendTo(nil, p) // another process, its own head
			}
		}
		switch round {
		case 2:
			// Removed: the kept descriptor would write where no reader looks.
			if err := os.Remove(ChainHeadPath(paths[0])); err != nil {
				t.Fatal(err)
			}
		case 3:
			// Replaced, as a restore would.
			head := ChainHeadPath(paths[2])
			data, err := os.ReadFile(head)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(head+".new", data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(head+".new", head); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(g.logs) != len(paths) {
		t.Fatalf("%d heads open, want %d", len(g.logs), len(paths))
	}
	for _, p := range paths {
		verified(p)
	}
	// More branches than it keeps: heads are closed and opened again.
	small := &Group{KeepOpen: 1}
	for range 3 {
		for _, p := range paths {
			appendTo(small, p)
		}
	}
	if len(small.logs) != 1 {
		t.Fatalf("%d heads open, at most 1", len(small.logs))
	}
	for _, p := range paths {
		verified(p)
	}
	// A cut file: the next append goes on from the kept head, and verify
	// finds the cut.
	p := paths[2]
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndex(data, []byte("\n* "))
	if err := os.WriteFile(p, data[:last+1], 0o600); err != nil {
		t.Fatal(err)
	}
	appendTo(g, p)
	if r, _ := Verify(p); r.OK {
		t.Fatalf("verify holds after a cut: %+v", r)
	}
}

// After gc rewrote a tools.org whose last line had no newline, the next
// append still starts its headline on a line of its own: gc ends the file
// with a newline, as the head's size claims for the append that skips
// reading the last byte.
func TestAppendAfterPruneOfTornLine(t *testing.T) {
	path := writeChain(t, 4)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("* a heading of another program\nno newline at the end")
	f.Close()
	pruneFirst(t, path)
	log := &Log{Path: path, NoSync: true}
	if err := log.Append(t.Context(), chainEntry(5)); err != nil {
		t.Fatal(err)
	}
	es, err := ReadFile(path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := es[len(es)-1].CallID; got != "C05" {
		t.Fatalf("last entry %q, want C05: its headline did not start a line", got)
	}
	if r, _ := Verify(path); !r.OK {
		t.Fatalf("verify: %+v", r)
	}
}

// A Group keeps tools.org open with the chain state after its own last
// append. Whatever changed the file between two of its appends is noticed
// under the lock: another appender, another appender's entry cut again to
// the very size the Group left, gc's rewrite in place, the file renamed
// over with the old one kept as a backup (an editor's save), the file
// removed. The next append goes to the file at the path, after the chain
// that file holds, and verify says what it says with a log opened per
// append: with the state kept where change times are fine, and with the
// head read each time where they are not.
func TestGroupKeptLogChanged(t *testing.T) {
	for _, coarse := range []bool{false, true} {
		t.Run(fmt.Sprintf("coarse=%v", coarse), func(t *testing.T) { testGroupKeptLogChanged(t, coarse) })
	}
}

func testGroupKeptLogChanged(t *testing.T, coarse bool) {
	for _, tc := range []struct {
		name string
		// change runs between the Group's appends of C01 and C02.
		change func(t *testing.T, path string)
		// ok is whether verify holds afterwards; entries how many
		// chained entries the file at path has.
		ok      bool
		entries int
	}{
		{"another appender", func(t *testing.T, path string) {
			appendOne(t, &Log{Path: path, NoSync: true}, 50)
		}, true, 3},
		{"another appender's entry cut", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			appendOne(t, &Log{Path: path, NoSync: true}, 50)
			// Back to the size the Group's append left: only the head
			// that entry wrote knows it was there.
			if err := os.Truncate(path, st.Size()); err != nil {
				t.Fatal(err)
			}
		}, false, 2},
		{"gc rewrite in place", func(t *testing.T, path string) {
			appendOne(t, &Log{Path: path, NoSync: true}, 50)
			appendOne(t, &Log{Path: path, NoSync: true}, 51)
			pruneFirst(t, path)
		}, true, 3},
		{"renamed over, the old file a backup", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path, path+"~"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, 2},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tools.org")
			log := &Log{Path: path, NoSync: true, Group: &Group{KeepOpen: 4, coarseTimes: coarse}}
			appendOne(t, log, 1)
			tc.change(t, path)
			appendOne(t, log, 2)
			es, err := ReadFile(path, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 || es[len(es)-1].CallID != "C02" {
				t.Fatalf("the Group's append is not at the end of %s: %d entries", path, len(es))
			}
			r, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK != tc.ok || r.Entries != tc.entries || (tc.ok && r.Unrecorded != 0) {
				t.Fatalf("verify %+v, want ok %v with %d entries, all recorded", r, tc.ok, tc.entries)
			}
			if backup, err := os.ReadFile(path + "~"); err == nil && bytes.Contains(backup, []byte("C02")) {
				t.Fatal("the Group's append went to the file renamed away")
			}
		})
	}
}

func appendOne(t *testing.T, log *Log, i int) {
	t.Helper()
	if err := log.Append(t.Context(), chainEntry(i)); err != nil {
		t.Fatal(err)
	}
}

func TestKernelAtLeast(t *testing.T) {
	for release, want := range map[string]bool{
		"6.13.0": true, "6.13": true, "6.18.44-fc-v657": true, "7.0.1": true, "6.14-rc1": true,
		"6.12.9": false, "5.15.0-91-generic": false, "6.1.0-28-amd64": false,
		"": false, "6": false, "x.13": false, "6.x": false,
	} {
		if got := kernelAtLeast(release, 6, 13); got != want {
			t.Errorf("kernelAtLeast(%q, 6, 13) = %v, want %v", release, got, want)
		}
	}
}

// pruneFirst drops the first entry of the tools.org at path as gc does: in
// place, and the chain head rebased.
func pruneFirst(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := true
	p := Prune(data, func([]byte) bool {
		drop := first
		first = false
		return drop
	})
	if err := os.WriteFile(path, p.Text, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Rebase(path); err != nil {
		t.Fatal(err)
	}
}
