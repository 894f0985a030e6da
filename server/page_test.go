package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
)

// newPageEnv is an env whose gateway's events reach the page's feed, and
// whose config offers denials with the given timeout.
func newPageEnv(t *testing.T, token string, timeout time.Duration) *env {
	t.Helper()
	return newPageEnvWith(t, token, timeout, nil)
}

// newPageEnvWith is newPageEnv with more options set by set.
func newPageEnvWith(t *testing.T, token string, timeout time.Duration, set func(*gateway.Options, *Options)) *env {
	t.Helper()
	feed := NewFeed()
	return newEnvWith(t, token, func(g *gateway.Options, o *Options) {
		g.Events = feed
		o.Feed = feed
		o.Approvals = func() gateway.Approvals { return gateway.Approvals{Ask: true, Timeout: timeout} }
		if set != nil {
			set(g, o)
		}
	})
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data string
}

// stream is an open page stream.
type stream struct {
	t      *testing.T
	events chan sseEvent
	cancel context.CancelFunc
	done   chan struct{}
}

// openStream opens /v1/page/events, resuming after lastID when given.
func (e *env) openStream(lastID string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/page/events", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("stream: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &stream{t: e.t, events: make(chan sseEvent, 4096), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	e.t.Cleanup(s.close)
	return s
}

// close ends the stream and waits for it.
func (s *stream) close() {
	s.cancel()
	<-s.done
}

// next is the next event named one of names (others are skipped).
func (s *stream) next(names ...string) sseEvent {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-s.events:
			for _, n := range names {
				if ev.event == n {
					return ev
				}
			}
		case <-deadline:
			s.t.Fatalf("no %v event in 20 s", names)
		}
	}
}

// pending waits for the offers event listing n pending offers.
func (s *stream) pending(n int) offersView {
	s.t.Helper()
	for {
		var v offersView
		if err := json.Unmarshal([]byte(s.next("offers").data), &v); err != nil {
			s.t.Fatal(err)
		}
		if len(v.Pending) == n {
			return v
		}
	}
}

// outside writes a file outside the session's scope and returns the JSON
// of a call reading it.
func (e *env) outside() (path, body string) {
	e.t.Helper()
	path = filepath.Join(e.root, "outside.txt")
	if err := os.WriteFile(path, []byte("outside\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path, e.callJSON("read_file", map[string]any{"path": path})
}

// answer posts the page's answer to an offer as the page does.
func (e *env) answer(id, answer string) (int, []byte) {
	e.t.Helper()
	host := strings.TrimPrefix(e.url, "http://")
	return e.do("POST", "/v1/page/offers/"+id, `{"answer":"`+answer+`"}`,
		CSRFHeader, e.srv.page.csrf, "Origin", "http://"+host, "Content-Type", "application/json")
}

// entries are the tools.org entries of s1/main.
func (e *env) entries() []audit.Entry {
	e.t.Helper()
	es, err := audit.ReadFile(filepath.Join(e.sessions, "s1", "branches", "main", audit.LogFile), audit.Filter{})
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}

// TestPageFeed: a decision reaches an open stream; a stream resumed with
// the id of the last event it saw gets exactly the ones it missed; an id
// of another serve starts the page over with the whole feed.
func TestPageFeed(t *testing.T) {
	e := newPageEnv(t, "", time.Minute)
	s := e.openStream("")
	if h := s.next("hello"); h.data != `{"reset":true}` {
		t.Fatalf("hello %q, want a reset", h.data)
	}
	e.mustDo("POST", "/v1/sessions/s1/check", e.callJSON("shell", map[string]any{"command": "curl http://example.invalid"}), 200, nil)
	ev := s.next("decision")
	var row feedRow
	if err := json.Unmarshal([]byte(ev.data), &row); err != nil {
		t.Fatal(err)
	}
	if row.Session != "s1" || row.Branch != "main" || row.Decision != "denied" || row.Reason != "command_not_allowed" ||
		row.Summary != "curl http://example.invalid" || row.Via != "http" || row.Mode != "check" || ev.id == "" {
		t.Fatalf("row %+v id %q", row, ev.id)
	}
	s.close()
	for _, c := range []string{"date", "uname"} {
		e.mustDo("POST", "/v1/sessions/s1/check", e.callJSON("shell", map[string]any{"command": c}), 200, nil)
	}
	s = e.openStream(ev.id)
	if h := s.next("hello"); h.data != `{"reset":false}` {
		t.Fatalf("hello %q on resuming", h.data)
	}
	var got []string
	for range 2 {
		var r feedRow
		json.Unmarshal([]byte(s.next("decision").data), &r)
		got = append(got, r.Summary)
	}
	if strings.Join(got, ",") != "date,uname" {
		t.Fatalf("resumed with %v, want the two missed", got)
	}
	select {
	case extra := <-s.events:
		if extra.event == "decision" {
			t.Fatalf("a third decision after resuming: %s", extra.data)
		}
	case <-time.After(200 * time.Millisecond):
	}
	s.close()
	s = e.openStream("0123456789ab-2")
	if h := s.next("hello"); h.data != `{"reset":true}` {
		t.Fatalf("hello %q for another serve's id", h.data)
	}
	for range 3 {
		s.next("decision")
	}
}

// TestPageOffers: while a page is open, an HTTP call denied for a scope
// reason waits on the page; each answer does what it says and is
// recorded with :CHANNEL: page; a second answer is told the first one
// counted; with no page open, or approvals off, the call is denied at once
// and not offered; no answer in time, or the pages gone, deny it.
func TestPageOffers(t *testing.T) {
	for _, tt := range []struct {
		answer  string
		allowed bool
	}{
		{gateway.AnswerOnce, true},
		{gateway.AnswerSession, true},
		{gateway.AnswerDeny, false},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			e := newPageEnv(t, "", time.Minute)
			path, body := e.outside()
			s := e.openStream("")
			type result struct {
				code int
				res  gateway.CallResult
			}
			done := make(chan result, 1)
			go func() {
				var r result
				code, data := e.do("POST", "/v1/sessions/s1/calls", body)
				r.code = code
				json.Unmarshal(data, &r.res)
				done <- r
			}()
			v := s.pending(1)
			o := v.Pending[0]
			if o.Session != "s1" || o.Branch != "main" || o.Via != "http" || o.Widening != "--read "+path || o.Tool != "read_file" ||
				o.Summary != "read_file: "+path || o.Reason != "path_not_in_scope" || len(o.Channels) != 1 || o.Channels[0] != ChannelPage {
				t.Fatalf("offer %+v", o)
			}
			if code, data := e.answer(o.ID, tt.answer); code != 200 {
				t.Fatalf("answer: %d %s", code, data)
			}
			r := <-done
			if r.code != 200 || r.res.Decision.Allowed != tt.allowed {
				t.Fatalf("call: %d %+v", r.code, r.res)
			}
			if code, data := e.answer(o.ID, gateway.AnswerDeny); code != http.StatusConflict || !strings.Contains(string(data), CodeAnswered) ||
				!strings.Contains(string(data), tt.answer+" through page") {
				t.Errorf("a second answer: %d %s", code, data)
			}
			es := e.entries()
			last := es[len(es)-1]
			if last.Channel != ChannelPage || last.Answer != tt.answer || last.Offered != "--read "+path {
				t.Errorf("entry %+v", last)
			}
			scope, _ := os.ReadFile(filepath.Join(e.sessions, "s1", "branches", "main", "scope.yml"))
			if widened := strings.Contains(string(scope), path); widened != (tt.answer == gateway.AnswerSession) {
				t.Errorf("scope.yml widened %v after %s:\n%s", widened, tt.answer, scope)
			}
			settled := s.pending(0).Settled
			if len(settled) != 1 || settled[0].Answer != tt.answer || settled[0].Channel != ChannelPage {
				t.Errorf("settled %+v", settled)
			}
		})
	}
	t.Run("no page open", func(t *testing.T) {
		e := newPageEnv(t, "", time.Minute)
		_, body := e.outside()
		s := e.openStream("")
		s.next("hello")
		s.close()
		for deadline := time.Now().Add(5 * time.Second); e.srv.page.offers.isOpen(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the page is still open")
			}
		}
		var res gateway.CallResult
		e.mustDo("POST", "/v1/sessions/s1/calls", body, 200, &res)
		if res.Decision.Allowed {
			t.Fatal("allowed")
		}
		if last := e.entries()[0]; last.Offered != "" || last.Channel != "" {
			t.Errorf("offered with no page open: %+v", last)
		}
	})
	t.Run("approvals off", func(t *testing.T) {
		feed := NewFeed()
		e := newEnvWith(t, "", func(g *gateway.Options, o *Options) {
			g.Events, o.Feed = feed, feed
			o.Approvals = func() gateway.Approvals { return gateway.Approvals{Ask: false} }
		})
		_, body := e.outside()
		e.openStream("").next("hello")
		var res gateway.CallResult
		e.mustDo("POST", "/v1/sessions/s1/calls", body, 200, &res)
		if res.Decision.Allowed || e.entries()[0].Offered != "" {
			t.Fatalf("offered with approvals off: %+v", e.entries()[0])
		}
	})
	t.Run("no answer in time", func(t *testing.T) {
		e := newPageEnv(t, "", 300*time.Millisecond)
		_, body := e.outside()
		e.openStream("").next("hello")
		var res gateway.CallResult
		e.mustDo("POST", "/v1/sessions/s1/calls", body, 200, &res)
		if last := e.entries()[0]; res.Decision.Allowed || last.Answer != gateway.AnswerTimeout || last.Channel != ChannelPage {
			t.Fatalf("entry %+v", last)
		}
	})
	t.Run("the pages gone", func(t *testing.T) {
		e := newPageEnv(t, "", time.Minute)
		e.srv.page.offers.grace = 100 * time.Millisecond
		_, body := e.outside()
		s := e.openStream("")
		done := make(chan gateway.CallResult, 1)
		go func() {
			var res gateway.CallResult
			_, data := e.do("POST", "/v1/sessions/s1/calls", body)
			json.Unmarshal(data, &res)
			done <- res
		}()
		s.pending(1)
		s.close()
		if res := <-done; res.Decision.Allowed {
			t.Fatal("allowed")
		}
		if last := e.entries()[0]; last.Answer != gateway.AnswerTimeout {
			t.Fatalf("entry %+v", last)
		}
	})
}

// TestPageSecurity: the page's files carry a Content-Security-Policy that
// allows no inline script or style, and hold none; a Host that is not a
// loopback name, the listen address or the address reached is refused; an
// answer needs the CSRF token and this server's own Origin; with a token,
// the page's data needs it too.
func TestPageSecurity(t *testing.T) {
	e := newEnvWith(t, "sekret", func(g *gateway.Options, o *Options) { o.Listen = "gate.example:7411" })
	t.Run("files", func(t *testing.T) {
		total := 0
		for _, name := range []string{"index.html", "page.js", "page.css"} {
			p := "/page/" + name
			if name == "index.html" {
				p = "/"
			}
			req, _ := http.NewRequest("GET", e.url+p, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != pageCSP {
				t.Errorf("%s: %d, CSP %q", p, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
			}
			data, _ := fs.ReadFile(pageFiles, "page/"+name)
			total += len(data)
		}
		if total > 200<<10 {
			t.Errorf("the page is %d bytes, over 200 KB", total)
		}
		if !strings.HasPrefix(pageCSP, "default-src 'self';") {
			t.Errorf("CSP %q", pageCSP)
		}
		html, _ := fs.ReadFile(pageFiles, "page/index.html")
		for _, m := range regexp.MustCompile(`(?is)<script[^>]*>.*?</script>`).FindAllString(string(html), -1) {
			if !regexp.MustCompile(`(?is)^<script[^>]*\ssrc="[^"]+"[^>]*></script>$`).MatchString(m) {
				t.Errorf("index.html has an inline script: %q", m)
			}
		}
		if m := regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=|javascript:`).FindString(string(html)); m != "" {
			t.Errorf("index.html has inline style or script: %q", m)
		}
		js, _ := fs.ReadFile(pageFiles, "page/page.js")
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(string(js), bad) {
				t.Errorf("page.js uses %s", bad)
			}
		}
	})
	t.Run("host", func(t *testing.T) {
		for _, tt := range []struct {
			host string
			ok   bool
		}{
			{"evil.example", false},
			{"evil.example:" + strings.Split(e.url, ":")[2], false},
			{"localhost.evil.example", false},
			{"localhost:7411", true},
			{"app.localhost", true},
			{"127.0.0.1", true},
			{"[::1]:9", true},
			{"gate.example:7411", true},
			{"GATE.example", true},
		} {
			req, _ := http.NewRequest("GET", e.url+"/healthz", nil)
			req.Host = tt.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if (resp.StatusCode == 200) != tt.ok {
				t.Errorf("Host %q: %d, want allowed %v", tt.host, resp.StatusCode, tt.ok)
			}
		}
	})
	t.Run("csrf", func(t *testing.T) {
		host := strings.TrimPrefix(e.url, "http://")
		for _, tt := range []struct {
			name   string
			hdr    []string
			status int
		}{
			{"no token", []string{"Origin", "http://" + host}, 403},
			{"wrong token", []string{CSRFHeader, "x", "Origin", "http://" + host}, 403},
			{"no origin", []string{CSRFHeader, e.srv.page.csrf}, 403},
			{"another loopback origin", []string{CSRFHeader, e.srv.page.csrf, "Origin", "http://localhost:3000"}, 403},
			{"a foreign origin", []string{CSRFHeader, e.srv.page.csrf, "Origin", "http://evil.example"}, 403},
			{"same origin", []string{CSRFHeader, e.srv.page.csrf, "Origin", "http://" + host}, 404},
		} {
			code, data := e.do("POST", "/v1/page/offers/0123", `{"answer":"once"}`, tt.hdr...)
			if code != tt.status {
				t.Errorf("%s: %d %s, want %d", tt.name, code, data, tt.status)
			}
		}
	})
	t.Run("token", func(t *testing.T) {
		for _, p := range []string{"/v1/page/state", "/v1/page/events", "/v1/page/verify", "/v1/page/denials"} {
			resp, err := http.Get(e.url + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s without the token: %d", p, resp.StatusCode)
			}
		}
		var st stateView
		e.mustDo("GET", "/v1/page/state", "", 200, &st)
		if st.CSRF != e.srv.page.csrf || len(st.Branches) != 1 || st.Branches[0].Scope == nil || !st.Branches[0].Current {
			t.Errorf("state %+v", st)
		}
	})
}

// TestPageShutdown: shutting serve down ends the page's streams at once
// and denies what the page held, without waiting for an answer.
func TestPageShutdown(t *testing.T) {
	e := newPageEnv(t, "", time.Minute)
	// Pages gone would end the offer only after an hour.
	e.srv.page.offers.grace = time.Hour
	_, body := e.outside()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.srv.Serve(ctx, ln) }()
	e.url = "http://" + ln.Addr().String()
	s := e.openStream("")
	done := make(chan gateway.CallResult, 1)
	go func() {
		var res gateway.CallResult
		_, data := e.do("POST", "/v1/sessions/s1/calls", body)
		json.Unmarshal(data, &res)
		done <- res
	}()
	s.pending(1)
	cancel()
	if res := <-done; res.Decision.Allowed {
		t.Fatal("allowed")
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	<-s.done
	if last := e.entries()[0]; last.Answer != gateway.AnswerTimeout || last.Channel != ChannelPage {
		t.Errorf("entry %+v", last)
	}
}

// TestPageHook: a Codex hook's call denied for a scope reason waits on the
// page; once answers with the rewrite to `scopegate exec` and a grant for
// exactly that call; no answer within the hook's time is a deny.
func TestPageHook(t *testing.T) {
	e := newPageEnvWith(t, "", time.Minute, func(g *gateway.Options, o *Options) {
		o.Hooks = gateway.HookOptions{ExecCommand: func(s, b, c, _ string) string { return "scopegate exec --call " + c }}
	})
	e.srv.hookLimit = 300 * time.Millisecond
	s := e.openStream("")
	input := `{"session_id":"codex-1","cwd":"` + e.proj + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"date"}}`
	hook := func() chan string {
		out := make(chan string, 1)
		go func() {
			_, data := e.do("POST", "/v1/hooks/codex", input, ProjectDirHeader, e.proj)
			out <- string(data)
		}()
		return out
	}
	out := hook()
	v := s.pending(1)
	if o := v.Pending[0]; o.Via != "hook" || o.Widening != "--allow-command date" || o.Session != "codex-1" {
		t.Fatalf("offer %+v", o)
	}
	// The hook's time bounds the offer.
	if left := v.Pending[0].Expires.Sub(v.Pending[0].Created); left > 300*time.Millisecond {
		t.Errorf("the offer waits %v, longer than the hook's time", left)
	}
	if code, data := e.answer(v.Pending[0].ID, gateway.AnswerOnce); code != 200 {
		t.Fatalf("answer: %d %s", code, data)
	}
	ans := <-out
	if !strings.Contains(ans, "scopegate exec --call ") {
		t.Fatalf("hook answer %s, want the rewrite", ans)
	}
	grants, _ := filepath.Glob(filepath.Join(e.sessions, "codex-1", "branches", "main", gateway.GrantsDir, "*.json"))
	if len(grants) != 1 {
		t.Errorf("grants %v, want the one of the approved call", grants)
	}
	out = hook()
	s.pending(1)
	if ans := <-out; !strings.Contains(ans, `"deny"`) || !strings.Contains(ans, "date is not in shell_commands.allow") {
		t.Fatalf("unanswered: %s, want a deny", ans)
	}
	es, _ := audit.ReadFile(filepath.Join(e.sessions, "codex-1", "branches", "main", audit.LogFile), audit.Filter{})
	if last := es[len(es)-1]; last.Answer != gateway.AnswerTimeout || last.Channel != ChannelPage || last.Mode != audit.ModeHook {
		t.Errorf("entry %+v", last)
	}
}
