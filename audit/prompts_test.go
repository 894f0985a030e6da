package audit

import (
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
