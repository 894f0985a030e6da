package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowHosts adds entries to the network list of the workspace's scope.
func (w *workspace) allowHosts(entries ...string) {
	w.t.Helper()
	p := filepath.Join(w.branch, "scope.yml")
	b, err := os.ReadFile(p)
	if err != nil {
		w.t.Fatal(err)
	}
	var add strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&add, "  - %s\n", e)
	}
	s := string(b)
	if i := strings.Index(s, "\nnetwork:\n"); i >= 0 {
		i += len("\nnetwork:\n")
		s = s[:i] + add.String() + s[i:]
	} else {
		s += "network:\n" + add.String()
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// serveHostLoopback serves h on a fresh loopback port of the host.
func serveHostLoopback(t *testing.T, h http.Handler) int {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	return port
}

// shellResult runs command through `scopegate call` and returns its result.
func (w *workspace) shellResult(command string) map[string]any {
	w.t.Helper()
	res := w.call(0, "shell", map[string]any{"command": command, "timeout_ms": 120000})
	r, ok := res["result"].(map[string]any)
	if !ok {
		w.t.Fatalf("%s: no result: %v", command, res)
	}
	return r
}

// A confined program reaches the hosts of the scope's network list through
// scopegate, and nothing else.
func TestCallNetwork(t *testing.T) {
	requireProgram(t, "curl")
	other := serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "LEAKED") }))
	os_ := strconv.Itoa(other)
	// A literal URL outside the scope is refused before run time, so the
	// denied host is reached through a redirect of the allowed one: only
	// the run time knows it.
	port := serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+os_+"/", http.StatusFound)
		case "/to-address":
			http.Redirect(w, r, "http://127.0.0.1:"+os_+"/", http.StatusFound)
		default:
			fmt.Fprintf(w, "served %s", r.URL.Path)
		}
	}))
	ps := strconv.Itoa(port)
	w := newWorkspace(t, "curl")
	w.allowHosts("localhost:" + ps)
	for _, tt := range []struct {
		name, command, want string
		code                float64
	}{
		{"allowed", "curl -sS --max-time 20 http://localhost:" + ps + "/ok", "served /ok", 0},
		{"denied port", "curl -sSL --max-time 20 --fail-with-body http://localhost:" + ps + "/to-localhost", "scope expand --allow-host localhost:" + os_, 22},
		{"no proxy", "curl -sSL --max-time 20 --noproxy '*' http://localhost:" + ps + "/to-address", "Failed to connect", 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := *w
			w.t = t
			r := w.shellResult(tt.command)
			out := fmt.Sprint(r["stdout"], r["stderr"])
			if r["exit_code"] != tt.code || !strings.Contains(out, tt.want) || strings.Contains(out, "LEAKED") {
				t.Fatalf("exit %v (want %v), output %q (want %q)", r["exit_code"], tt.code, out, tt.want)
			}
			if r["network_mode"] != "proxy" {
				t.Fatalf("network_mode %v", r["network_mode"])
			}
		})
	}
}

// git clone over HTTP from git http-backend (a CGI program served on the
// host's loopback), the server named in the scope.
func TestCallNetworkGitClone(t *testing.T) {
	requireProgram(t, "git")
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	if _, err := os.Stat(backend); err != nil {
		requireProgram(t, "git-http-backend")
	}
	repos := t.TempDir()
	src := filepath.Join(repos, "src")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first commit over the proxy"},
		{"clone", "-q", "--bare", src, filepath.Join(repos, "repo.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	port := serveHostLoopback(t, &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}})
	w := newWorkspace(t, "git")
	w.allowHosts("localhost:" + strconv.Itoa(port))
	r := w.shellResult("git clone -q http://localhost:" + strconv.Itoa(port) + "/repo.git cloned && git -C cloned log --format=%s")
	if r["exit_code"] != float64(0) || !strings.Contains(fmt.Sprint(r["stdout"]), "first commit over the proxy") {
		t.Fatalf("git clone: %v", r)
	}
	conns, _ := r["network"].([]any)
	if len(conns) == 0 {
		t.Fatalf("no connection recorded: %v", r)
	}
	for _, c := range conns {
		if m := c.(map[string]any); m["allowed"] != true || m["host"] != "localhost" {
			t.Fatalf("connection %v", m)
		}
	}
}

// goModule is the module the local module proxy serves.
const goModule = "example.com/netdep"

// moduleProxy serves goModule v1.0.0 by the GOPROXY protocol.
func moduleProxy(t *testing.T) http.Handler {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{
		"go.mod":  "module " + goModule + "\n\ngo 1.21\n",
		"dep.go":  "package netdep\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
		"LICENSE": "MIT\n",
	} {
		f, _ := zw.Create(goModule + "@v1.0.0/" + name)
		f.Write([]byte(body))
	}
	zw.Close()
	files := map[string][]byte{
		"/" + goModule + "/@v/list":        []byte("v1.0.0\n"),
		"/" + goModule + "/@v/v1.0.0.info": []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`),
		"/" + goModule + "/@v/v1.0.0.mod":  []byte("module " + goModule + "\n\ngo 1.21\n"),
		"/" + goModule + "/@v/v1.0.0.zip":  zb.Bytes(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})
}

// go mod download from a local module proxy named in the scope.
func TestCallNetworkGoModDownload(t *testing.T) {
	requireProgram(t, "go")
	port := serveHostLoopback(t, moduleProxy(t))
	w := newWorkspace(t, "go")
	w.allowHosts("127.0.0.1:" + strconv.Itoa(port))
	if err := os.WriteFile(filepath.Join(w.proj, "go.mod"), []byte("module example.com/proj\n\ngo 1.21\n\nrequire "+goModule+" v1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("GOPROXY=http://127.0.0.1:%d GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOMODCACHE=%s GOCACHE=%s go mod download -json %s@v1.0.0",
		port, filepath.Join(w.proj, "modcache"), filepath.Join(w.proj, "gocache"), goModule)
	r := w.shellResult(cmd)
	if r["exit_code"] != float64(0) || !strings.Contains(fmt.Sprint(r["stdout"]), `"Version": "v1.0.0"`) {
		t.Fatalf("go mod download: %v", r)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "modcache", goModule+"@v1.0.0", "dep.go")); err != nil {
		t.Fatalf("the module is not in the cache: %v", err)
	}
}
