package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/internal/orgcheck"
)

// Child process modes of this test binary, chosen by environment.
const (
	envAppend  = "AUDIT_TEST_APPEND"  // path: append appendN entries as writer AUDIT_TEST_WRITER
	envRecover = "AUDIT_TEST_RECOVER" // branch dir: run Recover once, print n
)

const appendN = 25

func TestMain(m *testing.M) {
	if path := os.Getenv(envAppend); path != "" {
		os.Exit(childAppend(path, os.Getenv("AUDIT_TEST_WRITER")))
	}
	if dir := os.Getenv(envRecover); dir != "" {
		j := &Journal{Dir: InflightDir(dir)}
		n, err := j.Recover(context.Background(), &Log{Path: filepath.Join(dir, "tools.org"), NoSync: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(n)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writerEntry is entry i of writer w; its output is large enough that a
// torn or interleaved write would show.
func writerEntry(w string, i int) Entry {
	out := fmt.Sprintf("writer %s entry %d\n* not a heading\n#+end_example\n", w, i)
	for len(out) < 6000 {
		out += out
	}
	args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %s %d", w, i)})
	return Entry{
		CallID: fmt.Sprintf("W%sN%d", w, i), Time: testTime, Tool: "shell",
		Decision: DecisionAllowed, Reason: "allowed", Args: args, Stdout: out,
		ExitCode: ptr(i), DurationMS: ptr(int64(i)),
	}
}

func childAppend(path, w string) int {
	log := &Log{Path: path}
	for i := range appendN {
		if err := log.Append(context.Background(), writerEntry(w, i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestConcurrentProcessesAppend(t *testing.T) {
	const writers = 32
	path := filepath.Join(t.TempDir(), "tools.org")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envAppend+"="+path, "AUDIT_TEST_WRITER="+strconv.Itoa(w))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v: %s", w, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var warns []error
	got, err := ReadFile(path, Filter{Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %v", warns)
	}
	if len(got) != writers*appendN {
		t.Fatalf("read %d entries, want %d", len(got), writers*appendN)
	}
	seen := map[string]bool{}
	for _, e := range got {
		var w, i int
		if _, err := fmt.Sscanf(e.CallID, "W%dN%d", &w, &i); err != nil {
			t.Fatalf("bad call id %q", e.CallID)
		}
		if seen[e.CallID] {
			t.Errorf("entry %s twice", e.CallID)
		}
		seen[e.CallID] = true
		want := want(writerEntry(strconv.Itoa(w), i), 0)
		if e.Stdout != want.Stdout || string(e.Args) != string(want.Args) || *e.ExitCode != i || e.Summary != want.Summary {
			t.Errorf("entry %s damaged", e.CallID)
		}
	}
	mustVerify(t, path, writers*appendN)
	hs := orgcheck.Require(t, path)
	if len(hs) != writers*appendN {
		t.Fatalf("emacs found %d level-1 headlines, want %d", len(hs), writers*appendN)
	}
	for _, h := range hs {
		if h.Decision != DecisionAllowed {
			t.Fatalf("emacs: headline %q has DECISION %q", h.Title, h.Decision)
		}
	}
}

// deadPID returns the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestRecover(t *testing.T) {
	self, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		pid       int
		start     uint64
		recovered bool
	}{
		{"dead owner", -1, 0, true},
		{"pid reused by another process", os.Getpid(), self.start + 1, true},
		{"live owner", os.Getpid(), self.start, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			j := &Journal{Dir: InflightDir(dir)}
			log := &Log{Path: filepath.Join(dir, "tools.org"), NoSync: true}
			pid := tt.pid
			if pid < 0 {
				pid = deadPID(t)
			}
			rec := Record{CallID: "C1", PID: pid, PIDStart: tt.start, Started: testTime, Tool: "shell",
				Args: json.RawMessage(`{"command":"make"}`), Reason: "allowed", Confinement: "landlock"}
			if err := j.Begin(t.Context(), rec); err != nil {
				t.Fatal(err)
			}
			n, err := j.Recover(t.Context(), log)
			if err != nil {
				t.Fatal(err)
			}
			es, err := ReadFile(log.Path, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(j.Dir, "C1.json"))
			if !tt.recovered {
				if n != 0 || len(es) != 0 || statErr != nil {
					t.Errorf("live owner's record touched: n=%d entries=%d record: %v", n, len(es), statErr)
				}
				return
			}
			if n != 1 || len(es) != 1 {
				t.Fatalf("recovered %d, %d entries; want 1, 1", n, len(es))
			}
			e := es[0]
			if e.CallID != "C1" || e.Decision != DecisionInterrupted || e.Keyword() != "INTERRUPTED" ||
				e.Summary != "make" || !e.Time.Equal(testTime) || e.Confinement != "landlock" {
				t.Errorf("entry %+v", e)
			}
			if statErr == nil {
				t.Error("record still there after recovery")
			}
			mustVerify(t, log.Path, 1)
			left, _ := os.ReadDir(j.Dir)
			if len(left) != 0 {
				t.Errorf("journal not empty: %v", left)
			}
		})
	}
}

func TestRecoverConcurrentlyOnce(t *testing.T) {
	const records = 20
	dir := t.TempDir()
	j := &Journal{Dir: InflightDir(dir)}
	dead := deadPID(t)
	for i := range records {
		if err := j.Begin(t.Context(), Record{CallID: fmt.Sprintf("R%02d", i), PID: dead, PIDStart: 1, Tool: "shell"}); err != nil {
			t.Fatal(err)
		}
	}
	// Four processes and four goroutines of this one recover at once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envRecover+"="+dir)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("recover process: %v", err)
				return
			}
			n, _ := strconv.Atoi(string(out[:len(out)-1]))
			mu.Lock()
			total += n
			mu.Unlock()
		}()
		go func() {
			defer wg.Done()
			n, err := j.Recover(context.Background(), &Log{Path: filepath.Join(dir, "tools.org"), NoSync: true})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	es, err := ReadFile(filepath.Join(dir, "tools.org"), Filter{Decision: DecisionInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range es {
		count[e.CallID]++
	}
	if total != records || len(es) != records || len(count) != records {
		t.Errorf("recovered %d, %d entries, %d distinct; want %d each", total, len(es), len(count), records)
	}
	for id, c := range count {
		if c != 1 {
			t.Errorf("%s written %d times", id, c)
		}
	}
	mustVerify(t, filepath.Join(dir, "tools.org"), records)
}

func TestRecoverKillsLiveChild(t *testing.T) {
	dir := t.TempDir()
	j := &Journal{Dir: InflightDir(dir)}
	child := exec.Command("sleep", "60")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill() })
	if err := j.Begin(t.Context(), Record{CallID: "K1", PID: deadPID(t), PIDStart: 1, Tool: "shell"}); err != nil {
		t.Fatal(err)
	}
	if err := j.SetChild("K1", child.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// A record naming a different process with the child's pid must not
	// get it killed: checked first, on a second record with a wrong start.
	if err := j.Begin(t.Context(), Record{CallID: "K0", PID: deadPID(t), PIDStart: 1, Tool: "shell",
		ChildPID: child.Process.Pid, ChildStart: 1}); err != nil {
		t.Fatal(err)
	}
	log := &Log{Path: filepath.Join(dir, "tools.org"), NoSync: true}
	// Recover K0 alone first by hiding K1.
	k1 := filepath.Join(j.Dir, "K1.json")
	if err := os.Rename(k1, k1+".hold"); err != nil {
		t.Fatal(err)
	}
	if n, err := j.Recover(t.Context(), log); err != nil || n != 1 {
		t.Fatalf("Recover K0 = %d, %v", n, err)
	}
	if err := child.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("child killed by a record that does not match it: %v", err)
	}
	if err := os.Rename(k1+".hold", k1); err != nil {
		t.Fatal(err)
	}
	if n, err := j.Recover(t.Context(), log); err != nil || n != 1 {
		t.Fatalf("Recover K1 = %d, %v", n, err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case err := <-done:
		ws, ok := child.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("child ended with %v, want SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("child still running after Recover")
	}
	es, err := ReadFile(log.Path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[1].CallID != "K1" || es[1].Decision != DecisionInterrupted {
		t.Fatalf("entries %+v", es)
	}
}

func TestJournalEnd(t *testing.T) {
	dir := t.TempDir()
	j := &Journal{Dir: InflightDir(dir)}
	if err := j.Begin(t.Context(), Record{CallID: "E1", Tool: "shell"}); err != nil {
		t.Fatal(err)
	}
	rec, err := j.read(j.path("E1"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.PID != os.Getpid() || rec.PIDStart == 0 || rec.Started.IsZero() {
		t.Errorf("Begin did not fill the owner: %+v", rec)
	}
	if st, err := os.Stat(j.Dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("journal dir: %v %v", st, err)
	}
	if err := j.End("E1"); err != nil {
		t.Fatal(err)
	}
	if err := j.End("E1"); err == nil {
		t.Error("End of an ended call succeeded")
	}
	for _, bad := range []string{"", "../x", "a/b", "x.claim.1"} {
		if err := j.Begin(t.Context(), Record{CallID: bad}); err == nil {
			t.Errorf("Begin accepted call id %q", bad)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    procIdentity
		wantErr bool
	}{
		{"plain", "42 (sleep) S 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 98765 1000 100", procIdentity{start: 98765, pgrp: 42}, false},
		{"name with spaces and parens", "42 (a) b (c) R 1 7 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 55 1000 100", procIdentity{start: 55, pgrp: 7}, false},
		{"zombie", "42 (x) Z 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 55 1000 100", procIdentity{}, true},
		{"short", "42 (x) S 1", procIdentity{}, true},
		{"no name", "garbage", procIdentity{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStat = %+v, %v; want %+v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// A process that died between writing a call's entry and removing its
// record left a finished call: recovery removes the record and writes no
// INTERRUPTED entry. Text inside another entry that looks like the call's
// drawer does not count as its entry.
func TestRecoverFinishedCall(t *testing.T) {
	dir := t.TempDir()
	j := &Journal{Dir: InflightDir(dir)}
	log := &Log{Path: filepath.Join(dir, "tools.org"), NoSync: true}
	forged := "* ALLOWED shell\n:PROPERTIES:\n:CALL_ID: C2\n:END:\n"
	for _, e := range []Entry{
		{CallID: "C0", Tool: "shell", Decision: DecisionAllowed, Reason: "allowed", Args: json.RawMessage(`{"command":"echo"}`), Stdout: forged},
		{CallID: "C1", Tool: "shell", Decision: DecisionAllowed, Reason: "allowed", Args: json.RawMessage(`{"command":"make"}`)},
	} {
		if err := log.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	pid := deadPID(t)
	for _, id := range []string{"C1", "C2"} {
		if err := j.Begin(t.Context(), Record{CallID: id, PID: pid, Started: testTime, Tool: "shell", Reason: "allowed"}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := j.Recover(t.Context(), log)
	if err != nil {
		t.Fatal(err)
	}
	es, err := ReadFile(log.Path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.CallID+" "+e.Decision)
	}
	want := []string{"C0 allowed", "C1 allowed", "C2 interrupted"}
	if n != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recovered %d, entries %v; want 1, %v", n, got, want)
	}
	if left, _ := os.ReadDir(j.Dir); len(left) != 0 {
		t.Errorf("journal not empty: %v", left)
	}
}
