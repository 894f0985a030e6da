package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"
)

// closeWriter is a connection whose sending half closes alone (TCP).
type closeWriter interface{ CloseWrite() error }

// halfClose ends c's sending half, or all of c when it has no halves.
func halfClose(c net.Conn) {
	if cw, ok := c.(closeWriter); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// pipe copies src to dst after the bytes pre, then half-closes dst.
func pipe(dst, src net.Conn, pre []byte) {
	if len(pre) > 0 {
		if _, err := dst.Write(pre); err != nil {
			_ = src.Close()
			return
		}
	}
	_, _ = relayCopy(dst, src)
	halfClose(dst)
}

// The buffer a relay copies through starts at minRelayBuf, so that an idle
// or chatty connection holds little, and becomes maxRelayBuf once a read
// fills it: a bulk transfer then moves up to 1 MiB per read and write. On
// loopback this relays faster than splice(2) through a pipe, which io.Copy
// would use between two TCP connections (docs/performance.md, the proxy).
const (
	minRelayBuf = 32 << 10
	maxRelayBuf = 1 << 20
)

// relayCopy copies src to dst until src ends (io.EOF, not an error) or
// either side fails, and returns the bytes written.
func relayCopy(dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, minRelayBuf)
	var n int64
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			w, werr := dst.Write(buf[:k])
			n += int64(w)
			if werr != nil {
				return n, werr
			}
			if w != k {
				return n, io.ErrShortWrite
			}
			if k == len(buf) && len(buf) < maxRelayBuf {
				buf = make([]byte, maxRelayBuf)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// buffered returns what br holds beyond what was read from it.
func buffered(br *bufio.Reader) []byte {
	if br == nil || br.Buffered() == 0 {
		return nil
	}
	b, _ := br.Peek(br.Buffered())
	return b
}

// relay splices client and server both ways until both directions end. The
// client's first bytes are checked first: a TLS ClientHello must name the
// host that was allowed (checkSNI). br holds what was read from client
// beyond the request.
func (p *Proxy) relay(ctx context.Context, client net.Conn, br *bufio.Reader, server net.Conn, host string, port int) {
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { server.Close() })
	defer stop()
	down := make(chan struct{})
	go func() {
		defer close(down)
		pipe(client, server, nil)
	}()
	first, err := p.checkSNI(client, br, host, port)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			// An alert, access_denied (49): the client is speaking TLS.
			_, _ = client.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 49})
		}
		server.Close()
		client.Close()
		<-down
		return
	}
	pipe(server, client, first)
	<-down
}

// maxHello bounds the TLS handshake bytes read to find the server name.
const maxHello = 64 << 10

// checkSNI reads the client's first bytes. If they open a TLS handshake it
// reads the whole ClientHello and checks its server name against host: a
// name that differs (domain fronting) is refused, and for a host given as
// an address the name must itself be allowed. It returns the bytes read,
// to be sent on. Bytes that are not TLS pass unchecked.
func (p *Proxy) checkSNI(client net.Conn, br *bufio.Reader, host string, port int) ([]byte, error) {
	var r io.Reader = client
	if br != nil {
		r = io.MultiReader(bytes.NewReader(bytes.Clone(buffered(br))), client)
		// Only the buffered bytes: the rest is read from client directly.
		if _, err := br.Discard(br.Buffered()); err != nil {
			return nil, err
		}
	}
	var hdr [5]byte
	n, err := io.ReadFull(r, hdr[:1])
	if err != nil {
		return hdr[:n], err
	}
	if hdr[0] != recordHandshake {
		return hdr[:1], nil
	}
	// A TLS client sends its hello at once; a slow one is cut off rather
	// than held.
	_ = client.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer client.SetReadDeadline(time.Time{})
	got := hdr[:1:1]
	var hs []byte // handshake bytes, records' headers removed
	for {
		var h [5]byte
		h[0] = recordHandshake
		if len(got) > 1 || len(hs) > 0 {
			if _, err := io.ReadFull(r, h[:1]); err != nil {
				return got, err
			}
			got = append(got, h[0])
		}
		if _, err := io.ReadFull(r, h[1:]); err != nil {
			return got, err
		}
		got = append(got, h[1:]...)
		n := int(h[3])<<8 | int(h[4])
		if h[0] != recordHandshake || h[1] != 3 || n == 0 || len(got)+n > maxHello {
			return got, p.refuseSNI(host, port, "", "unreadable TLS ClientHello")
		}
		start := len(got)
		got = append(got, make([]byte, n)...)
		if _, err := io.ReadFull(r, got[start:]); err != nil {
			return got, err
		}
		hs = append(hs, got[start:]...)
		if len(hs) >= 4 {
			need := 4 + (int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3]))
			if need > maxHello {
				return got, p.refuseSNI(host, port, "", "unreadable TLS ClientHello")
			}
			if len(hs) >= need {
				hs = hs[:need]
				break
			}
		}
	}
	sni, err := helloServerName(hs)
	if err != nil {
		return got, p.refuseSNI(host, port, "", "unreadable TLS ClientHello: "+err.Error())
	}
	if sni == "" {
		return got, nil
	}
	sni = normHost(sni)
	if sni == host {
		return got, nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		// Asked for by address: the name it claims must be allowed too.
		if ok, _ := p.opts.Policy.AllowHost(sni, port); ok {
			return got, nil
		}
	}
	return got, p.refuseSNI(host, port, sni, "tls server name "+sni+" is not "+host)
}

func (p *Proxy) refuseSNI(host string, port int, sni, rule string) error {
	name := sni
	if name == "" {
		name = host
	}
	p.record(Conn{Host: name, Port: port, Rule: rule})
	return &RefusedError{Host: host, Port: port, Rule: rule, SNI: sni}
}
