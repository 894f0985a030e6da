package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// receiver is an OTLP/HTTP logs endpoint that keeps the attributes of
// every record it gets.
type receiver struct {
	mu      sync.Mutex
	records []map[string]string
	service []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/logs" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req collogs.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rl := range req.ResourceLogs {
		for _, kv := range rl.Resource.Attributes {
			if kv.Key == "service.name" {
				rc.service = append(rc.service, kv.Value.GetStringValue())
			}
		}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				m := map[string]string{"event.name": lr.EventName, "body": lr.Body.GetStringValue()}
				for _, kv := range lr.Attributes {
					if _, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); ok {
						m[kv.Key] = strconv.FormatInt(kv.Value.GetIntValue(), 10)
					}
					if s := kv.Value.GetStringValue(); s != "" {
						m[kv.Key] = s
					}
				}
				rc.records = append(rc.records, m)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	_, _ = w.Write(out)
}

func noEnv(string) string { return "" }

func TestExportHTTP(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	var dropped atomic.Int64
	x, err := New(context.Background(), Config{Endpoint: srv.URL}, Options{Getenv: noEnv, MaxArgs: 16,
		Dropped: func(n int) { dropped.Add(int64(n)) }})
	if err != nil {
		t.Fatal(err)
	}
	code, ms := 0, int64(12)
	now := time.Now()
	x.Emit(audit.Event{Kind: audit.EventDecision, Session: "s1", Branch: "main", Via: "cli", Entry: audit.Entry{
		CallID: "01CALL", Time: now, Tool: "shell", Decision: audit.DecisionAllowed, Reason: "allowed",
		Mode: audit.ModeMCP, AgentTool: "Bash", Args: json.RawMessage(`{"command":"echo a very long argument"}`),
		ExitCode: &code, DurationMS: &ms}})
	x.Emit(audit.Event{Kind: audit.EventDecision, Session: "s1", Branch: "main", Entry: audit.Entry{
		CallID: "01DENY", Time: now, Tool: "read_file", Decision: audit.DecisionDenied,
		Reason: "path_denied", Rule: "paths.deny: ~/.ssh/**", Resource: "/home/u/.ssh/id_ed25519"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := x.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.records) != 2 {
		t.Fatalf("got %d records, want 2: %v", len(rc.records), rc.records)
	}
	if len(rc.service) == 0 || rc.service[0] != "scopegate" {
		t.Errorf("service.name = %v, want scopegate", rc.service)
	}
	want := map[string]string{"gen_ai.tool.name": "shell", "session.id": "s1", AttrCallID: "01CALL",
		AttrDecision: "allowed", AttrMode: "mcp", AttrAgentTool: "Bash", AttrExitCode: "0",
		AttrDurationMS: "12", AttrArgs: `{"command":"echo`, "event.name": "scopegate.decision"}
	for k, v := range want {
		if got := rc.records[0][k]; got != v {
			t.Errorf("call record %s = %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(rc.records[0][AttrArgsCut], "39 sha256:") {
		t.Errorf("args_truncated = %q", rc.records[0][AttrArgsCut])
	}
	for k, v := range map[string]string{AttrReason: "path_denied", AttrRule: "paths.deny: ~/.ssh/**",
		AttrResource: "/home/u/.ssh/id_ed25519", AttrDecision: "denied"} {
		if got := rc.records[1][k]; got != v {
			t.Errorf("denial record %s = %q, want %q", k, got, v)
		}
	}
	if dropped.Load() != 0 {
		t.Errorf("dropped = %d, want 0", dropped.Load())
	}
}

// An absent collector fails no Emit, and Shutdown returns within its bound
// with every record counted as dropped; a full queue drops at once.
func TestAbsentCollectorDrops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var dropped atomic.Int64
	x, err := New(context.Background(), Config{Endpoint: "http://" + addr}, Options{Getenv: noEnv, QueueSize: 4,
		Dropped: func(n int) { dropped.Add(int64(n)) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		x.Emit(audit.Event{Kind: audit.EventDecision, Entry: audit.Entry{CallID: "x", Time: time.Now(), Tool: "glob", Decision: "allowed"}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultFlushBound)
	defer cancel()
	_ = x.Shutdown(ctx)
	if got := dropped.Load(); got != 10 {
		t.Errorf("dropped = %d, want 10 (6 over the queue, 4 not exported)", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{Endpoint: "localhost:4318"}, {Protocol: "thrift"}, {Headers: map[string]string{"a b": "c"}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	env := func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	}
	if !(Config{}).Enabled(env) || (Config{}).Enabled(noEnv) {
		t.Error("Enabled does not follow OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if p, err := (Config{}).protocol(env); p != ProtocolGRPC || err != nil {
		t.Errorf("protocol = %q, %v", p, err)
	}
}

// BenchmarkCheck is the per-call cost of export: a gateway Check on a
// branch (decision and tools.org entry) with export off, and on to a live
// OTLP/HTTP receiver.
func BenchmarkCheck(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "sessions", "s", "branches", "main")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "scope.yml"), []byte("paths:\n  read: [\"/tmp/**\"]\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			opts := gateway.Options{}
			if on {
				srv := httptest.NewServer(&receiver{})
				defer srv.Close()
				x, err := New(context.Background(), Config{Endpoint: srv.URL}, Options{Getenv: noEnv})
				if err != nil {
					b.Fatal(err)
				}
				defer x.Shutdown(context.Background())
				opts.Events = x
			}
			g := gateway.New(opts)
			c := policy.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"/tmp/a.txt"}`), Cwd: "/tmp"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Check(ctx, gateway.Target{BranchDir: dir}, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEmit is the cost of one record on the caller's path.
func BenchmarkEmit(b *testing.B) {
	srv := httptest.NewServer(&receiver{})
	defer srv.Close()
	x, err := New(context.Background(), Config{Endpoint: srv.URL}, Options{Getenv: noEnv, QueueSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Shutdown(context.Background())
	code := 0
	ev := audit.Event{Kind: audit.EventDecision, Session: "s", Branch: "main", Via: "cli", Entry: audit.Entry{
		CallID: "01CALL", Time: time.Now(), Tool: "shell", Decision: "allowed", ExitCode: &code,
		Args: json.RawMessage(`{"command":"go test ./..."}`)}}
	b.ReportAllocs()
	for b.Loop() {
		x.Emit(ev)
	}
}
