package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Bounds of what the HTTP proxy reads of a request or response head.
const (
	maxHeadBytes = 64 << 10
	maxHeadLines = 256
)

// errHead is a request or response head the proxy does not accept.
var errHead = errors.New("malformed HTTP head")

// head is an HTTP request or response head: its first line split in three
// and its header fields as they came (name, value).
type head struct {
	first  [3]string
	fields [][2]string
}

// get returns the value of the field name (case-insensitive) and how many
// fields have that name.
func (h *head) get(name string) (string, int) {
	v, n := "", 0
	for _, f := range h.fields {
		if strings.EqualFold(f[0], name) {
			if n == 0 {
				v = f[1]
			}
			n++
		}
	}
	return v, n
}

// readHead reads one HTTP/1.x head from br: a start line of three parts
// (the third may hold spaces, as a reason phrase does) and header fields,
// bounded in size. Folded lines and fields without a colon are refused.
func readHead(br *bufio.Reader) (*head, error) {
	h := &head{}
	total := 0
	for i := 0; ; i++ {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if errors.Is(err, bufio.ErrBufferFull) || total > maxHeadBytes || i > maxHeadLines {
			return nil, fmt.Errorf("%w: head too large", errHead)
		}
		if err != nil {
			if i == 0 && len(line) == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", errHead, err)
		}
		s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		if strings.ContainsAny(s, "\r\x00") {
			return nil, fmt.Errorf("%w: a CR or NUL inside a line", errHead)
		}
		if i == 0 {
			parts := strings.SplitN(s, " ", 3)
			if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
				return nil, fmt.Errorf("%w: start line %q", errHead, clip(s))
			}
			copy(h.first[:], parts)
			continue
		}
		if s == "" {
			return h, nil
		}
		if s[0] == ' ' || s[0] == '\t' {
			return nil, fmt.Errorf("%w: folded header line", errHead)
		}
		name, value, ok := strings.Cut(s, ":")
		if !ok || !isToken(name) {
			return nil, fmt.Errorf("%w: header line %q", errHead, clip(s))
		}
		h.fields = append(h.fields, [2]string{name, strings.TrimSpace(value)})
	}
}

// isToken reports whether s is an HTTP token (RFC 9110 5.6.2), as a field
// name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// parseAuthority splits host[:port] as a CONNECT line or an http URL names
// it, with def the port when none is given (0: a port is required). The
// host comes back normalized (lower case, no brackets, no trailing dot).
func parseAuthority(s string, def int) (string, int, error) {
	host, portStr := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, fmt.Errorf("authority %q: unclosed [", clip(s))
		}
		host, portStr = s[1:end], s[end+1:]
		if portStr != "" && !strings.HasPrefix(portStr, ":") {
			return "", 0, fmt.Errorf("authority %q: junk after ]", clip(s))
		}
		portStr = strings.TrimPrefix(portStr, ":")
		if !strings.Contains(host, ":") {
			return "", 0, fmt.Errorf("authority %q: brackets around a non-IPv6 host", clip(s))
		}
	} else if i := strings.LastIndex(s, ":"); i >= 0 {
		host, portStr = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return "", 0, fmt.Errorf("authority %q: IPv6 address without brackets", clip(s))
		}
	}
	port := def
	if portStr != "" || strings.HasSuffix(s, ":") {
		n, err := strconv.Atoi(portStr)
		if err != nil || n <= 0 || n > 65535 || portStr[0] == '+' || portStr[0] == '-' {
			return "", 0, fmt.Errorf("authority %q: bad port", clip(s))
		}
		port = n
	}
	if port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("authority %q: no port", clip(s))
	}
	host = normHost(host)
	if !validHost(host) {
		return "", 0, fmt.Errorf("authority %q: bad host", clip(s))
	}
	return host, port, nil
}

// parseTarget splits the absolute-URI of a plain HTTP proxy request into
// host, port and the origin-form path the server gets.
func parseTarget(target string) (host string, port int, path string, err error) {
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok || !strings.EqualFold(scheme, "http") {
		return "", 0, "", fmt.Errorf("request target %q is not an http:// URL", clip(target))
	}
	end := strings.IndexAny(rest, "/?#")
	auth, path := rest, "/"
	if end >= 0 {
		auth, path = rest[:end], rest[end:]
		if path[0] != '/' {
			path = "/" + path
		}
	}
	if strings.Contains(auth, "@") {
		return "", 0, "", fmt.Errorf("request target %q carries credentials", clip(target))
	}
	host, port, err = parseAuthority(auth, 80)
	if err != nil {
		return "", 0, "", err
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	return host, port, path, nil
}

// respond writes a short plain-text answer and ends the exchange.
func respond(c net.Conn, code int, status, msg string) {
	body := msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", code, status, len(body), body)
}

// refuse answers a failed connection: 403 for one the scope refused, 502
// for one that could not be made.
func refuse(c net.Conn, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		respond(c, 403, "Forbidden", re.Error())
		return
	}
	respond(c, 502, "Bad Gateway", "scopegate: "+err.Error())
}

// hopHeaders are the fields of one hop that the proxy does not pass on.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "TE", "Upgrade"}

func isHop(name string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// handleHTTP serves one client connection of the HTTP proxy: it reads one
// request, CONNECT or plain, forwards it once the scope allows its host,
// and relays the answer. The connection ends with the exchange.
func (p *Proxy) handleHTTP(ctx context.Context, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(c, 16<<10)
	h, err := readHead(br)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			respond(c, 400, "Bad Request", "scopegate: "+err.Error())
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if !strings.HasPrefix(h.first[2], "HTTP/1.") {
		respond(c, 400, "Bad Request", "scopegate: not an HTTP/1 request")
		return
	}
	if h.first[0] == "CONNECT" {
		p.connect(ctx, c, br, h.first[1])
		return
	}
	req, ref := readRequest(h)
	if ref != nil {
		if ref.conn != nil {
			p.record(*ref.conn)
		}
		respond(c, ref.code, ref.status, ref.msg)
		return
	}
	p.forward(ctx, c, br, req)
}

// connect serves a CONNECT request for target: once the scope allows it,
// the client's bytes go to the server as they come, and back.
func (p *Proxy) connect(ctx context.Context, c net.Conn, br *bufio.Reader, target string) {
	host, port, err := parseAuthority(target, 0)
	if err != nil {
		respond(c, 400, "Bad Request", "scopegate: CONNECT "+err.Error())
		return
	}
	server, err := p.dial(ctx, host, port)
	if err != nil {
		refuse(c, err)
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		server.Close()
		return
	}
	p.relay(ctx, c, br, server, host, port)
}

// request is a plain (non-CONNECT) proxy request, checked: where it goes
// and how its body is framed.
type request struct {
	head *head
	host string
	port int
	// path is the origin-form target the server gets.
	path string
	// chunked is a body in chunks; otherwise it is length bytes.
	chunked bool
	length  int64
}

// refusal is a request the proxy answers itself, never forwarded.
type refusal struct {
	code   int
	status string
	msg    string
	// conn, when not nil, is the connection the request attempted, which
	// the call's connections list as refused.
	conn *Conn
}

// badRequest is a refusal with status 400.
func badRequest(msg string) *refusal {
	return &refusal{code: 400, status: "Bad Request", msg: "scopegate: " + msg}
}

// readRequest checks the head h of a plain proxy request: its target is
// an http:// URL, a Host field names the same host and port (a server
// routes by it: domain fronting), and its body's framing is one of two
// that cannot be read two ways: one Content-Length, or Transfer-Encoding:
// chunked alone.
func readRequest(h *head) (request, *refusal) {
	host, port, path, err := parseTarget(h.first[1])
	if err != nil {
		return request{}, badRequest(err.Error())
	}
	req := request{head: h, host: host, port: port, path: path}
	if hv, n := h.get("Host"); n > 1 {
		return request{}, badRequest("more than one Host header")
	} else if n == 1 {
		hh, hp, err := parseAuthority(hv, 80)
		if err != nil || hh != host || hp != port {
			return request{}, &refusal{code: 403, status: "Forbidden",
				msg:  fmt.Sprintf("scopegate: request to %s refused: its Host header names %q", net.JoinHostPort(host, strconv.Itoa(port)), clip(hv)),
				conn: &Conn{Host: normHost(hv), Port: port, Rule: "host header differs from the request's host"}}
		}
	}
	cl, ncl := h.get("Content-Length")
	te, nte := h.get("Transfer-Encoding")
	switch {
	case nte > 0 && (ncl > 0 || nte > 1 || !strings.EqualFold(te, "chunked")):
		return request{}, badRequest("Transfer-Encoding other than chunked, or with Content-Length")
	case nte == 1:
		req.chunked = true
	case ncl > 1:
		return request{}, badRequest("more than one Content-Length")
	case ncl == 1:
		req.length, err = strconv.ParseInt(cl, 10, 64)
		if err != nil || req.length < 0 || cl[0] == '+' {
			return request{}, badRequest("bad Content-Length")
		}
	}
	return req, nil
}

// encodeHead is the head the server gets: the origin-form target, the
// client's fields as they came but those of one hop, a Host field when
// the client sent none, and Connection: close.
func (r *request) encodeHead() string {
	var w strings.Builder
	fmt.Fprintf(&w, "%s %s %s\r\n", r.head.first[0], r.path, r.head.first[2])
	hasHost := false
	for _, f := range r.head.fields {
		if isHop(f[0]) {
			continue
		}
		hasHost = hasHost || strings.EqualFold(f[0], "Host")
		fmt.Fprintf(&w, "%s: %s\r\n", f[0], f[1])
	}
	if !hasHost {
		fmt.Fprintf(&w, "Host: %s\r\n", authority(r.host, r.port, 80))
	}
	w.WriteString("Connection: close\r\n\r\n")
	return w.String()
}

// forward sends req to its server once the scope allows it: the head,
// then the body read from br by its framing, while relayResponse passes
// the answer back.
func (p *Proxy) forward(ctx context.Context, c net.Conn, br *bufio.Reader, req request) {
	server, err := p.dial(ctx, req.host, req.port)
	if err != nil {
		refuse(c, err)
		return
	}
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { server.Close() })
	defer stop()
	// One request per connection: the server is told to close after it,
	// and so is the client, so that a second request on this connection
	// (to another host) is never sent to this server unchecked.
	if _, err := io.WriteString(server, req.encodeHead()); err != nil {
		respond(c, 502, "Bad Gateway", "scopegate: "+err.Error())
		return
	}
	down := make(chan struct{})
	go func() {
		defer close(down)
		p.relayResponse(c, server)
	}()
	if req.chunked {
		err = copyChunked(server, br, c)
	} else if req.length > 0 {
		err = copyBody(server, br, c, req.length)
	}
	if err != nil {
		server.Close()
		c.Close()
		<-down
		return
	}
	// The request is sent. Anything more from the client is a second
	// request, never sent: the answer to the first ends the exchange. The
	// client's end (EOF) is passed on.
	var one [1]byte
	if _, err := br.Read(one[:]); errors.Is(err, io.EOF) {
		halfClose(server)
	}
	<-down
}

// authority writes host:port, the port left out when it is def.
func authority(host string, port, def int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == def {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// relayResponse passes the server's answer to the client: its heads (1xx
// ones first) with Connection: close, then the rest as it comes.
func (p *Proxy) relayResponse(c, server net.Conn) {
	sbr := bufio.NewReaderSize(server, 16<<10)
	for {
		resp, err := readHead(sbr)
		if err != nil {
			respond(c, 502, "Bad Gateway", "scopegate: the server's answer: "+err.Error())
			c.Close()
			return
		}
		var w strings.Builder
		fmt.Fprintf(&w, "%s %s", resp.first[0], resp.first[1])
		if resp.first[2] != "" {
			w.WriteString(" " + resp.first[2])
		}
		w.WriteString("\r\n")
		code, _ := strconv.Atoi(resp.first[1])
		interim := code >= 100 && code < 200 && code != 101
		for _, f := range resp.fields {
			if !isHop(f[0]) {
				fmt.Fprintf(&w, "%s: %s\r\n", f[0], f[1])
			}
		}
		if !interim {
			w.WriteString("Connection: close\r\n")
		}
		w.WriteString("\r\n")
		if _, err := io.WriteString(c, w.String()); err != nil {
			server.Close()
			return
		}
		if !interim {
			break
		}
	}
	pre := buffered(sbr)
	pipe(c, server, bytes0(pre))
	c.Close()
}

func bytes0(b []byte) []byte { return append([]byte(nil), b...) }

// copyBody copies n bytes of a body that c sends, br reading c: what br
// holds of it, then the rest from c itself, which between two TCP
// connections io.Copy splices (the bytes stay in the kernel). What br
// holds beyond the body stays there.
func copyBody(w io.Writer, br *bufio.Reader, c net.Conn, n int64) error {
	if k := min(int64(br.Buffered()), n); k > 0 {
		if _, err := io.CopyN(w, br, k); err != nil {
			return err
		}
		n -= k
	}
	if n > 0 {
		if _, err := io.CopyN(w, c, n); err != nil {
			return err
		}
	}
	return nil
}

// copyChunked copies one chunked body that c sends from br (reading c) to
// w as it is, checking its framing: chunk sizes, their CRLFs, the last
// chunk and the trailer. The chunks' data is copied with copyBody.
func copyChunked(w io.Writer, br *bufio.Reader, c net.Conn) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("chunked body: %w", err)
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		sz, _, _ := strings.Cut(strings.TrimRight(string(line), "\r\n"), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(sz), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("chunked body: bad chunk size %q", clip(sz))
		}
		if n == 0 {
			// Trailer fields, then an empty line.
			for i := 0; ; i++ {
				line, err := br.ReadSlice('\n')
				if err != nil || i > maxHeadLines {
					return fmt.Errorf("chunked body: trailer: %v", err)
				}
				if _, err := w.Write(line); err != nil {
					return err
				}
				if strings.TrimRight(string(line), "\r\n") == "" {
					return nil
				}
			}
		}
		if err := copyBody(w, br, c, n); err != nil {
			return err
		}
		crlf, err := br.ReadSlice('\n')
		if err != nil || strings.TrimRight(string(crlf), "\r\n") != "" {
			return errors.New("chunked body: chunk not followed by CRLF")
		}
		if _, err := w.Write(crlf); err != nil {
			return err
		}
	}
}
