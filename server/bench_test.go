package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
)

// BenchmarkCheck measures one audited check through the handler (no
// network): decode, decide, append to tools.org (written, not synced),
// encode.
func BenchmarkCheck(b *testing.B) {
	e := newEnv(&testing.T{}, "")
	body := e.callJSON("read_file", map[string]any{"path": "hello.txt"})
	h := e.srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/sessions/s1/check", strings.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCheckParallel is BenchmarkCheck from 64 goroutines on four
// sessions, as the serve load test drives it: concurrent checks share the
// freshness sync of the cached files and the audit appends.
func BenchmarkCheckParallel(b *testing.B) {
	checkParallel(b, newEnv(&testing.T{}, ""))
}

// checkParallel is BenchmarkCheckParallel in e.
func checkParallel(b *testing.B, e *env) {
	ids := []string{"s1", "s2", "s3", "s4"}
	for _, id := range ids[1:] {
		e.mustDo("POST", "/v1/sessions", `{"id":"`+id+`","worktrees":["`+e.proj+`"]}`, http.StatusCreated, nil)
	}
	body := e.callJSON("read_file", map[string]any{"path": "hello.txt"})
	h := e.srv.Handler()
	b.ReportAllocs()
	b.SetParallelism(32)
	var next atomic.Int64
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		path := "/v1/sessions/" + ids[next.Add(1)%int64(len(ids))] + "/check"
		for pb.Next() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if rec.Code != http.StatusOK {
				b.Errorf("status %d: %s", rec.Code, rec.Body)
				return
			}
		}
	})
	// Processor time per check, which other load on the machine changes
	// less than the time per check does.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the processor time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFeed is BenchmarkCheckParallel with the page's feed: with the
// gateway's events going nowhere (page=none), into the feed with no page
// open (page=closed), and with one page reading its stream over loopback
// TCP (page=open). The differences are the feed's cost per decision; the
// page's own reading, in this process too, is counted in the last.
func BenchmarkFeed(b *testing.B) {
	for _, mode := range []string{"none", "closed", "open"} {
		b.Run("page="+mode, func(b *testing.B) {
			feed := NewFeed()
			e := newEnvWith(&testing.T{}, "", func(g *gateway.Options, o *Options) {
				if mode != "none" {
					g.Events = feed
				}
				o.Feed = feed
			})
			if mode == "open" {
				resp, err := http.Get(e.url + "/v1/page/events")
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("stream: %v", err)
				}
				var read atomic.Int64
				go func() {
					buf := make([]byte, 64<<10)
					for {
						n, err := resp.Body.Read(buf)
						read.Add(int64(n))
						if err != nil {
							return
						}
					}
				}()
				defer resp.Body.Close()
				checkParallel(b, e)
				// Every decision reached the page (each is well over 100
				// bytes on the stream).
				for deadline := time.Now().Add(5 * time.Second); read.Load() < int64(b.N)*100 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				if n := read.Load(); n < int64(b.N)*100 {
					b.Errorf("the page read %d bytes of %d decisions", n, b.N)
				}
				return
			}
			checkParallel(b, e)
		})
	}
}

// BenchmarkFeedEvent is the feed's own work for one decision, without the
// check around it: taking the event in (page=closed: what every decision
// costs), and also encoding it for an open page's stream (page=open; the
// write to the connection is one per batch of events).
func BenchmarkFeedEvent(b *testing.B) {
	ev := audit.Event{Kind: audit.EventDecision, Session: "s1", Branch: "main", Via: "http", Entry: audit.Entry{
		CallID: "01M8FA6NS4JAMK2MMP6AMHTQBR", Time: time.Now(), Tool: "read_file", Decision: audit.DecisionAllowed,
		Reason: "allowed", Mode: audit.ModeCheck, Cwd: "/home/u/proj", Args: []byte(`{"path":"hello.txt"}`)}}
	for _, mode := range []string{"closed", "open"} {
		b.Run("page="+mode, func(b *testing.B) {
			f := NewFeed()
			var buf []byte
			var rows []feedRow
			var after uint64
			b.ReportAllocs()
			for b.Loop() {
				f.Emit(ev)
				if mode == "open" {
					rows, after = f.since(after, rows[:0])
					buf = f.appendEvents(buf[:0], rows)
				}
			}
		})
	}
}
