package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
)

// jsonStrings are strings whose JSON the feed writes: plain, quoted,
// control characters, HTML, invalid UTF-8, line separators.
var jsonStrings = []string{
	"", "curl http://example.invalid", `say "hi" \ bye`, "a\nb\r\tc\x00\x1f\x7f",
	`<img src=x onerror=alert(1)>`, "a & b", "caf\xc3\xa9 \xff\xfe", "\u2028\u2029", "日本語", "\xed\xa0\x80",
}

// TestAppendJSONString: the feed writes strings byte for byte as
// encoding/json does.
func TestAppendJSONString(t *testing.T) {
	for _, s := range jsonStrings {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestFeedRowJSON: a row's JSON is what page.js reads, every field of the
// entry it names, the call in one line made from the arguments.
func TestFeedRowJSON(t *testing.T) {
	f := NewFeed()
	code := 3
	now := time.Date(2026, 11, 22, 10, 30, 5, 123e6, time.UTC)
	f.Emit(audit.Event{Kind: audit.EventDecision, Session: "s", Branch: "main", Via: "hook", Entry: audit.Entry{
		CallID: "01M8", Time: now, Tool: "shell", AgentTool: "Bash", Decision: "denied", Reason: "command_not_allowed",
		Rule: "shell_commands.allow", Resource: "curl", Message: "curl <is> not", Mode: "hook", Offered: "--allow-command curl",
		Channel: "page", Answer: "deny", ExitCode: &code, Error: "e", Args: json.RawMessage(`{"command":"curl a\nb"}`),
		Stdout: "never shown"}})
	rows, last := f.since(0, nil)
	if last != 1 || len(rows) != 1 {
		t.Fatalf("since: %d rows, last %d", len(rows), last)
	}
	data := rows[0].appendJSON(nil)
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	want := map[string]any{"time": "2026-11-22T10:30:05.123Z", "kind": "decision", "session": "s", "branch": "main", "via": "hook",
		"mode": "hook", "call_id": "01M8", "tool": "shell", "agent_tool": "Bash", "summary": `curl a\nb`, "decision": "denied",
		"reason": "command_not_allowed", "rule": "shell_commands.allow", "resource": "curl", "message": "curl <is> not",
		"offered": "--allow-command curl", "channel": "page", "answer": "deny", "exit_code": 3.0, "error": "e"}
	if len(got) != len(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if strings.Contains(string(data), "never shown") {
		t.Error("the row carries the call's output")
	}
}

// TestFeedResume: the ring keeps the last FeedSize events; a page resumes
// after the id it saw while the ring keeps it, and starts over otherwise.
func TestFeedResume(t *testing.T) {
	f := NewFeed()
	for range FeedSize + 10 {
		f.Emit(audit.Event{Kind: audit.EventDecision})
	}
	for _, tt := range []struct {
		id    string
		after uint64
		reset bool
	}{
		{"", 10, true},
		{f.eventID(FeedSize + 5), FeedSize + 5, false},
		{f.eventID(FeedSize + 10), FeedSize + 10, false},
		{f.eventID(10), 10, false},
		{f.eventID(9), 10, true},
		{f.eventID(FeedSize + 11), 10, true},
		{"other-12", 10, true},
		{f.boot + "-x", 10, true},
		{f.boot + "-" + strconv.FormatUint(1<<63, 10), 10, true},
	} {
		after, reset := f.resume(tt.id)
		if after != tt.after || reset != tt.reset {
			t.Errorf("resume(%q) = %d, %v; want %d, %v", tt.id, after, reset, tt.after, tt.reset)
		}
		rows, last := f.since(after, nil)
		if last != FeedSize+10 || uint64(len(rows)) != FeedSize+10-after {
			t.Errorf("since(%d): %d rows up to %d", after, len(rows), last)
		}
	}
}

// FuzzResume: whatever a page sends as Last-Event-ID, it resumes within
// what the feed keeps.
func FuzzResume(f *testing.F) {
	feed := NewFeed()
	for range 20 {
		feed.Emit(audit.Event{Kind: audit.EventDecision})
	}
	for _, s := range []string{"", feed.eventID(3), feed.eventID(20), "x-1", feed.boot + "-", "-", feed.boot + "-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		after, reset := feed.resume(id)
		if after > 20 || !reset && !strings.HasPrefix(id, feed.boot+"-") {
			t.Fatalf("resume(%q) = %d, %v", id, after, reset)
		}
	})
}
