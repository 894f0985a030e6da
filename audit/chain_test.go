package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/scopegate/scopegate/internal/orgcheck"
)

// mustVerify fails unless the chain of the tools.org at path holds with
// entries chained entries.
func mustVerify(t *testing.T, path string, entries int) Report {
	t.Helper()
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || r.Entries != entries {
		t.Fatalf("verify: ok=%v entries=%d (want %d) breaks=%+v", r.OK, r.Entries, entries, r.Breaks)
	}
	return r
}

// chainEntry is the i-th entry of the chain tests: a call, a check, a
// denial or a scope change in turn.
func chainEntry(i int) Entry {
	e := Entry{CallID: fmt.Sprintf("C%02d", i), Time: testTime, Tool: "shell", Decision: DecisionAllowed,
		Reason: "allowed", Args: json.RawMessage(fmt.Sprintf(`{"command":"echo %d"}`, i)),
		Stdout: fmt.Sprintf("%d\n* not a heading\n", i), ExitCode: ptr(0), DurationMS: ptr(int64(i))}
	switch i % 4 {
	case 1:
		e.Mode, e.Stdout, e.ExitCode, e.DurationMS = ModeCheck, "", nil, nil
	case 2:
		e.Decision, e.Reason, e.Rule, e.Stdout, e.ExitCode, e.DurationMS = DecisionDenied, "command_not_allowed", "shell_commands.allow", "", nil, nil
	case 3:
		e = Entry{CallID: fmt.Sprintf("C%02d", i), Time: testTime, Tool: ToolScopeExpand, Mode: ModeScope,
			Decision: DecisionExpanded, Args: json.RawMessage(`{"read":["/tmp/x/**"]}`)}
	}
	return e
}

// writeChain appends n chain entries to a new tools.org and returns its
// path.
func writeChain(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.org")
	log := &Log{Path: path, NoSync: true}
	for i := 1; i <= n; i++ {
		if err := log.Append(t.Context(), chainEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// entrySpans is the byte ranges of the level-1 entries of data, found
// independently of splitEntries.
func entrySpans(data []byte) [][2]int {
	var spans [][2]int
	var starts []int
	if bytes.HasPrefix(data, []byte("* ")) {
		starts = append(starts, 0)
	}
	for i := 0; i+2 < len(data); i++ {
		if data[i] == '\n' && data[i+1] == '*' && data[i+2] == ' ' {
			starts = append(starts, i+1)
		}
	}
	for k, s := range starts {
		end := len(data)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		spans = append(spans, [2]int{s, end})
	}
	return spans
}

// lineOf is the line number of byte offset off.
func lineOf(data []byte, off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }

var chainLine = regexp.MustCompile(`(?m)^:CHAIN:    ([0-9a-f]{64})$`)

// TestChainDefinition recomputes every :CHAIN: value from the definition
// in the package documentation, independently of the writer and verify.
func TestChainDefinition(t *testing.T) {
	path := writeChain(t, 8)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	spans := entrySpans(data)
	if len(spans) != 8 {
		t.Fatalf("%d entries, want 8", len(spans))
	}
	for i, sp := range spans {
		text := data[sp[0]:sp[1]]
		m := chainLine.FindSubmatchIndex(text)
		if m == nil {
			t.Fatalf("entry %d has no :CHAIN: line:\n%s", i+1, text)
		}
		if !bytes.Contains(text, []byte(fmt.Sprintf("\n:CHAIN_SEQ: %d\n:CHAIN:    ", i+1))) {
			t.Errorf("entry %d: no :CHAIN_SEQ: %d before :CHAIN: in its drawer:\n%s", i+1, i+1, text)
		}
		if !bytes.Contains(text, []byte(text[m[1]:m[1]+7])) || string(text[m[1]:m[1]+7]) != "\n:END:\n" {
			t.Errorf("entry %d: :CHAIN: is not the last property", i+1)
		}
		value := string(text[m[2]:m[3]])
		hashed := append(append([]byte{}, text[:m[2]]...), text[m[3]:]...)
		sum := sha256.Sum256(append(hashed, prev...))
		if hex.EncodeToString(sum[:]) != value {
			t.Errorf("entry %d: :CHAIN: %s, want %x", i+1, value, sum)
		}
		prev = value
	}
	head, err := readHead(ChainHeadPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if want := (chainHead{Seq: 8, Value: prev, Size: int64(len(data))}); head != want {
		t.Errorf("head %+v, want %+v", head, want)
	}
	mustVerify(t, path, 8)
}

func TestVerifyFindsTampering(t *testing.T) {
	const n = 6
	tests := []struct {
		name string
		// edit changes the file, given its entries' spans; it returns the
		// 1-based entry the break must name (0: the file's end).
		edit   func(data []byte, sp [][2]int) ([]byte, int)
		kind   BreakKind
		callID string
	}{
		{"edited argument", func(d []byte, sp [][2]int) ([]byte, int) {
			return bytes.Replace(d, []byte(`"echo 4"`), []byte(`"echo 9"`), 1), 4
		}, BreakEdited, "C04"},
		{"edited decision", func(d []byte, sp [][2]int) ([]byte, int) {
			e := d[sp[1][0]:sp[1][1]]
			fixed := bytes.Replace(e, []byte(":DECISION: denied"), []byte(":DECISION: allowed"), 1)
			return splice(d, sp[1], fixed), 2
		}, BreakEdited, "C02"},
		{"edited chain value", func(d []byte, sp [][2]int) ([]byte, int) {
			i := bytes.Index(d[sp[3][0]:], []byte(":CHAIN:    ")) + sp[3][0] + len(":CHAIN:    ")
			d = bytes.Clone(d)
			d[i] ^= 1
			return d, 4
		}, BreakEdited, "C04"},
		{"removed entry", func(d []byte, sp [][2]int) ([]byte, int) {
			return splice(d, sp[2], nil), 4
		}, BreakRemoved, "C04"},
		{"removed first entry", func(d []byte, sp [][2]int) ([]byte, int) {
			return splice(d, sp[0], nil), 2
		}, BreakRemoved, "C02"},
		{"swapped entries", func(d []byte, sp [][2]int) ([]byte, int) {
			a, b := d[sp[1][0]:sp[1][1]], d[sp[2][0]:sp[2][1]]
			out := append(append(append(append([]byte{}, d[:sp[1][0]]...), b...), a...), d[sp[2][1]:]...)
			return out, 3
		}, BreakReordered, "C03"},
		{"truncated tail", func(d []byte, sp [][2]int) ([]byte, int) {
			return d[:sp[n-1][0]], 0
		}, BreakTruncated, "C05"},
		{"truncated mid-entry", func(d []byte, sp [][2]int) ([]byte, int) {
			return d[:sp[n-1][0]+40], 0
		}, BreakTruncated, "C05"},
		{"emptied", func(d []byte, sp [][2]int) ([]byte, int) {
			return nil, 0
		}, BreakTruncated, ""},
		{"unchained entry inserted", func(d []byte, sp [][2]int) ([]byte, int) {
			fake := render(&Entry{CallID: "FAKE", Time: testTime, Tool: "shell", Decision: DecisionAllowed, Mode: ModeCheck}, 0)
			return splice(d, [2]int{sp[2][0], sp[2][0]}, fake), 3
		}, BreakInserted, "FAKE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeChain(t, n)
			mustVerify(t, path, n)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sp := entrySpans(data)
			changed, at := tt.edit(data, sp)
			if err := os.WriteFile(path, changed, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK || len(r.Breaks) == 0 {
				t.Fatalf("verify holds after the change: %+v", r)
			}
			b := r.Breaks[0]
			wantLine := lineOf(changed, len(changed))
			if at > 0 {
				// The line of the named entry in the changed file.
				wantLine = -1
				for _, s := range entrySpans(changed) {
					if l := parseLink(changed[s[0]:s[1]]); l.callID == tt.callID {
						wantLine = lineOf(changed, s[0])
					}
				}
			}
			if b.Kind != tt.kind || b.CallID != tt.callID || b.Line != wantLine {
				t.Errorf("first break %+v; want kind %s, call %s, line %d", b, tt.kind, tt.callID, wantLine)
			}
		})
	}
}

// splice replaces data[sp[0]:sp[1]] with with.
func splice(data []byte, sp [2]int, with []byte) []byte {
	out := append([]byte{}, data[:sp[0]]...)
	out = append(out, with...)
	return append(out, data[sp[1]:]...)
}

// gptelToolCall is a heading as gptel writes its own tool calls.
const gptelToolCall = `* Tool Call: read_file
:PROPERTIES:
:GPTEL_TOOL: read_file
:END:
#+begin_src json
{"path": "notes.org"}
#+end_src
`

func TestForeignEntriesTolerated(t *testing.T) {
	path := writeChain(t, 3)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// An Org writer may leave an empty line before its heading.
	if _, err := f.WriteString("\n" + gptelToolCall); err != nil {
		t.Fatal(err)
	}
	f.Close()
	log := &Log{Path: path, NoSync: true}
	for i := 4; i <= 5; i++ {
		if err := log.Append(t.Context(), chainEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	r := mustVerify(t, path, 5)
	data, _ := os.ReadFile(path)
	wantLine := lineOf(data, bytes.Index(data, []byte("* Tool Call:")))
	if len(r.Foreign) != 1 || r.Foreign[0].Line != wantLine || r.Foreign[0].Headline != "Tool Call: read_file" {
		t.Errorf("foreign %+v; want the gptel heading at line %d", r.Foreign, wantLine)
	}
	hs := orgcheck.Require(t, path)
	if len(hs) != 6 {
		t.Errorf("emacs found %d level-1 headlines, want 6", len(hs))
	}
}

func TestChainAcrossVersions(t *testing.T) {
	// Entries written before the chain existed come first; they are
	// counted, not breaks.
	path := filepath.Join(t.TempDir(), "tools.org")
	for i := 1; i <= 2; i++ {
		e := chainEntry(i)
		if err := appendEntry(t.Context(), path, render(&e, 0), false); err != nil {
			t.Fatal(err)
		}
	}
	log := &Log{Path: path, NoSync: true}
	if err := log.Append(t.Context(), chainEntry(3)); err != nil {
		t.Fatal(err)
	}
	if r := mustVerify(t, path, 1); r.Unchained != 2 {
		t.Errorf("unchained %d, want 2", r.Unchained)
	}
}

func TestChainHeadRecovery(t *testing.T) {
	t.Run("head lost", func(t *testing.T) {
		path := writeChain(t, 3)
		os.Remove(ChainHeadPath(path))
		r, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.OK || r.Breaks[0].Kind != BreakNoHead {
			t.Fatalf("verify without a head: %+v", r)
		}
		// The next append finds the chain again from tools.org.
		log := &Log{Path: path, NoSync: true}
		if err := log.Append(t.Context(), chainEntry(4)); err != nil {
			t.Fatal(err)
		}
		mustVerify(t, path, 4)
	})
	t.Run("append stopped before its head", func(t *testing.T) {
		path := writeChain(t, 3)
		head, _ := os.ReadFile(ChainHeadPath(path))
		log := &Log{Path: path, NoSync: true}
		if err := log.Append(t.Context(), chainEntry(4)); err != nil {
			t.Fatal(err)
		}
		// As if the writer had died between its write and its head: the
		// entry is reported, not a break.
		os.WriteFile(ChainHeadPath(path), head, 0o600)
		r, _ := Verify(path)
		if !r.OK || r.Unrecorded != 1 {
			t.Fatalf("verify with the head behind: %+v", r)
		}
		// An entry past the head that does not start where the head ended
		// (text before it was taken out meanwhile) is a break.
		{
			path := writeChain(t, 2)
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(gptelToolCall)
			f.Close()
			log := &Log{Path: path, NoSync: true}
			log.Append(t.Context(), chainEntry(3))
			head, _ := os.ReadFile(ChainHeadPath(path))
			log.Append(t.Context(), chainEntry(4))
			os.WriteFile(ChainHeadPath(path), head, 0o600)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, bytes.Replace(data, []byte(gptelToolCall), nil, 1), 0o600)
			if r, _ := Verify(path); r.OK || r.Breaks[0].Kind != BreakInserted {
				t.Fatalf("verify with an entry past the head that moved: %+v", r)
			}
		}
		if err := log.Append(t.Context(), chainEntry(5)); err != nil {
			t.Fatal(err)
		}
		mustVerify(t, path, 5)
	})
	t.Run("bad head", func(t *testing.T) {
		path := writeChain(t, 2)
		os.WriteFile(ChainHeadPath(path), []byte("scopegate-chain 1 x\n"), 0o600) // not a head
		if r, _ := Verify(path); r.OK {
			t.Fatal("verify holds with a damaged head")
		}
		log := &Log{Path: path, NoSync: true}
		if err := log.Append(t.Context(), chainEntry(3)); err != nil {
			t.Fatal(err)
		}
		mustVerify(t, path, 3)
	})
	t.Run("no file", func(t *testing.T) {
		r := mustVerify(t, filepath.Join(t.TempDir(), "tools.org"), 0)
		if r.Head != nil {
			t.Errorf("head %+v", r.Head)
		}
	})
}

// TestChainGroupedAppends: serve's grouped appends write several entries
// in one write, each chained to the one before.
func TestChainGroupedAppends(t *testing.T) {
	const goroutines, each = 16, 20
	path := filepath.Join(t.TempDir(), "tools.org")
	g := &Group{}
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log := &Log{Path: path, NoSync: w%2 == 0, Group: g}
			for i := range each {
				e := chainEntry(i)
				e.CallID = fmt.Sprintf("G%dN%d", w, i)
				if err := log.Append(context.Background(), e); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	mustVerify(t, path, goroutines*each)
}

func TestParseHead(t *testing.T) {
	v := strings.Repeat("ab", 32)
	for _, h := range []chainHead{{}, {Seq: 3, Value: v, Size: 1234}, {Seq: 1<<64 - 1, Value: v, Size: 1<<63 - 1}} {
		data := h.encode()
		if len(data) != headLen {
			t.Fatalf("encode(%+v) is %d bytes, want %d", h, len(data), headLen)
		}
		got, err := parseHead(data)
		if err != nil || got != h {
			t.Errorf("parseHead(encode(%+v)) = %+v, %v", h, got, err)
		}
		// Every change of one byte is refused (the CRC, the layout).
		for i := range data {
			bad := bytes.Clone(data)
			bad[i] ^= 0x20
			if got, err := parseHead(bad); err == nil {
				t.Errorf("byte %d changed: parseHead(%q) = %+v", i, bad, got)
			}
		}
	}
	good := chainHead{Seq: 3, Value: v, Size: 1}.encode()
	for _, bad := range [][]byte{nil, good[:len(good)-1], append(bytes.Clone(good), '\n'),
		chainHead{Seq: 0, Value: v}.encode(), chainHead{Seq: 2}.encode(), chainHead{Seq: 1, Value: strings.ToUpper(v)}.encode()} {
		if got, err := parseHead(bad); err == nil {
			t.Errorf("parseHead(%q) = %+v", bad, got)
		}
	}
}

// TestPruneKeepsChain: dropping the oldest entries (scopegate gc) leaves a
// chain that holds, and appends go on from it.
func TestPruneKeepsChain(t *testing.T) {
	path := writeChain(t, 3)
	// gptel's heading among them, then three more entries; entry 5 is
	// "old" too but comes after a kept one, so it stays.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(gptelToolCall)
	f.Close()
	log := &Log{Path: path, NoSync: true}
	for i := 4; i <= 6; i++ {
		if err := log.Append(t.Context(), chainEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	old := map[string]bool{"C01": true, "C02": true, "C03": true, "C05": true}
	data, _ := os.ReadFile(path)
	p := Prune(data, func(entry []byte) bool {
		l := parseLink(entry)
		return old[l.callID] || !l.scopegate
	})
	if p.Dropped != 4 || p.Kept != 3 {
		t.Fatalf("dropped %d, kept %d; want 4, 3", p.Dropped, p.Kept)
	}
	if err := os.WriteFile(path, p.Text, 0o600); err != nil {
		t.Fatal(err)
	}
	if r, _ := Verify(path); r.OK {
		t.Fatal("the chain holds after a prune not recorded in its head")
	}
	if err := p.Rebase(path); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, path, 3)
	if err := log.Append(t.Context(), chainEntry(7)); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, path, 4)
	// A removal after the prune is still found.
	data, _ = os.ReadFile(path)
	sp := entrySpans(data)
	os.WriteFile(path, splice(data, sp[1], nil), 0o600)
	if r, _ := Verify(path); r.OK || r.Breaks[0].Kind != BreakRemoved {
		t.Fatalf("removal after a prune: %+v", r)
	}
}
