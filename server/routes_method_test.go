package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scopegate/scopegate/gateway"
)

func TestWrongMethodIsJSON405(t *testing.T) {
	s, err := New(Options{Gateway: gateway.New(gateway.Options{}), SessionsDir: t.TempDir(), ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/sessions/abc/check", http.StatusMethodNotAllowed},
		{"DELETE", "/v1/sessions", http.StatusMethodNotAllowed},
		{"GET", "/v1/nothing", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if rec.Code != tc.status || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Code == "" {
			t.Errorf("%s %s: %d %q, want %d with a JSON error", tc.method, tc.path, rec.Code, rec.Body.String(), tc.status)
		}
	}
}
