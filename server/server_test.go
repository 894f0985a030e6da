package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	scexec "github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/metrics"
)

func TestMain(m *testing.M) {
	if scexec.IsHelper(os.Args) { // shell calls re-run this binary as the Landlock helper
		os.Exit(scexec.RunHelper(os.Args))
	}
	os.Exit(m.Run())
}

// env is a sessions root with one session "s1" whose worktree is proj.
type env struct {
	t        *testing.T
	root     string
	sessions string
	proj     string
	srv      *Server
	met      *metrics.Metrics
	url      string
	token    string
}

func newEnv(t *testing.T, token string) *env {
	t.Helper()
	return newEnvWith(t, token, nil)
}

// newEnvWith is newEnv with the gateway's and the server's options changed
// by set before they are used.
func newEnvWith(t *testing.T, token string, set func(*gateway.Options, *Options)) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, root: root, sessions: filepath.Join(root, "sessions"), proj: filepath.Join(root, "proj"), token: token}
	if err := os.MkdirAll(e.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.proj, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.met = metrics.New(metrics.Options{})
	// As serve does: the cached files are watched.
	w, err := watch.New()
	if err != nil {
		t.Logf("files are not watched: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	gopts := gateway.Options{SessionsDir: e.sessions, ConfigDir: filepath.Join(root, "config"),
		Home: filepath.Join(root, "home"), Observer: e.met, Confine: scexec.ConfineAllowUnconfined, Watcher: w}
	sopts := Options{SessionsDir: e.sessions, ConfigDir: filepath.Join(root, "config"), Metrics: e.met, Token: token}
	if set != nil {
		set(&gopts, &sopts)
	}
	sopts.Gateway = gateway.New(gopts)
	srv, err := New(sopts)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	e.url = ts.URL
	e.mustDo("POST", "/v1/sessions", fmt.Sprintf(`{"id":"s1","worktrees":[%q]}`, e.proj), http.StatusCreated, nil)
	return e
}

// do sends a request and returns the status and body.
func (e *env) do(method, path, body string, hdr ...string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, data
}

func (e *env) mustDo(method, path, body string, want int, v any) {
	e.t.Helper()
	code, data := e.do(method, path, body)
	if code != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

func (e *env) callJSON(tool string, args map[string]any) string {
	data, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": e.proj})
	return string(data)
}

func TestBadInputGetsItsStatus(t *testing.T) {
	e := newEnv(t, "sekret")
	good := e.callJSON("read_file", map[string]any{"path": "hello.txt"})
	tests := []struct {
		name         string
		method, path string
		body         string
		hdr          []string
		status       int
		code         string // error code, "" for a success
	}{
		{name: "malformed JSON", method: "POST", path: "/v1/sessions/s1/check", body: `{"tool":`, status: 400, code: CodeInvalidJSON},
		{name: "trailing data", method: "POST", path: "/v1/sessions/s1/check", body: good + good, status: 400, code: CodeInvalidJSON},
		{name: "unknown field", method: "POST", path: "/v1/sessions/s1/check", body: `{"tool":"read_file","bogus":1}`, status: 400, code: CodeInvalidJSON},
		{name: "missing tool", method: "POST", path: "/v1/sessions/s1/check", body: `{"args":{}}`, status: 400, code: CodeInvalidJSON},
		{name: "invalid UTF-8", method: "POST", path: "/v1/sessions/s1/check", body: "{\"tool\":\"read_file\",\"args\":{\"path\":\"\xff\xfe\"}}", status: 400, code: CodeInvalidJSON},
		{name: "20 MiB body", method: "POST", path: "/v1/sessions/s1/check", body: `{"tool":"shell","args":{"command":"` + strings.Repeat("a", 20<<20) + `"}}`, status: 413, code: CodeTooLarge},
		{name: "dot-dot session id", method: "POST", path: "/v1/sessions/..%2F..%2Fetc/check", body: good, status: 400, code: CodeInvalidName},
		{name: "dot-dot session id in calls", method: "POST", path: "/v1/sessions/..%2Fs1/calls", body: good, status: 400, code: CodeInvalidName},
		{name: "dot-dot branch", method: "POST", path: "/v1/sessions/s1/check", body: `{"tool":"read_file","branch":"../main"}`, status: 400, code: CodeInvalidName},
		{name: "unknown session", method: "POST", path: "/v1/sessions/nope/check", body: good, status: 404, code: CodeNotFound},
		{name: "unknown branch", method: "POST", path: "/v1/sessions/s1/check", body: `{"tool":"read_file","branch":"other"}`, status: 404, code: CodeNotFound},
		{name: "unknown route", method: "GET", path: "/v1/nothing", status: 404, code: CodeNotFound},
		{name: "missing token", method: "GET", path: "/v1/sessions", hdr: []string{"Authorization", ""}, status: 401, code: CodeUnauthorized},
		{name: "wrong token", method: "GET", path: "/v1/sessions", hdr: []string{"Authorization", "Bearer wrong"}, status: 401, code: CodeUnauthorized},
		{name: "not bearer", method: "GET", path: "/v1/sessions", hdr: []string{"Authorization", "Basic c2VrcmV0"}, status: 401, code: CodeUnauthorized},
		{name: "foreign origin", method: "POST", path: "/v1/sessions/s1/check", body: good, hdr: []string{"Origin", "https://evil.example"}, status: 403, code: CodeForbiddenOrigin},
		{name: "null origin", method: "POST", path: "/v1/sessions/s1/check", body: good, hdr: []string{"Origin", "null"}, status: 403, code: CodeForbiddenOrigin},
		{name: "foreign origin on metrics", method: "GET", path: "/metrics", hdr: []string{"Origin", "http://evil.example"}, status: 403, code: CodeForbiddenOrigin},
		{name: "loopback origin", method: "POST", path: "/v1/sessions/s1/check", body: good, hdr: []string{"Origin", "http://localhost:3000"}, status: 200},
		{name: "loopback IP origin", method: "POST", path: "/v1/sessions/s1/check", body: good, hdr: []string{"Origin", "http://127.0.0.1:8080"}, status: 200},
		{name: "bad since", method: "GET", path: "/v1/events?since=yesterday", status: 400, code: CodeBadRequest},
		{name: "bad decision filter", method: "GET", path: "/v1/sessions/s1/audit?decision=maybe", status: 400, code: CodeBadRequest},
		{name: "empty expansion", method: "POST", path: "/v1/sessions/s1/scope/expand", body: `{}`, status: 400, code: CodeBadRequest},
		{name: "invalid expansion", method: "POST", path: "/v1/sessions/s1/scope/expand", body: `{"read":["[unclosed"]}`, status: 400, code: CodeInvalidExpansion},
		{name: "relative socket", method: "POST", path: "/v1/sessions/s1/scope/expand", body: `{"allow_socket":["run/x.sock"]}`, status: 400, code: CodeInvalidExpansion},
		{name: "relative worktree", method: "POST", path: "/v1/sessions", body: `{"name":"x","worktrees":["rel"]}`, status: 400, code: CodeBadRequest},
		{name: "existing id", method: "POST", path: "/v1/sessions", body: `{"id":"s1"}`, status: 409, code: CodeExists},
		{name: "bad id", method: "POST", path: "/v1/sessions", body: `{"id":"../x"}`, status: 400, code: CodeInvalidName},
		{name: "health needs no token", method: "GET", path: "/healthz", hdr: []string{"Authorization", ""}, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.do(tt.method, tt.path, tt.body, tt.hdr...)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %.300s", code, tt.status, body)
			}
			if tt.code == "" {
				return
			}
			var eb errorBody
			if err := json.Unmarshal(body, &eb); err != nil {
				t.Fatalf("error body %.300q: %v", body, err)
			}
			if eb.Error.Code != tt.code || eb.Error.Message == "" {
				t.Errorf("error = %+v, want code %q and a message", eb.Error, tt.code)
			}
		})
	}
	// Still serving, and nothing bad was written.
	var d struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
	}
	e.mustDo("POST", "/v1/sessions/s1/check", good, 200, &d)
	if !d.Allowed {
		t.Fatalf("check after bad input: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(e.root, "etc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a ../ session id touched %s", filepath.Join(e.root, "etc"))
	}
}

func TestCheckCallAuditAndEvents(t *testing.T) {
	e := newEnv(t, "")
	type decision struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
	}
	checks := []struct {
		name   string
		body   string
		reason string
	}{
		{"read in scope", e.callJSON("read_file", map[string]any{"path": "hello.txt"}), "allowed"},
		{"read out of scope", e.callJSON("read_file", map[string]any{"path": "/etc/passwd"}), "path_not_in_scope"},
		{"command not allowed", e.callJSON("shell", map[string]any{"command": "curl --version"}), "command_not_allowed"},
		{"unknown tool", e.callJSON("launch_missiles", map[string]any{}), "unknown_tool"},
		{"ill-typed args", e.callJSON("read_file", map[string]any{"path": 3}), "invalid_arguments"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			var d decision
			e.mustDo("POST", "/v1/sessions/s1/check", c.body, 200, &d)
			if d.Reason != c.reason || d.Allowed != (c.reason == "allowed") {
				t.Errorf("decision %+v, want reason %s", d, c.reason)
			}
		})
	}

	var res struct {
		CallID   string   `json:"call_id"`
		Decision decision `json:"decision"`
		Result   struct {
			ExitCode int    `json:"exit_code"`
			Content  string `json:"content"`
			Stdout   string `json:"stdout"`
		} `json:"result"`
	}
	e.mustDo("POST", "/v1/sessions/s1/calls", e.callJSON("read_file", map[string]any{"path": "hello.txt"}), 200, &res)
	if !res.Decision.Allowed || !strings.Contains(res.Result.Content, "hello") {
		t.Fatalf("read_file call: %+v", res)
	}
	e.mustDo("POST", "/v1/sessions/s1/scope/expand", `{"allow_command":["echo"]}`, 200, nil)
	e.mustDo("POST", "/v1/sessions/s1/calls", e.callJSON("shell", map[string]any{"command": "echo hi"}), 200, &res)
	if !res.Decision.Allowed || res.Result.Stdout != "hi\n" {
		t.Fatalf("shell call after expansion: %+v", res)
	}

	var entries []audit.Entry
	e.mustDo("GET", "/v1/sessions/s1/audit", "", 200, &entries)
	// The checks, two calls, and the scope change between them.
	if len(entries) != len(checks)+3 {
		t.Fatalf("audit has %d entries, want %d", len(entries), len(checks)+3)
	}
	var expanded int
	for _, en := range entries {
		if en.Decision == audit.DecisionExpanded && en.Tool == audit.ToolScopeExpand && strings.HasPrefix(en.Resource, "http:") &&
			strings.Contains(string(en.Args), `"shell_commands.allow":["echo"]`) {
			expanded++
		}
	}
	if expanded != 1 {
		t.Errorf("want one scope-change entry naming who and what, got %+v", entries)
	}
	e.mustDo("GET", "/v1/sessions/s1/audit?decision=denied", "", 200, &entries)
	if len(entries) != 4 {
		t.Errorf("denied entries: %d, want 4", len(entries))
	}

	// A second session: events merge both, oldest first.
	e.mustDo("POST", "/v1/sessions", fmt.Sprintf(`{"id":"s2","worktrees":[%q]}`, e.proj), 201, nil)
	e.mustDo("POST", "/v1/sessions/s2/check", e.callJSON("read_file", map[string]any{"path": "hello.txt"}), 200, nil)
	var events []Event
	e.mustDo("GET", "/v1/events", "", 200, &events)
	// The scope change is an event too.
	if len(events) != len(checks)+4 {
		t.Fatalf("events: %d, want %d", len(events), len(checks)+4)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Time.Before(events[i-1].Time) {
			t.Errorf("events out of order at %d: %v before %v", i, events[i].Time, events[i-1].Time)
		}
	}
	if last := events[len(events)-1]; last.SessionID != "s2" || last.Branch != "main" {
		t.Errorf("last event is of %s/%s, want s2/main", last.SessionID, last.Branch)
	}
	since := events[len(events)-1].Time.Format("2006-01-02T15:04:05.000Z07:00")
	e.mustDo("GET", "/v1/events?since="+since, "", 200, &events)
	if len(events) == 0 || events[len(events)-1].SessionID != "s2" {
		t.Errorf("events since the last one: %+v", events)
	}
	e.mustDo("POST", "/v1/sessions", `{"id":"s2","exist_ok":true}`, 200, nil)
	var list []map[string]any
	e.mustDo("GET", "/v1/sessions", "", 200, &list)
	if len(list) != 2 {
		t.Errorf("session list: %d sessions, want 2", len(list))
	}
	var info map[string]any
	e.mustDo("GET", "/v1/sessions/s2", "", 200, &info)
	if info["session_id"] != "s2" {
		t.Errorf("session show: %v", info)
	}
}

func TestPanicIsAnswered500(t *testing.T) {
	e := newEnv(t, "")
	h := e.srv.edge(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), CodeInternal) {
		t.Fatalf("panicking handler: %d %s", rec.Code, rec.Body)
	}
}

func TestLockNamesHolder(t *testing.T) {
	root := t.TempDir()
	l, err := AcquireLock(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLock(root)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.PID != os.Getpid() {
		t.Fatalf("second lock: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("error %q does not name the pid", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(root)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
}

// TestShutdownInterruptsLongCalls: a call still running when the grace
// period ends is cancelled and recorded INTERRUPTED; a short one finishes.
func TestShutdownInterruptsLongCalls(t *testing.T) {
	e := newEnv(t, "")
	e.mustDo("POST", "/v1/sessions/s1/scope/expand", `{"allow_command":["sleep"]}`, 200, nil)
	e.srv.opts.ShutdownGrace = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	started := make(chan struct{})
	answered := make(chan int, 1)
	go func() {
		close(started)
		resp, err := http.Post(url+"/v1/sessions/s1/calls", "application/json",
			bytes.NewReader([]byte(e.callJSON("shell", map[string]any{"command": "sleep 30"}))))
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-started
	// Wait until the call is in flight (its in-flight record exists).
	inflight := audit.InflightDir(filepath.Join(e.sessions, "s1", "branches", "main"))
	for {
		if names, _ := os.ReadDir(inflight); len(names) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("server stopped early: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	<-answered
	es, err := audit.ReadFile(filepath.Join(e.sessions, "s1", "branches", "main", "tools.org"), audit.Filter{Decision: audit.DecisionInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || !strings.Contains(string(es[0].Args), "sleep 30") {
		t.Fatalf("interrupted entries: %+v, want the sleep call", es)
	}
	if names, _ := os.ReadDir(inflight); len(names) != 0 {
		t.Errorf("in-flight records left: %d", len(names))
	}
}

// Session creation over HTTP fails closed like the CLI: unknown names, an
// unusable presets.yml, a missing project root, a profile with worktrees.
func TestCreateSessionFailsClosed(t *testing.T) {
	e := newEnv(t, "")
	cfg := filepath.Join(e.root, "config")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	var errBody struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"id":"a","profile":"nosuch","project_root":"` + e.proj + `"}`, http.StatusNotFound, CodeNotFound},
		{`{"id":"b","preset":"nosuch","project_root":"` + e.proj + `"}`, http.StatusNotFound, CodeNotFound},
		{`{"id":"c","project_root":"` + e.root + `/nowhere"}`, http.StatusBadRequest, CodeBadRequest},
		{`{"id":"d","profile":"coding","worktrees":["` + e.proj + `"]}`, http.StatusBadRequest, CodeInvalidConfig},
	} {
		e.mustDo("POST", "/v1/sessions", c.body, c.status, &errBody)
		if errBody.Error.Code != c.code {
			t.Errorf("%s: code %q (%s), want %q", c.body, errBody.Error.Code, errBody.Error.Message, c.code)
		}
	}
	if err := os.WriteFile(filepath.Join(cfg, "presets.yml"), []byte("executor:\n  scope_profle: coding\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.mustDo("POST", "/v1/sessions", `{"id":"e","project_root":"`+e.proj+`"}`, http.StatusBadRequest, &errBody)
	if errBody.Error.Code != CodeInvalidConfig || !strings.Contains(errBody.Error.Message, "line 2") {
		t.Errorf("broken presets.yml: %+v", errBody)
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if _, err := os.Stat(filepath.Join(e.sessions, id)); err == nil {
			t.Errorf("session %s was created", id)
		}
	}
}

// An MCP session id handed out on one session's route is unknown on
// another's: calls can never land on a session the URL does not name.
func TestMCPSessionBoundToItsRoute(t *testing.T) {
	e := newEnv(t, "")
	e.mustDo("POST", "/v1/sessions", fmt.Sprintf(`{"id":"s2","worktrees":[%q]}`, e.proj), http.StatusCreated, nil)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest("POST", e.url+"/v1/sessions/s1/mcp", strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize on s1: %s, session id %q", resp.Status, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, c := range []struct {
		path string
		ok   bool
	}{{"/v1/sessions/s1/mcp", true}, {"/v1/sessions/s2/mcp", false}} {
		req, _ := http.NewRequest("POST", e.url+c.path, strings.NewReader(list))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK; got != c.ok {
			t.Errorf("%s with s1's MCP session: %s", c.path, resp.Status)
		}
	}
}

// TestExpandSocket checks the expand body's allow_socket: the socket is
// named in the network list as a unix: entry.
func TestExpandSocket(t *testing.T) {
	e := newEnv(t, "")
	var scope struct {
		Network []string `json:"network"`
	}
	e.mustDo("POST", "/v1/sessions/s1/scope/expand", `{"allow_socket":["/run/docker.sock"]}`, 200, &scope)
	if !slices.Contains(scope.Network, "unix:/run/docker.sock") {
		t.Fatalf("network after allow_socket: %q", scope.Network)
	}
}
