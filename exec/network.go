package exec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/scopegate/scopegate/exec/netproxy"
	"github.com/scopegate/scopegate/policy"
)

// NetworkPolicy is the scope's network section as the runner needs it;
// policy.Network implements it.
type NetworkPolicy interface {
	netproxy.Policy
	// Mode is what the section lets programs reach.
	Mode() policy.NetworkMode
}

// NetworkMode is the network a shell call's programs really got, as its
// result names it (network_mode, docs/reference.md, The call and the decision), and the network of a
// private view ([view.Network]).
type NetworkMode string

// The network modes of a call.
const (
	NetworkNone  NetworkMode = "none"  // a namespace with no way out
	NetworkProxy NetworkMode = "proxy" // only the listed hosts, through scopegate's proxies
	NetworkHost  NetworkMode = "host"  // the host's network (network: any)
)

// String is the mode's word.
func (m NetworkMode) String() string { return string(m) }

// loopbackPorter is a NetworkPolicy that names loopback ports of the host
// (policy.Network.LoopbackPorts).
type loopbackPorter interface {
	LoopbackPorts() []int
}

// forwardPorts are the loopback ports of the host the scope names, which
// programs reach at the same port of their own loopback: all but the
// proxies' own.
func (r *Runner) forwardPorts() []int {
	lp, ok := r.opts.Network.(loopbackPorter)
	if !ok {
		return nil
	}
	var out []int
	for _, p := range lp.LoopbackPorts() {
		if p != nsHTTPPort && p != nsSOCKSPort && p != nsDNSPort && len(out) < maxForwards {
			out = append(out, p)
		}
	}
	return out
}

// ErrNoNetworkNamespace: the scope restricts the network and programs
// cannot get a network namespace of their own here (no user namespaces,
// or Landlock alone), so they do not run.
var ErrNoNetworkNamespace = errors.New("the scope restricts the network, and this host cannot give programs a network namespace of their own (run with --confine best-effort to let them use the host's network)")

// wantNetwork is the network mode the scope asks for: the one mapping
// from a scope's network section to what its programs get (any: the
// host's, a list: the proxies, none: nothing). No network section at all
// is none.
func (r *Runner) wantNetwork() NetworkMode {
	if r.opts.Network == nil {
		return NetworkNone
	}
	switch r.opts.Network.Mode() {
	case policy.NetworkAny:
		return NetworkHost
	case policy.NetworkList:
		return NetworkProxy
	}
	return NetworkNone
}

// callNet is the network of one shell call's programs: the mode applied,
// and for a network list the proxy that serves every program's
// listeners, until the call ends.
type callNet struct {
	mode NetworkMode
	// err, when set, keeps every program from running (exit 126).
	err error
	// warn is said once on the call's stderr before its first program.
	warn     string
	warnOnce sync.Once
	proxy    *netproxy.Proxy
	// forward are the loopback ports forwarded (view.Forward).
	forward []int
	ctx     context.Context
}

// planNetwork decides the network of the call's programs from the scope's
// mode and the confinement they get. Called by prepare.
func (sh *shell) planNetwork() {
	r := sh.r
	n := &sh.net
	n.mode = r.wantNetwork()
	if n.mode == NetworkHost {
		return
	}
	if sh.rules.View == nil {
		// No namespaces: the host's network, or nothing.
		if r.opts.Confine == ConfineRequired {
			n.err = ErrNoNetworkNamespace
			return
		}
		n.warn = fmt.Sprintf("scopegate: network: this host cannot give programs a network namespace; with --confine best-effort they use the host's network unrestricted (the scope says %s)", n.mode)
		n.mode = NetworkHost
		return
	}
	sh.rules.View.Network = NetworkNone
	if n.mode != NetworkProxy {
		return
	}
	sh.rules.View.Network = NetworkProxy
	sh.rules.View.Forward = r.forwardPorts()
	p, err := netproxy.New(netproxy.Options{Policy: r.opts.Network, Resolver: r.opts.Resolver})
	if err != nil {
		n.err = fmt.Errorf("start the network proxy: %w", err)
		return
	}
	n.proxy, n.ctx, n.forward = p, sh.netCtx, sh.rules.View.Forward
}

// network returns, once the call's context for the network has ended,
// the connections its programs attempted and the network mode applied
// (for a call that started no program, the mode the scope asks for).
func (sh *shell) network() ([]netproxy.Conn, NetworkMode) {
	n := &sh.net
	if n.mode == "" {
		return nil, sh.r.wantNetwork()
	}
	if n.proxy == nil {
		return nil, n.mode
	}
	n.proxy.Wait()
	return n.proxy.Conns(), n.mode
}

// serve serves the listeners a helper passed back (helper_protocol.go:
// the HTTP proxy, SOCKS5, DNS over UDP and over TCP, then the forwarded
// ports) until the call ends. The files are closed.
func (n *callNet) serve(files []*os.File) error {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if n.proxy == nil {
		return nil
	}
	forward := n.forward
	if len(files) != nsListenerCount+len(forward) {
		return fmt.Errorf("serve the network: %d listeners passed, want %d", len(files), nsListenerCount+len(forward))
	}
	var lns [3]net.Listener
	for i, f := range []*os.File{files[httpListener], files[socksListener], files[dnsTCPListener]} {
		ln, err := net.FileListener(f)
		if err != nil {
			for _, l := range lns[:i] {
				l.Close()
			}
			return fmt.Errorf("serve the network: %w", err)
		}
		lns[i] = ln
	}
	pc, err := net.FilePacketConn(files[dnsUDPListener])
	if err != nil {
		for _, l := range lns {
			l.Close()
		}
		return fmt.Errorf("serve the network: %w", err)
	}
	n.proxy.ServeHTTP(n.ctx, lns[0])
	n.proxy.ServeSOCKS(n.ctx, lns[1])
	n.proxy.ServeDNS(n.ctx, pc)
	n.proxy.ServeDNSTCP(n.ctx, lns[2])
	for i, port := range forward {
		ln, err := net.FileListener(files[nsListenerCount+i])
		if err != nil {
			return fmt.Errorf("serve the network: %w", err)
		}
		n.proxy.ServeForward(n.ctx, ln, "127.0.0.1", port)
	}
	return nil
}

// proxyEnv is the environment of programs whose way out is the proxies:
// every spelling programs read, and no exception.
func proxyEnv() []string {
	httpURL := "http://127.0.0.1:" + strconv.Itoa(nsHTTPPort)
	socksURL := "socks5h://127.0.0.1:" + strconv.Itoa(nsSOCKSPort)
	return []string{
		"HTTP_PROXY=" + httpURL, "http_proxy=" + httpURL,
		"HTTPS_PROXY=" + httpURL, "https_proxy=" + httpURL,
		"ALL_PROXY=" + socksURL, "all_proxy=" + socksURL,
		"NO_PROXY=", "no_proxy=",
	}
}

// isProxyVar reports whether name is one of the variables proxyEnv sets,
// which a program of a restricted call never gets from elsewhere.
func isProxyVar(name string) bool {
	switch name {
	case "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy":
		return true
	}
	return false
}
