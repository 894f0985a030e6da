package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/metrics"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/server/client"
	"github.com/scopegate/scopegate/sessions"
)

// Defaults of Options.
const (
	DefaultMaxBody        = 8 << 20
	DefaultRequestTimeout = 30 * time.Second
	DefaultCallTimeout    = 15 * time.Minute
	DefaultShutdownGrace  = 30 * time.Second
)

// Options configure a Server. The zero value works except for Gateway and
// SessionsDir, which a useful server needs.
type Options struct {
	// Gateway decides and runs calls; the same one the CLI uses.
	Gateway *gateway.Gateway
	// SessionsDir is the sessions root; ConfigDir holds profiles and presets.
	SessionsDir string
	ConfigDir   string
	// PresetsDir holds gptel preset files (config.yml gptel_presets_dir).
	PresetsDir string
	// Metrics, when set, is served on /metrics and counts scope expansions
	// (the gateway counts decisions into it when given as its Observer).
	Metrics *metrics.Metrics
	// MetricsHandler overrides the /metrics handler (default Metrics.Handler()).
	MetricsHandler http.Handler
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every /v1/ request.
	Token string
	// MaxBody bounds request bodies (default DefaultMaxBody).
	MaxBody int64
	// RequestTimeout bounds every request but calls; CallTimeout bounds
	// calls (defaults DefaultRequestTimeout, DefaultCallTimeout).
	RequestTimeout time.Duration
	CallTimeout    time.Duration
	// ShutdownGrace is how long in-flight requests may finish after
	// shutdown starts before their calls are cancelled (and recorded
	// INTERRUPTED) (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Hooks configure the hook routes: the profile of the sessions they
	// create, hooks.other_tools, and the exec command line of allowed shell
	// calls (the project directory comes with each request).
	Hooks gateway.HookOptions
	// Version is scopegate's version, told to MCP clients.
	Version string
	// Approvals, read for every call, says whether a call denied for a
	// scope reason is offered to the user (config.yml approvals: ask):
	// through MCP elicitation where the client declared it, and on the page
	// while one is open; and how long an offer waits. Nil offers nothing.
	Approvals func() gateway.Approvals
	// Feed is the page's live feed: the gateway's Events must reach it.
	// Nil is a feed of the server's own, which nothing reaches.
	Feed *Feed
	// Listen is the TCP address the server was asked to listen on; a
	// request's Host may name its host (besides a loopback name and the
	// address the request came to).
	Listen string
	// TrustedSocket is the path of the server's private unix socket in the
	// sessions root (SocketName). Requests that arrive on it need no token:
	// the socket is 0600, so only the user who owns the sessions root can
	// connect. The CLI forwards its decisions there.
	TrustedSocket string
	// Logger receives structured logs (default: discarded).
	Logger *slog.Logger
}

// Server is the HTTP API of docs/reference.md, HTTP. It is safe for concurrent use.
type Server struct {
	opts    Options
	store   *sessions.Store
	loader  profiles.Loader
	reg     *registry
	log     *slog.Logger
	handler http.Handler

	// mcpHs are the MCP handlers, one per session.
	mcpHs mcpHandlers

	// inflight counts running handlers, so that a shutdown past its grace
	// period still waits for cancelled calls to be recorded.
	inflight sync.WaitGroup

	// bodies are buffers for the bodies of checks and calls.
	bodies sync.Pool

	// page is the live page's state; listenHost the host of Options.Listen.
	page       *page
	listenHost string
	// hookLimit is hookAskLimit (shorter in tests).
	hookLimit time.Duration
}

// New returns a server. It errors when the options cannot work.
func New(opts Options) (*Server, error) {
	if opts.Gateway == nil {
		return nil, errors.New("server: no gateway")
	}
	if opts.SessionsDir == "" {
		return nil, errors.New("server: no sessions dir")
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: opts.Logger,
		store:  &sessions.Store{Root: opts.SessionsDir},
		loader: profiles.Loader{ConfigDir: opts.ConfigDir, PresetsDir: opts.PresetsDir}}
	s.store.Warn = s.warn
	s.reg = newRegistry(s.store, opts.Gateway, s.warn)
	s.page = newPage(opts.Feed)
	s.hookLimit = hookAskLimit
	if host, _, err := net.SplitHostPort(opts.Listen); err == nil {
		s.listenHost = strings.Trim(host, "[]")
	}
	s.handler = s.routes()
	return s, nil
}

func (s *Server) warn(msg string) { s.log.Warn(msg) }

// Handler is the server's HTTP handler, with every middleware.
func (s *Server) Handler() http.Handler { return s.handler }

// RecoverAll turns the in-flight records left by dead processes in every
// branch of the sessions root into INTERRUPTED entries; it returns how many.
func (s *Server) RecoverAll(ctx context.Context) (int, error) {
	branches, err := listBranches(s.opts.SessionsDir)
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, b := range branches {
		n, err := s.opts.Gateway.Recover(ctx, b.dir)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w", b.session, b.branch, err))
		}
	}
	return total, errors.Join(errs...)
}

// Serve serves on the listeners until ctx is done, then shuts down
// gracefully: listeners close, in-flight requests get ShutdownGrace to
// finish, then their calls are cancelled — recorded INTERRUPTED by the
// gateway — and Serve waits for them to be written. It returns nil after
// a clean shutdown.
func (s *Server) Serve(ctx context.Context, lns ...net.Listener) error {
	if len(lns) == 0 {
		return errors.New("serve: no listener")
	}
	base, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// The page's streams never end by themselves: shutting down ends them.
	srv.RegisterOnShutdown(s.page.close)
	if s.opts.Metrics != nil {
		go s.page.denials.sampleDenials(base, s.opts.Metrics.Denials)
	}
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		s.log.Info("listening", "addr", ln.Addr().String(), "network", ln.Addr().Network())
		go func() { errc <- srv.Serve(ln) }()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.log.Info("shutting down", "grace", s.opts.ShutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		s.log.Warn("grace period over: cancelling in-flight calls", "err", err)
		cancelCalls()
		srv.Close()
	}
	s.inflight.Wait()
	s.log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serveErr)
	}
	return nil
}

// SocketName is the name of serve's private socket in the sessions root;
// see [client.SocketName].
const SocketName = client.SocketName

// ViaHeader says which entry point a request on the trusted socket came
// through; see [client.ViaHeader].
const ViaHeader = client.ViaHeader

// trusted reports whether r arrived on the trusted socket.
func (s *Server) trusted(r *http.Request) bool {
	if s.opts.TrustedSocket == "" {
		return false
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la.Network() == "unix" && la.String() == s.opts.TrustedSocket
}

// via is the entry point of a request: HTTP, or what a client on the
// trusted socket forwarded.
func (s *Server) via(r *http.Request) gateway.Via {
	if s.trusted(r) {
		switch v := gateway.Via(r.Header.Get(ViaHeader)); v {
		case gateway.ViaCLI, gateway.ViaHook:
			return v
		}
	}
	return gateway.ViaHTTP
}

// authorized reports whether r carries the bearer token (or came on the
// trusted socket).
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" || s.trusted(r) {
		return true
	}
	got := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(got) < len(prefix) || got[:len(prefix)] != prefix {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got[len(prefix):]), []byte(s.opts.Token)) == 1
}
