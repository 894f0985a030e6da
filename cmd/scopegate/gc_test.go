package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
