package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// A check is decided on the files as they are when it is made (scope.yml
// is the source of truth for every decision): a scope.yml
// written in place or replaced by rename, a branch switch, a session
// removed and made again, each seen by the very next request.
func TestCheckSeesFilesAsTheyAre(t *testing.T) {
	e := newEnv(t, "")
	store := &sessions.Store{Root: e.sessions}
	mainDir := filepath.Join(e.sessions, "s1", "branches", "main")
	scope := filepath.Join(mainDir, sessions.ScopeFile)
	original, err := os.ReadFile(scope)
	if err != nil {
		t.Fatal(err)
	}
	allowLs := "shell_commands:\n  allow: [ls]\n"
	ls := e.callJSON("shell", map[string]any{"command": "ls"})
	steps := []struct {
		name string
		edit func(t *testing.T)
		want policy.Reason
	}{
		{"before", func(t *testing.T) {}, policy.ReasonCommandNotAllowed},
		{"appended in place", func(t *testing.T) {
			f, err := os.OpenFile(scope, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(allowLs); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonAllowed},
		{"replaced by rename", func(t *testing.T) {
			tmp := scope + ".tmp"
			if err := os.WriteFile(tmp, original, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, scope); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonCommandNotAllowed},
		{"switched to a branch that allows ls", func(t *testing.T) {
			c, err := store.CreateBranch(context.Background(), "s1", "other", sessions.BranchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c.BranchDir, sessions.ScopeFile), append(original, allowLs...), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := store.Switch("s1", "other"); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonAllowed},
		{"switched back", func(t *testing.T) {
			if err := store.Switch("s1", "main"); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonCommandNotAllowed},
		{"scope removed", func(t *testing.T) {
			if err := os.Remove(scope); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonScopeMissing},
		{"written again in place", func(t *testing.T) {
			if err := os.WriteFile(scope, append(original, allowLs...), 0o600); err != nil {
				t.Fatal(err)
			}
		}, policy.ReasonAllowed},
	}
	for _, s := range steps {
		s.edit(t)
		var d policy.Decision
		e.mustDo("POST", "/v1/sessions/s1/check", ls, 200, &d)
		if d.Reason != s.want {
			t.Fatalf("%s: %s (%s), want %s", s.name, d.Reason, d.Message, s.want)
		}
	}

	// The session's directory replaced by another session's: the check is
	// decided by the new one's scope, on its current branch.
	e.mustDo("POST", "/v1/sessions", `{"id":"s2","worktrees":["`+e.proj+`"]}`, 201, nil)
	s2Scope := filepath.Join(e.sessions, "s2", "branches", "main", sessions.ScopeFile)
	if err := os.WriteFile(s2Scope, original, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.sessions, "s1"), filepath.Join(e.sessions, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.sessions, "s2"), filepath.Join(e.sessions, "s1")); err != nil {
		t.Fatal(err)
	}
	var d policy.Decision
	e.mustDo("POST", "/v1/sessions/s1/check", ls, 200, &d)
	if d.Reason != policy.ReasonCommandNotAllowed {
		t.Fatalf("after the session was replaced: %s (%s)", d.Reason, d.Message)
	}
}
