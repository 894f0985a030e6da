package exec

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/exec/netproxy"
	"github.com/scopegate/scopegate/policy"
)

// netScope is a network section for the tests: a mode, and for "list"
// the hosts allowed ("host:port"), every address allowed.
type netScope struct {
	mode  policy.NetworkMode
	hosts []string
}

func (n netScope) Mode() policy.NetworkMode { return n.mode }

func (n netScope) AllowHost(host string, port int) (bool, string) {
	if n.mode == "any" {
		return true, "network any"
	}
	for i, h := range n.hosts {
		if h == net.JoinHostPort(host, strconv.Itoa(port)) {
			return true, fmt.Sprintf("network[%d] %s", i, h)
		}
	}
	return false, "network"
}

func (n netScope) AllowAddr(host string, port int, _ netip.Addr) (bool, string) {
	return n.AllowHost(host, port)
}

// loopScope is a netScope that names loopback ports of the host, as
// policy.Network does.
type loopScope struct {
	netScope
	ports []int
}

func (l loopScope) LoopbackPorts() []int { return l.ports }

// hostNetwork is `network: any`: the host's network, which programs under
// Landlock alone need to run at all.
var hostNetwork = netScope{mode: "any"}

// names is a resolver of this test's names, never the network.
type names map[string]string

func (m names) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	a, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	ip := netip.MustParseAddr(a)
	if network == "ip6" && ip.Is4() {
		return nil, nil
	}
	return []netip.Addr{ip}, nil
}

// hostServer is a web server on the host's loopback.
func hostServer(t *testing.T) (*httptest.Server, int) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host server %s", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	return s, port
}

// needTool finds a program a test runs: missing, it fails the test under
// CI=true and skips it otherwise.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := osexec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true", name)
		}
		t.Skipf("%s not installed", name)
	}
}

func TestShellNetwork(t *testing.T) {
	requireNamespaces(t)
	needTool(t, "curl")
	needTool(t, "python3")
	needTool(t, "getent")
	_, port := hostServer(t)
	ps := strconv.Itoa(port)
	dir := realDir(t)
	list := netScope{mode: "list", hosts: []string{"localhost:" + ps, "allowed.test:" + ps}}
	resolver := names{"localhost": "127.0.0.1", "allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}
	rawConnect := `/usr/bin/python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",` + ps + `),timeout=5); print("connected")'`
	tests := []struct {
		name    string
		scope   NetworkPolicy
		command string
		code    int    // exit code
		out     string // in stdout+stderr
		mode    NetworkMode
		conns   []netproxy.Conn
	}{
		{name: "proxy allowed", scope: list, command: "curl -sS --max-time 10 http://localhost:" + ps + "/a",
			out: "host server /a", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "localhost", Port: port, Allowed: true, Rule: "network[0] localhost:" + ps}}},
		{name: "proxy allowed by name", scope: list, command: "curl -sS --max-time 10 http://allowed.test:" + ps + "/b",
			out: "host server /b", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "allowed.test", Port: port, Allowed: true, Rule: "network[1] allowed.test:" + ps}}},
		{name: "socks allowed", scope: list, command: "env -u http_proxy -u HTTP_PROXY curl -sS --max-time 10 http://localhost:" + ps + "/c",
			out: "host server /c", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "localhost", Port: port, Allowed: true, Rule: "network[0] localhost:" + ps}}},
		{name: "denied port", scope: list, command: "curl -sS --max-time 10 --fail-with-body http://localhost:1/", code: 22,
			out: "scope expand --allow-host localhost:1", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "localhost", Port: 1, Rule: "network"}}},
		{name: "denied host through the tunnel", scope: list, command: "curl -sS --max-time 10 -p http://denied.test:" + ps + "/", code: 56,
			out: "403", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "denied.test", Port: port, Rule: "network"}}},
		{name: "no proxy", scope: list, command: "curl -sS --max-time 10 --noproxy '*' http://localhost:" + ps + "/", code: 7,
			out: "Failed to connect", mode: NetworkProxy},
		{name: "raw socket", scope: list, command: rawConnect, code: 1,
			out: "ConnectionRefusedError", mode: NetworkProxy},
		{name: "loopback port forwarded", scope: loopScope{netScope{mode: "list", hosts: []string{"127.0.0.1:" + ps}}, []int{port}},
			command: rawConnect + " && curl -sS --max-time 10 --noproxy '*' http://127.0.0.1:" + ps + "/f",
			out:     "connected\nhost server /f", mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "127.0.0.1", Port: port, Allowed: true, Rule: "network[0] 127.0.0.1:" + ps},
				{Host: "127.0.0.1", Port: port, Allowed: true, Rule: "network[0] 127.0.0.1:" + ps}}},
		{name: "lookup allowed", scope: list, command: "getent hosts allowed.test",
			out: "127.0.0.1", mode: NetworkProxy},
		{name: "lookup denied", scope: list, command: "getent hosts denied.test", code: 2, mode: NetworkProxy,
			conns: []netproxy.Conn{{Host: "denied.test", Port: 0, Rule: "network (name lookup)"}}},
		{name: "none", scope: netScope{mode: "none"}, command: "curl -sS --max-time 10 http://localhost:" + ps + "/", code: 7,
			out: "Failed to connect", mode: NetworkNone},
		{name: "none by default", scope: nil, command: rawConnect, code: 1,
			out: "ConnectionRefusedError", mode: NetworkNone},
		{name: "any", scope: netScope{mode: "any"}, command: rawConnect,
			out: "connected", mode: NetworkHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(t, Options{ReadRoots: []string{dir}, WriteRoots: []string{dir}, Network: tt.scope, Resolver: resolver,
				PassEnv: []string{"HOME"}})
			res, err := run(t, r, policy.ToolShell, map[string]any{"command": tt.command}, dir)
			if err != nil {
				t.Fatal(err)
			}
			out := res.Stdout + res.Stderr
			if res.ExitCode != tt.code || !strings.Contains(out, tt.out) {
				t.Fatalf("exit %d, want %d; output %q, want %q", res.ExitCode, tt.code, out, tt.out)
			}
			if res.NetworkMode != tt.mode || res.Confinement != ConfinementNamespaces {
				t.Fatalf("network mode %q, confinement %q; want %q", res.NetworkMode, res.Confinement, tt.mode)
			}
			if fmt.Sprint(res.Network) != fmt.Sprint(tt.conns) {
				t.Fatalf("connections %+v, want %+v", res.Network, tt.conns)
			}
		})
	}
}

// Where no network namespace can be made, a scope that restricts the
// network keeps programs from running, unless the confinement is best
// effort: then they run with the host's network, and say so.
func TestShellNetworkWithoutNamespace(t *testing.T) {
	requireLandlock(t)
	dir := realDir(t)
	for _, tt := range []struct {
		name    string
		confine ConfineMode
		code    int
		out     string
		mode    NetworkMode
	}{
		{"required", ConfineRequired, 126, "this host cannot give programs a network namespace", NetworkNone},
		{"best effort", ConfineAllowUnconfined, 0, "the host's network unrestricted", NetworkHost},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(t, Options{ReadRoots: []string{dir}, WriteRoots: []string{dir}, Confine: tt.confine, Namespaces: NamespacesOff,
				Network: netScope{mode: "none"}})
			res, err := run(t, r, policy.ToolShell, map[string]any{"command": "/bin/echo ran"}, dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code || !strings.Contains(res.Stderr, tt.out) || res.NetworkMode != tt.mode {
				t.Fatalf("exit %d (want %d), mode %q (want %q), stderr %q", res.ExitCode, tt.code, res.NetworkMode, tt.mode, res.Stderr)
			}
			if strings.Contains(res.Stdout, "ran") != (tt.code == 0) {
				t.Fatalf("stdout %q", res.Stdout)
			}
		})
	}
}
