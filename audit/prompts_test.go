package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// gptel's own system-prompts.org (testdata/gptel, written as gptel writes
// it: indented drawer, the time in the headline and TIMESTAMP, "Previous
// Prompt" absent for the first prompt, prompts unescaped and followed by a
// newline of gptel's) reads as changes, and scopegate's entries appended
// after them read beside them.
func TestReadGptelPromptsFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gptel", "system-prompts.org"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "system-prompts.org")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l := &PromptLog{Path: path, NoSync: true, Now: func() time.Time { return testTime }}
	if err := l.Append(t.Context(), PromptChange{New: "Mine."}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPrompts(path, func(err error) { t.Errorf("warning: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	rules := "# Rules\n\n* read before you write\n* run the tests\n,* a line gptel wrote with a comma\n** not a section\n"
	want := []PromptChange{
		{Time: time.Date(2026, 11, 24, 10, 11, 12, 0, time.Local), New: "You are a careful coding agent.\n"},
		{Time: time.Date(2026, 11, 24, 10, 30, 0, 0, time.Local), Previous: "You are a careful coding agent.\n", New: rules},
		{Time: time.Date(2026, 11, 25, 9, 0, 1, 0, time.Local), Previous: rules, New: ""},
		{Time: testTime, New: "Mine.\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Previous != want[i].Previous || got[i].New != want[i].New {
			t.Errorf("change %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// One gptel entry at a time: what reads, and what is malformed (one
// warning, no change).
func TestReadGptelPrompts(t *testing.T) {
	const head = "* System Prompt Change: Tue Nov 24 10:11:12 2026\n"
	const drawer = "  :PROPERTIES:\n  :TIMESTAMP: Tue Nov 24 10:11:12 2026\n  :END:\n\n"
	stamp := time.Date(2026, 11, 24, 10, 11, 12, 0, time.Local)
	tests := []struct {
		name string
		text string
		want *PromptChange // nil: malformed
	}{
		{"first prompt", head + drawer + "** New Prompt\n#+begin_example\nx\n#+end_example\n\n",
			&PromptChange{Time: stamp, New: "x\n"}},
		{"prompt ending in a newline", head + drawer + "** Previous Prompt\n#+begin_example\na\n\n#+end_example\n\n** New Prompt\n#+begin_example\nb\n\n\n#+end_example\n\n",
			&PromptChange{Time: stamp, Previous: "a\n", New: "b\n\n"}},
		{"empty prompt", head + drawer + "** New Prompt\n#+begin_example\n\n#+end_example\n\n",
			&PromptChange{Time: stamp}},
		{"unescaped Org in the prompt", head + drawer + "** New Prompt\n#+begin_example\n* item\n,#+end_example\n:END:\n#+end_src\n#+end_example\n",
			&PromptChange{Time: stamp, New: "* item\n,#+end_example\n:END:\n#+end_src\n"}},
		{"no TIMESTAMP: the headline's time", head + "  :PROPERTIES:\n  :END:\n** New Prompt\n#+begin_example\nx\n#+end_example\n",
			&PromptChange{Time: stamp, New: "x\n"}},
		{"TIME wins", head + "  :PROPERTIES:\n  :TIMESTAMP: Tue Nov 24 10:11:12 2026\n  :TIME: 2026-11-22T10:30:05.123Z\n  :END:\n** New Prompt\n#+begin_example\nx\n#+end_example\n",
			&PromptChange{Time: testTime, New: "x\n"}},
		{"drawer not indented", head + ":PROPERTIES:\n:TIMESTAMP: Tue Nov 24 10:11:12 2026\n:END:\n** New Prompt\n#+begin_example\nx\n#+end_example\n",
			&PromptChange{Time: stamp, New: "x\n"}},
		{"time that does not parse", "* System Prompt Change: someday\n  :PROPERTIES:\n  :TIMESTAMP: someday\n  :END:\n** New Prompt\n#+begin_example\nx\n#+end_example\n", nil},
		{"no New Prompt", head + drawer + "** Previous Prompt\n#+begin_example\nx\n#+end_example\n", nil},
		{"block not closed", head + drawer + "** New Prompt\n#+begin_example\nx\n", nil},
		{"no drawer", head + "** New Prompt\n#+begin_example\nx\n#+end_example\n", nil},
		{"torn write", head + drawer + "** New Prompt\n#+begin_example\nx", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warns []error
			got, err := parsePrompts(strings.NewReader(tt.text), func(err error) { warns = append(warns, err) })
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(got) != 0 || len(warns) != 1 || !errors.Is(warns[0], ErrMalformed) {
					t.Errorf("got %+v, warnings %v; want one ErrMalformed", got, warns)
				}
				return
			}
			if len(warns) != 0 || len(got) != 1 {
				t.Fatalf("got %+v, warnings %v; want one change", got, warns)
			}
			if !got[0].Time.Equal(tt.want.Time) || got[0].Previous != tt.want.Previous || got[0].New != tt.want.New || got[0].Source != "" {
				t.Errorf("got %+v\nwant %+v", got[0], *tt.want)
			}
		})
	}
}

// An unescaped "* " line in a gptel prompt is text, but the next entry's
// headline still starts the next entry: an entry cut off inside its block
// costs only itself.
func TestReadGptelPromptsTornBlock(t *testing.T) {
	text := "* System Prompt Change: Tue Nov 24 10:11:12 2026\n  :PROPERTIES:\n  :TIMESTAMP: Tue Nov 24 10:11:12 2026\n  :END:\n\n" +
		"** New Prompt\n#+begin_example\n* cut off here\n" +
		"* System Prompt Change\n:PROPERTIES:\n:TIME: 2026-11-22T10:30:05.123Z\n:END:\n** Previous\n#+begin_example\n#+end_example\n** New\n#+begin_example\nnext\n#+end_example\n"
	var warns []error
	got, err := parsePrompts(strings.NewReader(text), func(err error) { warns = append(warns, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || len(got) != 1 || got[0].New != "next\n" || !got[0].Time.Equal(testTime) {
		t.Errorf("got %+v, warnings %v; want scopegate's entry and one warning", got, warns)
	}
}

// scopegate's own entries and tools.org stay strict: an indented drawer is
// malformed there, and a comma at the start of a block line is Org's escape.
func TestStrictEntriesStayStrict(t *testing.T) {
	indented := "* System Prompt Change\n  :PROPERTIES:\n  :TIME: 2026-11-22T10:30:05.123Z\n  :END:\n** New\n#+begin_example\nx\n#+end_example\n"
	var warned int
	if got, _ := parsePrompts(strings.NewReader(indented), func(error) { warned++ }); len(got) != 0 || warned != 1 {
		t.Errorf("indented drawer in scopegate's entry: %+v, %d warnings; want malformed", got, warned)
	}
	escaped := "* System Prompt Change\n:PROPERTIES:\n:TIME: 2026-11-22T10:30:05.123Z\n:END:\n** New\n#+begin_example\n,* x\n#+end_example\n"
	if got, _ := parsePrompts(strings.NewReader(escaped), nil); len(got) != 1 || got[0].New != "* x\n" {
		t.Errorf("escaped block in scopegate's entry: %+v; want \"* x\\n\"", got)
	}
	tools := "* DENIED shell: x\n  :PROPERTIES:\n  :CALL_ID: A\n  :DECISION: denied\n  :END:\n"
	warned = 0
	if got, _ := Parse(strings.NewReader(tools), Filter{Warn: func(error) { warned++ }}); len(got) != 0 || warned != 1 {
		t.Errorf("indented drawer in tools.org: %+v, %d warnings; want malformed", got, warned)
	}
}
