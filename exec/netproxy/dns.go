package netproxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The DNS stub answers A and AAAA queries for the names the scope allows,
// from the host's resolver and keeping only the addresses AllowAddr allows,
// and answers every other name NXDOMAIN, final, so that resolvers do not
// retry: a denied name is never sent on, so a lookup is no way out. Other
// query types for an allowed name get an empty answer. Nothing is
// forwarded as it came: every answer is built here.

// Bounds of the DNS stub.
const (
	maxDNSMessage  = 4096
	maxDNSInflight = 64
	maxDNSAnswers  = 16
	dnsTTL         = 30
)

// ServeDNS answers DNS queries arriving on pc (UDP) until ctx ends. It
// returns at once; see [Proxy.Wait].
func (p *Proxy) ServeDNS(ctx context.Context, pc net.PacketConn) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		stop := context.AfterFunc(ctx, func() { pc.Close() })
		defer stop()
		defer pc.Close()
		sem := make(chan struct{}, maxDNSInflight)
		buf := make([]byte, maxDNSMessage)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			select {
			case sem <- struct{}{}:
			default:
				continue // too many at once: the client retries
			}
			q := append([]byte(nil), buf[:n]...)
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer func() { <-sem }()
				if resp := p.answerDNS(ctx, q); resp != nil {
					_, _ = pc.WriteTo(resp, from)
				}
			}()
		}
	}()
}

// ServeDNSTCP answers DNS queries over TCP on ln until ctx ends. It
// returns at once; see [Proxy.Wait].
func (p *Proxy) ServeDNSTCP(ctx context.Context, ln net.Listener) {
	p.serveListener(ctx, ln, func(ctx context.Context, c net.Conn) {
		for {
			_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
			var l [2]byte
			if _, err := io.ReadFull(c, l[:]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint16(l[:]))
			q := make([]byte, n)
			if _, err := io.ReadFull(c, q); err != nil {
				return
			}
			resp := p.answerDNS(ctx, q)
			if resp == nil {
				return
			}
			out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
			if _, err := c.Write(append(out, resp...)); err != nil {
				return
			}
		}
	})
}

// answerDNS builds the answer to one DNS query message, or nil for a
// message that is not a query it can answer at all.
func (p *Proxy) answerDNS(ctx context.Context, msg []byte) []byte {
	var parser dnsmessage.Parser
	h, err := parser.Start(msg)
	if err != nil || h.Response {
		return nil
	}
	resp := dnsmessage.Message{Header: dnsmessage.Header{
		ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired, RecursionAvailable: true,
	}}
	qs, err := parser.AllQuestions()
	if err != nil || len(qs) != 1 {
		resp.RCode = dnsmessage.RCodeFormatError
		return pack(resp)
	}
	q := qs[0]
	resp.Questions = qs
	if h.OpCode != 0 {
		resp.RCode = dnsmessage.RCodeNotImplemented
		return pack(resp)
	}
	name := normHost(q.Name.String())
	if q.Class != dnsmessage.ClassINET || !validHost(name) {
		resp.RCode = dnsmessage.RCodeNameError
		return pack(resp)
	}
	ok, port, rule := p.nameAllowed(name)
	if !ok {
		p.recordLookup(name, rule)
		resp.RCode = dnsmessage.RCodeNameError
		return pack(resp)
	}
	network := ""
	switch q.Type {
	case dnsmessage.TypeA:
		network = "ip4"
	case dnsmessage.TypeAAAA:
		network = "ip6"
	default:
		return pack(resp) // no records of other types
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(name); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
		addrs, err = p.opts.Resolver.LookupNetIP(lctx, network, name)
		cancel()
		if err != nil {
			var de *net.DNSError
			if errors.As(err, &de) && de.IsNotFound {
				resp.RCode = dnsmessage.RCodeNameError
			} else {
				resp.RCode = dnsmessage.RCodeServerFailure
			}
			return pack(resp)
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		if len(resp.Answers) == maxDNSAnswers || a.Is4() != (network == "ip4") {
			continue
		}
		if ok, _ := p.opts.Policy.AllowAddr(name, port, a); !ok {
			continue
		}
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if a.Is4() {
			resp.Answers = append(resp.Answers, dnsmessage.Resource{Header: rh, Body: &dnsmessage.AResource{A: a.As4()}})
		} else {
			resp.Answers = append(resp.Answers, dnsmessage.Resource{Header: rh, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
		}
	}
	return pack(resp)
}

func pack(m dnsmessage.Message) []byte {
	b, err := m.Pack()
	if err != nil {
		return nil
	}
	return b
}

// NamePolicy is a Policy that can answer the DNS stub's question itself:
// is host allowed on some port, and on which.
type NamePolicy interface {
	AllowName(host string) (allowed bool, port int, rule string)
}

// nameAllowed reports whether the scope allows host on some port, and a
// port it allows. A Policy that is not a NamePolicy is asked for the web
// ports first, then for every port; the answer is kept for the call.
func (p *Proxy) nameAllowed(host string) (bool, int, string) {
	if np, ok := p.opts.Policy.(NamePolicy); ok {
		return np.AllowName(host)
	}
	p.mu.Lock()
	a, ok := p.names[host]
	p.mu.Unlock()
	if ok {
		return a.port > 0, a.port, a.rule
	}
	a = nameAnswer{}
	for _, port := range []int{443, 80} {
		if ok, rule := p.opts.Policy.AllowHost(host, port); ok {
			a = nameAnswer{port, rule}
			break
		} else {
			a.rule = rule
		}
	}
	for port := 1; a.port == 0 && port <= 65535; port++ {
		if ok, rule := p.opts.Policy.AllowHost(host, port); ok {
			a = nameAnswer{port, rule}
		}
	}
	p.mu.Lock()
	if len(p.names) < maxNames {
		p.names[host] = a
	}
	p.mu.Unlock()
	return a.port > 0, a.port, a.rule
}

// nameAnswer is the DNS stub's decision on one name: a port it is allowed
// on (0: none) and the rule.
type nameAnswer struct {
	port int
	rule string
}

// maxNames bounds the names whose decision a Proxy keeps.
const maxNames = 4096

// recordLookup records a refused name lookup once per name, as a
// connection with port 0.
func (p *Proxy) recordLookup(host, rule string) {
	p.mu.Lock()
	for _, c := range p.conns {
		if c.Host == host && c.Port == 0 {
			p.mu.Unlock()
			return
		}
	}
	p.mu.Unlock()
	p.record(Conn{Host: host, Port: 0, Rule: rule + " (name lookup)"})
}
