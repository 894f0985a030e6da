package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/server/client"
)

// serveUnix serves h on a unix socket in a temporary directory and returns
// the socket's path.
func serveUnix(t *testing.T, h http.Handler) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), client.SocketName)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func TestPost(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: a chunked answer
	sock := serveUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.RequestURI {
		case "/echo":
			w.Header().Set("X-Method", r.Method)
			w.Write([]byte(r.Method + " " + r.Header.Get("Content-Type") + " " + r.Header.Get(client.ViaHeader) + " " +
				r.Header.Get(client.ProjectDirHeader) + " " + string(body)))
		case "/v1/sessions/a%2Fb/check":
			w.Write([]byte(r.RequestURI))
		case "/big":
			w.Write(big)
			w.(http.Flusher).Flush()
			w.Write(big)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, `{"error":{"code":"not_found","message":"no such route"}}`, http.StatusNotFound)
		}
	}))
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		body       string
		status     int
		want       []byte
	}{
		{"headers and body", "/echo", map[string]string{client.ViaHeader: "cli", client.ProjectDirHeader: "/home/u/my proj"}, `{"a":1}`, 200,
			[]byte(`POST application/json cli /home/u/my proj {"a":1}`)},
		{"escaped path", "/v1/sessions/a%2Fb/check", nil, "{}", 200, []byte("/v1/sessions/a%2Fb/check")},
		{"chunked answer", "/big", nil, "", 200, append(append([]byte{}, big...), big...)},
		{"no content", "/empty", nil, "", 204, []byte{}},
		{"error status", "/nowhere", nil, "", 404, []byte(`{"error":{"code":"not_found","message":"no such route"}}` + "\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := client.Post(context.Background(), sock, tc.path, tc.header, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if ans.StatusCode != tc.status || !strings.HasPrefix(ans.Status, http.StatusText(tc.status)) && !strings.HasSuffix(ans.Status, http.StatusText(tc.status)) {
				t.Errorf("status %d %q, want %d", ans.StatusCode, ans.Status, tc.status)
			}
			if !bytes.Equal(ans.Body, tc.want) {
				t.Errorf("body %d bytes %.80q, want %d bytes %.80q", len(ans.Body), ans.Body, len(tc.want), tc.want)
			}
		})
	}
}

func TestPostRefusesBadRequests(t *testing.T) {
	sock := serveUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server: %s %v", r.URL, r.Header)
	}))
	for name, tc := range map[string]struct {
		path   string
		header map[string]string
	}{
		"newline in value": {"/x", map[string]string{client.ProjectDirHeader: "/p\r\nX-Scopegate-Via: http"}},
		"colon in name":    {"/x", map[string]string{"X-A:b": "v"}},
		"space in path":    {"/x y", nil},
		"relative path":    {"x", nil},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := client.Post(context.Background(), sock, tc.path, tc.header, nil); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestPostNoServe(t *testing.T) {
	dir := t.TempDir()
	if _, err := client.Post(context.Background(), filepath.Join(dir, "missing.sock"), "/x", nil, nil); !errors.Is(err, client.ErrNoServe) {
		t.Errorf("missing socket: %v, want ErrNoServe", err)
	}
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(stale); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Post(context.Background(), stale, "/x", nil, nil); !errors.Is(err, client.ErrNoServe) {
		t.Errorf("stale socket: %v, want ErrNoServe", err)
	}
}

func TestPostCancel(t *testing.T) {
	gone := make(chan struct{})
	sock := serveUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		<-r.Context().Done() // the server sees the client go away
		close(gone)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := client.Post(ctx, sock, "/slow", nil, []byte("{}")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the client go")
	}
}

func TestPostMalformedAnswers(t *testing.T) {
	for name, answer := range map[string]string{
		"not HTTP":             "SSH-2.0-OpenSSH\r\n\r\n",
		"short body":           "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"bad chunk size":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
		"unknown encoding":     "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"closed mid-header":    "HTTP/1.1 200 OK\r\nContent-Le",
		"bad content length":   "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"header without colon": "HTTP/1.1 200 OK\r\nbogus\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "s.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				c.Read(make([]byte, 4096))
				io.WriteString(c, answer)
			}()
			if ans, err := client.Post(context.Background(), sock, "/x", nil, nil); err == nil {
				t.Fatalf("no error; answer %+v", ans)
			}
		})
	}
}
