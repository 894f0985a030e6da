package netproxy

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if size := os.Getenv(sinkEnv); size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			os.Exit(2)
		}
		os.Exit(serveSink(n))
	}
	os.Exit(m.Run())
}

// testPolicy allows the hosts of its list ("host:port") and addresses only
// where addr allows them.
type testPolicy struct {
	hosts map[string]bool
	// addr decides the addresses; nil allows every one.
	addr func(host string, ip netip.Addr) bool
}

func (tp testPolicy) AllowHost(host string, port int) (bool, string) {
	for h := range tp.hosts {
		name, p, _ := strings.Cut(h, ":")
		if name == host && p == strconv.Itoa(port) {
			return true, "network " + h
		}
	}
	return false, "network"
}

func (tp testPolicy) AllowAddr(host string, _ int, ip netip.Addr) (bool, string) {
	if tp.addr != nil && !tp.addr(host, ip) {
		return false, "network (" + ip.String() + ")"
	}
	return true, ""
}

// fakeResolver answers from a table: names of this test, never the
// network.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	as, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range as {
		if network == "ip" || (network == "ip4") == a.Is4() {
			out = append(out, a)
		}
	}
	return out, nil
}

var loopback = netip.MustParseAddr("127.0.0.1")

// startProxy serves a Proxy for pol on loopback listeners: HTTP, SOCKS5
// and DNS (UDP and TCP on one port). The proxy stops with the test.
func startProxy(t testing.TB, pol Policy, res Resolver) (*Proxy, proxyAddrs) {
	t.Helper()
	p, err := New(Options{Policy: pol, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); p.Wait() })
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	var a proxyAddrs
	hl, sl := listen(), listen()
	a.http, a.socks = hl.Addr().String(), sl.Addr().String()
	p.ServeHTTP(ctx, hl)
	p.ServeSOCKS(ctx, sl)
	pc, dl := listenDNS(t)
	a.dns = pc.LocalAddr().String()
	p.ServeDNS(ctx, pc)
	p.ServeDNSTCP(ctx, dl)
	return p, a
}

type proxyAddrs struct{ http, socks, dns string }

// listenDNS listens on one loopback port for UDP and TCP, as a resolver
// does. The UDP port is the kernel's choice; a TCP socket of another
// test may hold the same number, so a port taken for TCP is given back
// and another tried.
func listenDNS(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	var err error
	for range 50 {
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		var dl net.Listener
		if dl, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			return pc, dl
		}
		pc.Close()
	}
	t.Fatalf("listen on one port for UDP and TCP: %v", err)
	return nil, nil
}

// tool finds a program the test needs: missing, it fails the test under
// CI=true and skips it otherwise.
func tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true", name)
		}
		t.Skipf("%s not installed", name)
	}
	return path
}

// portOf returns the port of a host:port.
func portOf(t testing.TB, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}
