package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveLoopback listens on loopback until the benchmark ends and hands
// each connection to handle, which closes it; it returns the address.
func serveLoopback(b *testing.B, handle func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// echoServer answers every byte it gets with the same byte.
func echoServer(b *testing.B) string {
	return serveLoopback(b, func(c net.Conn) { defer c.Close(); _, _ = io.Copy(c, c) })
}

// sinkServer sends size bytes to every connection and closes it.
func sinkServer(b *testing.B, size int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	buf := make([]byte, 256<<10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for left := size; left > 0; {
					n := min(left, int64(len(buf)))
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
					left -= n
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// connectVia opens a connection to target: directly, or through the HTTP
// proxy's CONNECT or SOCKS5.
func connectVia(via, proxy, target string) (net.Conn, error) {
	if via == "direct" {
		return net.Dial("tcp", target)
	}
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		return nil, err
	}
	host, ps, _ := net.SplitHostPort(target)
	port, _ := strconv.Atoi(ps)
	switch via {
	case "http":
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", target)
		// Byte by byte: what follows the answer is the server's.
		var got []byte
		one := make([]byte, 1)
		for !bytes.HasSuffix(got, []byte("\r\n\r\n")) {
			if _, err := c.Read(one); err != nil {
				c.Close()
				return nil, err
			}
			got = append(got, one[0])
		}
	case "socks":
		ip := net.ParseIP(host).To4()
		req := []byte{5, 1, 0, 5, 1, 0, 1, ip[0], ip[1], ip[2], ip[3], byte(port >> 8), byte(port)}
		if _, err := c.Write(req); err != nil {
			return nil, err
		}
		var resp [12]byte
		if _, err := io.ReadFull(c, resp[:]); err != nil || resp[3] != 0 {
			c.Close()
			return nil, fmt.Errorf("socks: % x %v", resp, err)
		}
	}
	return c, nil
}

// BenchmarkConnect measures connection set-up: connect, one byte there
// and back, close; directly and through each proxy. p50-ns is the median.
func BenchmarkConnect(b *testing.B) {
	target := echoServer(b)
	pol := testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(portOf(b, target)): true}}
	_, addrs := startProxy(b, pol, fakeResolver{})
	for _, via := range []string{"direct", "http", "socks"} {
		proxy := addrs.http
		if via == "socks" {
			proxy = addrs.socks
		}
		b.Run(via, func(b *testing.B) {
			b.ReportAllocs()
			var took []time.Duration
			one := []byte{'x'}
			for b.Loop() {
				start := time.Now()
				c, err := connectVia(via, proxy, target)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Write(one); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, one); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				c.Close()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
		})
	}
}

// BenchmarkDownload measures a 100 MB download from a loopback server,
// directly and through the HTTP proxy's tunnel.
func BenchmarkDownload(b *testing.B) {
	const size = 100 << 20
	target := sinkServer(b, size)
	pol := testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(portOf(b, target)): true}}
	_, addrs := startProxy(b, pol, fakeResolver{})
	buf := make([]byte, 256<<10)
	for _, via := range []string{"direct", "http"} {
		b.Run(via, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			for b.Loop() {
				c, err := connectVia(via, addrs.http, target)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.CopyBuffer(io.Discard, c, buf)
				c.Close()
				if err != nil || n != size {
					b.Fatalf("read %d bytes: %v", n, err)
				}
			}
		})
	}
}

// sinkEnv makes the test binary a sink server (see TestMain): the HTTP
// server of BenchmarkDownloadCurl, in a process of its own as a remote
// server would be.
const sinkEnv = "NETPROXY_BENCH_SINK"

// serveSink answers every HTTP request with size bytes, written 256 KiB
// at a time; it prints its address first.
func serveSink(size int64) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr())
	buf := make([]byte, 256<<10)
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", size)
			for left := size; left > 0; {
				n := min(left, int64(len(buf)))
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
				left -= n
			}
		}()
	}
}

// BenchmarkDownloadCurl measures a 100 MB download by curl from a server
// in another process, directly and through the HTTP proxy: as a plain
// request (the proxy forwards it and relays the answer) and through a
// CONNECT tunnel (-p). The proxy runs in this process, as in a shell call.
// "forward" relays through a bare port forward, the hop without the proxy.
func BenchmarkDownloadCurl(b *testing.B) {
	const size = 100 << 20
	curl := tool(b, "curl")
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	sink := exec.Command(self)
	sink.Env = append(os.Environ(), sinkEnv+"="+strconv.Itoa(size))
	out, err := sink.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := sink.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sink.Process.Kill(); sink.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	target := strings.TrimSpace(line)
	pol := testPolicy{hosts: map[string]bool{"127.0.0.1:" + strconv.Itoa(portOf(b, target)): true}}
	_, addrs := startProxy(b, pol, fakeResolver{})
	fwd := forwarder(b, target)
	for _, c := range []struct {
		name string
		args []string
		url  string
	}{
		{"direct", nil, target},
		{"http", []string{"--proxy", "http://" + addrs.http}, target},
		{"connect", []string{"--proxy", "http://" + addrs.http, "--proxytunnel"}, target},
		{"forward", nil, fwd},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			args := append([]string{"--silent", "--show-error", "--noproxy", "", "--output", "/dev/null", "--write-out", "%{size_download}"}, c.args...)
			args = append(args, "http://"+c.url+"/")
			for b.Loop() {
				got, err := exec.Command(curl, args...).Output()
				if err != nil || string(got) != strconv.Itoa(size) {
					b.Fatalf("curl: %q %v", got, err)
				}
			}
		})
	}
}

// forwarder listens on loopback and relays each connection to target the
// way the proxy relays a tunnel, with no proxy protocol and no policy: the
// cost of the extra hop alone, next to which the proxy's is measured.
func forwarder(b *testing.B, target string) string {
	return serveLoopback(b, func(c net.Conn) {
		defer c.Close()
		s, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer s.Close()
		go pipe(s, c, nil)
		pipe(c, s, nil)
	})
}
