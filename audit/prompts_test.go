package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scopegate/scopegate/internal/orgcheck"
)

func TestPromptLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "system-prompts.org")
	l := &PromptLog{Path: path, NoSync: true, Now: func() time.Time { return testTime }}
	changes := []PromptChange{
		{Previous: "", New: "You are a careful coding agent.\n"},
		{Source: "/p/prompt.md", Previous: "You are a careful coding agent.\n", New: "* heading\n#+end_example\n:END:\nbad \xff\n"},
		{Previous: "x", New: ""},
	}
	for _, c := range changes {
		if err := l.Append(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadPrompts(path, func(err error) { t.Errorf("warning: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(changes) {
		t.Fatalf("read %d changes, want %d", len(got), len(changes))
	}
	for i, c := range changes {
		w := PromptChange{Time: testTime, Source: c.Source, Previous: blockText(c.Previous), New: blockText(c.New)}
		if got[i] != w {
			t.Errorf("change %d = %+v, want %+v", i, got[i], w)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", st, err)
	}
	hs := orgcheck.Require(t, path)
	if len(hs) != len(changes) {
		t.Fatalf("emacs found %d level-1 headlines, want %d: %+v", len(hs), len(changes), hs)
	}
	for _, h := range hs {
		if h.Title != "System Prompt Change" {
			t.Errorf("emacs headline %q", h.Title)
		}
	}
}

// gptel's own system-prompts.org entries (indented drawer, the time in the
// headline and TIMESTAMP, "Previous Prompt" absent for the first prompt)
// read as changes, beside scopegate's.
func TestReadGptelPrompts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "system-prompts.org")
	gptel := "* System Prompt Change: Tue Nov 24 10:11:12 2026\n  :PROPERTIES:\n  :TIMESTAMP: Tue Nov 24 10:11:12 2026\n  :END:\n\n" +
		"** New Prompt\n#+begin_example\nYou are terse.\n#+end_example\n\n" +
		"* System Prompt Change: Wed Nov 25 09:00:01 2026\n  :PROPERTIES:\n  :TIMESTAMP: Wed Nov 25 09:00:01 2026\n  :END:\n\n" +
		"** Previous Prompt\n#+begin_example\nYou are terse.\n#+end_example\n\n" +
		"** New Prompt\n#+begin_example\nYou are thorough.\nSecond line.\n#+end_example\n\n"
	if err := os.WriteFile(path, []byte(gptel), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &PromptLog{Path: path, NoSync: true, Now: func() time.Time { return testTime }}
	if err := l.Append(context.Background(), PromptChange{Previous: "You are thorough.\nSecond line.", New: "Mine."}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPrompts(path, func(err error) { t.Errorf("warning: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	want := []PromptChange{
		{Time: time.Date(2026, 11, 24, 10, 11, 12, 0, time.Local), New: "You are terse.\n"},
		{Time: time.Date(2026, 11, 25, 9, 0, 1, 0, time.Local), Previous: "You are terse.\n", New: "You are thorough.\nSecond line.\n"},
		{Time: testTime, Previous: "You are thorough.\nSecond line.\n", New: "Mine.\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Previous != want[i].Previous || got[i].New != want[i].New {
			t.Errorf("change %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// A gptel headline with a time that does not parse is malformed, not
	// a change at a zero time.
	bad := "* System Prompt Change: someday\n  :PROPERTIES:\n  :TIMESTAMP: someday\n  :END:\n** New Prompt\n#+begin_example\nx\n#+end_example\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var warned int
	got, err = ReadPrompts(path, func(error) { warned++ })
	if err != nil || len(got) != 0 || warned != 1 {
		t.Errorf("bad TIMESTAMP: %+v, %v, %d warnings; want none and one warning", got, err, warned)
	}
}
