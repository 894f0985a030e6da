package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/scopegate/scopegate/audit"
)

// FeedSize is how many events a Feed keeps for pages that connect later or
// reconnect: as many as the page's list shows.
const FeedSize = 1000

// Feed is the live stream of the audited events of a gateway (every entry
// it appends to a tools.org), for the page: it keeps the last FeedSize in a
// ring, numbered, so that a page that reconnects with the number of the
// last event it saw (Last-Event-ID) gets exactly the ones it missed. It is
// a gateway.EventSink: Emit copies what the page shows of an event and
// returns; whatever the pages cost is spent on their own goroutines. It is
// safe for concurrent use.
type Feed struct {
	// boot names this feed among the feeds of every serve: an event id of
	// another one (a page that outlived a restart) starts the page over.
	boot string

	mu   sync.Mutex
	seq  uint64
	ring []feedRow
	subs wakers
}

// NewFeed returns an empty feed.
func NewFeed() *Feed {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Feed{boot: hex.EncodeToString(b[:]), ring: make([]feedRow, 0, FeedSize), subs: wakers{}}
}

// feedRow is what the page shows of one event: the entry's decision and
// the call in one line, never its arguments or output. Its JSON is
// appendJSON's.
type feedRow struct {
	Seq       uint64
	Kind      string
	Time      time.Time
	Session   string
	Branch    string
	Via       string
	Mode      string
	CallID    string
	Tool      string
	AgentTool string
	// Summary is the call in one line; empty, it is made from args when
	// the row is first sent (most rows are never sent: no page is open).
	Summary  string
	args     json.RawMessage
	Decision string
	Reason   string
	Rule     string
	Resource string
	Message  string
	Offered  string
	Channel  string
	Answer   string
	Approved string
	ExitCode *int
	Error    string
}

// maxKeptArgs bounds the arguments a row keeps to make its summary from
// later; a row of larger ones (a file's content) makes it at once.
const maxKeptArgs = 1 << 10

// Emit takes an audited event into the feed and wakes the pages.
func (f *Feed) Emit(ev audit.Event) {
	e := &ev.Entry
	row := feedRow{Kind: ev.Kind, Time: e.Time, Session: ev.Session, Branch: ev.Branch, Via: ev.Via, Mode: e.Mode,
		CallID: e.CallID, Tool: e.Tool, AgentTool: e.AgentTool, Decision: e.Decision,
		Reason: e.Reason, Rule: e.Rule, Resource: e.Resource, Message: e.Message, Offered: e.Offered,
		Channel: e.Channel, Answer: e.Answer, Approved: e.Approved, ExitCode: e.ExitCode, Error: e.Error}
	if e.Summary == "" && len(e.Args) <= maxKeptArgs {
		row.args = e.Args
	} else {
		row.Summary = e.Line()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	row.Seq = f.seq
	if len(f.ring) < FeedSize {
		f.ring = append(f.ring, row)
	} else {
		f.ring[int((row.Seq-1)%FeedSize)] = row
	}
	f.subs.wake()
}

// line is the row's call in one line.
func (r *feedRow) line() string {
	if r.Summary == "" && len(r.args) > 0 {
		e := audit.Entry{Args: r.args}
		return e.Line()
	}
	return r.Summary
}

// appendJSON appends the row's JSON object: the page's one reader of it is
// page.js. Written by hand, as the feed's cost per decision is mostly this.
func (r *feedRow) appendJSON(b []byte) []byte {
	field := func(b []byte, name, v string, always bool) []byte {
		if v == "" && !always {
			return b
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		return appendJSONString(b, v)
	}
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = field(b, "kind", r.Kind, true)
	b = field(b, "session", r.Session, true)
	b = field(b, "branch", r.Branch, true)
	b = field(b, "via", r.Via, false)
	b = field(b, "mode", r.Mode, false)
	b = field(b, "call_id", r.CallID, true)
	b = field(b, "tool", r.Tool, true)
	b = field(b, "agent_tool", r.AgentTool, false)
	b = field(b, "summary", r.line(), true)
	b = field(b, "decision", r.Decision, true)
	b = field(b, "reason", r.Reason, false)
	b = field(b, "rule", r.Rule, false)
	b = field(b, "resource", r.Resource, false)
	b = field(b, "message", r.Message, false)
	b = field(b, "offered", r.Offered, false)
	b = field(b, "channel", r.Channel, false)
	b = field(b, "answer", r.Answer, false)
	b = field(b, "approved", r.Approved, false)
	if r.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*r.ExitCode), 10)
	}
	b = field(b, "error", r.Error, false)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, as encoding/json writes it:
// invalid UTF-8 becomes U+FFFD, control characters and the characters HTML
// gives meaning to (<, >, &) and U+2028, U+2029 are escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// subscribe has wake signalled whenever an event comes; the returned
// function ends it.
func (f *Feed) subscribe(wake chan<- struct{}) func() {
	return f.subs.add(&f.mu, wake)
}

// wakers are the channels of the pages to signal on a change, guarded by
// their owner's mutex.
type wakers map[chan<- struct{}]struct{}

// add adds wake under mu and returns its removal.
func (w wakers) add(mu *sync.Mutex, wake chan<- struct{}) func() {
	mu.Lock()
	w[wake] = struct{}{}
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(w, wake)
		mu.Unlock()
	}
}

// wake signals every channel that is not signalled already; the owner's
// mutex is held.
func (w wakers) wake() {
	for c := range w {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// eventID is the SSE id of the event numbered seq.
func (f *Feed) eventID(seq uint64) string {
	return f.boot + "-" + strconv.FormatUint(seq, 10)
}

// resume is where a page that last saw the event lastID goes on from: the
// number of the last event it has, and whether it must start over (no
// id, an id of another feed, or one older than the ring keeps).
func (f *Feed) resume(lastID string) (after uint64, reset bool) {
	boot, n, ok := strings.Cut(lastID, "-")
	seq, err := strconv.ParseUint(n, 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	oldest := f.seq - uint64(len(f.ring)) // the events after it are kept
	if !ok || err != nil || boot != f.boot || seq > f.seq || seq < oldest {
		return oldest, true
	}
	return seq, false
}

// since appends to rows the events after seq, oldest first, and returns
// them with the number of the last.
func (f *Feed) since(seq uint64, rows []feedRow) ([]feedRow, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	oldest := f.seq - uint64(len(f.ring))
	if seq < oldest {
		seq = oldest
	}
	for s := seq + 1; s <= f.seq; s++ {
		rows = append(rows, f.ring[int((s-1)%FeedSize)])
	}
	return rows, f.seq
}

// appendEvents appends the server-sent events of rows.
func (f *Feed) appendEvents(b []byte, rows []feedRow) []byte {
	for i := range rows {
		b = append(b, "id: "...)
		b = append(b, f.boot...)
		b = append(b, '-')
		b = strconv.AppendUint(b, rows[i].Seq, 10)
		b = append(b, "\nevent: decision\ndata: "...)
		b = rows[i].appendJSON(b)
		b = append(b, '\n', '\n')
	}
	return b
}
