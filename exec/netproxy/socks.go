package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928) constants the proxy uses.
const (
	socksVersion    = 5
	socksNoAuth     = 0
	socksNoMethods  = 0xff
	socksConnect    = 1
	socksIPv4       = 1
	socksDomain     = 3
	socksIPv6       = 4
	socksOK         = 0
	socksFailure    = 1
	socksNotAllowed = 2 // connection not allowed by ruleset
	socksRefused    = 5
	socksBadCommand = 7
	socksBadAddress = 8
)

// socksRequest is a SOCKS5 request: its command and the host and port it
// names (an IP literal or a domain name as sent).
type socksRequest struct {
	Command int
	Host    string
	Port    int
}

// errSOCKS is a SOCKS exchange the proxy does not accept.
var errSOCKS = errors.New("malformed SOCKS5 request")

// readSOCKSGreeting reads the client's greeting and reports whether it
// offers "no authentication", the only method served.
func readSOCKSGreeting(r io.Reader) (bool, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return false, err
	}
	if h[0] != socksVersion || h[1] == 0 {
		return false, fmt.Errorf("%w: version %d with %d methods", errSOCKS, h[0], h[1])
	}
	methods := make([]byte, h[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return false, err
	}
	for _, m := range methods {
		if m == socksNoAuth {
			return true, nil
		}
	}
	return false, nil
}

// readSOCKSRequest reads one SOCKS5 request. A domain name comes back as
// sent; the caller validates it.
func readSOCKSRequest(r io.Reader) (socksRequest, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return socksRequest{}, err
	}
	if h[0] != socksVersion || h[2] != 0 {
		return socksRequest{}, fmt.Errorf("%w: header % x", errSOCKS, h)
	}
	req := socksRequest{Command: int(h[1])}
	switch h[3] {
	case socksIPv4, socksIPv6:
		n := 4
		if h[3] == socksIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return socksRequest{}, err
		}
		a, _ := netip.AddrFromSlice(b)
		req.Host = a.Unmap().String()
	case socksDomain:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return socksRequest{}, err
		}
		b := make([]byte, n[0])
		if _, err := io.ReadFull(r, b); err != nil {
			return socksRequest{}, err
		}
		if n[0] == 0 {
			return socksRequest{}, fmt.Errorf("%w: empty domain name", errSOCKS)
		}
		req.Host = string(b)
	default:
		return socksRequest{}, fmt.Errorf("%w: address type %d", errSOCKS, h[3])
	}
	var pb [2]byte
	if _, err := io.ReadFull(r, pb[:]); err != nil {
		return socksRequest{}, err
	}
	req.Port = int(pb[0])<<8 | int(pb[1])
	return req, nil
}

// socksReply writes a reply with a zero bound address.
func socksReply(w io.Writer, code byte) error {
	_, err := w.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// handleSOCKS serves one client connection of the SOCKS5 proxy.
func (p *Proxy) handleSOCKS(ctx context.Context, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(c, 1024)
	ok, err := readSOCKSGreeting(br)
	if err != nil {
		return
	}
	if !ok {
		_, _ = c.Write([]byte{socksVersion, socksNoMethods})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}
	req, err := readSOCKSRequest(br)
	if err != nil {
		_ = socksReply(c, socksBadAddress)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if req.Command != socksConnect {
		_ = socksReply(c, socksBadCommand)
		return
	}
	host := normHost(req.Host)
	server, err := p.dial(ctx, host, req.Port)
	if err != nil {
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			_ = socksReply(c, socksNotAllowed)
		case errors.Is(err, context.Canceled):
			_ = socksReply(c, socksFailure)
		default:
			_ = socksReply(c, socksRefused)
		}
		return
	}
	if err := socksReply(c, socksOK); err != nil {
		server.Close()
		return
	}
	p.relay(ctx, c, br, server, host, req.Port)
}
