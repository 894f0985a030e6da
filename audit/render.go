package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxSummary is the longest headline summary, in runes, before it is cut.
const maxSummary = 160

// timeLayout is the layout of the :TIME: property.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// render returns the Org text of e: one level-1 heading with its property
// drawer and sections, ending in a newline.
func render(e *Entry, maxOutput int) []byte {
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	var b bytes.Buffer
	b.Grow(512 + min(len(e.Stdout), maxOutput) + min(len(e.Stderr), maxOutput) + len(e.Args))

	b.WriteString("* ")
	b.WriteString(e.Keyword())
	b.WriteByte(' ')
	b.WriteString(headlineTool(e.Tool))
	if s := headlineSummary(e); s != "" {
		b.WriteString(": ")
		b.WriteString(s)
	}
	b.WriteString("\n:PROPERTIES:\n")

	stdout, stdoutCut := cut(e.Stdout, maxOutput)
	stderr, stderrCut := cut(e.Stderr, maxOutput)
	truncated := e.TruncatedBytes
	if (stdoutCut || stderrCut) && truncated < int64(len(e.Stdout)+len(e.Stderr)) {
		truncated = int64(len(e.Stdout) + len(e.Stderr))
	}

	prop(&b, "CALL_ID", e.CallID)
	if !e.Time.IsZero() {
		writeTimeProp(&b, "TIMESTAMP", e.Time, orgTimestampLayout)
		writeTimeProp(&b, "TIME", e.Time.UTC(), timeLayout)
	}
	prop(&b, "TOOL", e.Tool)
	prop(&b, "MODE", e.Mode)
	prop(&b, "AGENT_TOOL", e.AgentTool)
	prop(&b, "DECISION", e.Decision)
	prop(&b, "REASON", e.Reason)
	prop(&b, "RULE", e.Rule)
	prop(&b, "RESOURCE", e.Resource)
	if len(e.Widen) > 0 {
		if w, err := json.Marshal(e.Widen); err == nil {
			prop(&b, "WIDEN", string(w))
		}
	}
	prop(&b, "MESSAGE", e.Message)
	prop(&b, "CWD", e.Cwd)
	prop(&b, "CONFINEMENT", e.Confinement)
	if e.ExitCode != nil {
		writeProp(&b, "EXIT_CODE", strconv.Itoa(*e.ExitCode))
	}
	if e.DurationMS != nil {
		writeProp(&b, "DURATION_MS", strconv.FormatInt(*e.DurationMS, 10))
	}
	if truncated > 0 {
		writeProp(&b, "TRUNCATED", strconv.FormatInt(truncated, 10))
	}
	args := string(compactJSON(e.Args))
	if len(args) > maxOutput {
		// Arguments are capped like output: the drawer keeps their real
		// size and a SHA-256 of all of them, so what ran stays provable.
		sum := sha256.Sum256([]byte(args))
		writeProp(&b, "ARGS_TRUNCATED", strconv.Itoa(len(args))+" sha256:"+hex.EncodeToString(sum[:]))
		args = args[:utf8Prefix(args, maxOutput)]
	} else if e.ArgsTruncated != "" {
		writeProp(&b, "ARGS_TRUNCATED", e.ArgsTruncated)
	}
	prop(&b, "ERROR", e.Error)
	prop(&b, "OFFERED", e.Offered)
	prop(&b, "CHANNEL", e.Channel)
	prop(&b, "ANSWER", e.Answer)
	prop(&b, "APPROVED", e.Approved)
	prop(&b, "MANAGED", e.Managed)
	if n := e.NetDenied(); n > 0 {
		writeProp(&b, "NET_DENIED", strconv.Itoa(n))
	}
	b.WriteString(":END:\n")

	if len(e.Args) > 0 {
		b.WriteString("** Arguments\n#+begin_src json\n")
		writeBlockBody(&b, sanitizeBlock(args))
		b.WriteString("#+end_src\n")
	}
	if hasResult(e) {
		b.WriteString("** Result\n#+begin_example\n")
		writeBlockBody(&b, sanitizeBlock(stdout))
		b.WriteString("#+end_example\n")
		if stderr != "" {
			b.WriteString("** Stderr\n#+begin_example\n")
			writeBlockBody(&b, sanitizeBlock(stderr))
			b.WriteString("#+end_example\n")
		}
	}
	if len(e.Network) > 0 {
		b.WriteString("** Network\n#+begin_example\n")
		for _, c := range e.Network {
			writeConn(&b, c)
		}
		b.WriteString("#+end_example\n")
	}
	return b.Bytes()
}

// writeConn writes one connection line of the Network section:
// "allowed|denied HOST:PORT RULE", the host escaped as a property value is
// and without spaces (\x20), the rule the rest of the line.
func writeConn(b *bytes.Buffer, c Conn) {
	if c.Allowed {
		b.WriteString("allowed ")
	} else {
		b.WriteString("denied ")
	}
	b.WriteString(strings.ReplaceAll(escapeLine(c.Host, 0), " ", `\x20`))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(c.Port))
	if c.Rule != "" {
		b.WriteByte(' ')
		b.WriteString(escapeLine(c.Rule, 0))
	}
	b.WriteByte('\n')
}

// parseConns reads the lines of a Network section back.
func parseConns(text string) ([]Conn, error) {
	var out []Conn
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		var c Conn
		switch word {
		case "allowed":
			c.Allowed = true
		case "denied":
		default:
			return nil, fmt.Errorf("network line %q: not allowed or denied", line)
		}
		hostPort, rule, _ := strings.Cut(rest, " ")
		i := strings.LastIndexByte(hostPort, ':')
		if i < 0 {
			return nil, fmt.Errorf("network line %q: no port", line)
		}
		port, err := strconv.Atoi(hostPort[i+1:])
		if err != nil {
			return nil, fmt.Errorf("network line %q: %w", line, err)
		}
		c.Host, c.Port, c.Rule = unescapeLine(hostPort[:i]), port, unescapeLine(rule)
		out = append(out, c)
	}
	return out, nil
}

// hasResult reports whether e gets a Result section: an allowed call that
// ran (not a check), or any call that left output.
func hasResult(e *Entry) bool {
	if DecisionOnly(e.Mode) {
		return false
	}
	return ((e.Decision == DecisionAllowed || e.Decision == DecisionObserved) && e.Error == "") || e.Stdout != "" || e.Stderr != ""
}

// prop writes a property drawer line for a non-empty value.
func prop(b *bytes.Buffer, key, value string) {
	if value == "" {
		return
	}
	writeProp(b, key, escapeLine(value, 0))
}

// writeProp writes ":KEY: value" with the value column aligned as in
// docs/reference.md, tools.org.
func writeProp(b *bytes.Buffer, key, value string) {
	writeKey(b, key)
	b.WriteString(value)
	b.WriteByte('\n')
}

// writeTimeProp is writeProp of t in layout.
func writeTimeProp(b *bytes.Buffer, key string, t time.Time, layout string) {
	writeKey(b, key)
	b.Write(t.AppendFormat(b.AvailableBuffer(), layout))
	b.WriteByte('\n')
}

// writeKey writes ":KEY:" and the spaces up to the value column.
func writeKey(b *bytes.Buffer, key string) {
	b.WriteByte(':')
	b.WriteString(key)
	b.WriteByte(':')
	for n := len(key) + 2; n < 10; n++ {
		b.WriteByte(' ')
	}
	b.WriteByte(' ')
}

// cut returns s cut to at most max bytes at a rune boundary.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	k := max
	for k > 0 && k > max-utf8.UTFMax && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k], true
}

// compactJSON returns the arguments on one line when they are valid JSON, and
// as given otherwise (the block escape keeps them harmless either way).
func compactJSON(raw json.RawMessage) []byte {
	if !spaceOutsideStrings(raw) {
		// Compact would give raw back: valid JSON is compact already,
		// and invalid JSON is kept as given.
		return raw
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// spaceOutsideStrings reports whether raw has a JSON space character
// outside its strings (read as JSON reads them).
func spaceOutsideStrings(raw []byte) bool {
	in, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return true
		}
	}
	return false
}

// Line is what the call is about, on one line as its headline shows it:
// the command, path, pattern or node, control characters and line breaks
// written visibly, cut at the headline's length; never the content a call
// would write. It is for readers other than Org (the page's feed).
func (e *Entry) Line() string {
	s := e.Summary
	if s == "" {
		s = summarize(e.Args)
	}
	return escapeLine(s, maxSummary)
}

// headlineSummary is the escaped one-line text after "TOOL: ".
func headlineSummary(e *Entry) string {
	s := e.Summary
	if s == "" {
		s = summarize(e.Args)
	}
	return noTags(escapeLine(s, maxSummary))
}

// headlineTool is the escaped tool name of the headline.
func headlineTool(tool string) string {
	if tool == "" {
		return "-"
	}
	return noTags(escapeLine(tool, 64))
}

// noTags escapes a final ':' so that a headline ending in ":word:" is not
// read by Org as tags.
func noTags(s string) string {
	if strings.HasSuffix(s, ":") {
		return s[:len(s)-1] + `\x3a`
	}
	return s
}

// summarize picks what a reader wants to see of a call: the shell command,
// or the path, pattern or node the call is about. Keys are matched as the
// tools decode them (encoding/json: the last of case-insensitively equal
// keys wins), so the headline names what was decided; a value that is not a
// string is left out.
func summarize(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var a struct {
		Command, Pattern, Path, Title string
		NodeID                        string `json:"node_id"`
		SourceID                      string `json:"source_id"`
		TargetID                      string `json:"target_id"`
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, &a); err != nil && !errors.As(err, &typeErr) {
		return ""
	}
	switch {
	case a.Command != "":
		return a.Command
	case a.Pattern != "" && a.Path != "":
		return a.Pattern + " in " + a.Path
	case a.Pattern != "":
		return a.Pattern
	}
	for _, v := range []string{a.Path, a.NodeID, a.Title} {
		if v != "" {
			return v
		}
	}
	if a.SourceID != "" || a.TargetID != "" {
		return a.SourceID + " -> " + a.TargetID
	}
	return ""
}

// orgTimestampLayout is the layout of the inactive Org timestamp of
// :TIMESTAMP:, for agenda views.
const orgTimestampLayout = "[2006-01-02 Mon 15:04]"

// utf8Prefix is the length of the longest prefix of s of at most n bytes
// that does not cut a UTF-8 sequence.
func utf8Prefix(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
