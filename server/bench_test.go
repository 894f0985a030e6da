package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
	e := newEnv(&testing.T{}, "")
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
