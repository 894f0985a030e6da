package server

import (
	"fmt"
	"net/http"
	"testing"
)

// POST /v1/sessions takes the mode of `session create --mode`: in observe
// mode a read outside the scope is allowed and observed; a mode that is
// neither enforce nor observe is refused.
func TestCreateSessionObserveMode(t *testing.T) {
	e := newEnv(t, "")
	e.mustDo("POST", "/v1/sessions", fmt.Sprintf(`{"id":"obs","worktrees":[%q],"mode":"observe"}`, e.proj), http.StatusCreated, nil)
	var d struct {
		Allowed  bool `json:"allowed"`
		Observed *struct {
			Reason string `json:"reason"`
		} `json:"observed"`
	}
	e.mustDo("POST", "/v1/sessions/obs/check", e.callJSON("read_file", map[string]any{"path": "/etc/passwd"}), 200, &d)
	if !d.Allowed || d.Observed == nil || d.Observed.Reason != "path_not_in_scope" {
		t.Errorf("observe mode: %+v, want allowed and observed path_not_in_scope", d)
	}
	d.Observed = nil
	e.mustDo("POST", "/v1/sessions/s1/check", e.callJSON("read_file", map[string]any{"path": "/etc/passwd"}), 200, &d)
	if d.Allowed || d.Observed != nil {
		t.Errorf("enforce mode: %+v, want denied", d)
	}
	if code, body := e.do("POST", "/v1/sessions", fmt.Sprintf(`{"id":"bad","worktrees":[%q],"mode":"lax"}`, e.proj)); code != http.StatusBadRequest {
		t.Errorf("mode lax: %d %s, want 400", code, body)
	}
}
