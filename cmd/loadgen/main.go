// Command loadgen measures `scopegate serve` and its baselines with the
// same client, so that the figures compare: a bare net/http JSON echo
// handler served the same way (its own process, TCP loopback), OPA's
// server deciding the same read_file call against the same globs (-opa
// names its binary), and fork+exec of /bin/true from Go at the same
// concurrency.
//
// Usage:
//
//	loadgen -scopegate ./scopegate -mode all -c 64 -d 5s -rate 1000
//
// Mode cli runs CLI processes in pairs against their baselines instead
// (`scopegate version` vs a hello-world binary given with -hello, `call` vs
// `sh -c`/`cat`), alternating which runs first, and prints medians.
//
// Modes: echo-baseline, opa-baseline, forkexec-baseline, check, call-shell, call-read,
// open-loop (check at -rate requests/s, latency from the scheduled send
// time), open-loop-echo (the echo baseline at -rate requests/s), all. The server modes start their own `scopegate serve` in a
// temporary sessions root with four sessions.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	mode      string
	scopegate string
	clients   int
	duration  time.Duration
	rate      int
	serveEcho string
	hello     string
	rounds    int
	opa       string
	page      bool
}

func run(args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&o.mode, "mode", "all", "echo-baseline, opa-baseline, forkexec-baseline, check, call-shell, call-read, open-loop, open-loop-echo, all, or cli")
	fs.StringVar(&o.scopegate, "scopegate", "scopegate", "scopegate binary for the server modes")
	fs.IntVar(&o.clients, "c", 64, "concurrent clients (closed loop)")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "duration of each mode")
	fs.IntVar(&o.rate, "rate", 1000, "offered load of open-loop, requests/s")
	fs.StringVar(&o.serveEcho, "serve-echo", "", "internal: serve the echo baseline on this address")
	fs.StringVar(&o.hello, "hello", "", "hello-world Go binary, the start-up baseline of -mode cli")
	fs.IntVar(&o.rounds, "rounds", 31, "rounds of each pair of -mode cli")
	fs.StringVar(&o.opa, "opa", "opa", "OPA binary for -mode opa-baseline")
	fs.BoolVar(&o.page, "page", false, "server modes: keep one live page open on serve's feed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.serveEcho != "" {
		return serveEcho(o.serveEcho, stdout)
	}
	if o.mode == "cli" {
		return runPairs(o, stdout)
	}
	modes := []string{o.mode}
	if o.mode == "all" {
		modes = []string{"echo-baseline", "check", "open-loop-echo", "open-loop", "forkexec-baseline", "call-shell", "call-read"}
	}
	fmt.Fprintf(stdout, "| mode | clients | requests | req/s | p50 | p99 | server RSS (peak) | server CPU/req | client CPU/req |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range modes {
		r, err := runMode(m, o)
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		fmt.Fprintln(stdout, r.row())
	}
	return nil
}

// result is one mode's figures.
type result struct {
	mode      string
	clients   string
	n, errs   int
	elapsed   time.Duration
	latencies []time.Duration
	rssKiB    int64
	hwmKiB    int64
	// serverCPU and clientCPU are the processor time the server process
	// and this client used over the run (user + system).
	serverCPU, clientCPU time.Duration
}

func (r result) row() string {
	slices.Sort(r.latencies)
	pct := func(p float64) string {
		if len(r.latencies) == 0 {
			return "-"
		}
		d := r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	rss := "-"
	if r.rssKiB > 0 {
		rss = fmt.Sprintf("%.0f MiB (%.0f MiB)", float64(r.rssKiB)/1024, float64(r.hwmKiB)/1024)
	}
	errs := ""
	if r.errs > 0 {
		errs = fmt.Sprintf(" (%d errors)", r.errs)
	}
	perReq := func(d time.Duration) string {
		if d <= 0 || r.n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(r.n))
	}
	return fmt.Sprintf("| %s | %s | %d%s | %.0f | %s | %s | %s | %s | %s |", r.mode, r.clients, r.n, errs,
		float64(r.n)/r.elapsed.Seconds(), pct(0.50), pct(0.99), rss, perReq(r.serverCPU), perReq(r.clientCPU))
}

func runMode(mode string, o options) (result, error) {
	switch mode {
	case "forkexec-baseline":
		c0 := selfCPU()
		r := closedLoop(o.clients, o.duration, func() error { return exec.Command("/bin/true").Run() })
		r.mode = mode
		r.clientCPU = selfCPU() - c0
		return r, nil
	case "echo-baseline", "open-loop-echo":
		srv, err := startEcho()
		if err != nil {
			return result{}, err
		}
		defer srv.stop()
		body := []byte(`{"tool":"read_file","args":{"path":"hello.txt"},"cwd":"/tmp/proj"}`)
		client := newClient(o.clients)
		s0, c0 := procCPU(srv.pid), selfCPU()
		do := func() error { return postOK(client, srv.url+"/echo", body) }
		var r result
		if mode == "open-loop-echo" {
			r = openLoop(o.rate, o.duration, do)
		} else {
			r = closedLoop(o.clients, o.duration, do)
		}
		r.mode = mode
		r.serverCPU, r.clientCPU = procCPU(srv.pid)-s0, selfCPU()-c0
		r.rssKiB, r.hwmKiB = rss(srv.pid)
		return r, nil
	case "opa-baseline":
		sg, err := startScopegate(o.scopegate)
		if err != nil {
			return result{}, err
		}
		srv, err := startOPA(o.opa, o.scopegate, sg)
		proj := sg.proj
		sg.stop()
		if err != nil {
			return result{}, err
		}
		defer srv.stop()
		call, _ := json.Marshal(map[string]any{"tool": "read_file", "args": map[string]any{"path": "hello.txt"}, "cwd": proj})
		body := opaBody(call)
		client := newClient(o.clients)
		s0, c0 := procCPU(srv.pid), selfCPU()
		r := closedLoop(o.clients, o.duration, func() error { return postOK(client, srv.url+"/v1/data/scopegate/decision", body) })
		r.mode = mode
		r.serverCPU, r.clientCPU = procCPU(srv.pid)-s0, selfCPU()-c0
		r.rssKiB, r.hwmKiB = rss(srv.pid)
		return r, nil
	case "check", "call-shell", "call-read", "open-loop":
		srv, err := startScopegate(o.scopegate)
		if err != nil {
			return result{}, err
		}
		defer srv.stop()
		client := newClient(o.clients)
		route, call := "check", map[string]any{"tool": "read_file", "args": map[string]any{"path": "hello.txt"}}
		switch mode {
		case "call-shell":
			route, call = "calls", map[string]any{"tool": "shell", "args": map[string]any{"command": "true"}}
		case "call-read":
			route = "calls"
		}
		call["cwd"] = srv.proj
		body, _ := json.Marshal(call)
		var next int
		var mu sync.Mutex
		do := func() error {
			mu.Lock()
			id := srv.ids[next%len(srv.ids)]
			next++
			mu.Unlock()
			return postOK(client, srv.url+"/v1/sessions/"+id+"/"+route, body)
		}
		var r result
		if o.page {
			stop, err := openPage(srv.url)
			if err != nil {
				return result{}, err
			}
			defer stop()
			mode += "+page"
		}
		s0, c0 := procCPU(srv.pid), selfCPU()
		if strings.HasPrefix(mode, "open-loop") {
			r = openLoop(o.rate, o.duration, do)
		} else {
			r = closedLoop(o.clients, o.duration, do)
		}
		r.mode = mode
		r.serverCPU, r.clientCPU = procCPU(srv.pid)-s0, selfCPU()-c0
		r.rssKiB, r.hwmKiB = rss(srv.pid)
		return r, nil
	}
	return result{}, fmt.Errorf("unknown mode %q", mode)
}

// openPage reads serve's page feed until stop, which says on stderr how
// much the page read.
func openPage(url string) (stop func(), err error) {
	resp, err := http.Get(url + "/v1/page/events")
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("page: %s", resp.Status)
	}
	read := make(chan int64)
	go func() {
		n, _ := io.Copy(io.Discard, resp.Body)
		read <- n
	}()
	return func() {
		resp.Body.Close()
		fmt.Fprintf(os.Stderr, "loadgen: the page read %d bytes\n", <-read)
	}, nil
}

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns}}
}

func postOK(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// closedLoop runs clients goroutines, each sending its next request when
// the previous one is answered, for d.
func closedLoop(clients int, d time.Duration, do func() error) result {
	var mu sync.Mutex
	r := result{clients: strconv.Itoa(clients)}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var lat []time.Duration
			errs := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := do(); err != nil {
					errs++
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			r.latencies = append(r.latencies, lat...)
			r.errs += errs
			mu.Unlock()
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	r.n = len(r.latencies)
	return r
}

// openLoop sends rate requests/s for d whatever the answers, and measures
// each latency from its scheduled send time (no coordinated omission).
func openLoop(rate int, d time.Duration, do func() error) result {
	var mu sync.Mutex
	r := result{clients: fmt.Sprintf("open %d/s", rate)}
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	total := int(d / interval)
	var wg sync.WaitGroup
	for i := range total {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		wg.Go(func() {
			err := do()
			lat := time.Since(at)
			mu.Lock()
			if err != nil {
				r.errs++
			} else {
				r.latencies = append(r.latencies, lat)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	r.n = len(r.latencies)
	return r
}

// procCPU is the processor time (user + system) a process and its waited-for
// children have used, from /proc/PID/stat; 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields count from after its ")".
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	// utime, stime, cutime, cstime are fields 14 to 17 of stat(5); f[0] is field 3.
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, s := range f[11:15] {
		v, _ := strconv.ParseInt(s, 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on Linux.
const clockTicks = 100

// selfCPU is the processor time this process and its waited-for children
// have used.
func selfCPU() time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// rss reads the current and peak resident set of a process, in KiB.
func rss(pid int) (cur, peak int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = v
		case "VmHWM:":
			peak = v
		}
	}
	return cur, peak
}

// process is a server this program started.
type process struct {
	cmd  *exec.Cmd
	pid  int
	url  string
	dir  string
	proj string
	ids  []string
}

// stop ends the server with SIGTERM (SIGINT stays ignored in a server
// started from a background job of a non-interactive shell).
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// serveEcho is the echo baseline: decode the JSON body and encode it back.
func serveEcho(addr string, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, ln.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	})
	return (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

func startEcho() (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-serve-echo", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("echo server: %w", err)
	}
	return &process{cmd: cmd, pid: cmd.Process.Pid, url: "http://" + strings.TrimSpace(line)}, nil
}

// startScopegate starts `scopegate serve` in a new temporary sessions root
// and creates four sessions whose worktree holds hello.txt and whose scope
// allows `true`.
func startScopegate(bin string) (*process, error) {
	dir, err := os.MkdirTemp("", "loadgen-")
	if err != nil {
		return nil, err
	}
	p := &process{dir: dir, proj: filepath.Join(dir, "proj")}
	if err := os.MkdirAll(p.proj, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(p.proj, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, "serve", "--listen", "127.0.0.1:0",
		"--sessions-dir", filepath.Join(dir, "sessions"), "--config-dir", filepath.Join(dir, "config"))
	p.cmd.Env = append(os.Environ(), "HOME="+dir)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.pid = p.cmd.Process.Pid
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec struct{ Msg, Addr, Network string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" && rec.Network == "tcp" {
				addr <- rec.Addr
			} else if !strings.Contains(sc.Text(), `"level":"INFO"`) {
				fmt.Fprintln(os.Stderr, "serve:", sc.Text())
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			p.stop()
			return nil, errors.New("scopegate serve exited before listening")
		}
		p.url = "http://" + a
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, errors.New("scopegate serve did not start")
	}
	ctx := context.Background()
	client := newClient(1)
	for i := range 4 {
		id := fmt.Sprintf("bench-%d", i)
		body := fmt.Sprintf(`{"id":%q,"worktrees":[%q]}`, id, p.proj)
		req, _ := http.NewRequestWithContext(ctx, "POST", p.url+"/v1/sessions", strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			p.stop()
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			p.stop()
			return nil, fmt.Errorf("create session: status %d", resp.StatusCode)
		}
		resp, err = client.Post(p.url+"/v1/sessions/"+id+"/scope/expand", "application/json", strings.NewReader(`{"allow_command":["true"]}`))
		if err != nil {
			p.stop()
			return nil, err
		}
		resp.Body.Close()
		p.ids = append(p.ids, id)
	}
	return p, nil
}
