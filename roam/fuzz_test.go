package roam

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzParseHeader checks that parsing any text never panics, and that the
// edits AddTags and Link make keep what the parser saw (ID, title, tags) and
// add what they should.
func FuzzParseHeader(f *testing.F) {
	for _, tt := range headerTests {
		f.Add(tt.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := parseHeader(src)
		if err != nil {
			return
		}
		if strings.ContainsAny(h.title, "\n") {
			t.Fatalf("title %q spans lines", h.title)
		}
		for _, tag := range h.tags {
			if tag == "" || strings.ContainsFunc(tag, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' || r == '\n' }) {
				t.Fatalf("tag %q", tag)
			}
		}
		if h.id == "" {
			return
		}
		const tag = "fuzz_tag"
		tagged, _ := withTags(src, h, []string{tag})
		h2, err := parseHeader(tagged)
		if err != nil {
			t.Fatalf("tagged file does not parse: %v\n%q", err, tagged)
		}
		if h2.id != h.id || h2.title != h.title || !slices.Equal(h2.tags, appendNew(slices.Clone(h.tags), tag)) {
			t.Fatalf("after adding %q: id %q title %q tags %q, was %q %q %q\n%q", tag, h2.id, h2.title, h2.tags, h.id, h.title, h.tags, tagged)
		}
		linked, _ := withLink(src, "fuzz-id", "Fuzz")
		h3, err := parseHeader(linked)
		if err != nil {
			t.Fatalf("linked file does not parse: %v\n%q", err, linked)
		}
		if h3.id != h.id || h3.title != h.title || !slices.Equal(h3.tags, h.tags) {
			t.Fatalf("after linking: id %q title %q tags %q, was %q %q %q\n%q", h3.id, h3.title, h3.tags, h.id, h.title, h.tags, linked)
		}
		if !strings.Contains(linked, "[[id:fuzz-id]") {
			t.Fatalf("no link in %q", linked)
		}
		if again, changed := withLink(linked, "fuzz-id", "Fuzz"); changed || again != linked {
			t.Fatalf("second link changed the file")
		}
	})
}

// FuzzCreateRoundTrip checks that whatever Create accepts is read back the
// same: the file it writes parses to its ID, title and tags.
func FuzzCreateRoundTrip(f *testing.F) {
	f.Add("Hello, World!", "a b", "5b9a2a6c-7d1e-4f0a-9c3b-2e8f1d4a6b7c")
	f.Add("  #+title: x", "", "x")
	f.Add(":END:", "ünï x@y a#b%c-d_e", "ID")
	f.Add("* not a heading", ":a: b", "-")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, title, tags, id string) {
		s := &Store{Dir: dir, NewID: func() string { return id }, Now: func() time.Time { return testNow }}
		list := strings.Fields(tags)
		n, err := s.Create(t.Context(), title, "", list)
		if err != nil {
			return
		}
		name := filepath.Join(dir, n.File)
		defer os.Remove(name)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseHeader(string(b))
		if err != nil {
			t.Fatalf("created file does not parse: %v\n%q", err, b)
		}
		want, _ := checkTags(list)
		if h.id != id || h.title != strings.TrimFunc(title, unicode.IsSpace) || !slices.Equal(h.tags, want) {
			t.Fatalf("created %q %q %q, parsed %q %q %q\n%q", id, title, list, h.id, h.title, h.tags, b)
		}
	})
}
