package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCheck measures one audited check through the handler (no
// network): decode, decide, append to tools.org with fsync, encode.
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
