package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// BreakKind is the way a chain breaks: a closed vocabulary, written as
// its word in `audit verify` (text and JSON).
type BreakKind string

// The ways a chain breaks ([Break.Kind]).
const (
	// BreakEdited: an entry's text (or its chain properties) no longer
	// matches its :CHAIN:, or the last entry is not the one the head
	// recorded.
	BreakEdited BreakKind = "edited"
	// BreakRemoved: entries are missing before this one.
	BreakRemoved BreakKind = "removed"
	// BreakReordered: this entry comes before one written earlier, or
	// appears twice.
	BreakReordered BreakKind = "reordered"
	// BreakTruncated: the file ends before the entry the chain head records.
	BreakTruncated BreakKind = "truncated"
	// BreakInserted: an entry in scopegate's form without a chain after the
	// chain began, or chained entries past the chain head.
	BreakInserted BreakKind = "inserted"
	// BreakNoHead: the file has chained entries but the chain head beside
	// it is missing or unreadable, so a cut tail could not be seen.
	BreakNoHead BreakKind = "head_missing"
)

// String is the kind's word.
func (k BreakKind) String() string { return string(k) }

// Report is what [Verify] found in a tools.org file.
type Report struct {
	// OK is true when the chain holds: no Breaks.
	OK bool `json:"ok"`
	// Entries counts the chained entries.
	Entries int `json:"entries"`
	// Unchained counts scopegate entries written before the chain began
	// (by a version without it); they are not breaks.
	Unchained int `json:"unchained"`
	// Unrecorded counts the last entries that continue the chain past its
	// head from where the head ends: an append that stopped (a crash, kill
	// -9) between its write and its head. The next append records them.
	Unrecorded int `json:"unrecorded"`
	// Head is the chain head kept beside the file; nil when there is none.
	Head *ReportHead `json:"head"`
	// Breaks lists where the chain breaks, first first.
	Breaks []Break `json:"breaks"`
	// Foreign lists the entries written by other programs (gptel's own
	// "* Tool Call:" headings): skipped by the chain, not breaks.
	Foreign []Foreign `json:"foreign"`
}

// ReportHead is the chain head: the sequence number and :CHAIN: value of
// the branch's latest entry, and the file's size after it.
type ReportHead struct {
	Seq   uint64 `json:"seq"`
	Chain string `json:"chain"`
	Size  int64  `json:"size"`
}

// Break is one place where the chain does not hold.
type Break struct {
	Kind BreakKind `json:"kind"`
	// Line is the line of the entry's headline (for a truncated file, the
	// line just past its end); CallID and Seq are the entry's.
	Line   int    `json:"line"`
	CallID string `json:"call_id,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	Detail string `json:"detail"`
}

// Foreign is an entry of another program.
type Foreign struct {
	Line     int    `json:"line"`
	Headline string `json:"headline"`
}

// Verify checks the chain of the tools.org at path against itself and
// against its chain head ([ChainHeadPath]). It reads both under a shared
// lock of the file, so it sees no append half done. A missing file with
// no head has an empty chain, which holds.
func Verify(path string) (Report, error) {
	text, head, err := readChain(path)
	if err != nil {
		return Report{}, fmt.Errorf("verify %s: %w", path, err)
	}
	return verifyText(text, head), nil
}

// readChain reads the tools.org at path and its chain head (nil when
// missing or unreadable) under a shared flock of the file.
func readChain(path string) ([]byte, *chainHead, error) {
	var text []byte
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		defer f.Close()
		if _, err := retry(func() (int, error) { return 0, syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }); err != nil {
			return nil, nil, fmt.Errorf("lock: %w", err)
		}
		if text, err = io.ReadAll(f); err != nil {
			return nil, nil, err
		}
	}
	h, err := readHead(ChainHeadPath(path))
	switch {
	case err == nil:
		return text, &h, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errBadHead):
		// A bad head is reported as a missing one, when the file has a
		// chain.
		return text, nil, nil
	default:
		return nil, nil, err
	}
}

// item is an entry as verify sees it: its headline's line and offset.
type item struct {
	line int
	off  int64
	l    link
}

// verifyText checks the chain of tools.org text against head (nil: no
// head file). It is [Verify] without the files; it never fails: anything
// it cannot read is a break or a foreign entry. It reads the entries, then
// checks the chain entry by entry, then the file's tail against the head.
func verifyText(text []byte, head *chainHead) Report {
	r := Report{Breaks: []Break{}, Foreign: []Foreign{}}
	if head != nil {
		r.Head = &ReportHead{Seq: head.Seq, Chain: head.Value, Size: head.Size}
	}
	items, lines := readItems(text)
	end := r.checkChain(items, head)
	r.checkTail(items, head, end, lines, int64(len(text)))
	r.OK = len(r.Breaks) == 0
	return r
}

// readItems splits text into its level-1 entries, with their chain
// properties read, and counts its lines (the line just past its end).
func readItems(text []byte) ([]item, int) {
	var items []item
	splitEntries(text, 1, func(line int, raw []byte) bool {
		items = append(items, item{line, int64(offsetIn(text, raw)), parseLink(raw)})
		return true
	})
	lines := 1 + bytes.Count(text, []byte{'\n'})
	return items, lines
}

// chainEnd is where the chain of a file ends: its highest entry, whose
// sequence number and value the head must record, and the call of the
// last chained entry, which the tail's breaks name.
type chainEnd struct {
	seq      uint64
	value    string
	lastCall string
}

// checkChain checks each chained entry against the one before it, adding
// the breaks to r and counting the unchained and foreign entries, and
// returns where the chain ends.
func (r *Report) checkChain(items []item, head *chainHead) chainEnd {
	// Where each sequence number appears, to tell a removal from a move.
	at := map[uint64][]int{}
	for i, it := range items {
		if it.l.chained && it.l.err == nil {
			at[it.l.seq] = append(at[it.l.seq], i)
		}
	}
	brk := func(kind BreakKind, it item, format string, args ...any) {
		r.Breaks = append(r.Breaks, Break{Kind: kind, Line: it.line, CallID: it.l.callID, Seq: it.l.seq,
			Detail: fmt.Sprintf(format, args...)})
	}
	var prevSeq uint64
	prev := ""
	var end chainEnd
	if head != nil {
		// The chain of the file goes on from its last pruned entry.
		prevSeq, prev = head.BaseSeq, head.BaseValue
		end.seq, end.value = prevSeq, prev
	}
	started := false
	for i, it := range items {
		l := &it.l
		if !l.chained {
			switch {
			case l.scopegate && started:
				brk(BreakInserted, it, "an entry without :CHAIN: after the chain began")
			case l.scopegate:
				r.Unchained++
			default:
				r.Foreign = append(r.Foreign, Foreign{Line: it.line, Headline: l.headline})
			}
			continue
		}
		started = true
		r.Entries++
		end.lastCall = l.callID
		if l.err != nil {
			brk(BreakEdited, it, "its chain properties are damaged: %v", l.err)
			if l.seq != 0 {
				prevSeq = l.seq
			}
			prev = l.value
			if l.seq > end.seq {
				end.seq, end.value = l.seq, l.value
			}
			continue
		}
		switch {
		case l.seq == prevSeq+1:
			if l.sum(prev) != l.value {
				brk(BreakEdited, it, "its text does not match its :CHAIN:")
			}
		case l.seq > prevSeq+1:
			if later := firstAfter(at, prevSeq+1, l.seq-1, i); later >= 0 {
				brk(BreakReordered, it, "entry %d comes before entry %d (line %d)", l.seq, items[later].l.seq, items[later].line)
			} else {
				brk(BreakRemoved, it, "%s before it", missing(prevSeq+1, l.seq-1))
			}
		default:
			if first := at[l.seq][0]; first < i {
				brk(BreakReordered, it, "entry %d appears again (first at line %d)", l.seq, items[first].line)
			} else {
				brk(BreakReordered, it, "entry %d comes after entry %d", l.seq, prevSeq)
			}
		}
		prevSeq, prev = l.seq, l.value
		if l.seq >= end.seq {
			end.seq, end.value = l.seq, l.value
		}
	}
	return end
}

// checkTail checks the end of the file against the head, from the highest
// entry found (end), so that a move inside the file is not also reported
// as a cut; lines and size are the file's. Entries that continue the
// chain past the head where it says the file ended are unrecorded, not a
// break.
func (r *Report) checkTail(items []item, head *chainHead, end chainEnd, lines int, size int64) {
	brk := func(kind BreakKind, detail string) {
		r.Breaks = append(r.Breaks, Break{Kind: kind, Line: lines, CallID: end.lastCall, Seq: end.seq, Detail: detail})
	}
	switch {
	case head == nil && r.Entries > 0:
		brk(BreakNoHead, "the chain head beside tools.org is missing or unreadable, so a cut tail cannot be seen")
	case head == nil:
	case head.Seq > end.seq:
		brk(BreakTruncated, fmt.Sprintf("the file ends after entry %d; the chain head records entry %d", end.seq, head.Seq))
	case head.Seq < end.seq && len(r.Breaks) == 0 && followsHead(items, *head):
		r.Unrecorded = int(end.seq - head.Seq)
	case head.Seq < end.seq:
		brk(BreakInserted, fmt.Sprintf("%s past the chain head (entry %d): added, or an append that stopped before it recorded the head",
			missing(head.Seq+1, end.seq), head.Seq))
	case head.Value != end.value:
		brk(BreakEdited, fmt.Sprintf("the last entry is not the one the chain head records (entry %d)", head.Seq))
	case size < head.Size:
		brk(BreakTruncated, fmt.Sprintf("the file has %d bytes; the chain head records %d", size, head.Size))
	}
}

// followsHead reports whether the chained entries past head (the chain
// holding up to them) start where the head says the file ended, after the
// entry the head records.
func followsHead(items []item, head chainHead) bool {
	found := head.Seq == head.BaseSeq
	for _, it := range items {
		off, l := it.off, it.l
		if !l.chained {
			continue
		}
		switch {
		case l.seq == head.Seq:
			found = l.value == head.Value
		case l.seq == head.Seq+1:
			return found && off >= head.Size
		}
	}
	return false
}

// firstAfter is the index of the first item after i whose sequence number
// is in [lo, hi], or -1.
func firstAfter(at map[uint64][]int, lo, hi uint64, i int) int {
	best := -1
	if hi-lo > uint64(len(at)) {
		// More numbers missing than entries: look at the entries instead.
		for seq, is := range at {
			if seq >= lo && seq <= hi {
				for _, j := range is {
					if j > i && (best < 0 || j < best) {
						best = j
					}
				}
			}
		}
		return best
	}
	for seq := lo; seq <= hi; seq++ {
		for _, j := range at[seq] {
			if j > i && (best < 0 || j < best) {
				best = j
			}
		}
	}
	return best
}

// missing names the entries lo..hi.
func missing(lo, hi uint64) string {
	if lo == hi {
		return "entry " + strconv.FormatUint(lo, 10)
	}
	return fmt.Sprintf("entries %d–%d", lo, hi)
}
