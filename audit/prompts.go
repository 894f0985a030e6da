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
	writeProp(&b, "TIMESTAMP", orgTimestamp(c.Time))
	writeProp(&b, "TIME", c.Time.UTC().Format(timeLayout))
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

// ReadPrompts reads the changes in a system-prompts.org file, oldest first.
// A missing file has none; unparsable entries are skipped and given to warn
// (which may be nil). Prompts read back end with a newline when not empty.
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

// gptelTimestamp is the TIMESTAMP of the entries gptel itself writes
// (format-time-string "%a %b %d %H:%M:%S %Y", local time).
const gptelTimestamp = "Mon Jan 02 15:04:05 2006"

func parsePrompts(r io.Reader, warn func(error)) ([]PromptChange, error) {
	var out []PromptChange
	err := scanEntries(r, func(o *orgEntry) {
		// scopegate writes "System Prompt Change" with a TIME property and
		// sections Previous and New; gptel writes the time into the
		// headline, TIMESTAMP only, sections "Previous Prompt" (absent for
		// the first prompt) and "New Prompt".
		gptel := strings.HasPrefix(o.headline, "System Prompt Change: ")
		if o.err == nil && o.headline != "System Prompt Change" && !gptel {
			o.err = fmt.Errorf("unexpected heading %q", o.headline)
		}
		var c PromptChange
		if o.err == nil {
			var t time.Time
			var err error
			if v, ok := o.props["TIME"]; ok || !gptel {
				t, err = time.Parse(time.RFC3339Nano, v)
				if err != nil {
					o.err = fmt.Errorf("TIME: %w", err)
				}
			} else if t, err = time.ParseInLocation(gptelTimestamp, o.props["TIMESTAMP"], time.Local); err != nil {
				o.err = fmt.Errorf("TIMESTAMP: %w", err)
			}
			c = PromptChange{Time: t, Source: unescapeLine(o.props["SOURCE"]), Previous: o.sections["Previous"], New: o.sections["New"]}
			if gptel {
				c.Previous, c.New = o.sections["Previous Prompt"], o.sections["New Prompt"]
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
