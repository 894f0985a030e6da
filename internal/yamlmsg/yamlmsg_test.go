package yamlmsg

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type inner struct {
	Read  []string `yaml:"read"`
	Allow bool     `yaml:"allow"`
}

type doc struct {
	Paths inner            `yaml:"paths"`
	Named map[string]inner `yaml:"named"`
	Count int              `yaml:"count"`
}

func decode(data []byte) error {
	var d doc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return Error(data, err, &d)
	}
	return nil
}

var goSpeak = regexp.MustCompile(`yamlmsg\.|Go |\[\]string|yaml: |unmarshal`)

func TestError(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pathz: 1\n", `line 1: unknown key "pathz" in the top level (known: paths, named, count)`},
		{"paths:\n  raed: []\n", `line 2: unknown key "raed" in paths (known: read, allow)`},
		{"paths:\n  read: abc\n", "line 2: paths.read must be a list of strings, got a string (abc)"},
		{"paths:\n  read:\n    - {a: b}\n", "line 3: paths.read[0] must be a string, got a mapping"},
		{"count: many\n", "line 1: count must be a number, got a string (many)"},
		{"named:\n  x:\n    allow: 3\n", "line 3: named.x.allow must be a boolean, got a number (3)"},
		{"paths: [\n", "line 1: did not find expected node content"},
		{"a: 1\nb: 2\npathz: 1\ncount: x\n", `line 1: unknown key "a" in the top level (known: paths, named, count); line 2: unknown key "b"`},
	} {
		err := decode([]byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want prefix %q", c.in, err, c.want)
		}
	}
}

func FuzzError(f *testing.F) {
	for _, s := range []string{"00\r\r0", "\"\": 1\n", "pathz: 1\n", "paths:\n  read: abc\n", "named:\n  x:\n    allow: 3\n", "paths: [\n", "count: [1]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := decode(data)
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("more than one line: %q", msg)
		}
		if m := goSpeak.FindString(msg); m != "" {
			t.Fatalf("speaks Go (%q): %q", m, msg)
		}
	})
}
