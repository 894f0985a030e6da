package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// ReadFile reads the entries of a tools.org file that f selects, oldest
// first. A missing file has no entries. Entries that cannot be parsed — a
// torn last entry after a crash, a heading added by hand — are skipped and
// reported to f.Warn.
func ReadFile(path string, f Filter) ([]Entry, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	defer file.Close()
	entries, err := Parse(file, f)
	if err != nil {
		return nil, fmt.Errorf("read audit log %s: %w", path, err)
	}
	return entries, nil
}

// Parse reads tools.org text from r; see [ReadFile].
func Parse(r io.Reader, f Filter) ([]Entry, error) {
	var out []Entry
	err := scanEntries(r, dialect{}, func(o *orgEntry) {
		e, err := o.toolEntry()
		if err != nil {
			if f.Warn != nil {
				f.Warn(err)
			}
			return
		}
		if f.match(&e) {
			out = append(out, e)
		}
	}, f.Warn)
	return out, err
}

// orgEntry is one level-1 heading as written by this package.
type orgEntry struct {
	line     int // line number of the headline
	headline string
	props    map[string]string // values as written (escaped)
	sections map[string]string // level-2 title → block body, unescaped
	err      error             // why the entry is malformed
}

// dialect is how far the entries of a file may depart from the form this
// package writes. The zero dialect is tools.org's, and strict.
type dialect struct {
	// verbatim reports whether the entry under a headline comes from a
	// writer that does not escape (gptel's own system-prompts.org
	// entries): its property drawer may be indented, as Org allows, and its
	// block lines are kept as written, a leading comma included.
	verbatim func(headline string) bool
	// starts reports whether a "* " line inside a verbatim block is a new
	// entry's headline; any other such line is text of the block (an
	// unescaped Markdown list item).
	starts func(line string) bool
}

// scanEntries splits r at level-1 headlines and parses each entry as d
// allows. Text before the first headline is ignored.
func scanEntries(r io.Reader, d dialect, fn func(*orgEntry), warn func(error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var cur *orgEntry
	var p entryParser
	lineNo := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if line == "" && err != nil {
			break
		}
		lineNo++
		complete := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		if !complete && line == "*" {
			// The first byte of a torn headline (or of a section heading of
			// cur; a lone star cannot tell): warn, and leave cur alone.
			if warn != nil {
				warn(fmt.Errorf("line %d: %w: torn headline %q", lineNo, ErrMalformed, line))
			}
			break
		}
		inText := cur != nil && p.verbatim && p.state == 3 && (d.starts == nil || !d.starts(line))
		if strings.HasPrefix(line, "* ") && !inText {
			if cur != nil {
				fn(p.finish())
			}
			cur = &orgEntry{line: lineNo, headline: line[2:], props: map[string]string{}, sections: map[string]string{}}
			p = entryParser{e: cur, verbatim: d.verbatim != nil && d.verbatim(cur.headline)}
		} else if cur != nil {
			p.line(line)
		}
		if !complete {
			if cur != nil && cur.err == nil {
				cur.err = errors.New("entry ends without a newline (torn write)")
			}
			break
		}
	}
	if cur != nil {
		fn(p.finish())
	}
	return nil
}

// entryParser is the state of parsing one entry line by line.
type entryParser struct {
	e        *orgEntry
	verbatim bool // see dialect.verbatim
	state    int  // 0 want :PROPERTIES:, 1 in drawer, 2 body, 3 in block
	section  string
	endTag   string
	body     strings.Builder
}

func (p *entryParser) fail(format string, args ...any) {
	if p.e.err == nil {
		p.e.err = fmt.Errorf(format, args...)
	}
}

func (p *entryParser) line(line string) {
	switch p.state {
	case 0:
		if p.verbatim {
			line = strings.TrimLeft(line, " \t")
		}
		if line != ":PROPERTIES:" {
			p.fail("no property drawer after the headline")
			p.state = 2
			return
		}
		p.state = 1
	case 1:
		if p.verbatim {
			line = strings.TrimLeft(line, " \t")
		}
		if line == ":END:" {
			p.state = 2
			return
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(line, ":"), ":")
		if !ok || !strings.HasPrefix(line, ":") || key == "" {
			p.fail("bad property line %q", line)
			return
		}
		p.e.props[key] = strings.Trim(value, " \t")
	case 2:
		switch {
		case strings.HasPrefix(line, "** "):
			p.section = line[3:]
		case strings.HasPrefix(line, "#+begin_"):
			kind, _, _ := strings.Cut(line[len("#+begin_"):], " ")
			p.endTag = "#+end_" + kind
			p.body.Reset()
			p.state = 3
		}
	case 3:
		if line == p.endTag {
			p.e.sections[p.section] = p.body.String()
			p.state = 2
			return
		}
		if !p.verbatim {
			line = unescapeBlockLine(line)
		}
		p.body.WriteString(line)
		p.body.WriteByte('\n')
	}
}

func (p *entryParser) finish() *orgEntry {
	switch p.state {
	case 0, 1:
		p.fail("property drawer not closed")
	case 3:
		p.fail("block %q not closed", p.section)
	}
	return p.e
}

// toolEntry turns a parsed heading into an Entry.
func (o *orgEntry) toolEntry() (Entry, error) {
	malformed := func(err error) (Entry, error) {
		return Entry{}, fmt.Errorf("line %d: %w: %w", o.line, ErrMalformed, err)
	}
	if o.err != nil {
		return malformed(o.err)
	}
	get := func(k string) string { return unescapeLine(o.props[k]) }
	e := Entry{
		CallID:        get("CALL_ID"),
		Tool:          get("TOOL"),
		Decision:      get("DECISION"),
		Reason:        get("REASON"),
		Rule:          get("RULE"),
		Resource:      get("RESOURCE"),
		Message:       get("MESSAGE"),
		Cwd:           get("CWD"),
		Mode:          get("MODE"),
		AgentTool:     get("AGENT_TOOL"),
		Confinement:   get("CONFINEMENT"),
		ArgsTruncated: get("ARGS_TRUNCATED"),
		Error:         get("ERROR"),
		Offered:       get("OFFERED"),
		Channel:       get("CHANNEL"),
		Answer:        get("ANSWER"),
		Approved:      get("APPROVED"),
		Managed:       get("MANAGED"),
	}
	if e.CallID == "" || e.Decision == "" {
		return malformed(errors.New("no CALL_ID or DECISION property"))
	}
	if v, ok := o.props["TIME"]; ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return malformed(fmt.Errorf("TIME: %w", err))
		}
		e.Time = t
	}
	if v, ok := o.props["WIDEN"]; ok {
		if err := json.Unmarshal([]byte(unescapeLine(v)), &e.Widen); err != nil {
			return malformed(fmt.Errorf("WIDEN: %w", err))
		}
	}
	if v, ok := o.props["EXIT_CODE"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return malformed(fmt.Errorf("EXIT_CODE: %w", err))
		}
		e.ExitCode = &n
	}
	if v, ok := o.props["DURATION_MS"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return malformed(fmt.Errorf("DURATION_MS: %w", err))
		}
		e.DurationMS = &n
	}
	if v, ok := o.props["TRUNCATED"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return malformed(fmt.Errorf("TRUNCATED: %w", err))
		}
		e.TruncatedBytes = n
	}
	if a, ok := o.sections["Arguments"]; ok {
		e.Args = json.RawMessage(strings.TrimSuffix(a, "\n"))
		if e.ArgsTruncated != "" && !json.Valid(e.Args) {
			// Cut to the cap (:ARGS_TRUNCATED:): kept as the text it is.
			e.Args, _ = json.Marshal(strings.TrimSuffix(a, "\n"))
		}
	}
	e.Stdout = o.sections["Result"]
	e.Stderr = o.sections["Stderr"]
	if text, ok := o.sections["Network"]; ok {
		conns, err := parseConns(text)
		if err != nil {
			return malformed(err)
		}
		e.Network = conns
	}
	if v, ok := o.props["NET_DENIED"]; ok {
		if n, err := strconv.Atoi(v); err != nil || n != e.NetDenied() {
			return malformed(fmt.Errorf("NET_DENIED %q does not count the denied connections of the Network section", v))
		}
	}

	// Headline: KEYWORD TOOL[: SUMMARY]
	_, rest, _ := strings.Cut(o.headline, " ")
	if s, ok := strings.CutPrefix(rest, headlineTool(e.Tool)+": "); ok {
		e.Summary = unescapeLine(s)
	}
	return e, nil
}
