package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
)

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath, so that
// streaming handlers (MCP's server-sent events) can flush through.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// edge is the outermost middleware: it counts the request as in flight,
// recovers panics (logged, answered 500), refuses foreign origins and logs
// the request. Requests are logged at debug level (errors above), so a busy
// server does not spend its time logging.
func (s *Server) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, errorf(http.StatusInternalServerError, CodeInternal, "internal error"))
				}
			}
			level := slog.LevelDebug
			switch {
			case sw.status >= 500:
				level = slog.LevelError
			case sw.status >= 400:
				level = slog.LevelInfo
			}
			if s.log.Enabled(r.Context(), level) {
				s.log.LogAttrs(r.Context(), level, "request", slog.String("method", r.Method),
					slog.String("path", r.URL.Path), slog.Int("status", sw.status),
					slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
			}
		}()
		if !s.hostAllowed(r) {
			writeError(sw, errorf(http.StatusForbidden, CodeForbiddenHost,
				fmt.Sprintf("host %q is not this server's: a name other than its listen address or a loopback name is refused", r.Host)))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			writeError(sw, errorf(http.StatusForbidden, CodeForbiddenOrigin,
				fmt.Sprintf("origin %q is not loopback: cross-site requests are refused", o)))
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// loopbackOrigin reports whether an Origin header names a loopback host: a
// browser page served from anywhere else must not drive the gateway.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed reports whether a request that came over TCP names this
// server in its Host: a loopback name or address, the host it was asked to
// listen on, or the address the request came to. A page of another site
// whose name was made to resolve to this machine (DNS rebinding) names its
// own site, and is refused. Requests on a unix socket, and those handed to
// the handler in-process, have no such name to check.
func (s *Server) hostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la.Network() != "tcp" {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	switch {
	case host == "":
		return false
	case loopbackName(host):
		return true
	case s.listenHost != "" && strings.EqualFold(host, s.listenHost):
		return true
	}
	ip := net.ParseIP(host)
	tcp, ok := la.(*net.TCPAddr)
	return ip != nil && ok && tcp.IP.Equal(ip)
}

// loopbackName reports whether host is localhost, a name below it (which
// browsers resolve to loopback themselves), or a loopback address.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") || len(host) > len(".localhost") && strings.EqualFold(host[len(host)-len(".localhost"):], ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// api guards a /v1/ route: bearer token, body limit, timeout (none when
// timeout is not positive: a stream).
func (s *Server) api(timeout time.Duration, h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="scopegate"`)
			writeError(w, errorf(http.StatusUnauthorized, CodeUnauthorized, "missing or wrong bearer token"))
			return
		}
		if r.ContentLength > s.opts.MaxBody {
			writeError(w, errorf(http.StatusRequestEntityTooLarge, CodeTooLarge,
				fmt.Sprintf("request body is larger than %d bytes", s.opts.MaxBody)))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		ctx, cancel := r.Context(), context.CancelFunc(func() {})
		if timeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, timeout)
		}
		defer cancel()
		if err := h(w, r.WithContext(ctx)); err != nil {
			e := classify(err)
			if ctx.Err() == context.DeadlineExceeded && e.status == http.StatusInternalServerError {
				e = errorf(http.StatusServiceUnavailable, CodeTimeout, "request timed out: "+err.Error())
			}
			writeError(w, e)
		}
	})
}
