package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The shortcuts of the writer give what the long way gives.
func TestEscapeLineShortcut(t *testing.T) {
	for _, s := range []string{
		"", "ls -la", "hello.txt", "/home/u/proj", "a\\b", " lead", "trail ", " ", "tab\there", "nl\n",
		"caf\u00e9", "\x7f", "\x00", "\xff", "\u2028", strings.Repeat("x", 200), "x:",
	} {
		for _, max := range []int{0, 3, 160} {
			if got, want := escapeLine(s, max), escapeRunes(s, max); got != want {
				t.Errorf("escapeLine(%q, %d) = %q, want %q", s, max, got, want)
			}
		}
	}
}

func TestCompactJSONShortcut(t *testing.T) {
	for _, raw := range []string{
		`{"path":"hello.txt"}`, `{"path": "hello.txt"}`, "{\n\"a\":1}", `{"command":"echo \"a b\" c"}`,
		`{"command":"a\\"}`, `{"x":"a\\\" b"}`, `not json at all`, `{"a": `, `"s p a c e s"`, `[1, 2]`, `{"a":"\t"}`,
	} {
		want := []byte(raw)
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(raw)); err == nil {
			want = buf.Bytes()
		}
		if got := compactJSON(json.RawMessage(raw)); !bytes.Equal(got, want) {
			t.Errorf("compactJSON(%q) = %q, want %q", raw, got, want)
		}
	}
}
