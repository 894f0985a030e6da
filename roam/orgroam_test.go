package roam

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// skipOrFail skips a test whose tools are missing, except in CI where the
// tools must be there (scripts/install-test-deps.sh).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// orgRoam indexes dir with the real org-roam in Emacs and returns the
// records testdata/orgroam.el prints.
func orgRoam(t *testing.T, dir string, ids, backlinks []string) [][]string {
	t.Helper()
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		skipOrFail(t, "emacs not installed (scripts/install-test-deps.sh): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "orgroam.el"))
	if err != nil {
		t.Fatal(err)
	}
	// A guard against a hung Emacs, not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-l", script)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"TMPDIR="+home,
		"ROAM_DIR="+dir,
		"ROAM_DB="+filepath.Join(home, "org-roam.db"),
		"ROAM_IDS="+strings.Join(ids, " "),
		"ROAM_BACKLINKS="+strings.Join(backlinks, " "),
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		switch ee.ExitCode() {
		case 3:
			skipOrFail(t, "org-roam not installed (scripts/install-test-deps.sh):\n%s", stderr.String())
		case 4:
			skipOrFail(t, "no org-roam database connector works (needs the sqlite3 program or emacsql-sqlite):\n%s", stderr.String())
		}
	}
	if err != nil {
		t.Fatalf("emacs: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	t.Logf("emacs stdout:\n%s", out)
	var recs [][]string
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimRight(line, "\n"); line != "" {
			recs = append(recs, strings.Split(line, "\t"))
		}
	}
	return recs
}

func TestOrgRoamReadsNodes(t *testing.T) {
	s := &Store{Dir: t.TempDir()} // real clock and UUIDs, as in use
	ctx := t.Context()
	a, err := s.Create(ctx, "Alpha: first node", "", []string{"gptel", "draft"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, "Beta [two] über", "gptel/notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(ctx, "Gamma", "gptel", []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTags(ctx, a.ID, []string{"draft", "reviewed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTags(ctx, b.ID, []string{"new_tag", "a@b"}); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{a.ID, b.ID}, {a.ID, b.ID}, {c.ID, b.ID}, {b.ID, a.ID}} {
		if _, err := s.Link(ctx, l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	const unknown = "00000000-0000-4000-8000-000000000000"

	recs := orgRoam(t, s.Dir, []string{a.ID, b.ID, c.ID, unknown}, []string{b.ID, a.ID, c.ID})

	nodes := map[string][]string{}
	backlinks := map[string][]string{}
	var missing []string
	for _, r := range recs {
		switch {
		case r[0] == "node" && len(r) == 4:
			nodes[r[1]] = r[2:]
		case r[0] == "missing" && len(r) == 2:
			missing = append(missing, r[1])
		case r[0] == "backlink" && len(r) == 3:
			backlinks[r[1]] = append(backlinks[r[1]], r[2])
		case r[0] == "connector":
		default:
			t.Errorf("unexpected record %q", r)
		}
	}
	tests := []struct {
		name, id, title, tags string
		backlinks             []string
	}{
		{name: "tagged twice", id: a.ID, title: "Alpha: first node", tags: "gptel,draft,reviewed", backlinks: []string{b.ID}},
		{name: "tags added later in a subdirectory", id: b.ID, title: "Beta [two] über", tags: "new_tag,a@b", backlinks: []string{a.ID, c.ID}},
		{name: "never linked to", id: c.ID, title: "Gamma", tags: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := nodes[tt.id]
			if !ok {
				t.Fatalf("org-roam does not know node %s", tt.id)
			}
			if got[0] != tt.title || got[1] != tt.tags {
				t.Errorf("org-roam sees title %q tags %q, want %q %q", got[0], got[1], tt.title, tt.tags)
			}
			have := slices.Clone(backlinks[tt.id])
			slices.Sort(have)
			want := slices.Clone(tt.backlinks)
			slices.Sort(want)
			if !slices.Equal(have, want) {
				t.Errorf("backlinks = %q, want %q (one per linking node: links are not repeated)", backlinks[tt.id], tt.backlinks)
			}
		})
	}
	if !slices.Equal(missing, []string{unknown}) {
		t.Errorf("missing = %q, want only %s", missing, unknown)
	}
}
