package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scexec "github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/orgcheck"
)

// oldEntry is a tools.org entry from 2020, as the writer renders one.
const oldEntry = `* DENIED shell: curl http://example.com
:PROPERTIES:
:CALL_ID:  01E0000000000000000000OLD1
:TIMESTAMP: [2020-01-02 Thu 10:30]
:TIME:     2020-01-02T10:30:05.123Z
:TOOL:     shell
:DECISION: denied
:REASON:   command_not_allowed
:RULE:     shell_commands.allow
:END:
** Arguments
#+begin_src json
{"command":"curl http://example.com"}
#+end_src
`

func TestGCPrunesAuditAndArchivesIdleSessions(t *testing.T) {
	w := newWorkspace(t)
	log := filepath.Join(w.branch, "tools.org")
	// An old entry first, then two of today.
	if err := os.WriteFile(log, []byte(oldEntry), 0o600); err != nil {
		t.Fatal(err)
	}
	w.run(3, "check", "--session", w.id, `{"tool":"shell","args":{"command":"curl x"},"cwd":"`+w.proj+`"}`)
	w.run(0, "check", "--session", w.id, `{"tool":"read_file","args":{"path":"x"},"cwd":"`+w.proj+`"}`)
	before, _ := os.ReadFile(log)

	// A second session untouched for a year.
	idle := strings.TrimSpace(string(w.run(0, "session", "create", "--id", "idle", "--worktree", w.proj)))
	if !strings.Contains(idle, `"idle"`) {
		t.Fatalf("session create: %s", idle)
	}
	old := time.Now().Add(-365 * 24 * time.Hour)
	filepath.Walk(filepath.Join(w.sessions, "idle"), func(p string, _ os.FileInfo, _ error) error {
		return os.Chtimes(p, old, old)
	})

	tests := []struct {
		name     string
		args     []string
		want     []string
		entries  int
		idleLeft bool
		archived bool
	}{
		{name: "dry run by default", args: []string{"gc", "--session-days", "180"},
			want:    []string{"would prune 1 of 3 entries", "would archive session idle", "dry run"},
			entries: 3, idleLeft: true},
		{name: "audit only", args: []string{"gc", "--apply", "--session-days", "0"},
			want: []string{"pruned 1 of 3 entries"}, entries: 2, idleLeft: true},
		{name: "archive idle sessions", args: []string{"gc", "--apply", "--session-days", "180"},
			want: []string{"archived session idle"}, entries: 2, archived: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := string(w.run(0, tt.args...))
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("output %q lacks %q", out, s)
				}
			}
			if hs := orgcheck.Require(t, log); len(hs) != tt.entries {
				t.Errorf("tools.org has %d entries, want %d", len(hs), tt.entries)
			}
			_, err := os.Stat(filepath.Join(w.sessions, "idle"))
			if (err == nil) != tt.idleLeft {
				t.Errorf("idle session present = %v, want %v", err == nil, tt.idleLeft)
			}
			_, err = os.Stat(filepath.Join(w.sessions, archiveDir, "idle", "branches", "main", "scope.yml"))
			if (err == nil) != tt.archived {
				t.Errorf("archived session present = %v, want %v", err == nil, tt.archived)
			}
		})
	}
	after, _ := os.ReadFile(log)
	if want := strings.TrimPrefix(string(before), oldEntry); string(after) != want {
		t.Errorf("pruned tools.org:\n%s\nwant:\n%s", after, want)
	}
	if _, err := os.Stat(log + ".gc"); !os.IsNotExist(err) {
		t.Errorf("backup left: %v", err)
	}
	verifyChain(t, w)
	// Appends after a prune land after the kept entries.
	w.run(0, "check", "--session", w.id, `{"tool":"read_file","args":{"path":"y"},"cwd":"`+w.proj+`"}`)
	if hs := orgcheck.Require(t, log); len(hs) != 3 {
		t.Errorf("after a new check: %d entries, want 3", len(hs))
	}
	verifyChain(t, w)
	// Removal instead of archiving.
	w.run(0, "session", "create", "--id", "idle2", "--worktree", w.proj)
	filepath.Walk(filepath.Join(w.sessions, "idle2"), func(p string, _ os.FileInfo, _ error) error {
		return os.Chtimes(p, old, old)
	})
	w.run(0, "gc", "--apply", "--session-days", "30", "--session-action", "remove")
	if _, err := os.Stat(filepath.Join(w.sessions, "idle2")); !os.IsNotExist(err) {
		t.Errorf("idle2 not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.sessions, w.id)); err != nil {
		t.Errorf("active session removed: %v", err)
	}
}

// gc removes the deny index files no walk will use: one whose tree is
// gone, one no process read or wrote for --session-days, what an
// unfinished write left; the dry run says so and removes nothing.
func TestGCRemovesUnusedIndexFiles(t *testing.T) {
	w := newWorkspace(t, "ls")
	index := filepath.Join(w.sessions, gateway.IndexDirName)
	// A call on each of three projects leaves each an index file.
	trees := map[string]string{"live": w.proj}
	for _, name := range []string{"doomed", "quiet"} {
		dir := filepath.Join(w.root, name)
		if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		trees[name] = dir
	}
	// A directory is indexed once it has not changed for two seconds (the
	// deny walk's racy window).
	time.Sleep(2100 * time.Millisecond)
	for name, dir := range trees {
		id := w.id
		if name != "live" {
			out := w.run(0, "session", "create", "--id", name, "--worktree", dir)
			if !strings.Contains(string(out), name) {
				t.Fatalf("session create: %s", out)
			}
			w.run(0, "scope", "expand", "--session", name, "--allow-command", "ls")
			id = name
		}
		w.run(0, "call", "--session", id, `{"tool":"shell","args":{"command":"ls"},"cwd":"`+dir+`"}`)
	}
	files, err := scexec.IndexFiles(index)
	if err != nil {
		t.Fatal(err)
	}
	byTree := map[string]string{}
	for _, f := range files {
		byTree[f.Tree] = f.Path
	}
	for name, dir := range trees {
		if byTree[dir] == "" {
			t.Fatalf("no index file of %s: %+v", name, files)
		}
	}
	if err := os.RemoveAll(trees["doomed"]); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-365 * 24 * time.Hour)
	if err := os.Chtimes(byTree[trees["quiet"]], old, old); err != nil {
		t.Fatal(err)
	}
	// What atomicfile leaves when its writer dies before the rename.
	tmp := filepath.Join(index, "."+filepath.Base(byTree[trees["quiet"]])+".tmp-123")
	if err := os.WriteFile(tmp, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	gone := []string{byTree[trees["doomed"]], byTree[trees["quiet"]], tmp}
	out := string(w.run(0, "gc", "--session-days", "180"))
	for _, want := range []string{
		"would remove deny index file " + byTree[trees["doomed"]] + " (its tree " + trees["doomed"] + " is gone)",
		"would remove deny index file " + byTree[trees["quiet"]] + " (not used for 365 days)",
		"would remove deny index file " + tmp + " (left by a write that did not finish)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, byTree[w.proj]) {
		t.Errorf("dry run would remove the live index file:\n%s", out)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the dry run removed %s: %v", p, err)
		}
	}
	// With session_days 0 (keep all), a file not used for a year stays.
	if out := string(w.run(0, "gc", "--apply", "--session-days", "0")); strings.Contains(out, byTree[trees["quiet"]]) {
		t.Errorf("--session-days 0 removed an unused index file:\n%s", out)
	}
	w.run(0, "gc", "--apply", "--session-days", "180")
	for _, p := range gone {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	if _, err := os.Stat(byTree[w.proj]); err != nil {
		t.Errorf("the live index file removed: %v", err)
	}
}
