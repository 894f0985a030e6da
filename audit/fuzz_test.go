package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

// FuzzRoundTrip writes an entry made of arbitrary text, reads it back and
// checks every field; and checks that no text of the call produced a line
// Org would take for a heading.
func FuzzRoundTrip(f *testing.F) {
	for _, h := range hostile {
		h = h[:min(len(h), 2048)] // long enough to cross the cap, short enough to mutate
		f.Add(h, h, "/p", []byte(`{"command":"x"}`), int64(0), uint8(0))
	}
	f.Add("ls", "ok\n", "", []byte(`{"path":"/a"}`), int64(1), uint8(1))
	f.Add("github.com", "network[0] github.com", "evil example\n* x", []byte(`{"command":"curl x"}`), int64(443), uint8(16|32))
	f.Add("", "", "", []byte("not json\n* x"), int64(-5), uint8(2))
	f.Fuzz(func(t *testing.T, command, output, cwd string, args []byte, ms int64, kind uint8) {
		decision := []string{DecisionAllowed, DecisionDenied, DecisionInterrupted}[int(kind)%3]
		e := Entry{
			CallID: "FUZZ", Time: time.UnixMilli(ms % (1 << 44)).UTC(), Tool: "shell",
			Decision: decision, Reason: command, Rule: output, Cwd: cwd, Summary: command,
			Args: args, Stdout: output, Stderr: command, Message: output,
		}
		if kind&4 != 0 {
			e.Mode = ModeCheck
		}
		if kind&8 != 0 {
			e.Error = command
			e.Decision = DecisionAllowed
		}
		if kind&16 != 0 {
			// Widenings come from policy, which refuses invalid UTF-8.
			e.Decision = []string{DecisionDenied, DecisionObserved}[int(kind>>5)%2]
			e.Widen = []policy.Widening{{Flag: "--read", Value: strings.ToValidUTF8(command, "?")}, {Flag: "--allow-command", Value: strings.ToValidUTF8(output, "?")}}
		}
		if decision == DecisionAllowed {
			e.ExitCode = ptr(int(ms % 256))
			e.DurationMS = ptr(ms)
		}
		if kind&16 != 0 {
			e.Network = []Conn{{Host: command, Port: int(ms % 65536), Allowed: kind&32 != 0, Rule: output},
				{Host: cwd, Port: 443, Rule: "network"}}
		}
		const max = 1 << 10
		text := render(&e, max)
		for _, line := range bytes.Split(text, []byte("\n"))[1:] {
			if bytes.HasPrefix(line, []byte("*")) && !isSectionHeading(line) {
				t.Fatalf("call text made a heading line %q", line)
			}
		}
		checkDrawer(t, text)
		got, err := Parse(bytes.NewReader(text), Filter{Warn: func(err error) { t.Errorf("warning: %v", err) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("read %d entries from\n%s", len(got), text)
		}
		w := want(e, max)
		// Reason and the other properties must survive exactly.
		if !reflect.DeepEqual(got[0], w) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got[0], w)
		}
		if len(args) > 0 && json.Valid(args) && strings.Contains(string(got[0].Args), "\n") {
			t.Fatalf("valid JSON arguments not on one line: %q", got[0].Args)
		}
	})
}

func isSectionHeading(line []byte) bool {
	switch string(line) {
	case "** Arguments", "** Result", "** Stderr", "** Network":
		return true
	}
	return false
}

// checkDrawer fails unless the property drawer holds only known keys up to
// its :END:, so no value can end it early or add a property.
func checkDrawer(t *testing.T, text []byte) {
	t.Helper()
	lines := strings.Split(string(text), "\n")
	if lines[1] != ":PROPERTIES:" {
		t.Fatalf("no drawer in\n%s", text)
	}
	known := "CALL_ID TIMESTAMP TIME TOOL MODE DECISION REASON RULE RESOURCE WIDEN MESSAGE CWD CONFINEMENT EXIT_CODE DURATION_MS TRUNCATED ERROR NET_DENIED"
	seen := map[string]bool{}
	for _, line := range lines[2:] {
		if line == ":END:" {
			return
		}
		key, _, _ := strings.Cut(strings.TrimPrefix(line, ":"), ":")
		if !strings.Contains(" "+known+" ", " "+key+" ") || seen[key] {
			t.Fatalf("unexpected drawer line %q", line)
		}
		seen[key] = true
	}
	t.Fatalf("drawer not closed in\n%s", text)
}

// FuzzReadPrompts: any system-prompts.org, scopegate's or gptel's, reads
// without a panic, as at most one change or one warning per headline.
// Seeded with gptel's file of testdata/gptel and an entry of each writer.
func FuzzReadPrompts(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "gptel", "system-prompts.org")); err == nil {
		f.Add(string(data))
	} else {
		f.Fatal(err)
	}
	f.Add(gptelEntry(time.Date(2026, 11, 24, 10, 11, 12, 0, time.Local), "", true, "* item\n,x"))
	f.Add("* System Prompt Change\n:PROPERTIES:\n:TIME: 2026-11-24T10:11:12.000Z\n:END:\n** Previous\n#+begin_example\na\n#+end_example\n** New\n#+begin_example\nb\n#+end_example\n")
	f.Fuzz(func(t *testing.T, s string) {
		warned := 0
		got, err := parsePrompts(strings.NewReader(s), func(error) { warned++ })
		if err != nil {
			t.Fatal(err)
		}
		heads := strings.Count("\n"+s, "\n* ")
		if len(got)+warned > heads+1 {
			t.Fatalf("%d changes and %d warnings from %d headlines", len(got), warned, heads)
		}
	})
}

// FuzzGptelPrompts writes arbitrary prompts as gptel writes its entries,
// followed by an entry of scopegate's, and reads them back: every prompt
// comes back as written (with a final newline), unless it holds what ends
// gptel's unescaped block or starts the next entry.
func FuzzGptelPrompts(f *testing.F) {
	f.Add("", "You are careful.", true)
	f.Add("# Rules\n\n* one\n** two\n,* three\n", ":END:\n#+end_src\n", false)
	f.Add("a\r\nb", "\n\n", true)
	f.Fuzz(func(t *testing.T, prev, next string, first bool) {
		for _, p := range []string{prev, next} {
			for line := range strings.Lines(p) {
				line = strings.TrimSuffix(line, "\n")
				if line == "#+end_example" || startsPromptEntry(line) {
					t.Skip("a prompt gptel cannot write back")
				}
			}
		}
		stamp := time.Date(2026, 11, 24, 10, 11, 12, 0, time.Local)
		text := gptelEntry(stamp, prev, !first, next) +
			"* System Prompt Change\n:PROPERTIES:\n:TIME: 2026-11-22T10:30:05.123Z\n:END:\n** Previous\n#+begin_example\n#+end_example\n** New\n#+begin_example\nlast\n#+end_example\n"
		got, err := parsePrompts(strings.NewReader(text), func(err error) { t.Errorf("warning: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("read %d changes from\n%s", len(got), text)
		}
		wantPrev := ""
		if !first {
			wantPrev = withNewline(prev)
		}
		if !got[0].Time.Equal(stamp) || got[0].Previous != wantPrev || got[0].New != withNewline(next) {
			t.Fatalf("got %+v\nwant previous %q, new %q", got[0], wantPrev, withNewline(next))
		}
		if got[1].New != "last\n" {
			t.Fatalf("scopegate's entry after gptel's: %+v", got[1])
		}
	})
}

// gptelEntry is an entry as gptel writes it (observed, not its code): the
// time in the headline and an indented drawer, "Previous Prompt" only when
// there was one, each prompt as it is and a newline before #+end_example.
func gptelEntry(t time.Time, prev string, hasPrev bool, next string) string {
	stamp := t.Format(gptelTimestamp)
	s := "* System Prompt Change: " + stamp + "\n  :PROPERTIES:\n  :TIMESTAMP: " + stamp + "\n  :END:\n\n"
	if hasPrev {
		s += "** Previous Prompt\n#+begin_example\n" + prev + "\n#+end_example\n\n"
	}
	return s + "** New Prompt\n#+begin_example\n" + next + "\n#+end_example\n\n"
}

// withNewline is a prompt as ReadPrompts gives it back.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// FuzzVerify reads arbitrary text as a tools.org with an arbitrary chain
// head: verify never fails or panics, its verdict agrees with its breaks,
// and every break and foreign entry names a line of the text.
// Seeded with chained files, each tampering of the unit tests and gptel's
// headings.
func FuzzVerify(f *testing.F) {
	var chained bytes.Buffer
	var h chainHead
	for i := 1; i <= 4; i++ {
		e := chainEntry(i)
		chained.Write(h.seal(nil, render(&e, 0), nil))
	}
	h.Size = int64(chained.Len())
	head := string(h.encode())
	c := chained.Bytes()
	f.Add(c, head)
	f.Add(c, "")
	f.Add(c[:len(c)/2], head)
	f.Add(append(append([]byte(gptelToolCall), c...), gptelToolCall...), head)
	f.Add(bytes.Replace(c, []byte(":CHAIN_SEQ: 2"), []byte(":CHAIN_SEQ: 9"), 1), head)
	f.Add(bytes.Replace(c, []byte(":CHAIN:    "), []byte(":CHAIN: "), 1), head)
	f.Add([]byte("* x\n:PROPERTIES:\n:CHAIN:\n:CHAIN_SEQ: 0\n:END:\n"), "scopegate-chain 1 0 - 0\n")
	f.Add([]byte("preamble\n* \n*\n"), head)
	f.Fuzz(func(t *testing.T, text []byte, headText string) {
		var hp *chainHead
		if h, err := parseHead([]byte(headText)); err == nil {
			hp = &h
		}
		r := verifyText(text, hp)
		if r.OK != (len(r.Breaks) == 0) {
			t.Fatalf("ok=%v with breaks %+v", r.OK, r.Breaks)
		}
		lines := bytes.Count(text, []byte("\n")) + 1
		for _, b := range r.Breaks {
			if b.Line < 1 || b.Line > lines || b.Kind == "" || b.Detail == "" {
				t.Fatalf("break %+v outside %d lines", b, lines)
			}
		}
		for _, fe := range r.Foreign {
			if fe.Line < 1 || fe.Line > lines {
				t.Fatalf("foreign %+v outside %d lines", fe, lines)
			}
		}
		if hp == nil && r.Entries > 0 && r.OK {
			t.Fatal("a chain without a head holds")
		}
	})
}

// FuzzChainTamper writes chained entries made of arbitrary text, checks
// that the chain holds, then changes one byte anywhere in the file and
// checks that verify no longer holds.
func FuzzChainTamper(f *testing.F) {
	for _, h := range hostile {
		f.Add(h[:min(len(h), 512)], uint16(7), byte(1))
	}
	f.Add("ok\n", uint16(0), byte('*'))
	f.Add(gptelToolCall, uint16(300), byte('\n'))
	f.Fuzz(func(t *testing.T, output string, pos uint16, xor byte) {
		if xor == 0 {
			return
		}
		var text []byte
		var h chainHead
		for i := 1; i <= 3; i++ {
			e := chainEntry(i)
			e.Stdout, e.Message = output, output
			text = h.seal(text, render(&e, 1<<10), nil)
		}
		h.Size = int64(len(text))
		if r := verifyText(text, &h); !r.OK || r.Entries != 3 {
			t.Fatalf("chain written does not hold: %+v\n%s", r, text)
		}
		changed := bytes.Clone(text)
		changed[int(pos)%len(changed)] ^= xor
		if r := verifyText(changed, &h); r.OK {
			t.Fatalf("byte %d changed and the chain holds:\n%s", int(pos)%len(changed), changed)
		}
	})
}

// FuzzKernelAtLeast: a kernel release is taken for 6.13 or later only when
// it starts with the digits of such a version, and never panics.
func FuzzKernelAtLeast(f *testing.F) {
	for _, s := range []string{"6.13.0", "6.18.44-fc-v657", "6.12.9", "5.15.0-91-generic", "", "6", "6.", ".13", "+6.13", "06.013", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, release string) {
		got := kernelAtLeast(release, 6, 13)
		ma, rest, ok := strings.Cut(release, ".")
		if !got || !ok {
			return
		}
		end := len(rest)
		for i, c := range rest {
			if c < '0' || c > '9' {
				end = i
				break
			}
		}
		m1, err1 := strconv.ParseUint(ma, 10, 63)
		m2, err2 := strconv.ParseUint(rest[:end], 10, 63)
		if err1 != nil || err2 != nil || m1 < 6 || m1 == 6 && m2 < 13 {
			t.Fatalf("kernelAtLeast(%q, 6, 13) is true", release)
		}
	})
}
