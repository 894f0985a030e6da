package server

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

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
	subs map[chan<- struct{}]struct{}
}

// NewFeed returns an empty feed.
func NewFeed() *Feed {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Feed{boot: hex.EncodeToString(b[:]), ring: make([]feedRow, 0, FeedSize), subs: map[chan<- struct{}]struct{}{}}
}

// feedRow is what the page shows of one event: the entry's decision and
// the call in one line, never its arguments or output.
type feedRow struct {
	Seq       uint64    `json:"-"`
	Kind      string    `json:"kind"`
	Time      time.Time `json:"time"`
	Session   string    `json:"session"`
	Branch    string    `json:"branch"`
	Via       string    `json:"via,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	CallID    string    `json:"call_id"`
	Tool      string    `json:"tool"`
	AgentTool string    `json:"agent_tool,omitempty"`
	Summary   string    `json:"summary"`
	Decision  string    `json:"decision"`
	Reason    string    `json:"reason,omitempty"`
	Rule      string    `json:"rule,omitempty"`
	Resource  string    `json:"resource,omitempty"`
	Message   string    `json:"message,omitempty"`
	Offered   string    `json:"offered,omitempty"`
	Channel   string    `json:"channel,omitempty"`
	Answer    string    `json:"answer,omitempty"`
	Approved  string    `json:"approved,omitempty"`
	ExitCode  *int      `json:"exit_code,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Emit takes an audited event into the feed and wakes the pages.
func (f *Feed) Emit(ev audit.Event) {
	e := &ev.Entry
	row := feedRow{Kind: ev.Kind, Time: e.Time, Session: ev.Session, Branch: ev.Branch, Via: ev.Via, Mode: e.Mode,
		CallID: e.CallID, Tool: e.Tool, AgentTool: e.AgentTool, Summary: e.Line(), Decision: e.Decision,
		Reason: e.Reason, Rule: e.Rule, Resource: e.Resource, Message: e.Message, Offered: e.Offered,
		Channel: e.Channel, Answer: e.Answer, Approved: e.Approved, ExitCode: e.ExitCode, Error: e.Error}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	row.Seq = f.seq
	if len(f.ring) < FeedSize {
		f.ring = append(f.ring, row)
	} else {
		f.ring[int((row.Seq-1)%FeedSize)] = row
	}
	for c := range f.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// subscribe has wake signalled whenever an event comes; the returned
// function ends it.
func (f *Feed) subscribe(wake chan<- struct{}) func() {
	f.mu.Lock()
	f.subs[wake] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.subs, wake)
		f.mu.Unlock()
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
