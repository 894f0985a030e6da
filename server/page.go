package server

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// The live page (docs/page.md): the page's files, embedded in the binary,
// and the routes that feed it and take its answers. Everything the page
// shows of a call comes as JSON and is rendered as text.

// pageFiles are the page: an HTML file, its script and its style sheet.
//
//go:embed page
var pageFiles embed.FS

// CSRFHeader carries the page's per-server token on the requests that
// change something.
const CSRFHeader = "X-Scopegate-CSRF"

// pageCSP is the Content-Security-Policy of the page: its own files only,
// no inline script or style, never in a frame.
const pageCSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// feedBatch is how long the page's stream gathers events before it writes
// them: one write for many decisions on a busy server, well inside the
// second a decision takes to show.
const feedBatch = 50 * time.Millisecond

// feedPing is how often an idle stream says it is alive.
const feedPing = 15 * time.Second

// page is the state of the live page: its feed, the offers it holds, the
// chart's samples, the verification of each branch, and its CSRF token.
type page struct {
	feed    *Feed
	offers  *offers
	denials denialRing
	verify  verifyCache
	csrf    string
	// closing is closed when the server shuts down: the streams end.
	closing     chan struct{}
	closingOnce sync.Once
}

func newPage(feed *Feed) *page {
	if feed == nil {
		feed = NewFeed()
	}
	var tok [32]byte
	_, _ = rand.Read(tok[:])
	return &page{feed: feed, offers: newOffers(), csrf: hex.EncodeToString(tok[:]), closing: make(chan struct{}),
		verify: verifyCache{byPath: map[string]verified{}}}
}

// close ends the page's streams and denies the calls it holds.
func (p *page) close() {
	p.closingOnce.Do(func() {
		close(p.closing)
		p.offers.end()
	})
}

// pageRoutes adds the page's routes to mux.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	rt := s.opts.RequestTimeout
	mux.HandleFunc("GET /{$}", s.pageFile("index.html"))
	mux.HandleFunc("GET /page/{file}", func(w http.ResponseWriter, r *http.Request) { s.pageFile(r.PathValue("file"))(w, r) })
	mux.Handle("GET /v1/page/state", s.api(rt, s.pageState))
	mux.Handle("GET /v1/page/events", s.api(0, s.pageEvents))
	mux.Handle("GET /v1/page/denials", s.api(rt, s.pageDenials))
	mux.Handle("GET /v1/page/verify", s.api(rt, s.pageVerify))
	mux.Handle("POST /v1/page/offers/{id}", s.api(rt, s.pageAnswer))
}

// pagePaths are the page's /v1 routes, for telling a wrong method from a
// wrong path.
func pagePaths() []string {
	return []string{"/v1/page/state", "/v1/page/events", "/v1/page/denials", "/v1/page/verify", "/v1/page/offers/{id}"}
}

// pageFile serves one of the page's files, which hold nothing of the
// sessions: they are served without the token, which the page then asks
// for.
func (s *Server) pageFile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := fs.ReadFile(pageFiles, path.Join("page", path.Base(name)))
		if err != nil || name != path.Base(name) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		w.Write(data)
	}
}

// branchView is what the page shows of a branch.
type branchView struct {
	Session string     `json:"session"`
	Branch  string     `json:"branch"`
	Current bool       `json:"current"`
	Mode    string     `json:"mode"`
	Scope   *scopeView `json:"scope,omitempty"`
	// ScopeError says why the branch has no usable scope (every call on
	// it is then denied).
	ScopeError string `json:"scope_error,omitempty"`
}

// scopeView is a scope at a glance.
type scopeView struct {
	Read     []string `json:"read"`
	Write    []string `json:"write"`
	Deny     []string `json:"deny"`
	Commands []string `json:"commands"`
	Denied   []string `json:"denied_commands"`
	Network  []string `json:"network"`
}

// stateView is what the page loads first.
type stateView struct {
	CSRF      string       `json:"csrf"`
	Branches  []branchView `json:"branches"`
	Approvals bool         `json:"approvals"`
	// TimeoutSeconds is how long an offer waits on the page.
	TimeoutSeconds int `json:"timeout_seconds"`
}

// pageState answers the page's first load: the sessions and branches with
// their modes and scopes, whether the page is asked, and the CSRF token.
func (s *Server) pageState(w http.ResponseWriter, r *http.Request) error {
	branches, err := listBranches(s.opts.SessionsDir)
	if err != nil {
		return err
	}
	ap := s.approvals()
	st := stateView{CSRF: s.page.csrf, Branches: []branchView{}, Approvals: ap.Ask, TimeoutSeconds: int(ap.Timeout / time.Second)}
	g := s.opts.Gateway
	env := g.Env("")
	currents := map[string]string{}
	for _, b := range branches {
		if err := r.Context().Err(); err != nil {
			return err
		}
		cur, seen := currents[b.session]
		if !seen {
			cur, _ = s.store.Current(b.session)
			currents[b.session] = cur
		}
		v := branchView{Session: b.session, Branch: b.branch, Current: cur == b.branch, Mode: sessions.ModeEnforce}
		if g.Observing(b.dir) {
			v.Mode = sessions.ModeObserve
		}
		sc, err := g.LoadScope(filepath.Join(b.dir, sessions.ScopeFile), env)
		if err != nil {
			v.ScopeError = err.Error()
		} else {
			v.Scope = viewScope(sc.Document())
		}
		st.Branches = append(st.Branches, v)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, st)
	return nil
}

// viewScope is a scope document at a glance.
func viewScope(d policy.Document) *scopeView {
	nonNil := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	v := &scopeView{Read: nonNil(d.Paths.Read), Write: nonNil(d.Paths.Write), Deny: nonNil(d.Paths.Deny),
		Commands: nonNil(d.Shell.Allow), Denied: nonNil(d.Shell.Deny)}
	switch d.Network.Mode {
	case policy.NetworkList:
		v.Network = nonNil(d.Network.Hosts)
	case policy.NetworkAny:
		v.Network = []string{policy.NetworkAny.String()}
	default:
		v.Network = []string{policy.NetworkNone.String()}
	}
	return v
}

// pageEvents streams the page's feed as server-sent events: each decision
// (id, event decision), the offers waiting whenever they change (event
// offers), and a hello first saying whether the page must start its list
// over. A page that reconnects with Last-Event-ID gets exactly what it
// missed, if the feed still keeps it. While a stream is open the page is
// open: calls are held for it.
func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request) error {
	rc := http.NewResponseController(w)
	// The stream outlives the server's read timeout.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	p := s.page
	after, reset := p.feed.resume(r.Header.Get("Last-Event-ID"))
	wake := make(chan struct{}, 1)
	defer p.feed.subscribe(wake)()
	defer p.offers.subscribe(wake)()
	p.offers.pageOpened()
	defer p.offers.pageClosed()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "retry: 1000\nevent: hello\ndata: {\"reset\":%t}\n\n", reset)
	var rows []feedRow
	sent := ^uint64(0)
	ping := time.NewTicker(feedPing)
	defer ping.Stop()
	enc := json.NewEncoder(&buf)
	for {
		rows, after = p.feed.since(after, rows[:0])
		buf.Write(p.feed.appendEvents(buf.AvailableBuffer(), rows))
		if v, version := p.offers.snapshot(); version != sent {
			sent = version
			buf.WriteString("event: offers\ndata: ")
			if err := enc.Encode(v); err != nil {
				return nil
			}
			buf.WriteByte('\n')
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
			buf.Reset()
		}
		select {
		case <-wake:
			// Gather what comes with it.
			t := time.NewTimer(feedBatch)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return nil
			}
		case <-ping.C:
			buf.WriteString(": ping\n\n")
		case <-r.Context().Done():
			return nil
		case <-p.closing:
			return nil
		}
	}
}

// pageDenials answers the chart: denials by reason per minute over the
// last hour.
func (s *Server) pageDenials(w http.ResponseWriter, r *http.Request) error {
	out := []denialMinute{}
	if s.opts.Metrics != nil {
		out = s.page.denials.chart(time.Now(), s.opts.Metrics.Denials())
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// verifyView is a branch's `audit verify`.
type verifyView struct {
	Session string `json:"session"`
	Branch  string `json:"branch"`
	OK      bool   `json:"ok"`
	Entries int    `json:"entries"`
	// Break is the first break, when the chain does not hold.
	Break *audit.Break `json:"break,omitempty"`
	// Error says why the branch's tools.org could not be verified.
	Error string `json:"error,omitempty"`
}

// pageVerify answers `audit verify` of every branch, each read again only
// when its tools.org or chain head changed.
func (s *Server) pageVerify(w http.ResponseWriter, r *http.Request) error {
	branches, err := listBranches(s.opts.SessionsDir)
	if err != nil {
		return err
	}
	out := []verifyView{}
	for _, b := range branches {
		if err := r.Context().Err(); err != nil {
			return err
		}
		v := verifyView{Session: b.session, Branch: b.branch}
		rep, err := s.page.verify.verify(filepath.Join(b.dir, audit.LogFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			v.OK = true // nothing recorded yet: nothing to break
		case err != nil:
			v.Error = err.Error()
		default:
			v.OK, v.Entries = rep.OK, rep.Entries
			if len(rep.Breaks) > 0 {
				v.Break = &rep.Breaks[0]
			}
		}
		out = append(out, v)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// verifyCache keeps each tools.org's verification with the stamps of the
// file and its chain head it was made for.
type verifyCache struct {
	mu     sync.Mutex
	byPath map[string]verified
}

type verified struct {
	log, head fileID
	report    audit.Report
}

// fileID is what a stat says of a file's identity and content.
type fileID struct {
	ino, size, mtime, ctime int64
}

func statID(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return fileID{}, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
		}
		return fileID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileID{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, nil
}

// verify is audit.Verify of path, from the cache while the file and its
// chain head are unchanged.
func (c *verifyCache) verify(path string) (audit.Report, error) {
	logID, err := statID(path)
	if err != nil {
		return audit.Report{}, err
	}
	headID, _ := statID(audit.ChainHeadPath(path))
	c.mu.Lock()
	v, ok := c.byPath[path]
	c.mu.Unlock()
	if ok && v.log == logID && v.head == headID {
		return v.report, nil
	}
	rep, err := audit.Verify(path)
	if err != nil {
		return rep, err
	}
	c.mu.Lock()
	c.byPath[path] = verified{log: logID, head: headID, report: rep}
	c.mu.Unlock()
	return rep, nil
}

// answerRequest is the body of POST /v1/page/offers/{id}.
type answerRequest struct {
	Answer string `json:"answer"`
}

// CodeAnswered is the error code of an answer to an offer that was
// answered already (through another page or channel) or ended.
const CodeAnswered = "already_answered"

// CodeCSRF is the error code of a state-changing request of the page
// without its CSRF token or from another origin.
const CodeCSRF = "csrf"

// pageAnswer takes the page's answer to an offer: once, session or deny.
// It needs the CSRF token and an Origin of this very server.
func (s *Server) pageAnswer(w http.ResponseWriter, r *http.Request) error {
	if err := s.sameOrigin(r); err != nil {
		return err
	}
	var req answerRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	switch req.Answer {
	case gateway.AnswerOnce, gateway.AnswerSession, gateway.AnswerDeny:
	default:
		return errorf(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("answer %q: want once, session or deny", req.Answer))
	}
	if err := s.page.offers.answer(r.PathValue("id"), req.Answer); err != nil {
		if errors.Is(err, errAnswered) {
			return errorf(http.StatusConflict, CodeAnswered, err.Error())
		}
		return errorf(http.StatusNotFound, CodeNotFound, err.Error())
	}
	writeJSON(w, http.StatusOK, req)
	return nil
}

// sameOrigin refuses a state-changing request of the page that lacks the
// CSRF token or whose Origin is not this server as the browser reached it.
func (s *Server) sameOrigin(r *http.Request) error {
	got := r.Header.Get(CSRFHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.page.csrf)) != 1 {
		return errorf(http.StatusForbidden, CodeCSRF, "missing or wrong "+CSRFHeader+" token")
	}
	origin := r.Header.Get("Origin")
	if origin == "" || !strings.EqualFold(origin, "http://"+r.Host) {
		return errorf(http.StatusForbidden, CodeCSRF, fmt.Sprintf("origin %q is not this server's (http://%s)", origin, r.Host))
	}
	return nil
}

// approvals is what config.yml says of approvals now.
func (s *Server) approvals() gateway.Approvals {
	if s.opts.Approvals == nil {
		return gateway.Approvals{}
	}
	ap := s.opts.Approvals()
	if ap.Timeout <= 0 {
		ap.Timeout = config.DefaultApprovalTimeoutSeconds * time.Second
	}
	return ap
}

// pageAsk is the page's channel for a request that came through via, or
// nil when approvals are off or no page is open. Its offers wait at most
// the configured timeout each, and all of them together at most limit
// from now (0: no such bound).
func (s *Server) pageAsk(via gateway.Via, limit time.Duration) gateway.Asker {
	ap := s.approvals()
	if !ap.Ask {
		return nil
	}
	a := s.page.offers.asker(via, ap.Timeout, "")
	if pa, ok := a.(*pageAsker); ok && limit > 0 {
		pa.deadline = time.Now().Add(limit)
	}
	return a
}
