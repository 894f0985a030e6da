package telemetry

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// The OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL's values).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is where to export: config.yml's telemetry section over the
// standard variables. The zero Config with no OTEL_EXPORTER_OTLP_*ENDPOINT
// variable set exports nothing.
type Config struct {
	// Endpoint is the collector's URL (http://host:4318, http://host:4317
	// for gRPC); its path, for http/protobuf, defaults to /v1/logs. Empty:
	// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC. Empty:
	// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL,
	// then http/protobuf.
	Protocol string
	// Headers are sent with every export (added to OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string
}

// Getenv reads an environment variable; os.Getenv is one.
type Getenv func(string) string

// Enabled reports whether export is configured: an endpoint in c or in the
// environment.
func (c Config) Enabled(getenv Getenv) bool {
	return c.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// protocol is the protocol to export with.
func (c Config) protocol(getenv Getenv) (string, error) {
	p := c.Protocol
	for _, v := range []string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p == "" {
			p = getenv(v)
		}
	}
	switch p {
	case "", ProtocolHTTP:
		return ProtocolHTTP, nil
	case ProtocolGRPC:
		return ProtocolGRPC, nil
	}
	return "", fmt.Errorf("OTLP protocol %q: want %s or %s", p, ProtocolHTTP, ProtocolGRPC)
}

// Validate checks a telemetry section: a URL endpoint, a known protocol.
func (c Config) Validate() error {
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint %q: want a URL like http://127.0.0.1:4318", c.Endpoint)
		}
	}
	if _, err := c.protocol(func(string) string { return "" }); err != nil {
		return err
	}
	for k := range c.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return fmt.Errorf("header name %q is not a valid HTTP header name", k)
		}
	}
	return nil
}

// osGetenv is os.Getenv.
func osGetenv(k string) string { return os.Getenv(k) }
