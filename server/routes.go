package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"unicode/utf8"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	rt, ct := s.opts.RequestTimeout, s.opts.CallTimeout
	mux.Handle("POST /v1/sessions", s.api(rt, s.createSession))
	mux.Handle("GET /v1/sessions", s.api(rt, s.listSessions))
	mux.Handle("GET /v1/sessions/{id}", s.api(rt, s.showSession))
	mux.Handle("POST /v1/sessions/{id}/check", s.api(rt, s.check))
	mux.Handle("POST /v1/sessions/{id}/calls", s.api(ct, s.call))
	mux.Handle("POST /v1/sessions/{id}/scope/expand", s.api(rt, s.expand))
	mux.Handle("GET /v1/sessions/{id}/audit", s.api(rt, s.audit))
	mux.Handle("GET /v1/events", s.api(rt, s.events))
	mcpHandler := s.mcpHandler()
	for _, m := range []string{"POST", "GET", "DELETE"} {
		mux.Handle(m+" /v1/sessions/{id}/mcp", mcpHandler)
	}
	for _, agent := range agents.Names() {
		mux.Handle("POST /v1/hooks/"+agent, s.hook(agent))
	}
	s.pageRoutes(mux)
	// The same paths without methods: a request that matches one of them
	// used the wrong method.
	paths := http.NewServeMux()
	for _, p := range append([]string{"/v1/sessions", "/v1/sessions/{id}", "/v1/sessions/{id}/check", "/v1/sessions/{id}/calls",
		"/v1/sessions/{id}/scope/expand", "/v1/sessions/{id}/audit", "/v1/events", "/v1/hooks/claude-code", "/v1/hooks/codex", "/v1/sessions/{id}/mcp"},
		pagePaths()...) {
		paths.Handle(p, http.NotFoundHandler())
	}
	mux.Handle("/v1/", s.api(rt, func(w http.ResponseWriter, r *http.Request) error {
		if _, pattern := paths.Handler(r); pattern != "" {
			return errorf(http.StatusMethodNotAllowed, CodeMethod, r.Method+" is not allowed on "+r.URL.Path)
		}
		return errorf(http.StatusNotFound, CodeNotFound, "no such route: "+r.Method+" "+r.URL.Path)
	}))
	metricsHandler := s.opts.MetricsHandler
	if metricsHandler == nil && s.opts.Metrics != nil {
		metricsHandler = s.opts.Metrics.Handler()
	}
	if metricsHandler != nil {
		mux.Handle("GET /metrics", metricsHandler)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return s.edge(mux)
}

// readJSON reads the body (bounded by the api middleware) and decodes it
// strictly into v: invalid UTF-8, unknown fields, trailing data and
// malformed JSON are all 400.
func readJSON(r *http.Request, v any) error {
	var buf bytes.Buffer
	data, err := readBody(r, &buf)
	if err != nil {
		return err
	}
	return decodeJSON(data, v)
}

// readBody reads the body (bounded by the api middleware), which must be
// UTF-8, into buf.
func readBody(r *http.Request, buf *bytes.Buffer) ([]byte, error) {
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "read body: "+err.Error())
	}
	data := buf.Bytes()
	if !utf8.Valid(data) {
		return nil, errorf(http.StatusBadRequest, CodeInvalidJSON, "body is not valid UTF-8")
	}
	return data, nil
}

// decodeJSON decodes data strictly into v: unknown fields, trailing data
// and malformed JSON are all 400.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "malformed JSON: trailing data after the object")
	}
	return nil
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req CreateRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if err := s.opts.Gateway.RefuseMode(req.Mode); err != nil {
		return err
	}
	c, err := CreateSession(r.Context(), s.store, s.loader, req, s.warn)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if c.Existed {
		status = http.StatusOK
	}
	writeJSON(w, status, c)
	return nil
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	list, err := s.store.List(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []sessions.Summary{}
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) showSession(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := sessions.ValidateID(id); err != nil {
		return fmt.Errorf("session id %q: %w", id, err)
	}
	info, err := s.store.Show(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

// bodyBuffer returns an empty buffer for a request body: every check and
// call needs one.
func (s *Server) bodyBuffer() *bytes.Buffer {
	if b, ok := s.bodies.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// releaseBody gives a body buffer back for the next request, unless a large
// body made it large.
func (s *Server) releaseBody(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		s.bodies.Put(b)
	}
}

// callRequest is a call (docs/reference.md, The call and the decision) plus the branch it is made on.
type callRequest struct {
	Branch string          `json:"branch,omitempty"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	Cwd    string          `json:"cwd,omitempty"`
}

// readCall reads a call request and opens its branch.
func (s *Server) readCall(r *http.Request) (*branchEntry, policy.Call, error) {
	buf := s.bodyBuffer()
	data, err := readBody(r, buf)
	var req callRequest
	if err == nil {
		// The request keeps copies of what it decodes, not data.
		err = decodeCall(data, &req)
	}
	s.releaseBody(buf)
	if err != nil {
		return nil, policy.Call{}, err
	}
	if req.Tool == "" {
		return nil, policy.Call{}, errorf(http.StatusBadRequest, CodeInvalidJSON, `missing "tool"`)
	}
	e, err := s.reg.lookup(r.Context(), r.PathValue("id"), req.Branch)
	if err != nil {
		return nil, policy.Call{}, err
	}
	return e, policy.Call{Tool: req.Tool, Args: req.Args, Cwd: req.Cwd}, nil
}

// gatewayErr turns a failed check or call (its audit could not be
// written) into an error; a branch whose directory vanished is forgotten.
func (s *Server) gatewayErr(e *branchEntry, err error) error {
	if _, serr := os.Stat(e.dir); serr != nil {
		s.reg.forget(e)
		return errorf(http.StatusNotFound, CodeNotFound, fmt.Sprintf("branch %s/%s is gone", e.session, e.branch))
	}
	return err
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) error {
	e, call, err := s.readCall(r)
	if err != nil {
		return err
	}
	res, err := s.opts.Gateway.Check(r.Context(), gateway.Target{BranchDir: e.dir, Via: s.via(r), Synced: true}, call)
	if err != nil {
		return s.gatewayErr(e, err)
	}
	writeJSON(w, http.StatusOK, res.Decision)
	return nil
}

func (s *Server) call(w http.ResponseWriter, r *http.Request) error {
	e, call, err := s.readCall(r)
	if err != nil {
		return err
	}
	t := gateway.Target{BranchDir: e.dir, Via: s.via(r), Synced: true}
	// A client of this route cannot ask its user: while a page is open,
	// the page asks for it.
	if a := s.pageAsk(t.Via, 0); a != nil {
		t.Ask = a
	}
	res, err := s.opts.Gateway.Call(r.Context(), t, call)
	if err != nil {
		return s.gatewayErr(e, err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// ExpandRequest is the body of POST /v1/sessions/{id}/scope/expand; the
// lists are those of `scopegate scope expand`.
type ExpandRequest struct {
	Branch           string             `json:"branch,omitempty"`
	Read             []string           `json:"read,omitempty"`
	Write            []string           `json:"write,omitempty"`
	Deny             []string           `json:"deny,omitempty"`
	AllowCommand     []string           `json:"allow_command,omitempty"`
	DenyCommand      []string           `json:"deny_command,omitempty"`
	RoamSubdirectory []string           `json:"roam_subdirectory,omitempty"`
	RoamTag          []string           `json:"roam_tag,omitempty"`
	RoamNodeID       []string           `json:"roam_node_id,omitempty"`
	AllowHost        []string           `json:"allow_host,omitempty"`
	AllowSocket      []string           `json:"allow_socket,omitempty"`
	Network          policy.NetworkMode `json:"network,omitempty"`
}

func (s *Server) expand(w http.ResponseWriter, r *http.Request) error {
	var req ExpandRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	add := sessions.Expansion{Read: req.Read, Write: req.Write, Deny: req.Deny,
		AllowCommands: req.AllowCommand, DenyCommands: req.DenyCommand,
		RoamSubdirectories: req.RoamSubdirectory, RoamTags: req.RoamTag, RoamNodeIDs: req.RoamNodeID,
		AllowHosts: req.AllowHost, AllowSockets: req.AllowSocket, Network: req.Network}
	if add.Empty() {
		return errorf(http.StatusBadRequest, CodeBadRequest, "nothing to add")
	}
	e, err := s.reg.lookup(r.Context(), r.PathValue("id"), req.Branch)
	if err != nil {
		return err
	}
	res, err := s.opts.Gateway.ExpandScope(r.Context(), e.dir, add, "http:"+r.RemoteAddr)
	if err != nil {
		return err
	}
	if s.opts.Metrics != nil {
		for section, n := range res.Added {
			for range n {
				s.opts.Metrics.ScopeExpansion(section)
			}
		}
	}
	writeJSON(w, http.StatusOK, res.Scope)
	return nil
}
