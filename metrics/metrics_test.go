package metrics_test

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/metrics"
	"github.com/scopegate/scopegate/policy"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

// TestListsMatchPolicy keeps the copied label sets equal to the contract's
// lists in policy (metrics imports no scopegate package).
func TestListsMatchPolicy(t *testing.T) {
	if !slices.Equal(metrics.Tools(), policy.Tools()) {
		t.Errorf("metrics.Tools() = %v, policy.Tools() = %v", metrics.Tools(), policy.Tools())
	}
	var reasons []string
	for _, r := range policy.Reasons() {
		reasons = append(reasons, string(r))
	}
	if !slices.Equal(metrics.Reasons(), reasons) {
		t.Errorf("metrics.Reasons() = %v, policy.Reasons() = %v", metrics.Reasons(), reasons)
	}
}

func TestObserve(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ObserveDecision("shell", false, "command_not_allowed", "cli")
	m.ObserveDecision("shell", false, "command_not_allowed", "cli")
	m.ObserveDecision("read_file", true, "allowed", "hook")
	m.ObserveDecision("/etc/passwd", false, "made-up reason", "carrier-pigeon")
	m.ObserveCallDuration("shell", 0.5)
	m.ObserveCallDuration("session-1234", 0.5)
	m.ObserveDecisionDuration(0.0002)
	m.ScopeExpansion("paths.write")
	m.ScopeExpansion("~/secret")
	m.ScopeLoadError()
	m.InflightInc()
	m.InflightInc()
	m.InflightDec()
	m.AuditWriteError()
	m.ObserveConnections(2, 1)
	m.ObserveConnections(0, 1)
	text := scrape(t, m)

	tests := []struct{ name, line string }{
		{"denial counted", `scopegate_tool_calls_total{decision="denied",tool="shell",via="cli"} 2`},
		{"denial reason", `scopegate_denials_total{reason="command_not_allowed",tool="shell",via="cli"} 2`},
		{"allowed counted", `scopegate_tool_calls_total{decision="allowed",tool="read_file",via="hook"} 1`},
		{"unknown tool and reason", `scopegate_denials_total{reason="unknown",tool="unknown",via="unknown"} 1`},
		{"pre-initialized zero", `scopegate_denials_total{reason="path_denied",tool="roam_link_nodes",via="mcp"} 0`},
		{"call duration", `scopegate_call_duration_seconds_count{tool="shell"} 1`},
		{"call duration unknown tool", `scopegate_call_duration_seconds_count{tool="unknown"} 1`},
		{"decision duration", `scopegate_decision_duration_seconds_count 1`},
		{"expansion", `scopegate_scope_expansions_total{section="paths.write"} 1`},
		{"unknown section", `scopegate_scope_expansions_total{section="unknown"} 1`},
		{"load errors", `scopegate_scope_load_errors_total 1`},
		{"inflight", `scopegate_inflight_calls 1`},
		{"audit write errors", `scopegate_audit_write_errors_total 1`},
		{"connections allowed", `scopegate_network_connections_total{decision="allowed"} 2`},
		{"connections denied", `scopegate_network_connections_total{decision="denied"} 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(text, "\n"+tt.line+"\n") {
				t.Errorf("scrape lacks %q", tt.line)
			}
		})
	}
	for _, leak := range []string{"/etc/passwd", "session-1234", "secret", "made-up"} {
		if strings.Contains(text, leak) {
			t.Errorf("label value %q leaked into the scrape", leak)
		}
	}
	// No allowed reason among denials.
	if strings.Contains(text, `reason="allowed"`) {
		t.Error(`denials carry reason="allowed"`)
	}
}

func TestExactlyTheContractMetrics(t *testing.T) {
	text := scrape(t, metrics.New(metrics.Options{}))
	want := map[string]string{
		"scopegate_tool_calls_total":          "counter",
		"scopegate_denials_total":             "counter",
		"scopegate_call_duration_seconds":     "histogram",
		"scopegate_decision_duration_seconds": "histogram",
		"scopegate_scope_expansions_total":    "counter",
		"scopegate_scope_load_errors_total":   "counter",
		"scopegate_inflight_calls":            "gauge",
		"scopegate_audit_write_errors_total":  "counter",
		"scopegate_export_dropped_total":      "counter",
		"scopegate_approvals_total":           "counter",
		"scopegate_network_connections_total": "counter",
	}
	got := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			got[f[2]] = f[3]
		}
	}
	if len(got) != len(want) {
		t.Errorf("scrape has %d metrics, want %d: %v", len(got), len(want), got)
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("%s: type %q, want %q", name, got[name], typ)
		}
	}
}

func TestPromtoolCheck(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is required when CI=true")
		}
		t.Skip("promtool not installed")
	}
	m := metrics.New(metrics.Options{})
	m.ObserveDecision("shell", false, "command_denied", "http")
	m.ObserveCallDuration("shell", 1)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape(t, m))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}

func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.New(metrics.Options{}), metrics.New(metrics.Options{})
	a.ScopeLoadError()
	if !strings.Contains(scrape(t, b), "\nscopegate_scope_load_errors_total 0\n") {
		t.Error("a count in one Metrics showed in another")
	}
}

func BenchmarkObserveDecision(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveDecision("shell", false, "command_not_allowed", "cli")
	}
}

func TestExportDropped(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ExportDropped(3)
	m.ExportDropped(2)
	if text := scrape(t, m); !strings.Contains(text, "scopegate_export_dropped_total 5\n") {
		t.Errorf("scrape lacks scopegate_export_dropped_total 5:\n%s", text)
	}
}

func TestApprovalsBounded(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ObserveApproval("once")
	m.ObserveApproval("once")
	m.ObserveApproval("/etc/passwd")
	text := scrape(t, m)
	for _, want := range []string{`scopegate_approvals_total{answer="once"} 2`, `scopegate_approvals_total{answer="unknown"} 1`,
		`scopegate_approvals_total{answer="session"} 0`, `scopegate_approvals_total{answer="timeout"} 0`} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(text, "/etc/passwd") {
		t.Error("an unbounded answer leaked into the scrape")
	}
}

// TestDenials: the denials by reason sum every tool and entry point.
func TestDenials(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ObserveDecision("shell", false, "command_not_allowed", "cli")
	m.ObserveDecision("shell", false, "command_not_allowed", "hook")
	m.ObserveDecision("read_file", false, "path_denied", "http")
	m.ObserveDecision("read_file", true, "allowed", "http")
	m.ObserveDecision("read_file", false, "no_such_reason", "http")
	got := m.Denials()
	want := map[string]float64{"command_not_allowed": 2, "path_denied": 1, metrics.Unknown: 1}
	if len(got) != len(want) {
		t.Fatalf("Denials() = %v, want %v", got, want)
	}
	for r, n := range want {
		if got[r] != n {
			t.Errorf("Denials()[%s] = %v, want %v", r, got[r], n)
		}
	}
}
