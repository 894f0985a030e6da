// Package client posts one request to a serve over its private unix socket
// and reads the answer: the CLI's way to a running serve. It speaks just the
// HTTP/1.1 the serve answers with (one request per connection,
// Content-Length or chunked answers) so that the per-call commands, which
// start afresh for every tool call, do not link net/http and pay its package
// initialisation.
package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// SocketName is the name of serve's private socket in the sessions root
// (0600): `scopegate check`, `call`, `exec` and `hook` forward to it when it
// answers.
const SocketName = ".scopegate.sock"

// ViaHeader lets a client on the private socket say which entry point a
// forwarded decision came through ("cli" or "hook"), for the metrics.
const ViaHeader = "X-Scopegate-Via"

// ProjectDirHeader carries a hook's project directory: Claude Code's HTTP
// hooks fill it from CLAUDE_PROJECT_DIR (they interpolate allowed
// environment variables into headers), the CLI's hook sets it when it
// forwards. The model cannot steer it.
const ProjectDirHeader = "X-Scopegate-Project-Dir"

// AgentEnvHeader carries, from the CLI's hook when it forwards, what
// locates the agent's own permission rules (agents.Env as JSON): the
// agent's configuration directory, home, and process.
const AgentEnvHeader = "X-Scopegate-Agent-Env"

// MaxAnswer bounds the answer body read from a serve.
const MaxAnswer = 64 << 20

// ErrNoServe means nothing listens on the socket: no socket file, or a stale
// one. The request was not sent.
var ErrNoServe = errors.New("no serve listens on the socket")

// Answer is a serve's answer to one request.
type Answer struct {
	// StatusCode is the HTTP status, Status the status line after the
	// version ("404 Not Found").
	StatusCode int
	Status     string
	// Body is the whole body.
	Body []byte
}

// Post sends body as JSON to path on the serve listening at socket, with
// the given extra header fields, and returns its answer. Cancelling ctx
// closes the connection, which the serve takes as the client gone.
func Post(ctx context.Context, socket, path string, header map[string]string, body []byte) (Answer, error) {
	req, err := request(path, header, body)
	if err != nil {
		return Answer{}, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return Answer{}, ErrNoServe
		}
		return Answer{}, fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	ans, err := exchange(conn, req)
	if err != nil && ctx.Err() != nil {
		return Answer{}, fmt.Errorf("post %s: %w", path, context.Cause(ctx))
	}
	if err != nil {
		return Answer{}, fmt.Errorf("post %s: %w", path, err)
	}
	return ans, nil
}

// request is the bytes of a POST of body to path.
func request(path string, header map[string]string, body []byte) ([]byte, error) {
	if path == "" || path[0] != '/' || strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("invalid request path %q", path)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: scopegate\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", path, len(body))
	for _, k := range slices.Sorted(maps.Keys(header)) {
		v := header[k]
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == ':' }) {
			return nil, fmt.Errorf("invalid header field name %q", k)
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return nil, fmt.Errorf("invalid value for header field %s: %q", k, v)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes(), nil
}

// exchange writes req on conn and reads the answer.
func exchange(conn net.Conn, req []byte) (Answer, error) {
	if _, err := conn.Write(req); err != nil {
		return Answer{}, fmt.Errorf("send request: %w", err)
	}
	r := bufio.NewReader(conn)
	line, err := readLine(r)
	if err != nil {
		return Answer{}, fmt.Errorf("read status line: %w", err)
	}
	proto, status, _ := strings.Cut(line, " ")
	code, err := strconv.Atoi(strings.SplitN(status, " ", 2)[0])
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || code < 100 || code > 999 {
		return Answer{}, fmt.Errorf("malformed status line %q", line)
	}
	ans := Answer{StatusCode: code, Status: status}
	length, chunked := int64(-1), false
	for {
		line, err := readLine(r)
		if err != nil {
			return Answer{}, fmt.Errorf("read header: %w", err)
		}
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return Answer{}, fmt.Errorf("malformed header line %q", line)
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.EqualFold(k, "Content-Length"):
			if length, err = strconv.ParseInt(v, 10, 64); err != nil || length < 0 {
				return Answer{}, fmt.Errorf("malformed Content-Length %q", v)
			}
		case strings.EqualFold(k, "Transfer-Encoding"):
			if !strings.EqualFold(v, "chunked") {
				return Answer{}, fmt.Errorf("unsupported Transfer-Encoding %q", v)
			}
			chunked = true
		}
	}
	switch {
	case chunked:
		ans.Body, err = readChunked(r)
	case length > MaxAnswer:
		err = fmt.Errorf("answer of %d bytes is larger than %d", length, MaxAnswer)
	case length >= 0:
		ans.Body = make([]byte, length)
		_, err = io.ReadFull(r, ans.Body)
	default: // the body ends with the connection
		ans.Body, err = readAtMost(r, MaxAnswer)
	}
	if err != nil {
		return Answer{}, fmt.Errorf("read body: %w", err)
	}
	return ans, nil
}

// readChunked reads a chunked body and its trailer.
func readChunked(r *bufio.Reader) ([]byte, error) {
	var body []byte
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("malformed chunk size %q", line)
		}
		if n == 0 {
			for { // the trailer, up to its empty line
				if line, err := readLine(r); err != nil || line == "" {
					return body, err
				}
			}
		}
		if int64(len(body))+n > MaxAnswer {
			return nil, fmt.Errorf("answer larger than %d bytes", MaxAnswer)
		}
		start := len(body)
		body = slices.Grow(body, int(n))[:start+int(n)]
		if _, err := io.ReadFull(r, body[start:]); err != nil {
			return nil, err
		}
		if line, err := readLine(r); err != nil || line != "" {
			return nil, fmt.Errorf("chunk not followed by CRLF")
		}
	}
}

// readAtMost reads r to its end, failing past max bytes.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(data)) > max {
		return nil, fmt.Errorf("answer larger than %d bytes", max)
	}
	return data, err
}

// readLine reads one line of the status and header section, without its
// CRLF; a line longer than 64 KiB is an error.
func readLine(r *bufio.Reader) (string, error) {
	var line []byte
	for {
		part, more, err := r.ReadLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		line = append(line, part...)
		if len(line) > 64<<10 {
			return "", errors.New("line too long")
		}
		if !more {
			return string(line), nil
		}
	}
}
