package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// origin is a loopback web server answering "hello <path>" and echoing a
// request body's length.
func origin(t *testing.T, tlsToo bool) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "hello %s %d host=%s", r.URL.Path, n, r.Host)
	})
	var s *httptest.Server
	if tlsToo {
		s = httptest.NewTLSServer(h)
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func client(proxy string, serverName string) *http.Client {
	u, _ := url.Parse(proxy)
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:             http.ProxyURL(u),
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, ServerName: serverName},
		},
	}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestHTTPProxy(t *testing.T) {
	plain, secure := origin(t, false), origin(t, true)
	pp, sp := portOf(t, plain.Listener.Addr().String()), portOf(t, secure.Listener.Addr().String())
	pol := testPolicy{
		hosts: map[string]bool{
			"allowed.test:" + strconv.Itoa(pp): true, "allowed.test:" + strconv.Itoa(sp): true,
			"rebind.test:" + strconv.Itoa(pp): true, "closed.test:1": true, "127.0.0.1:" + strconv.Itoa(pp): true,
		},
		addr: func(host string, ip netip.Addr) bool { return host != "rebind.test" },
	}
	res := fakeResolver{"allowed.test": {loopback}, "rebind.test": {loopback}, "closed.test": {loopback}}
	p, addrs := startProxy(t, pol, res)
	proxyURL := "http://" + addrs.http

	tests := []struct {
		name, url, sni string
		code           int
		body           string // substring of the body
		err            string // substring of the client's error
		conn           Conn
	}{
		{name: "plain allowed", url: fmt.Sprintf("http://allowed.test:%d/a", pp), code: 200, body: "hello /a 0 host=allowed.test:",
			conn: Conn{Host: "allowed.test", Port: pp, Allowed: true, Rule: "network allowed.test:" + strconv.Itoa(pp)}},
		{name: "plain by address", url: fmt.Sprintf("http://127.0.0.1:%d/b", pp), code: 200, body: "hello /b",
			conn: Conn{Host: "127.0.0.1", Port: pp, Allowed: true, Rule: "network 127.0.0.1:" + strconv.Itoa(pp)}},
		{name: "plain denied host", url: fmt.Sprintf("http://denied.test:%d/", pp), code: 403,
			body: "connection to denied.test:" + strconv.Itoa(pp) + " refused: not in this session's network scope (network); to allow it: scope expand --allow-host denied.test:" + strconv.Itoa(pp),
			conn: Conn{Host: "denied.test", Port: pp, Rule: "network"}},
		{name: "plain denied port", url: "http://allowed.test:1/", code: 403, body: "scope expand --allow-host allowed.test:1\n",
			conn: Conn{Host: "allowed.test", Port: 1, Rule: "network"}},
		{name: "plain allowed, nothing listening", url: "http://closed.test:1/", code: 502, body: "connection refused",
			conn: Conn{Host: "closed.test", Port: 1, Allowed: true, Rule: "network closed.test:1"}},
		{name: "private address by DNS", url: fmt.Sprintf("http://rebind.test:%d/", pp), code: 403, body: "it resolves to 127.0.0.1",
			conn: Conn{Host: "rebind.test", Port: pp, Rule: "network (127.0.0.1)"}},
		{name: "connect allowed", url: fmt.Sprintf("https://allowed.test:%d/c", sp), code: 200, body: "hello /c",
			conn: Conn{Host: "allowed.test", Port: sp, Allowed: true, Rule: "network allowed.test:" + strconv.Itoa(sp)}},
		{name: "connect denied", url: fmt.Sprintf("https://denied.test:%d/", sp), err: "Forbidden",
			conn: Conn{Host: "denied.test", Port: sp, Rule: "network"}},
		{name: "connect fronted", url: fmt.Sprintf("https://allowed.test:%d/", sp), sni: "evil.test", err: "access denied",
			conn: Conn{Host: "evil.test", Port: sp, Rule: "tls server name evil.test is not allowed.test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(p.Conns())
			code, body, err := get(t, client(proxyURL, tt.sni), tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q (body %q)", err, tt.err, body)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if code != tt.code || !strings.Contains(body, tt.body) {
					t.Fatalf("got %d %q, want %d with %q", code, body, tt.code, tt.body)
				}
			}
			conns := p.Conns()[before:]
			if len(conns) == 0 || conns[len(conns)-1] != tt.conn {
				t.Fatalf("recorded %+v, want last %+v", conns, tt.conn)
			}
		})
	}
}

func TestHTTPProxyBodies(t *testing.T) {
	plain := origin(t, false)
	port := portOf(t, plain.Listener.Addr().String())
	_, addrs := startProxy(t, testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}, fakeResolver{})
	c := client("http://"+addrs.http, "")
	u := fmt.Sprintf("http://127.0.0.1:%d/post", port)
	for _, tt := range []struct {
		name   string
		length int64
		expect bool
	}{{"length", 100000, false}, {"chunked", -1, false}, {"expect continue", 5000, true}} {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Repeat("x", 70000)
			var r io.Reader = strings.NewReader(body)
			if tt.length > 0 {
				body = strings.Repeat("y", int(tt.length))
				r = strings.NewReader(body)
			} else {
				r = io.MultiReader(strings.NewReader(body)) // hides the length: chunked
			}
			req, _ := http.NewRequest("POST", u, r)
			if tt.expect {
				req.Header.Set("Expect", "100-continue")
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("hello /post %d", len(body)); !strings.Contains(string(b), want) {
				t.Fatalf("got %q, want %q", b, want)
			}
		})
	}
}

// A second request on a plain HTTP proxy connection never reaches the
// first server unchecked: the exchange ends after one request.
func TestHTTPProxyOneRequestPerConnection(t *testing.T) {
	plain := origin(t, false)
	port := portOf(t, plain.Listener.Addr().String())
	_, addrs := startProxy(t, testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}, fakeResolver{})
	c, err := net.Dial("tcp", addrs.http)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	two := fmt.Sprintf("GET http://127.0.0.1:%d/one HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\nGET http://evil.test/two HTTP/1.1\r\nHost: evil.test\r\n\r\n", port, port)
	if _, err := io.WriteString(c, two); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	all, _ := io.ReadAll(c)
	if !strings.Contains(string(all), "hello /one") || strings.Contains(string(all), "/two") {
		t.Fatalf("got %q", all)
	}
	if n := strings.Count(string(all), "HTTP/1.1 "); n != 1 {
		t.Fatalf("%d responses: %q", n, all)
	}
}

// A body that came with its head in one read, followed by a second
// request: the body goes to the server whole, and only it; the second
// request never leaves.
func TestHTTPProxyBodyThenSecondRequest(t *testing.T) {
	plain := origin(t, false)
	port := portOf(t, plain.Listener.Addr().String())
	_, addrs := startProxy(t, testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}, fakeResolver{})
	for _, body := range []string{"hello", strings.Repeat("z", 40000)} {
		c, err := net.Dial("tcp", addrs.http)
		if err != nil {
			t.Fatal(err)
		}
		two := fmt.Sprintf("POST http://127.0.0.1:%d/post HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: %d\r\n\r\n%sGET http://evil.test/two HTTP/1.1\r\nHost: evil.test\r\n\r\n", port, port, len(body), body)
		if _, err := io.WriteString(c, two); err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		all, _ := io.ReadAll(c)
		c.Close()
		if want := fmt.Sprintf("hello /post %d", len(body)); !strings.Contains(string(all), want) || strings.Contains(string(all), "/two") {
			t.Fatalf("got %q, want %q alone", all, want)
		}
	}
}

func TestHTTPProxyHostHeader(t *testing.T) {
	plain := origin(t, false)
	port := portOf(t, plain.Listener.Addr().String())
	p, addrs := startProxy(t, testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}, fakeResolver{})
	c, err := net.Dial("tcp", addrs.http)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || !strings.Contains(string(b), `Host header names "evil.test"`) {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	if got := p.Conns(); len(got) != 1 || got[0].Allowed || got[0].Host != "evil.test" {
		t.Fatalf("recorded %+v", got)
	}
}

func TestSOCKSProxy(t *testing.T) {
	secure := origin(t, true)
	sp := portOf(t, secure.Listener.Addr().String())
	pol := testPolicy{hosts: map[string]bool{"allowed.test:" + strconv.Itoa(sp): true, "127.0.0.1:" + strconv.Itoa(sp): true}}
	p, addrs := startProxy(t, pol, fakeResolver{"allowed.test": {loopback}, "denied.test": {loopback}})
	c := client("socks5://"+addrs.socks, "")
	for _, tt := range []struct {
		name, url, err string
	}{
		{"domain allowed", fmt.Sprintf("https://allowed.test:%d/s", sp), ""},
		{"address allowed", fmt.Sprintf("https://127.0.0.1:%d/s", sp), ""},
		{"domain denied", fmt.Sprintf("https://denied.test:%d/s", sp), "connection not allowed by ruleset"},
		{"port denied", fmt.Sprintf("https://allowed.test:%d/s", sp+1), "connection not allowed by ruleset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := get(t, c, tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || code != 200 || !strings.Contains(body, "hello /s") {
				t.Fatalf("got %d %q %v", code, body, err)
			}
		})
	}
	if n := len(p.Conns()); n != 4 {
		t.Fatalf("recorded %d connections, want 4: %+v", n, p.Conns())
	}
}

func TestSOCKSUnsupported(t *testing.T) {
	_, addrs := startProxy(t, testPolicy{}, fakeResolver{})
	for _, tt := range []struct {
		name string
		send []byte
		want []byte
	}{
		{"auth only", []byte{5, 1, 2}, []byte{5, 0xff}},
		{"bind", []byte{5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80}, []byte{5, 0, 5, 7}},
		{"udp associate", []byte{5, 1, 0, 5, 3, 0, 1, 127, 0, 0, 1, 0, 80}, []byte{5, 0, 5, 7}},
		{"bad address type", []byte{5, 1, 0, 5, 1, 0, 9}, []byte{5, 0, 5, 8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addrs.socks)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(tt.send)
			got := make([]byte, len(tt.want))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != string(tt.want) {
				t.Fatalf("got % x (%v), want % x", got, err, tt.want)
			}
		})
	}
}

func TestDNSStub(t *testing.T) {
	pol := testPolicy{
		hosts: map[string]bool{"allowed.test:443": true, "mixed.test:443": true},
		addr:  func(_ string, ip netip.Addr) bool { return ip != netip.MustParseAddr("10.0.0.1") },
	}
	res := fakeResolver{
		"allowed.test": {loopback, netip.MustParseAddr("::1")},
		"mixed.test":   {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("192.0.2.7")},
		"denied.test":  {loopback},
	}
	p, addrs := startProxy(t, pol, res)
	for _, network := range []string{"udp", "tcp"} {
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addrs.dns)
		}}
		t.Run(network, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := r.LookupNetIP(ctx, "ip", "allowed.test")
			if err != nil || len(got) != 2 {
				t.Fatalf("allowed.test: %v %v", got, err)
			}
			got, err = r.LookupNetIP(ctx, "ip4", "mixed.test")
			if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("192.0.2.7") {
				t.Fatalf("mixed.test: %v %v (the private address must be filtered)", got, err)
			}
			_, err = r.LookupNetIP(ctx, "ip", "denied.test")
			var de *net.DNSError
			if !errors.As(err, &de) || !de.IsNotFound {
				t.Fatalf("denied.test: %v, want not found", err)
			}
			_, err = r.LookupTXT(ctx, "secret-data.denied.test")
			if !errors.As(err, &de) || !de.IsNotFound {
				t.Fatalf("TXT secret-data.denied.test: %v, want not found", err)
			}
		})
	}
	var lookups []Conn
	for _, c := range p.Conns() {
		if c.Port == 0 {
			lookups = append(lookups, c)
		}
	}
	if len(lookups) != 2 || lookups[0].Host != "denied.test" || lookups[0].Allowed {
		t.Fatalf("refused lookups recorded: %+v", lookups)
	}
}

// A denied name lookup by a real program: getent through the stub, named
// in a resolv.conf the test makes is not possible without a namespace, so
// dig (when installed) asks the stub directly.
func TestDNSStubDig(t *testing.T) {
	dig := tool(t, "dig")
	_, addrs := startProxy(t, testPolicy{hosts: map[string]bool{"allowed.test:443": true}}, fakeResolver{"allowed.test": {loopback}, "denied.test": {loopback}})
	host, port, _ := net.SplitHostPort(addrs.dns)
	for _, tt := range []struct{ name, status string }{{"allowed.test", "NOERROR"}, {"denied.test", "NXDOMAIN"}} {
		out, _ := exec.Command(dig, "@"+host, "-p", port, "+tries=1", "+time=5", tt.name).CombinedOutput()
		if !strings.Contains(string(out), "status: "+tt.status) {
			t.Fatalf("dig %s: want %s:\n%s", tt.name, tt.status, out)
		}
	}
}

func TestCurl(t *testing.T) {
	curl := tool(t, "curl")
	plain := origin(t, false)
	port := portOf(t, plain.Listener.Addr().String())
	pol := testPolicy{hosts: map[string]bool{"localhost:" + strconv.Itoa(port): true}}
	_, addrs := startProxy(t, pol, fakeResolver{"localhost": {loopback}})
	for _, tt := range []struct {
		name string
		args []string
		want string
		fail bool
	}{
		{"http proxy allowed", []string{"-x", "http://" + addrs.http, fmt.Sprintf("http://localhost:%d/x", port)}, "hello /x", false},
		{"http proxy tunnel allowed", []string{"-p", "-x", "http://" + addrs.http, fmt.Sprintf("http://localhost:%d/t", port)}, "hello /t", false},
		{"socks allowed", []string{"--socks5-hostname", addrs.socks, fmt.Sprintf("http://localhost:%d/y", port)}, "hello /y", false},
		{"http proxy denied port", []string{"-x", "http://" + addrs.http, fmt.Sprintf("http://localhost:%d/", port+1)}, "scope expand --allow-host localhost:" + strconv.Itoa(port+1), true},
		{"tunnel denied port", []string{"-p", "-x", "http://" + addrs.http, fmt.Sprintf("http://localhost:%d/", port+1)}, "CONNECT tunnel failed, response 403", true},
		{"socks denied", []string{"--socks5-hostname", addrs.socks, fmt.Sprintf("http://localhost:%d/", port+1)}, "SOCKS5", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-sS", "--max-time", "10", "--fail-with-body"}, tt.args...)
			out, err := exec.Command(curl, args...).CombinedOutput()
			if (err != nil) != tt.fail || !strings.Contains(string(out), tt.want) {
				t.Fatalf("curl %v: %v\n%s\nwant %q", args, err, out, tt.want)
			}
		})
	}
}

// Everything ends with the call's context: a tunnel to a server that
// never answers is closed, never left hanging.
func TestContextEndsConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepts, never answers
		}
	}()
	port := portOf(t, ln.Addr().String())
	p, err := New(Options{Policy: testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(port): true}}})
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	p.ServeHTTP(ctx, pl)
	c, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	end, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200") || end != "\r\n" {
		t.Fatalf("CONNECT answered %q %q", line, end)
	}
	done := make(chan error, 1)
	go func() { _, err := br.ReadByte(); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("read a byte from a server that sends none")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tunnel outlived its context")
	}
	p.Wait()
}

// TestReadRequestFraming: a request head that the proxy and a server could
// read two ways is answered by the proxy, never forwarded.
func TestReadRequestFraming(t *testing.T) {
	const get = "POST http://a.test/x HTTP/1.1\r\nHost: a.test\r\n"
	for _, tt := range []struct {
		name, head string
		code       int // 0: forwarded
		chunked    bool
		length     int64
	}{
		{"no body", get, 0, false, 0},
		{"length", get + "Content-Length: 5\r\n", 0, false, 5},
		{"chunked", get + "Transfer-Encoding: chunked\r\n", 0, true, 0},
		{"chunked, any case", get + "Transfer-Encoding: Chunked\r\n", 0, true, 0},
		{"two lengths", get + "Content-Length: 5\r\nContent-Length: 5\r\n", 400, false, 0},
		{"chunked and a length", get + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400, false, 0},
		{"two encodings", get + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400, false, 0},
		{"another encoding", get + "Transfer-Encoding: gzip, chunked\r\n", 400, false, 0},
		{"signed length", get + "Content-Length: +5\r\n", 400, false, 0},
		{"negative length", get + "Content-Length: -1\r\n", 400, false, 0},
		{"two hosts", get + "Host: a.test\r\n", 400, false, 0},
		{"another host", "GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n", 403, false, 0},
		{"another port", "GET http://a.test/ HTTP/1.1\r\nHost: a.test:8080\r\n", 403, false, 0},
		{"not http", "GET https://a.test/ HTTP/1.1\r\n", 400, false, 0},
		{"credentials", "GET http://u:p@a.test/ HTTP/1.1\r\n", 400, false, 0},
	} {
		h, err := readHead(bufio.NewReader(strings.NewReader(tt.head + "\r\n")))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		req, ref := readRequest(h)
		switch {
		case tt.code == 0 && ref != nil:
			t.Errorf("%s: refused %d %s", tt.name, ref.code, ref.msg)
		case tt.code == 0 && (req.chunked != tt.chunked || req.length != tt.length || req.host != "a.test" || req.port != 80):
			t.Errorf("%s: %+v", tt.name, req)
		case tt.code != 0 && (ref == nil || ref.code != tt.code):
			t.Errorf("%s: %+v %+v, want %d", tt.name, req, ref, tt.code)
		case tt.code == 403 && (ref.conn == nil || ref.conn.Allowed || ref.conn.Host != "b.test" && tt.name == "another host"):
			t.Errorf("%s: the refused connection is %+v", tt.name, ref.conn)
		}
	}
}
