package netproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// clientHello returns the first handshake message a crypto/tls client
// sends for serverName (its record header removed).
func clientHello(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		c := tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: serverName == ""})
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_ = c.Handshake()
	}()
	_ = b.SetDeadline(time.Now().Add(5 * time.Second))
	var hdr [5]byte
	if _, err := readFull(b, hdr[:]); err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := readFull(b, msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestServerName(t *testing.T) {
	for _, name := range []string{"example.com", "a.b.c.example", ""} {
		got, err := helloServerName(clientHello(t, name))
		if err != nil || got != name {
			t.Errorf("helloServerName of a hello for %q = %q, %v", name, got, err)
		}
	}
	hello := clientHello(t, "example.com")
	for _, tt := range []struct {
		name string
		msg  []byte
	}{
		{"empty", nil},
		{"server hello", append([]byte{2}, hello[1:]...)},
		{"cut", hello[:len(hello)/2]},
		{"length beyond the end", append([]byte{1, 0xff, 0xff, 0xff}, hello[4:]...)},
	} {
		if got, err := helloServerName(tt.msg); err == nil {
			t.Errorf("%s: helloServerName = %q with no error", tt.name, got)
		}
	}
}

func FuzzServerName(f *testing.F) {
	f.Add(clientHello(f, "example.com"))
	f.Add(clientHello(f, ""))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, msg []byte) {
		name, err := helloServerName(msg)
		if err != nil && name != "" {
			t.Fatalf("a name %q with an error %v", name, err)
		}
		if name != "" && !validHost(normHost(name)) {
			t.Fatalf("helloServerName returned %q, not a host name", name)
		}
	})
}

func encodeSOCKS(r socksRequest) []byte {
	b := []byte{5, byte(r.Command), 0}
	if a, err := netip.ParseAddr(r.Host); err == nil {
		if a.Is4() {
			b = append(b, socksIPv4)
			s := a.As4()
			b = append(b, s[:]...)
		} else {
			b = append(b, socksIPv6)
			s := a.As16()
			b = append(b, s[:]...)
		}
	} else {
		b = append(b, socksDomain, byte(len(r.Host)))
		b = append(b, r.Host...)
	}
	return append(b, byte(r.Port>>8), byte(r.Port))
}

func FuzzReadSOCKSRequest(f *testing.F) {
	f.Add(encodeSOCKS(socksRequest{Command: 1, Host: "example.com", Port: 443}))
	f.Add(encodeSOCKS(socksRequest{Command: 1, Host: "127.0.0.1", Port: 80}))
	f.Add(encodeSOCKS(socksRequest{Command: 3, Host: "::1", Port: 53}))
	f.Add([]byte{5, 1, 0, 3, 0, 0, 80})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := readSOCKSRequest(bytes.NewReader(b))
		if err != nil {
			return
		}
		if req.Port < 0 || req.Port > 65535 || req.Host == "" {
			t.Fatalf("parsed %+v", req)
		}
		again, err := readSOCKSRequest(bytes.NewReader(encodeSOCKS(req)))
		if err != nil || again != req {
			t.Fatalf("round trip of %+v: %+v, %v", req, again, err)
		}
	})
}

func FuzzReadHead(f *testing.F) {
	f.Add([]byte("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"))
	f.Add([]byte("GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Add([]byte("GET / HTTP/1.1\r\n folded\r\n\r\n"))
	f.Add([]byte("POST http://[::1]:8080/p?q HTTP/1.1\r\nContent-Length: 3\r\n\r\n"))
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := readHead(bufio.NewReaderSize(bytes.NewReader(b), 16<<10))
		if err != nil {
			return
		}
		var w strings.Builder
		fmt.Fprintf(&w, "%s %s", h.first[0], h.first[1])
		if h.first[2] != "" {
			w.WriteString(" " + h.first[2])
		}
		w.WriteString("\r\n")
		for _, kv := range h.fields {
			if strings.ContainsAny(kv[0]+kv[1], "\r\n") {
				t.Fatalf("a field holds a line break: %q", kv)
			}
			fmt.Fprintf(&w, "%s: %s\r\n", kv[0], kv[1])
		}
		w.WriteString("\r\n")
		again, err := readHead(bufio.NewReaderSize(strings.NewReader(w.String()), 16<<10))
		if err != nil || again.first != h.first || len(again.fields) != len(h.fields) {
			t.Fatalf("re-read of %q: %+v, %v", w.String(), again, err)
		}
		for _, target := range []string{h.first[1]} {
			if host, port, path, err := parseTarget(target); err == nil {
				if !validHost(host) || port <= 0 || port > 65535 || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n#") {
					t.Fatalf("parseTarget(%q) = %q %d %q", target, host, port, path)
				}
			}
		}
		if req, ref := readRequest(h); ref == nil {
			// What is forwarded is framed one way: chunks or a length, and
			// its head names one host, the one checked.
			_, nte := h.get("Transfer-Encoding")
			_, ncl := h.get("Content-Length")
			if req.chunked && (nte != 1 || ncl != 0) || !req.chunked && (nte != 0 || ncl > 1) || req.length < 0 {
				t.Fatalf("readRequest of %q: %+v", b, req)
			}
			out, err := readHead(bufio.NewReader(strings.NewReader(req.encodeHead())))
			if err != nil {
				t.Fatalf("the forwarded head of %q does not read back: %v", b, err)
			}
			hv, n := out.get("Host")
			if hh, hp, err := parseAuthority(hv, 80); n != 1 || err != nil || hh != req.host || hp != req.port {
				t.Fatalf("the forwarded head of %q names host %q (%d), not %s:%d", b, hv, n, req.host, req.port)
			}
		}
	})
}

func FuzzParseAuthority(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:8080", "127.0.0.1:80", "Example.COM.:1", "host", "[::1]", ":80", "a:b:c"} {
		f.Add(s, 80)
	}
	f.Fuzz(func(t *testing.T, s string, def int) {
		host, port, err := parseAuthority(s, def)
		if err != nil {
			return
		}
		if !validHost(host) || port <= 0 || port > 65535 {
			t.Fatalf("parseAuthority(%q, %d) = %q %d", s, def, host, port)
		}
		h2, p2, err := parseAuthority(authority(host, port, 0), 0)
		if err != nil || h2 != host || p2 != port {
			t.Fatalf("round trip of %q %d: %q %d %v", host, port, h2, p2, err)
		}
	})
}
