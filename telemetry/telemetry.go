// Package telemetry exports scopegate's audit events (audit.Event: every
// audited decision, scope change and, as they come, approvals and network
// connections) as OpenTelemetry log records over OTLP, HTTP/protobuf or
// gRPC, with the official OpenTelemetry Go SDK. It is a sink beside
// metrics: bounded and off the decision's path. Emit never blocks; a record
// that does not fit the queue, or whose export fails, is dropped and
// counted.
package telemetry

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/scopegate/scopegate/audit"
)

// Defaults of Options.
const (
	DefaultQueueSize = 2048
	DefaultMaxArgs   = 64 << 10
	// DefaultExportTimeout bounds one export to the collector.
	DefaultExportTimeout = 5 * time.Second
	// DefaultFlushBound bounds the flush at the end of a process.
	DefaultFlushBound = 500 * time.Millisecond
)

// ScopeName is the instrumentation scope of the records.
const ScopeName = "github.com/scopegate/scopegate"

// Options tune an Exporter; the zero value uses the defaults.
type Options struct {
	// QueueSize bounds the records waiting for export (DefaultQueueSize).
	QueueSize int
	// MaxArgs caps the arguments exported, in bytes (the audit cap,
	// DefaultMaxArgs).
	MaxArgs int
	// ExportInterval is how often the queue is exported (SDK default 1s).
	ExportInterval time.Duration
	// ExportTimeout bounds one export (DefaultExportTimeout).
	ExportTimeout time.Duration
	// Dropped is told of records that were not exported; nil ignores them.
	Dropped func(n int)
	// Getenv reads the OTEL_* variables (default os.Getenv).
	Getenv Getenv
	// Version is scopegate's version (service.version).
	Version string
	// Fixed makes the export the one Config says and nothing else: no
	// OTEL_* variable (endpoint, protocol, headers, TLS, insecure) nor
	// proxy variable changes where it goes or whether it works. The
	// machine's managed policy exports so.
	Fixed bool
}

// Exporter is the sink. It is safe for concurrent use.
type Exporter struct {
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
	opts     Options
	// pending counts the records emitted and not yet exported or dropped,
	// so that the SDK's queue never overflows (its drops are not counted
	// where we can read them): a record that would overflow it is
	// dropped and counted here.
	pending atomic.Int64
}

// New returns an Exporter for c, or an error for an unusable
// configuration. It does not connect: export happens in the background.
func New(ctx context.Context, c Config, o Options) (*Exporter, error) {
	if o.Getenv == nil {
		o.Getenv = osGetenv
	}
	if o.Fixed {
		o.Getenv = func(string) string { return "" }
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.MaxArgs <= 0 {
		o.MaxArgs = DefaultMaxArgs
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = DefaultExportTimeout
	}
	if o.Dropped == nil {
		o.Dropped = func(int) {}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	proto, err := c.protocol(o.Getenv)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	x := &Exporter{opts: o}
	var inner sdklog.Exporter
	switch proto {
	case ProtocolGRPC:
		opts := []otlploggrpc.Option{otlploggrpc.WithTimeout(o.ExportTimeout),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})}
		if c.Endpoint != "" {
			opts = append(opts, otlploggrpc.WithEndpointURL(c.Endpoint))
		}
		if len(c.Headers) > 0 {
			opts = append(opts, otlploggrpc.WithHeaders(c.Headers))
		}
		if o.Fixed {
			opts = append(opts, fixedGRPC(c)...)
		}
		inner, err = otlploggrpc.New(ctx, opts...)
	default:
		opts := []otlploghttp.Option{otlploghttp.WithTimeout(o.ExportTimeout),
			otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false})}
		if c.Endpoint != "" {
			u, _ := url.Parse(c.Endpoint) // Validate parsed it
			opts = append(opts, otlploghttp.WithEndpoint(u.Host))
			if u.Scheme == "http" {
				opts = append(opts, otlploghttp.WithInsecure())
			}
			if u.Path != "" && u.Path != "/" {
				opts = append(opts, otlploghttp.WithURLPath(u.Path))
			}
		}
		if len(c.Headers) > 0 {
			opts = append(opts, otlploghttp.WithHeaders(c.Headers))
		}
		if o.Fixed {
			opts = append(opts, fixedHTTP(c)...)
		}
		inner, err = otlploghttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: %s exporter: %w", proto, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("scopegate"), semconv.ServiceVersion(o.Version)))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// OTEL_RESOURCE_ATTRIBUTES (read by resource.Default's environment
	// detector) may add attributes; service.name stays scopegate unless it
	// sets OTEL_SERVICE_NAME.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	bopts := []sdklog.BatchProcessorOption{sdklog.WithMaxQueueSize(o.QueueSize),
		sdklog.WithExportMaxBatchSize(min(512, o.QueueSize)), sdklog.WithExportTimeout(o.ExportTimeout)}
	if o.ExportInterval > 0 {
		bopts = append(bopts, sdklog.WithExportInterval(o.ExportInterval))
	}
	proc := sdklog.NewBatchProcessor(countingExporter{inner: inner, x: x}, bopts...)
	x.provider = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(proc))
	x.logger = x.provider.Logger(ScopeName)
	return x, nil
}

// Emit queues the record of ev; it never blocks. A record the queue has no
// room for is dropped and counted.
func (x *Exporter) Emit(ev audit.Event) {
	if x.pending.Add(1) > int64(x.opts.QueueSize) {
		x.pending.Add(-1)
		x.opts.Dropped(1)
		return
	}
	var r otellog.Record
	Fill(&r, ev, x.opts.MaxArgs)
	x.logger.Emit(context.Background(), r)
}

// Shutdown exports what is queued, waiting at most until ctx is done, and
// stops the exporter. Records not exported by then are counted as dropped.
func (x *Exporter) Shutdown(ctx context.Context) error {
	err := x.provider.Shutdown(ctx)
	if n := x.pending.Swap(0); n > 0 {
		x.opts.Dropped(int(n))
	}
	return err
}

// countingExporter counts the records the SDK exported or failed to.
type countingExporter struct {
	inner sdklog.Exporter
	x     *Exporter
}

func (c countingExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	err := c.inner.Export(ctx, recs)
	c.x.pending.Add(-int64(len(recs)))
	if err != nil {
		c.x.opts.Dropped(len(recs))
	}
	return err
}

func (c countingExporter) Shutdown(ctx context.Context) error   { return c.inner.Shutdown(ctx) }
func (c countingExporter) ForceFlush(ctx context.Context) error { return c.inner.ForceFlush(ctx) }

// The attribute keys of the records. OpenTelemetry semantic conventions
// where one exists, scopegate.* otherwise.
const (
	AttrToolName   = "gen_ai.tool.name"
	AttrSessionID  = "session.id"
	AttrEventName  = "event.name"
	AttrKind       = "scopegate.event"
	AttrDecision   = "scopegate.decision"
	AttrReason     = "scopegate.reason"
	AttrRule       = "scopegate.rule"
	AttrResource   = "scopegate.resource"
	AttrMode       = "scopegate.mode"
	AttrCallID     = "scopegate.call_id"
	AttrAgentTool  = "scopegate.agent_tool"
	AttrExitCode   = "scopegate.exit_code"
	AttrDurationMS = "scopegate.duration_ms"
	AttrBranch     = "scopegate.branch"
	AttrVia        = "scopegate.via"
	AttrCwd        = "scopegate.cwd"
	AttrArgs       = "scopegate.args"
	AttrArgsCut    = "scopegate.args_truncated"
	AttrSummary    = "scopegate.summary"
	AttrError      = "scopegate.error"
	// AttrApproved is once or session for a call the user approved.
	AttrApproved = "scopegate.approved"
	// AttrManaged is the SHA-256 of the managed policy, on the first entry
	// of a branch after it changed.
	AttrManaged = "scopegate.managed"
	// AttrNetwork is the connections of a call, as JSON
	// ([{"host","port","allowed","rule"}]); AttrNetDenied counts the refused.
	AttrNetwork   = "scopegate.network"
	AttrNetDenied = "scopegate.network.denied"
)

// Fill makes r the log record of ev, its arguments cut to maxArgs bytes.
func Fill(r *otellog.Record, ev audit.Event, maxArgs int) {
	e := ev.Entry
	r.SetTimestamp(e.Time)
	r.SetObservedTimestamp(time.Now())
	r.SetEventName("scopegate." + ev.Kind)
	sev, text := otellog.SeverityInfo, "INFO"
	if e.Decision == audit.DecisionDenied || e.Decision == audit.DecisionInterrupted {
		sev, text = otellog.SeverityWarn, "WARN"
	}
	r.SetSeverity(sev)
	r.SetSeverityText(text)
	body := e.Decision + " " + e.Tool
	if e.Message != "" {
		body += ": " + e.Message
	}
	r.SetBody(attribute.StringValue(body))
	kv := make([]attribute.KeyValue, 0, 20)
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, attribute.String(k, v))
		}
	}
	add(AttrKind, ev.Kind)
	add(AttrToolName, e.Tool)
	add(AttrSessionID, ev.Session)
	add(AttrBranch, ev.Branch)
	add(AttrVia, ev.Via)
	add(AttrDecision, e.Decision)
	add(AttrReason, e.Reason)
	add(AttrRule, e.Rule)
	add(AttrResource, e.Resource)
	add(AttrMode, e.Mode)
	add(AttrCallID, e.CallID)
	add(AttrAgentTool, e.AgentTool)
	add(AttrCwd, e.Cwd)
	add(AttrSummary, e.Summary)
	add(AttrError, e.Error)
	add(AttrApproved, e.Approved)
	add(AttrManaged, e.Managed)
	if len(e.Network) > 0 {
		if b, err := json.Marshal(e.Network); err == nil {
			add(AttrNetwork, string(b))
		}
		kv = append(kv, attribute.Int(AttrNetDenied, e.NetDenied()))
	}
	if e.ExitCode != nil {
		kv = append(kv, attribute.Int(AttrExitCode, *e.ExitCode))
	}
	if e.DurationMS != nil {
		kv = append(kv, attribute.Int64(AttrDurationMS, *e.DurationMS))
	}
	if len(e.Args) > 0 {
		args := e.Args
		if maxArgs > 0 && len(args) > maxArgs {
			sum := sha256.Sum256(args)
			add(AttrArgsCut, fmt.Sprintf("%d sha256:%s", len(args), hex.EncodeToString(sum[:])))
			args = args[:maxArgs]
		}
		add(AttrArgs, string(args))
	}
	for k, v := range ev.Attrs {
		add(k, v)
	}
	r.AddAttributes(kv...)
}

// fixedHTTP are the options that leave nothing of an HTTP export to the
// environment (Options.Fixed): every setting the SDK would read from an
// OTEL_* variable is given, and the connection is direct.
func fixedHTTP(c Config) []otlploghttp.Option {
	u, _ := url.Parse(c.Endpoint) // Validate parsed it
	headers := maps.Clone(c.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/v1/logs"
	}
	opts := []otlploghttp.Option{otlploghttp.WithEndpointURL(c.Endpoint), otlploghttp.WithURLPath(path),
		otlploghttp.WithHeaders(headers), otlploghttp.WithCompression(otlploghttp.NoCompression),
		otlploghttp.WithProxy(func(*http.Request) (*url.URL, error) { return nil, nil })}
	if u.Scheme == "https" {
		opts = append(opts, otlploghttp.WithTLSClientConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	return opts
}

// fixedGRPC is fixedHTTP for gRPC.
func fixedGRPC(c Config) []otlploggrpc.Option {
	headers := maps.Clone(c.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	opts := []otlploggrpc.Option{otlploggrpc.WithEndpointURL(c.Endpoint), otlploggrpc.WithHeaders(headers),
		otlploggrpc.WithDialOption(grpc.WithNoProxy())}
	if u, _ := url.Parse(c.Endpoint); u.Scheme == "https" {
		opts = append(opts, otlploggrpc.WithTLSCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})))
	}
	return opts
}
