package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// opaPolicy is the check of a read_file call in Rego, as the baseline of
// serve's check throughput: the path made absolute against the call's
// cwd, refused when a deny glob matches it (in lower case), allowed when
// a read or write glob does. It is what a path-policy engine evaluates for
// the same call, without what scopegate adds (resolving the path on the
// filesystem, appending the decision to tools.org).
const opaPolicy = `package scopegate

import rego.v1

path := input.args.path if startswith(input.args.path, "/")

path := concat("/", [input.cwd, input.args.path]) if not startswith(input.args.path, "/")

denied if {
	some g in data.scope.paths.deny
	glob.match(g, ["/"], lower(path))
}

readable if {
	some g in array.concat(data.scope.paths.read, data.scope.paths.write)
	glob.match(g, ["/"], path)
}

decision := {"allowed": false, "tool": input.tool, "reason": "path_denied"} if {
	denied
} else := {"allowed": true, "tool": input.tool, "reason": "allowed"} if {
	input.tool == "read_file"
	readable
} else := {"allowed": false, "tool": input.tool, "reason": "path_not_in_scope"}
`

// startOPA starts `opa run --server` on loopback with opaPolicy and, as its
// data, the scope of one of srv's sessions (scope show --json), so that
// both decide the same call against the same globs.
func startOPA(bin, scopegate string, srv *process) (*process, error) {
	cmd := exec.Command(scopegate, "scope", "show", "--session", srv.ids[0], "--json",
		"--sessions-dir", filepath.Join(srv.dir, "sessions"), "--config-dir", filepath.Join(srv.dir, "config"))
	cmd.Env = append(os.Environ(), "HOME="+srv.dir)
	scope, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("scope show: %w", err)
	}
	dir, err := os.MkdirTemp("", "loadgen-opa-")
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(map[string]json.RawMessage{"scope": scope})
	policy, dataFile := filepath.Join(dir, "scopegate.rego"), filepath.Join(dir, "data.json")
	if err := os.WriteFile(policy, []byte(opaPolicy), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(dataFile, data, 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &process{dir: dir, url: "http://" + addr}
	p.cmd = exec.Command(bin, "run", "--server", "--addr", addr, "--log-level", "error", policy, dataFile)
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start opa: %w", err)
	}
	p.pid = p.cmd.Process.Pid
	client := newClient(1)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := client.Get(p.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, p.checkOPA(client, srv.proj)
			}
		}
	}
	p.stop()
	return nil, errors.New("opa did not start")
}

// checkOPA makes sure the policy allows the benchmark's call and refuses
// a denied one, so that the baseline measures a decision.
func (p *process) checkOPA(client *http.Client, proj string) error {
	for path, want := range map[string]bool{"hello.txt": true, ".env": false, "/etc/passwd": false} {
		body, _ := json.Marshal(map[string]any{"input": map[string]any{"tool": "read_file", "args": map[string]any{"path": path}, "cwd": proj}})
		resp, err := client.Post(p.url+"/v1/data/scopegate/decision", "application/json", bytes.NewReader(body))
		if err != nil {
			p.stop()
			return err
		}
		var out struct {
			Result struct{ Allowed bool }
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || out.Result.Allowed != want {
			p.stop()
			return fmt.Errorf("opa decides %s: allowed %v (%v), want %v", path, out.Result.Allowed, err, want)
		}
	}
	return nil
}

// opaBody is the request of the baseline: the check's call as OPA's input.
func opaBody(call []byte) []byte {
	return []byte(`{"input":` + strings.TrimSpace(string(call)) + `}`)
}
