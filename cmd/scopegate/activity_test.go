package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An Emacs activity directory as gptel's activities integration lays it
// out: the session in session/ (its id in metadata.yml, its worktrees in a
// comment of session.md), the worktrees beside it. Used as the sessions
// root, the session is listed and found by its id, its first worktree is
// the default cwd, the worktrees are the scope's to grant, and the session
// itself stays protected.
func TestActivitySessionLayout(t *testing.T) {
	act := t.TempDir()
	w1 := filepath.Join(act, "worktrees", "w1")
	branch := filepath.Join(act, "session", "branches", "main")
	files := map[string]string{
		filepath.Join(w1, "file.txt"): "in the worktree\n",
		filepath.Join(branch, "scope.yml"): "paths:\n  read: [\"" + act + "/worktrees/w1/**\"]\n  write: [\"" + act + "/worktrees/w1/**\"]\n" +
			"shell_commands:\n  allow: [ls]\n",
		filepath.Join(branch, "metadata.yml"): "session_id: \"act-20261125\"\ncreated: 2026-11-25T10:00:00Z\nupdated: 2026-11-25T10:00:00Z\npreset: \"executor\"\n",
		filepath.Join(branch, "session.md"):   "### Chat\n\n<!-- gptel-activity-worktrees: (\"" + w1 + "\") -->\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("branches/main", filepath.Join(act, "session", "current")); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		c := (&workspace{t: t, root: act, sessions: act, cfg: filepath.Join(t.TempDir(), "cfg")}).cmd(args...)
		out, err := c.Output()
		code := 0
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
		if code != want {
			t.Fatalf("scopegate %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
		}
		return string(out)
	}
	var list []struct {
		SessionID  string `json:"session_id"`
		SessionDir string `json:"session_dir"`
		Error      string `json:"error"`
	}
	if err := json.Unmarshal([]byte(run(0, "session", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].SessionID != "act-20261125" || list[0].SessionDir != filepath.Join(act, "session") || list[0].Error != "" {
		t.Fatalf("session list: %+v; want only the activity's session, by its id", list)
	}
	// No cwd: the first worktree.
	if out := run(0, "call", "--session", "act-20261125", `{"tool":"shell","args":{"command":"ls"}}`); !strings.Contains(out, "file.txt") {
		t.Errorf("ls without a cwd: %s", out)
	}
	// The worktrees are the scope's to grant; the session is not.
	run(0, "call", "--session", "act-20261125", `{"tool":"write_file","args":{"path":"`+w1+`/new.txt","content":"x"}}`)
	if b, err := os.ReadFile(filepath.Join(w1, "new.txt")); err != nil || string(b) != "x" {
		t.Errorf("write into the worktree: %q, %v", b, err)
	}
	run(0, "call", "--session", "act-20261125", `{"tool":"shell","args":{"command":"ls > `+w1+`/listing.txt"}}`)
	run(3, "call", "--session", "act-20261125", `{"tool":"write_file","args":{"path":"`+branch+`/scope.yml","content":"paths: {}"}}`)
	if b, _ := os.ReadFile(filepath.Join(branch, "scope.yml")); !strings.Contains(string(b), "worktrees/w1") {
		t.Errorf("the session's scope was rewritten: %s", b)
	}
}
