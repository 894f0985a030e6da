package audit

import (
	"errors"
	"fmt"
	"io/fs"
)

// Pruned is the text of a tools.org with its oldest entries dropped, see
// [Prune].
type Pruned struct {
	// Text is what remains, ending in a newline.
	Text []byte
	// Dropped and Kept count the level-1 entries dropped and kept.
	Dropped, Kept int
	// base is the last chained entry dropped: the chain of Text goes on
	// from it.
	base chainHead
}

// Prune drops the entries of tools.org text that drop selects, keeping the
// chain whole: entries written by scopegate are dropped only from the
// start, up to the first one drop keeps (an old entry after it waits for a
// later prune); entries of other programs are dropped wherever drop says.
// Text before the first headline is kept. Record the result with
// [Pruned.Rebase] once Text has replaced the file.
func Prune(text []byte, drop func(entry []byte) bool) Pruned {
	var p Pruned
	if i := firstHeadline(text); i > 0 {
		p.Text = append(p.Text, text[:i]...)
	}
	keeping := false
	splitEntries(text, 1, func(_ int, raw []byte) bool {
		l := parseLink(raw)
		ours := l.scopegate || l.chained
		switch {
		case ours && !keeping && drop(raw):
			if l.chained && l.err == nil {
				p.base = chainHead{Seq: l.seq, Value: l.value}
			}
			p.Dropped++
			return true
		case !ours && drop(raw):
			p.Dropped++
			return true
		case ours:
			keeping = true
		}
		p.Kept++
		p.Text = append(p.Text, raw...)
		return true
	})
	if len(p.Text) > 0 && p.Text[len(p.Text)-1] != '\n' {
		// The file ends a line, as after every append: the head's size
		// says so to the next one (loadHead).
		p.Text = append(p.Text, '\n')
	}
	return p
}

// firstHeadline is the offset of the first level-1 headline of text, or
// len(text).
func firstHeadline(text []byte) int {
	at := len(text)
	splitEntries(text, 1, func(_ int, raw []byte) bool {
		at = offsetIn(text, raw)
		return false
	})
	return at
}

// Rebase records in the chain head of the tools.org at logPath that the
// file is now p.Text: the chain starts after the last entry p dropped. It
// must run under the exclusive lock of logPath that every appender takes,
// after the file was rewritten.
func (p Pruned) Rebase(logPath string) error {
	f, err := openHead(ChainHeadPath(logPath))
	if err != nil {
		return err
	}
	defer f.close()
	h, err := f.read()
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errBadHead):
		h = lastLink(p.Text)
	case err != nil:
		return err
	}
	if p.base.Seq > h.BaseSeq {
		h.BaseSeq, h.BaseValue = p.base.Seq, p.base.Value
	}
	if h.Seq < h.BaseSeq {
		h.Seq, h.Value = h.BaseSeq, h.BaseValue
	}
	h.Size = int64(len(p.Text))
	if err := f.write(h); err != nil {
		return fmt.Errorf("rebase chain of %s: %w", logPath, err)
	}
	return nil
}
