package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/server/client"
)

// errNoServe means no serve answers on the sessions root's socket: the
// caller decides in-process.
var errNoServe = errors.New("no serve on this sessions root")

// serveSocket is the private socket a serve holding the sessions root
// listens on.
func (a *app) serveSocket() string { return filepath.Join(a.sessionsDir, client.SocketName) }

// forward sends one request to the serve holding the sessions root over its
// private socket and decodes a 200 answer into out. errNoServe (nothing
// listens there: no socket, or a stale one) lets the caller decide
// in-process; any other error is the serve's answer and final, so that a
// call is never run twice.
func (a *app) forward(ctx context.Context, path string, header map[string]string, body []byte, out any) error {
	sock := a.serveSocket()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		return errNoServe
	}
	ans, err := client.Post(ctx, sock, path, header, body)
	if errors.Is(err, client.ErrNoServe) {
		return errNoServe
	}
	if err != nil {
		return fmt.Errorf("forward to serve: %w", err)
	}
	data := ans.Body
	if ans.StatusCode != 200 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			err := fmt.Errorf("serve: %s", e.Error.Message)
			if ans.StatusCode == 400 || ans.StatusCode == 404 {
				return &exitError{code: exitUsage, err: err}
			}
			return &exitError{code: exitInternal, err: err}
		}
		return &exitError{code: exitInternal, err: fmt.Errorf("serve answered %s", ans.Status)}
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
	h := map[string]string{client.ViaHeader: string(gateway.ViaCLI)}
	return a.forward(ctx, "/v1/sessions/"+url.PathEscape(sel.session)+"/"+route, h, body, out)
}
