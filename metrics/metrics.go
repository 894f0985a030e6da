// Package metrics holds scopegate's Prometheus collectors (docs/reference.md, Metrics)
// in a registry of its own: no default registry, no globals. Label values
// are bounded: anything outside the known tools, reasons and scope sections
// is counted as "unknown", so a label never carries a session id, path or
// command.
package metrics

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Unknown is the label value for a tool, reason or section outside the
// bounded sets.
const Unknown = "unknown"

// Options bound the label values. The zero value uses the contract's lists
// (Tools, Reasons, Sections).
type Options struct {
	Tools    []string
	Reasons  []string
	Sections []string
}

// Tools are the tool names of docs/reference.md, The call and the decision.
func Tools() []string {
	return []string{
		"read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell",
		"roam_create_node", "roam_read_node", "roam_add_tags", "roam_link_nodes",
	}
}

// Reasons are the decision reasons of docs/reference.md, The call and the decision.
func Reasons() []string {
	return []string{
		"allowed", "path_not_in_scope", "path_denied", "command_not_allowed",
		"command_denied", "dangerous_argument", "dynamic_command",
		"redirect_not_in_scope", "parse_error", "roam_not_in_scope", "host_not_in_scope",
		"unknown_tool", "invalid_arguments", "scope_invalid", "scope_missing", "managed",
	}
}

// Vias are the entry points a decision can come through (the via label).
func Vias() []string { return []string{"cli", "http", "hook", "mcp"} }

// Answers are the answers to an approval offer (docs/approvals.md), the answer
// label of scopegate_approvals_total; keep in sync with gateway.Answers.
func Answers() []string {
	return []string{"once", "session", "deny", "decline", "cancel", "timeout", "error", "ask"}
}

// Sections are the scope.yml lists a scope expansion can add to.
func Sections() []string {
	return []string{
		"paths.read", "paths.write", "paths.deny",
		"shell_commands.allow", "shell_commands.deny",
		"org_roam_patterns.subdirectory", "org_roam_patterns.tags", "org_roam_patterns.node_ids",
		"network",
	}
}

// Metrics are the collectors of one scopegate process.
type Metrics struct {
	reg *prometheus.Registry

	tools, reasons, sections []string

	toolCalls        *prometheus.CounterVec
	denials          *prometheus.CounterVec
	callDuration     *prometheus.HistogramVec
	decisionDuration prometheus.Histogram
	scopeExpansions  *prometheus.CounterVec
	scopeLoadErrors  prometheus.Counter
	inflight         prometheus.Gauge
	auditWriteErrors prometheus.Counter
	exportDropped    prometheus.Counter
	approvals        *prometheus.CounterVec
	netConns         *prometheus.CounterVec
}

// New returns the metrics in a new registry, every bounded label
// combination present at zero so that a scrape shows them before they
// happen.
func New(o Options) *Metrics {
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		tools:    orDefault(o.Tools, Tools),
		reasons:  orDefault(o.Reasons, Reasons),
		sections: orDefault(o.Sections, Sections),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scopegate_tool_calls_total",
			Help: "Tool call decisions, from check and call alike.",
		}, []string{"tool", "decision", "via"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scopegate_denials_total",
			Help: "Denied tool calls by reason.",
		}, []string{"tool", "reason", "via"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scopegate_call_duration_seconds",
			Help:    "Time to run an allowed tool call, decision to result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. ~4.4min
		}, []string{"tool"}),
		decisionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scopegate_decision_duration_seconds",
			Help:    "Time to decide a tool call against the scope.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10), // 10µs .. ~2.6s
		}),
		scopeExpansions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scopegate_scope_expansions_total",
			Help: "Entries added to a branch scope, by scope.yml section.",
		}, []string{"section"}),
		scopeLoadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scopegate_scope_load_errors_total",
			Help: "scope.yml files that failed to load (their calls are denied).",
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "scopegate_inflight_calls",
			Help: "Tool calls running now.",
		}),
		auditWriteErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scopegate_audit_write_errors_total",
			Help: "tools.org entries that could not be written.",
		}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scopegate_approvals_total",
			Help: "Denied calls offered to the user, by answer (once and session let the call run).",
		}, []string{"answer"}),
		netConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scopegate_network_connections_total",
			Help: "Connections a shell call's programs attempted, by decision (never by host).",
		}, []string{"decision"}),
	}
	m.exportDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scopegate_export_dropped_total",
		Help: "Audit events not exported over OTLP: queue full, or the collector failed or was too slow.",
	})
	m.reg.MustRegister(m.toolCalls, m.denials, m.callDuration, m.decisionDuration,
		m.scopeExpansions, m.scopeLoadErrors, m.inflight, m.auditWriteErrors, m.approvals, m.netConns, m.exportDropped)
	m.netConns.WithLabelValues("allowed")
	m.netConns.WithLabelValues("denied")

	for _, tool := range append(slices.Clone(m.tools), Unknown) {
		m.callDuration.WithLabelValues(tool)
		for _, via := range Vias() {
			m.toolCalls.WithLabelValues(tool, "allowed", via)
			m.toolCalls.WithLabelValues(tool, "denied", via)
			for _, r := range append(slices.Clone(m.reasons), Unknown) {
				if r != "allowed" {
					m.denials.WithLabelValues(tool, r, via)
				}
			}
		}
	}
	for _, s := range append(slices.Clone(m.sections), Unknown) {
		m.scopeExpansions.WithLabelValues(s)
	}
	for _, a := range append(Answers(), Unknown) {
		m.approvals.WithLabelValues(a)
	}
	return m
}

func orDefault(given []string, def func() []string) []string {
	if len(given) > 0 {
		return slices.Clone(given)
	}
	return def()
}

func bound(v string, set []string) string {
	if slices.Contains(set, v) {
		return v
	}
	return Unknown
}

// ObserveDecision counts one decision on tool that came in through via
// (cli, http, hook, mcp): scopegate_tool_calls_total, and for a denial
// scopegate_denials_total with its reason.
func (m *Metrics) ObserveDecision(tool string, allowed bool, reason, via string) {
	tool = bound(tool, m.tools)
	via = bound(via, Vias())
	if allowed {
		m.toolCalls.WithLabelValues(tool, "allowed", via).Inc()
		return
	}
	m.toolCalls.WithLabelValues(tool, "denied", via).Inc()
	m.denials.WithLabelValues(tool, bound(reason, m.reasons), via).Inc()
}

// ObserveCallDuration records how long an allowed call on tool ran.
func (m *Metrics) ObserveCallDuration(tool string, seconds float64) {
	m.callDuration.WithLabelValues(bound(tool, m.tools)).Observe(seconds)
}

// ObserveDecisionDuration records how long a decision took.
func (m *Metrics) ObserveDecisionDuration(seconds float64) {
	m.decisionDuration.Observe(seconds)
}

// ScopeExpansion counts one entry added to a scope section such as
// "paths.write".
func (m *Metrics) ScopeExpansion(section string) {
	m.scopeExpansions.WithLabelValues(bound(section, m.sections)).Inc()
}

// ScopeLoadError counts a scope.yml that failed to load.
func (m *Metrics) ScopeLoadError() { m.scopeLoadErrors.Inc() }

// InflightInc counts a call that starts running.
func (m *Metrics) InflightInc() { m.inflight.Inc() }

// InflightDec counts a running call that ended.
func (m *Metrics) InflightDec() { m.inflight.Dec() }

// AuditWriteError counts a tools.org entry that could not be written.
func (m *Metrics) AuditWriteError() { m.auditWriteErrors.Inc() }

// ExportDropped counts n audit events that were not exported.
func (m *Metrics) ExportDropped(n int) { m.exportDropped.Add(float64(n)) }

// ObserveApproval counts one answer to an approval offer.
func (m *Metrics) ObserveApproval(answer string) {
	m.approvals.WithLabelValues(bound(answer, Answers())).Inc()
}

// ObserveConnections counts the connections of one call.
func (m *Metrics) ObserveConnections(allowed, denied int) {
	m.netConns.WithLabelValues("allowed").Add(float64(allowed))
	m.netConns.WithLabelValues("denied").Add(float64(denied))
}

// Denials are the denials counted so far (scopegate_denials_total), by
// reason, summed over tools and entry points: what serve samples for the
// page's chart of denials per reason.
func (m *Metrics) Denials() map[string]float64 {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		m.denials.Collect(ch)
		close(ch)
	}()
	out := map[string]float64{}
	for c := range ch {
		var pb dto.Metric
		if c.Write(&pb) != nil || pb.GetCounter() == nil {
			continue
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "reason" {
				if v := pb.GetCounter().GetValue(); v > 0 {
					out[l.GetValue()] += v
				}
			}
		}
	}
	return out
}

// Registry is the registry holding the metrics, for callers that add
// collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
