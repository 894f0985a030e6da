package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Policy decides where a call's programs may connect: the scope's network
// section (policy.Network implements it). netproxy asks it twice for every
// connection: for the host and port the program named, and for every
// address that host resolved to, before dialing one.
type Policy interface {
	// AllowHost decides a host (a name or an IP literal) and port as the
	// program named them. The string names the rule that decided.
	AllowHost(host string, port int) (bool, string)
	// AllowAddr decides one address host resolved to, so that a DNS
	// answer cannot turn an allowed name into a private address.
	AllowAddr(host string, port int, ip netip.Addr) (bool, string)
}

// Resolver looks names up on the host side. [net.Resolver] implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Defaults of [Options].
const (
	DefaultDialTimeout = 10 * time.Second
	// DefaultMaxConns bounds the connections one Proxy records; the rest
	// are counted in [Proxy.Dropped].
	DefaultMaxConns = 1024
	// handshakeTimeout bounds how long a client may take to send a
	// request (an HTTP header, a SOCKS request, a DNS query over TCP).
	handshakeTimeout = 30 * time.Second
)

// Options configure a [Proxy]. Policy is required; the zero value of the
// rest works.
type Options struct {
	// Policy decides every connection.
	Policy Policy
	// Resolver looks names up; default net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds one dial; default DefaultDialTimeout.
	DialTimeout time.Duration
	// MaxConns bounds the connections recorded; default DefaultMaxConns.
	MaxConns int
}

// Proxy serves one call's listeners: the HTTP and SOCKS5 proxies and the
// DNS stub of each of its programs' network namespaces. It records every
// connection attempted through it. It is safe for concurrent use.
type Proxy struct {
	opts Options

	mu      sync.Mutex
	conns   []Conn
	dropped int
	// names are the DNS stub's decisions, by name.
	names map[string]nameAnswer
	wg    sync.WaitGroup
}

// New returns a Proxy.
func New(opts Options) (*Proxy, error) {
	if opts.Policy == nil {
		return nil, errors.New("new proxy: Options.Policy is nil")
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	return &Proxy{opts: opts, names: map[string]nameAnswer{}}, nil
}

// Conns returns the connections attempted so far, in order.
func (p *Proxy) Conns() []Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Conn(nil), p.conns...)
}

// Dropped is the number of connections beyond MaxConns, not recorded.
func (p *Proxy) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Wait waits until every listener and connection served has ended; they
// end when the context given to the Serve methods does.
func (p *Proxy) Wait() { p.wg.Wait() }

func (p *Proxy) record(c Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conns) >= p.opts.MaxConns {
		p.dropped++
		return
	}
	p.conns = append(p.conns, c)
}

// track arranges for c to be closed when ctx ends, so that nothing
// outlives the call; the returned function closes it sooner.
func (p *Proxy) track(ctx context.Context, c net.Conn) func() {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	return func() {
		stop()
		c.Close()
	}
}

// serveListener accepts on ln until ctx ends, handling each connection in
// its own goroutine.
func (p *Proxy) serveListener(ctx context.Context, ln net.Listener, handle func(context.Context, net.Conn)) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		stop := context.AfterFunc(ctx, func() { ln.Close() })
		defer stop()
		defer ln.Close()
		for {
			c, err := ln.Accept()
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
					return
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				// EMFILE and the like: back off rather than spin.
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				done := p.track(ctx, c)
				defer done()
				handle(ctx, c)
			}()
		}
	}()
}

// ServeHTTP serves ln as an HTTP proxy (CONNECT and absolute-URI requests)
// until ctx ends. It returns at once; see [Proxy.Wait].
func (p *Proxy) ServeHTTP(ctx context.Context, ln net.Listener) {
	p.serveListener(ctx, ln, p.handleHTTP)
}

// ServeSOCKS serves ln as a SOCKS5 proxy (CONNECT, no authentication)
// until ctx ends. It returns at once; see [Proxy.Wait].
func (p *Proxy) ServeSOCKS(ctx context.Context, ln net.Listener) {
	p.serveListener(ctx, ln, p.handleSOCKS)
}

// ServeForward serves ln by connecting each client to host:port, checked
// like any other connection, until ctx ends: the way to a loopback
// service of the host for programs that do not send loopback
// destinations to a proxy. It returns at once; see [Proxy.Wait].
func (p *Proxy) ServeForward(ctx context.Context, ln net.Listener, host string, port int) {
	p.serveListener(ctx, ln, func(ctx context.Context, c net.Conn) {
		server, err := p.dial(ctx, host, port)
		if err != nil {
			return // the program sees its connection closed
		}
		p.relay(ctx, c, nil, server, normHost(host), port)
	})
}

// RefusedError is a connection the scope refused.
type RefusedError struct {
	Host string
	Port int
	// Rule is what refused (the Policy's answer).
	Rule string
	// Addr is the resolved address refused, if the host itself was allowed.
	Addr netip.Addr
	// SNI is the TLS server name that did not match Host.
	SNI string
}

func (e *RefusedError) Error() string {
	hp := net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	switch {
	case e.SNI != "":
		return fmt.Sprintf("scopegate: connection to %s refused: its TLS server name %q is not the host it asked for", hp, e.SNI)
	case e.Addr.IsValid():
		return fmt.Sprintf("scopegate: connection to %s refused: it resolves to %s, which this session's network scope does not name (%s)", hp, e.Addr, e.Rule)
	}
	return fmt.Sprintf("scopegate: connection to %s refused: not in this session's network scope (%s); to allow it: scope expand --allow-host %s", hp, e.Rule, hint(e.Host, e.Port))
}

// hint is the --allow-host value that would allow host:port: the host
// alone for the web ports a bare entry covers.
func hint(host string, port int) string {
	if port == 80 || port == 443 {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// normHost lower-cases a host name and drops a trailing dot and IPv6
// brackets and zone, so that the policy sees one spelling.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return h
}

// validHost reports whether h is a plausible host: an IP literal or a DNS
// name of letters, digits, hyphens, underscores and dots.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return !strings.Contains(h, "%")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// dial checks host:port with the Policy, resolves the host on this side,
// checks every address and dials the first allowed one that answers. It
// records the attempt. A refusal is a *RefusedError.
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	host = normHost(host)
	if !validHost(host) || port <= 0 || port > 65535 {
		err := &RefusedError{Host: host, Port: port, Rule: "invalid host or port"}
		p.record(Conn{Host: host, Port: port, Rule: err.Rule})
		return nil, err
	}
	ok, rule := p.opts.Policy.AllowHost(host, port)
	if !ok {
		p.record(Conn{Host: host, Port: port, Rule: rule})
		return nil, &RefusedError{Host: host, Port: port, Rule: rule}
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		p.record(Conn{Host: host, Port: port, Rule: "resolve: " + err.Error()})
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var allowed []netip.Addr
	var refused *RefusedError
	for _, a := range addrs {
		if ok, r := p.opts.Policy.AllowAddr(host, port, a); ok {
			allowed = append(allowed, a)
		} else if refused == nil {
			refused = &RefusedError{Host: host, Port: port, Rule: r, Addr: a}
		}
	}
	if len(allowed) == 0 {
		if refused == nil {
			refused = &RefusedError{Host: host, Port: port, Rule: "no address"}
		}
		p.record(Conn{Host: host, Port: port, Rule: refused.Rule})
		return nil, refused
	}
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	var firstErr error
	for _, a := range allowed {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			p.record(Conn{Host: host, Port: port, Allowed: true, Rule: rule})
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	// Allowed by the scope, but nothing answered: the program sees why.
	p.record(Conn{Host: host, Port: port, Allowed: true, Rule: rule})
	return nil, fmt.Errorf("dial %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), firstErr)
}

// resolve returns the addresses of host: itself for an IP literal, else
// what the host's resolver answers (IPv4 first).
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	defer cancel()
	addrs, err := p.opts.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if a.Unmap().Is4() {
			out = append(out, a.Unmap())
		}
	}
	for _, a := range addrs {
		if !a.Unmap().Is4() {
			out = append(out, a)
		}
	}
	return out, nil
}
