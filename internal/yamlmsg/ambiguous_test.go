package yamlmsg

import (
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ambiguousWords are plain list entries with what other readers make of
// them ("" for a string everywhere) and whether gptel's yaml.el is one of
// those readers. cmd/scopegate's Emacs test checks the same classification
// against the real yaml.el.
var ambiguousWords = []struct {
	word  string
	kind  string
	gptel bool
}{
	{"true", "a boolean", true}, {"True", "a boolean", true}, {"FALSE", "a boolean", true},
	{"null", "null", true}, {"~", "null", true}, {"NULL", "null", true},
	{"1", "a number", true}, {"-1", "a number", true}, {"+1", "a number", true}, {"0", "a number", true},
	{"017", "a number", true}, {"0o17", "a number", true}, {"0x1F", "a number", true},
	{"1.5", "a number", true}, {".5", "a number", true}, {"1.", "a number", true}, {"1e3", "a number", true},
	{"-.5", "a number", true}, {".inf", "a number", true}, {"-.Inf", "a number", true}, {".nan", "a number", true},
	{"yes", "a boolean", false}, {"No", "a boolean", false}, {"on", "a boolean", false}, {"OFF", "a boolean", false},
	{"y", "a boolean", false}, {"N", "a boolean", false},
	{"1_000", "a number", false}, {"0b101", "a number", false}, {"1:20", "a number", false}, {"-0o17", "a number", false},
	{"ls", "", false}, {"t", "", false}, {"nil", "", false}, {"yes please", "", false}, {"1.2.3", "", false},
	{"2to3", "", false}, {"7z", "", false}, {"/**", "", false}, {"~/**", "", false}, {"git push", "", false},
	{"tRUE", "", false}, {"On2", "", false}, {"2026-01-01", "", false}, {"0x", "", false}, {".", "", false},
}

func TestAmbiguousEntries(t *testing.T) {
	for _, w := range ambiguousWords {
		t.Run(w.word, func(t *testing.T) {
			doc := "shell_commands:\n  allow:\n    - ls\n    - " + w.word + "\n"
			got := AmbiguousEntries([]byte(doc))
			if w.kind == "" {
				if len(got) != 0 {
					t.Fatalf("reported %+v", got)
				}
				return
			}
			want := Ambiguous{Line: 4, Path: "shell_commands.allow", Value: w.word, Kind: w.kind, Gptel: w.gptel}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			// Quoted, in either style, it is a string to every reader.
			for _, q := range []string{strconv.Quote(w.word), "'" + w.word + "'"} {
				if got := AmbiguousEntries([]byte(strings.Replace(doc, "- "+w.word, "- "+q, 1))); len(got) != 0 {
					t.Errorf("%s reported: %+v", q, got)
				}
			}
		})
	}
}

func TestAmbiguousEntriesPlaces(t *testing.T) {
	doc := `# a scope written by hand
paths:
  read: ["/a/**", 1, "2"]
  write:
    - /b/**
    - !!str true
    - |
      yes
shell_commands:
  allow: [ls, on]
  deny:
    -
    - null
org_roam_patterns:
  tags: [2026]
`
	var got []string
	for _, a := range AmbiguousEntries([]byte(doc)) {
		got = append(got, a.String())
	}
	want := []string{
		`line 3: paths.read entry 1 is unquoted: YAML reads it as a number, scopegate as the string "1"; quote it: - "1" (gptel's yaml.el reads a number even then, and gptel does not match it)`,
		`line 6: paths.write entry true is unquoted: YAML reads it as a boolean, scopegate as the string "true"; quote it: - "true" (gptel's yaml.el reads a boolean even then, and gptel does not match it)`,
		`line 10: shell_commands.allow entry on is unquoted: other YAML readers (YAML 1.1) read it as a boolean, scopegate and gptel's yaml.el as the string "on"; quote it: - "on"`,
		`line 12: shell_commands.deny has an empty entry: YAML reads it as null (scopegate as no entry, gptel's yaml.el as :null); remove it`,
		`line 13: shell_commands.deny entry null is unquoted: YAML reads it as null, scopegate as no entry; quote it if you mean the string: - "null" (gptel's yaml.el reads :null even then)`,
		`line 15: org_roam_patterns.tags entry 2026 is unquoted: YAML reads it as a number, scopegate as the string "2026"; quote it: - "2026" (gptel's yaml.el reads a number even then, and gptel does not match it)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := AmbiguousEntries([]byte("paths: [")); got != nil {
		t.Errorf("YAML that does not parse: %+v", got)
	}
}

// FuzzAmbiguousEntries: any text reads without a panic; a single-line
// entry that yaml.v3 itself resolves to a non-string is reported, and
// every reported entry, double-quoted, no longer is.
func FuzzAmbiguousEntries(f *testing.F) {
	for _, w := range ambiguousWords {
		f.Add(w.word)
	}
	f.Add("paths:\n  read: [1, yes]\n")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return // scope files are small; long inputs only slow the search down
		}
		AmbiguousEntries([]byte(s)) // any document: no panic
		if strings.ContainsAny(s, "\n\r") {
			return
		}
		doc := "l:\n  - " + s + "\n"
		var root yaml.Node
		if yaml.Unmarshal([]byte(doc), &root) != nil || len(root.Content) == 0 {
			return
		}
		seq := root.Content[0].Content[1]
		if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 || seq.Content[0].Kind != yaml.ScalarNode {
			return
		}
		item := seq.Content[0]
		got := AmbiguousEntries([]byte(doc))
		plain := item.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
		switch item.ShortTag() {
		case "!!bool", "!!int", "!!float", "!!null":
			if plain && len(got) != 1 {
				t.Fatalf("%q resolves to %s but is not reported: %+v", s, item.ShortTag(), got)
			}
		}
		for _, a := range got {
			if a.Value != item.Value {
				t.Fatalf("%q reported as %q", item.Value, a.Value)
			}
			if again := AmbiguousEntries([]byte("l:\n  - " + strconv.Quote(a.Value) + "\n")); len(again) != 0 {
				t.Fatalf("quoted %q still reported: %+v", a.Value, again)
			}
		}
	})
}
