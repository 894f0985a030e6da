package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// PromptChange is one entry of system-prompts.org: a system prompt replaced
// by another.
type PromptChange struct {
	Time time.Time `json:"time"`
	// Source says where the new prompt came from (a file, a preset); optional.
	Source   string `json:"source,omitempty"`
	Previous string `json:"previous"`
	New      string `json:"new"`
}

// PromptLog appends to a system-prompts.org file, with the same locking,
// single write and escaping as [Log].
type PromptLog struct {
	// Path is the system-prompts.org file; created 0600 when missing.
	Path string
	// NoSync skips the fsync after each append.
	NoSync bool
	// Now stamps changes whose Time is zero (default time.Now).
	Now func() time.Time
}

// Append writes c as a "* System Prompt Change" heading with the previous and
// the new prompt in example blocks.
func (l *PromptLog) Append(ctx context.Context, c PromptChange) error {
	if c.Time.IsZero() {
		c.Time = now(l.Now)
	}
	var b bytes.Buffer
	b.WriteString("* System Prompt Change\n:PROPERTIES:\n")
	writeTimeProp(&b, "TIMESTAMP", c.Time, orgTimestampLayout)
	writeTimeProp(&b, "TIME", c.Time.UTC(), timeLayout)
	prop(&b, "SOURCE", c.Source)
	b.WriteString(":END:\n** Previous\n#+begin_example\n")
	writeBlockBody(&b, sanitizeBlock(c.Previous))
	b.WriteString("#+end_example\n** New\n#+begin_example\n")
	writeBlockBody(&b, sanitizeBlock(c.New))
	b.WriteString("#+end_example\n")
	if err := appendEntry(ctx, l.Path, b.Bytes(), !l.NoSync); err != nil {
		return fmt.Errorf("log system prompt change: %w", err)
	}
	return nil
}

// ReadPrompts reads the changes in a system-prompts.org file, oldest first:
// the entries [PromptLog] writes and those gptel writes itself. A missing
// file has none; unparsable entries are skipped and given to warn (which
// may be nil). Prompts read back end with a newline when not empty.
func ReadPrompts(path string, warn func(error)) ([]PromptChange, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read system prompts: %w", err)
	}
	defer f.Close()
	return parsePrompts(f, warn)
}

// gptelTimestamp is the time of the entries gptel itself writes, in its
// headline and TIMESTAMP property: (format-time-string "%a %b %d %H:%M:%S
// %Y"), local time, English names (the C locale's).
const gptelTimestamp = "Mon Jan 02 15:04:05 2006"

// gptelHeadline starts the headline of gptel's own entries, the time
// following it; scopegate's headline is "System Prompt Change" alone.
const gptelHeadline = "System Prompt Change: "

// isGptelEntry reports whether a headline is one of gptel's own entries:
// read with the drawer indented and the prompts unescaped, as gptel
// writes them.
func isGptelEntry(headline string) bool { return strings.HasPrefix(headline, gptelHeadline) }

// startsPromptEntry reports whether a "* " line inside gptel's unescaped
// prompt is still the next entry's headline (of either writer).
func startsPromptEntry(line string) bool {
	return line == "* System Prompt Change" || strings.HasPrefix(line, "* "+gptelHeadline)
}

// parsePrompts reads system-prompts.org text from r; see [ReadPrompts].
func parsePrompts(r io.Reader, warn func(error)) ([]PromptChange, error) {
	var out []PromptChange
	err := scanEntries(r, dialect{verbatim: isGptelEntry, starts: startsPromptEntry}, func(o *orgEntry) {
		var c PromptChange
		if o.err == nil {
			if stamp, ok := strings.CutPrefix(o.headline, gptelHeadline); ok {
				c, o.err = o.gptelChange(stamp)
			} else if o.headline == "System Prompt Change" {
				c, o.err = o.promptChange()
			} else {
				o.err = fmt.Errorf("unexpected heading %q", o.headline)
			}
		}
		if o.err != nil {
			if warn != nil {
				warn(fmt.Errorf("line %d: %w: %w", o.line, ErrMalformed, o.err))
			}
			return
		}
		out = append(out, c)
	}, warn)
	if err != nil {
		return nil, fmt.Errorf("read system prompts: %w", err)
	}
	return out, nil
}

// promptChange is an entry as [PromptLog] writes it: TIME, SOURCE, and
// sections Previous and New, escaped.
func (o *orgEntry) promptChange() (PromptChange, error) {
	t, err := time.Parse(time.RFC3339Nano, o.props["TIME"])
	if err != nil {
		return PromptChange{}, fmt.Errorf("TIME: %w", err)
	}
	return PromptChange{Time: t, Source: unescapeLine(o.props["SOURCE"]), Previous: o.sections["Previous"], New: o.sections["New"]}, nil
}

// gptelChange is an entry as gptel writes it: the time in the headline
// (stamp) and in TIMESTAMP, local time; section "Previous Prompt" absent
// for the first prompt, then "New Prompt"; each prompt written as it was
// and followed by a newline of gptel's before #+end_example. A TIME, when
// someone added one, wins.
func (o *orgEntry) gptelChange(stamp string) (PromptChange, error) {
	var t time.Time
	var err error
	switch {
	case o.props["TIME"] != "":
		if t, err = time.Parse(time.RFC3339Nano, o.props["TIME"]); err != nil {
			return PromptChange{}, fmt.Errorf("TIME: %w", err)
		}
	case o.props["TIMESTAMP"] != "":
		if t, err = time.ParseInLocation(gptelTimestamp, o.props["TIMESTAMP"], time.Local); err != nil {
			return PromptChange{}, fmt.Errorf("TIMESTAMP: %w", err)
		}
	default:
		if t, err = time.ParseInLocation(gptelTimestamp, stamp, time.Local); err != nil {
			return PromptChange{}, fmt.Errorf("headline time: %w", err)
		}
	}
	newText, ok := o.sections["New Prompt"]
	if !ok {
		return PromptChange{}, errors.New(`no "New Prompt" section`)
	}
	return PromptChange{Time: t, Previous: gptelPrompt(o.sections["Previous Prompt"]), New: gptelPrompt(newText)}, nil
}

// gptelPrompt is a prompt of gptel's block body as [ReadPrompts] gives
// prompts back: gptel's own newline before #+end_example dropped, a final
// newline when not empty.
func gptelPrompt(body string) string {
	s := strings.TrimSuffix(body, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
