package roam

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// headerTests are shared by TestParseHeader and the fuzz seeds.
var headerTests = []struct {
	name      string
	src       string
	id, title string
	tags      []string
	err       error
}{
	{name: "empty"},
	{name: "created", src: ":PROPERTIES:\n:ID:       abc-1\n:END:\n#+title: T\n#+filetags: :a:b:\n", id: "abc-1", title: "T", tags: []string{"a", "b"}},
	{name: "case and blanks", src: "  :properties:\n :Id:\tX  \n  :end:  \n  #+TITLE:   Spaced  Title  \n", id: "X", title: "Spaced  Title"},
	{name: "comments before the drawer", src: "# comment\n#\n\n:PROPERTIES:\n:ID: x\n:END:\n", id: "x"},
	{name: "keyword before the drawer", src: "#+title: T\n:PROPERTIES:\n:ID: x\n:END:\n", title: "T"},
	{name: "first ID wins", src: ":PROPERTIES:\n:ID: one\n:ID: two\n:END:\n", id: "one"},
	{name: "empty ID", src: ":PROPERTIES:\n:ID:\n:END:\n"},
	{name: "property with colons", src: ":PROPERTIES:\n:ROAM_ALIASES: \"a: b\"\n:a:b: c\n:ID: i\n:END:\n", id: "i"},
	{name: "unclosed drawer", src: ":PROPERTIES:\n:ID: x\n", err: errMalformedDrawer},
	{name: "heading inside drawer", src: ":PROPERTIES:\n* H\n:END:\n", err: errMalformedDrawer},
	{name: "text inside drawer", src: ":PROPERTIES:\nplain\n:END:\n", err: errMalformedDrawer},
	{name: "first title wins", src: "#+title: A\n#+title: B\n", title: "A"},
	{name: "filetags merged", src: "#+filetags: :a:b:\n#+FILETAGS: b c :d:\n", tags: []string{"a", "b", "c", "d"}},
	{name: "empty filetags", src: "#+filetags:\n#+filetags: ::\n"},
	{name: "stops at the first heading", src: "#+title: A\n* H\n#+filetags: :x:\n", title: "A"},
	{name: "heading without text", src: "*\n#+title: A\n"},
	{name: "bold is not a heading", src: "*bold*\n#+title: A\n", title: "A"},
	{name: "inside a block", src: "#+begin_src org\n#+title: no\n#+end_src\n#+title: yes\n", title: "yes"},
	{name: "unclosed block", src: "#+BEGIN_EXAMPLE\n#+title: seen\n", title: "seen"},
	{name: "other block end", src: "#+begin_src\n#+end_example\n#+title: no\n#+end_src\n#+title: yes\n", title: "yes"},
	{name: "CRLF", src: ":PROPERTIES:\r\n:ID: x\r\n:END:\r\n#+title: T\r\n", id: "x", title: "T"},
	{name: "no final newline", src: ":PROPERTIES:\n:ID: x\n:END:\n#+title: T", id: "x", title: "T"},
	{name: "not keywords", src: "#+: x\n#+ti tle: x\n#+title x\n"},
}

func TestParseHeader(t *testing.T) {
	for _, tt := range headerTests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseHeader(tt.src)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if h.id != tt.id || h.title != tt.title || !slices.Equal(h.tags, tt.tags) {
				t.Errorf("parseHeader = id %q title %q tags %q, want %q %q %q", h.id, h.title, h.tags, tt.id, tt.title, tt.tags)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ name, title, want string }{
		{name: "words", title: "Hello World", want: "hello_world"},
		{name: "punctuation runs", title: "  a -- b!!c  ", want: "a_b_c"},
		{name: "digits", title: "2026 plans", want: "2026_plans"},
		{name: "combining marks dropped", title: "Cafe\u0301", want: "cafe"},
		{name: "unicode letters kept", title: "Ärger 東京", want: "ärger_東京"},
		{name: "path characters", title: "../../etc/passwd", want: "etc_passwd"},
		{name: "nothing left", title: "!!!", want: "untitled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slug(tt.title); got != tt.want {
				t.Errorf("slug(%q) = %q, want %q", tt.title, got, tt.want)
			}
		})
	}
	t.Run("long", func(t *testing.T) {
		got := slug("é" + strings.Repeat("ü", 500))
		if len(got) > maxSlugLen {
			t.Errorf("len = %d, want at most %d", len(got), maxSlugLen)
		}
	})
}
