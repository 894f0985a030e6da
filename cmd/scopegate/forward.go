package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/server"
)

// errNoServe means no serve answers on the sessions root's socket: the
// caller decides in-process.
var errNoServe = errors.New("no serve on this sessions root")

// serveSocket is the private socket a serve holding the sessions root
// listens on.
func (a *app) serveSocket() string { return filepath.Join(a.sessionsDir, server.SocketName) }

// forward sends one request to the serve holding the sessions root over its
// private socket and decodes a 200 answer into out. errNoServe (nothing
// listens there: no socket, or a stale one) lets the caller decide
// in-process; any other error is the serve's answer and final, so that a
// call is never run twice.
func (a *app) forward(ctx context.Context, path string, header http.Header, body []byte, out any) error {
	sock := a.serveSocket()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		return errNoServe
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://scopegate"+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("forward to serve: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return errNoServe
		}
		return fmt.Errorf("forward to serve: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("forward to serve: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			err := fmt.Errorf("serve: %s", e.Error.Message)
			if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound {
				return &exitError{code: exitUsage, err: err}
			}
			return &exitError{code: exitInternal, err: err}
		}
		return &exitError{code: exitInternal, err: fmt.Errorf("serve answered %s", resp.Status)}
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("forward to serve: decode answer: %w", err)
	}
	return nil
}

// forwardCall forwards a check or call on a session branch to serve (route
// "check" or "calls"); errNoServe when there is none, or when the target is
// not a session (a --branch-dir or --scope target is decided in-process).
func (a *app) forwardCall(ctx context.Context, sel *selector, route string, call policy.Call, cwd string, out any) error {
	if sel.session == "" || sel.branchDir != "" {
		return errNoServe
	}
	if call.Cwd == "" {
		call.Cwd = cwd
	}
	body, err := json.Marshal(struct {
		policy.Call
		Branch string `json:"branch,omitempty"`
	}{call, sel.branch})
	if err != nil {
		return fmt.Errorf("forward to serve: %w", err)
	}
	h := http.Header{}
	h.Set(server.ViaHeader, string(gateway.ViaCLI))
	return a.forward(ctx, "/v1/sessions/"+url.PathEscape(sel.session)+"/"+route, h, body, out)
}
