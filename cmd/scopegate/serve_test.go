package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// served is a running `scopegate serve` process.
type served struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

// syncBuffer is a goroutine-safe log of the server's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts `scopegate serve --listen 127.0.0.1:0` in w's sessions
// root and waits for its "listening" log line.
func startServe(t testing.TB, w *workspace, args ...string) *served {
	t.Helper()
	return startServeCmd(t, w.cmd(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...))
}

// startServeCmd starts a serve command made by startServe's caller (its
// environment set) and waits for its "listening" log line.
func startServeCmd(t testing.TB, cmd *exec.Cmd) *served {
	t.Helper()
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			var rec struct{ Msg, Addr, Network string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" && rec.Network == "tcp" {
				addr <- rec.Addr
			}
		}
		s.done <- cmd.Wait()
		close(addr)
	}()
	a, ok := <-addr
	if !ok {
		t.Fatalf("serve exited before listening:\n%s", s.stderr)
	}
	s.url = "http://" + a
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// stop sends SIGTERM and requires a clean exit.
func (s *served) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		s.t.Fatalf("serve after SIGTERM: %v\n%s", err, s.stderr)
	}
}

// post sends a JSON body and decodes the answer into v; it returns the status.
func post(t testing.TB, client *http.Client, url, body string, v any) int {
	t.Helper()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("POST %s: %v: %s", url, err, data)
		}
	}
	return resp.StatusCode
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// metricValue sums the samples of a metric whose labels contain every
// given label pair (`decision="allowed"`), from the Prometheus text format.
func metricValue(t testing.TB, text, name string, labels ...string) float64 {
	t.Helper()
	var sum float64
	found := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(line, l) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
		found = true
	}
	if !found {
		t.Fatalf("metric %s%v not found", name, labels)
	}
	return sum
}

func TestServeLockAndListenRules(t *testing.T) {
	w := newWorkspace(t)
	s := startServe(t, w)

	// A second server on the same root fails at once, naming the holder.
	cmd := w.cmd("serve", "--listen", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInternal {
		t.Fatalf("second serve: %v, want exit 1\n%s", err, out)
	}
	if want := fmt.Sprintf("pid %d", s.cmd.Process.Pid); !strings.Contains(string(out), want) {
		t.Errorf("second serve's error %q does not name %s", out, want)
	}
	// The CLI is never blocked by the server.
	w.run(0, "check", "--session", w.id, `{"tool":"read_file","args":{"path":"x"},"cwd":"`+w.proj+`"}`)

	// No token, no public address.
	other := newWorkspace(t)
	out, err = other.cmd("serve", "--listen", "0.0.0.0:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "token") {
		t.Fatalf("serve on 0.0.0.0 without token: %v\n%s", err, out)
	}
	s.stop()

	// After a clean stop the lock is free again, and the Unix socket is 0600.
	sock := filepath.Join(w.root, "sg.sock")
	tokenFile := filepath.Join(w.root, "token")
	if err := os.WriteFile(tokenFile, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := startServe(t, w, "--unix", sock, "--token-file", tokenFile)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("socket mode %v, want a 0600 socket", fi.Mode())
	}
	uc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	for _, tc := range []struct {
		token string
		want  int
	}{{"", 401}, {"wrong", 401}, {"t0ken", 200}} {
		req, _ := http.NewRequest("GET", "http://unix/v1/sessions", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := uc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("over the socket with token %q: %d, want %d", tc.token, resp.StatusCode, tc.want)
		}
	}
	s2.stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after stop: %v", err)
	}
}

// TestServePrometheus: a real Prometheus scrapes a running serve and a
// PromQL query returns exactly the decisions this test made; promtool
// accepts /metrics.
func TestServePrometheus(t *testing.T) {
	for _, bin := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not installed (scripts/install-test-deps.sh): %v", bin, err)
		}
	}
	w := newWorkspace(t)
	s := startServe(t, w)
	client := &http.Client{}
	const allowed, denied = 7, 5
	for i := range allowed {
		route := "check"
		if i%2 == 0 {
			route = "calls"
		}
		post(t, client, s.url+"/v1/sessions/"+w.id+"/"+route, fmt.Sprintf(`{"tool":"read_file","args":{"path":"f%d"},"cwd":%q}`, i, w.proj), nil)
	}
	for i := range denied {
		route := "check"
		if i%2 == 0 {
			route = "calls"
		}
		post(t, client, s.url+"/v1/sessions/"+w.id+"/"+route, `{"tool":"shell","args":{"command":"curl x"},"cwd":"`+w.proj+`"}`, nil)
	}

	_, text := get(t, s.url+"/metrics")
	check := exec.Command("promtool", "check", "metrics")
	check.Stdin = strings.NewReader(text)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	promAddr := freeAddr(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: scopegate\n    static_configs:\n      - targets: [%q]\n", strings.TrimPrefix(s.url, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var promLog syncBuffer
	prom := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prom.Process.Kill(); prom.Wait() })

	query := func(q string) (float64, bool) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Data   struct {
				Result []struct {
					Value [2]any
				}
			}
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
			return 0, false
		}
		v, err := strconv.ParseFloat(fmt.Sprint(r.Data.Result[0].Value[1]), 64)
		return v, err == nil
	}
	deadline := time.Now().Add(90 * time.Second)
	var gotAllowed, gotDenied float64
	var ok1, ok2 bool
	for time.Now().Before(deadline) {
		gotAllowed, ok1 = query(`sum(scopegate_tool_calls_total{decision="allowed"})`)
		gotDenied, ok2 = query(`sum(scopegate_tool_calls_total{decision="denied"})`)
		if ok1 && ok2 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !ok1 || !ok2 {
		t.Fatalf("Prometheus never answered the query\n%s", promLog.String())
	}
	if gotAllowed != allowed || gotDenied != denied {
		t.Errorf("PromQL: allowed %v denied %v, want %d and %d", gotAllowed, gotDenied, allowed, denied)
	}
	if v, ok := query(`sum(scopegate_denials_total{reason="command_not_allowed",tool="shell"})`); !ok || v != denied {
		t.Errorf("PromQL denials by reason: %v (ok %v), want %d", v, ok, denied)
	}
	s.stop()
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
