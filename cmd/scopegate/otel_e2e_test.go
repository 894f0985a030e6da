package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/telemetry"
)

// defaultOtelcol is where scripts/install-test-deps.sh builds the
// OpenTelemetry Collector of these tests (e2e/otelcol).
const defaultOtelcol = "/usr/local/lib/scopegate-test/otelcol/otelcol"

// otelcolBin is the collector binary ($SCOPEGATE_OTELCOL, else
// defaultOtelcol). Missing, it fails the test under CI=true and skips it
// otherwise.
func otelcolBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv("SCOPEGATE_OTELCOL")
	if p == "" {
		p = defaultOtelcol
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the OpenTelemetry Collector is required when CI=true: %v (run scripts/install-test-deps.sh)", err)
		}
		t.Skipf("no OpenTelemetry Collector: %v (run scripts/install-test-deps.sh)", err)
	}
	return p
}

// collector is a running OpenTelemetry Collector writing what it receives
// to out.
type collector struct {
	cmd              *exec.Cmd
	out              string
	grpcURL, httpURL string
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := otelcolBin(t)
	g, h := freeAddr(t), freeAddr(t)
	c := &collector{out: filepath.Join(t.TempDir(), "logs.jsonl"), grpcURL: "http://" + g, httpURL: "http://" + h}
	c.cmd = exec.Command(bin, "-grpc", g, "-http", h, "-out", c.out)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	ready := make(chan bool)
	go func() {
		sc := bufio.NewScanner(stderr)
		ok := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "otelcol: ready") && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			close(ready)
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the collector exited before it was ready")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the collector did not start within 30 s")
	}
	return c
}

// stop ends the collector (by its pid) and waits for it.
func (c *collector) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_ = c.cmd.Wait()
}

// records waits until the collector has records for every call id of ids
// and returns them by call id, each as its attributes (and event.name,
// service.name of its resource).
func (c *collector) records(t *testing.T, ids ...string) map[string]map[string]string {
	t.Helper()
	var got map[string]map[string]string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = c.read(t)
		missing := false
		for _, id := range ids {
			if got[id] == nil {
				missing = true
			}
		}
		if !missing {
			return got
		}
	}
	t.Fatalf("the collector did not receive records for %v; it has %v", ids, got)
	return nil
}

// otlpKV is an attribute of OTLP JSON.
type otlpKV struct {
	Key   string `json:"key"`
	Value struct {
		String *string `json:"stringValue"`
		Int    *string `json:"intValue"`
	} `json:"value"`
}

func (kv otlpKV) text() string {
	switch {
	case kv.Value.String != nil:
		return *kv.Value.String
	case kv.Value.Int != nil:
		return *kv.Value.Int
	}
	return ""
}

func (c *collector) read(t *testing.T) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(c.out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		var req struct {
			ResourceLogs []struct {
				Resource struct {
					Attributes []otlpKV `json:"attributes"`
				} `json:"resource"`
				ScopeLogs []struct {
					LogRecords []struct {
						EventName  string   `json:"eventName"`
						Attributes []otlpKV `json:"attributes"`
					} `json:"logRecords"`
				} `json:"scopeLogs"`
			} `json:"resourceLogs"`
		}
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			t.Fatalf("collector output %q: %v", line, err)
		}
		for _, rl := range req.ResourceLogs {
			res := map[string]string{}
			for _, kv := range rl.Resource.Attributes {
				res["resource."+kv.Key] = kv.text()
			}
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					m := map[string]string{"event.name": lr.EventName}
					for k, v := range res {
						m[k] = v
					}
					for _, kv := range lr.Attributes {
						m[kv.Key] = kv.text()
					}
					got[m[telemetry.AttrCallID]] = m
				}
			}
		}
	}
	return got
}

// TestOTLPExportE2E: a call, a denial and a scope change arrive at a real
// OpenTelemetry Collector with their attributes, over HTTP/protobuf
// (config.yml) and gRPC (the OTEL_ variables), from the default build and
// from the per-call build without a serve (handed to scopegate-full). With
// the collector stopped, calls still succeed within the flush bound.
func TestOTLPExportE2E(t *testing.T) {
	otelcolBin(t)
	lean := buildLean(t, true)
	for _, proto := range []string{telemetry.ProtocolHTTP, telemetry.ProtocolGRPC} {
		for _, build := range []string{"full", "lean"} {
			t.Run(proto+"/"+build, func(t *testing.T) {
				col := startCollector(t)
				w := newWorkspace(t)
				if build == "lean" {
					w.bin = lean
				}
				var env []string
				if proto == telemetry.ProtocolHTTP {
					if err := os.MkdirAll(w.cfg, 0o700); err != nil {
						t.Fatal(err)
					}
					cfg := "telemetry:\n  endpoint: " + col.httpURL + "\n  protocol: http/protobuf\n  headers: {x-team: a}\n"
					if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte(cfg), 0o600); err != nil {
						t.Fatal(err)
					}
				} else {
					env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.grpcURL, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
						"OTEL_RESOURCE_ATTRIBUTES=host.name=runner-7,deployment.environment=ci"}
				}
				run := func(want int, args ...string) []byte {
					t.Helper()
					cmd := w.cmd(args...)
					cmd.Env = append(cmd.Env, env...)
					var stderr strings.Builder
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if code := cmd.ProcessState.ExitCode(); code != want {
						t.Fatalf("scopegate %v: exit %d, want %d (%v)\n%s\n%s", args, code, want, err, out, stderr.String())
					}
					return out
				}
				if err := os.WriteFile(filepath.Join(w.proj, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				callID := func(out []byte) string {
					var r struct {
						CallID string `json:"call_id"`
					}
					if err := json.Unmarshal(out, &r); err != nil || r.CallID == "" {
						t.Fatalf("call output %q: %v", out, err)
					}
					return r.CallID
				}
				allowed := callID(run(0, "call", "--session", w.id, `{"tool":"read_file","args":{"path":"a.txt"},"cwd":"`+w.proj+`"}`))
				denied := callID(run(3, "call", "--session", w.id, `{"tool":"read_file","args":{"path":"/etc/shadow"},"cwd":"`+w.proj+`"}`))
				run(0, "scope", "expand", "--session", w.id, "--allow-command", "ls")
				es := w.entries()
				if len(es) != 3 {
					t.Fatalf("tools.org has %d entries, want 3", len(es))
				}
				expanded := es[2].CallID
				recs := col.records(t, allowed, denied, expanded)
				check := func(id string, want map[string]string) {
					t.Helper()
					for k, v := range want {
						if got := recs[id][k]; got != v {
							t.Errorf("record of %s: %s = %q, want %q (record %v)", id, k, got, v, recs[id])
						}
					}
				}
				common := map[string]string{"resource.service.name": "scopegate", "session.id": w.id, telemetry.AttrBranch: "main"}
				if proto == telemetry.ProtocolGRPC {
					common["resource.host.name"] = "runner-7"
				}
				check(allowed, common)
				check(allowed, map[string]string{"gen_ai.tool.name": "read_file", telemetry.AttrDecision: "allowed",
					telemetry.AttrExitCode: "0", telemetry.AttrArgs: `{"path":"a.txt"}`, "event.name": "scopegate.decision"})
				if recs[allowed][telemetry.AttrDurationMS] == "" {
					t.Errorf("call record lacks %s: %v", telemetry.AttrDurationMS, recs[allowed])
				}
				check(denied, common)
				check(denied, map[string]string{"gen_ai.tool.name": "read_file", telemetry.AttrDecision: "denied",
					telemetry.AttrReason: es[1].Reason, telemetry.AttrRule: es[1].Rule, telemetry.AttrResource: es[1].Resource})
				check(expanded, common)
				check(expanded, map[string]string{"event.name": "scopegate.scope_change", telemetry.AttrDecision: "expanded",
					"gen_ai.tool.name": es[2].Tool})

				// The collector is gone: calls succeed, within the bound.
				col.stop()
				start := time.Now()
				callID(run(0, "call", "--session", w.id, `{"tool":"read_file","args":{"path":"a.txt"},"cwd":"`+w.proj+`"}`))
				// An upper bound, not a speed figure: the SDK's own retries
				// would hold the call for a minute.
				if d, bound := time.Since(start), telemetry.DefaultFlushBound+3*time.Second; d > bound {
					t.Errorf("a call with the collector stopped took %v, more than %v", d, bound)
				}
			})
		}
	}
}
