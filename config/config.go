// Package config reads scopegate's own settings from <config dir>/config.yml:
// retention of the audit and of sessions, and defaults of `scopegate serve`.
// A missing file is the defaults; an unknown key or a bad value is an error,
// so a typo never silently keeps data longer (or shorter) than intended.
//
// It also reads the machine's managed policy, /etc/scopegate/managed.yml
// (managed.go): whether it can be trusted, what it says, cached while the
// file is unchanged.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/internal/yamlmsg"
)

// FileName is the config file's name inside the config dir.
const FileName = "config.yml"

// Session retention actions.
const (
	// ActionArchive moves an idle session to <sessions root>/.archive/.
	ActionArchive = "archive"
	// ActionRemove deletes an idle session.
	ActionRemove = "remove"
)

// Defaults of the settings.
const (
	DefaultAuditDays   = 90
	DefaultSessionDays = 180
	DefaultListen      = "127.0.0.1:7411"
	DefaultHookProfile = "coding"
	DefaultOtherTools  = "ask"
	DefaultApprovals   = ApprovalsAsk
	// DefaultApprovalTimeoutSeconds is approval_timeout_seconds' default.
	DefaultApprovalTimeoutSeconds = 120
)

// The values of approvals.
const (
	ApprovalsAsk  = "ask"
	ApprovalsDeny = "deny"
)

// ErrInvalid reports a config file that cannot be used.
var ErrInvalid = errors.New("invalid config")

// Config is the content of config.yml. Use [Default] or [Load]: a zero
// Config keeps everything forever and listens on DefaultListen.
type Config struct {
	Retention Retention `yaml:"retention" json:"retention"`
	Serve     Serve     `yaml:"serve" json:"serve"`
	Hooks     Hooks     `yaml:"hooks" json:"hooks"`
	// Approvals says whether a call denied for a scope reason is offered to
	// the user where the client can ask (MCP elicitation, Claude Code's
	// hook ask): "ask" (default) or "deny" (refused as always).
	Approvals string `yaml:"approvals" json:"approvals"`
	// ApprovalTimeoutSeconds is how long an MCP offer waits for the
	// user's answer before the call is denied (default 120; 0 is the
	// default).
	ApprovalTimeoutSeconds int `yaml:"approval_timeout_seconds" json:"approval_timeout_seconds"`
	// GptelPresetsDir is a directory of gptel preset files (Markdown with
	// YAML front matter): each file is a preset named by its base name,
	// whose scope_profile names its profile. A relative path is relative
	// to the config dir; ~/ is the home directory.
	GptelPresetsDir string `yaml:"gptel_presets_dir" json:"gptel_presets_dir,omitempty"`
	// Telemetry says where audit events are exported over OTLP; the
	// standard OTEL_EXPORTER_OTLP_* variables apply where it is silent.
	Telemetry Telemetry `yaml:"telemetry" json:"telemetry"`
}

// The OTLP protocols of Telemetry.Protocol.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Telemetry configures the OTLP export of audit events. Export is off
// unless an endpoint is set here or in OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT.
type Telemetry struct {
	// Endpoint is the collector's URL: http://host:4318 (http/protobuf,
	// path /v1/logs unless given) or http://host:4317 (grpc).
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Protocol is http/protobuf (default) or grpc.
	Protocol string `yaml:"protocol" json:"protocol,omitempty"`
	// Headers are sent with every export (an API key).
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
}

// Hooks configure `scopegate hook` and the hook routes of serve.
type Hooks struct {
	// Profile is the scope profile of the sessions hooks create (default
	// DefaultHookProfile).
	Profile string `yaml:"profile" json:"profile"`
	// OtherTools says what a hook answers for tools scopegate does not
	// decide: "allow", "ask" or "deny" (default "ask"; Codex, which has no
	// ask, gets a deny).
	OtherTools string `yaml:"other_tools" json:"other_tools"`
}

// Retention says how long `scopegate gc` keeps things. Zero days keeps
// forever.
type Retention struct {
	// AuditDays: tools.org entries older than this are pruned.
	AuditDays int `yaml:"audit_days" json:"audit_days"`
	// SessionDays: sessions untouched for this long are archived or removed.
	SessionDays int `yaml:"session_days" json:"session_days"`
	// SessionAction is ActionArchive or ActionRemove.
	SessionAction string `yaml:"session_action" json:"session_action"`
}

// Serve holds defaults of `scopegate serve`; flags win.
type Serve struct {
	// Listen is the TCP address (default DefaultListen).
	Listen string `yaml:"listen" json:"listen"`
	// TokenFile holds the bearer token.
	TokenFile string `yaml:"token_file" json:"token_file,omitempty"`
}

// Default is the configuration without a config file.
func Default() Config {
	return Config{
		Retention: Retention{AuditDays: DefaultAuditDays, SessionDays: DefaultSessionDays, SessionAction: ActionArchive},
		Serve:     Serve{Listen: DefaultListen},
		Hooks:     Hooks{Profile: DefaultHookProfile, OtherTools: DefaultOtherTools},
		Approvals: DefaultApprovals, ApprovalTimeoutSeconds: DefaultApprovalTimeoutSeconds,
	}
}

// ApprovalTimeout is ApprovalTimeoutSeconds as a duration (0: the
// default).
func (c Config) ApprovalTimeout() time.Duration {
	if c.ApprovalTimeoutSeconds <= 0 {
		return DefaultApprovalTimeoutSeconds * time.Second
	}
	return time.Duration(c.ApprovalTimeoutSeconds) * time.Second
}

// Load reads <dir>/config.yml over the defaults. A missing file (or an empty
// dir name) gives [Default].
func Load(dir string) (Config, error) {
	c := Default()
	if dir == "" {
		return c, nil
	}
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if err := Parse(data, &c); err != nil {
		return Default(), fmt.Errorf("%s: %w", path, err)
	}
	switch p := c.GptelPresetsDir; {
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return Default(), fmt.Errorf("%s: gptel_presets_dir %q: %w", path, p, err)
		}
		c.GptelPresetsDir = filepath.Join(home, p[1:])
	case p != "" && !filepath.IsAbs(p):
		c.GptelPresetsDir = filepath.Join(dir, p)
	}
	return c, nil
}

// Parse decodes config.yml data over c (keys absent from data keep c's
// values) and validates the result.
func Parse(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %v", ErrInvalid, yamlmsg.Error(data, err, c))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: more than one YAML document", ErrInvalid)
	}
	if err := c.Telemetry.validate(); err != nil {
		return fmt.Errorf("%w: line %d: telemetry.%v", ErrInvalid, keyLine(data, "telemetry"), err)
	}
	return c.Validate()
}

// keyLine is the line of a top-level key of data (1 when not found).
func keyLine(data []byte, key string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 1
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return 1
}

// validate reports an unusable telemetry setting, named after the section.
func (t Telemetry) validate() error {
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint %q: want a URL such as http://127.0.0.1:4318", t.Endpoint)
		}
	}
	switch t.Protocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		return fmt.Errorf("protocol %q: want %s or %s", t.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	for k := range t.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return fmt.Errorf("headers: %q is not a header name", k)
		}
	}
	return nil
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	r := c.Retention
	if r.AuditDays < 0 {
		return fmt.Errorf("%w: retention.audit_days %d is negative", ErrInvalid, r.AuditDays)
	}
	if r.SessionDays < 0 {
		return fmt.Errorf("%w: retention.session_days %d is negative", ErrInvalid, r.SessionDays)
	}
	switch r.SessionAction {
	case "", ActionArchive, ActionRemove:
	default:
		return fmt.Errorf("%w: retention.session_action %q: want %q or %q", ErrInvalid, r.SessionAction, ActionArchive, ActionRemove)
	}
	switch c.Hooks.OtherTools {
	case "", "allow", "ask", "deny":
	default:
		return fmt.Errorf("%w: hooks.other_tools %q: want allow, ask or deny", ErrInvalid, c.Hooks.OtherTools)
	}
	if err := c.Telemetry.validate(); err != nil {
		return fmt.Errorf("%w: telemetry.%v", ErrInvalid, err)
	}
	switch c.Approvals {
	case "", "ask", "deny":
	default:
		return fmt.Errorf("%w: approvals %q: want ask or deny", ErrInvalid, c.Approvals)
	}
	if c.ApprovalTimeoutSeconds < 0 || c.ApprovalTimeoutSeconds > 3600 {
		return fmt.Errorf("%w: approval_timeout_seconds %d: want 1 to 3600 (0: the default)", ErrInvalid, c.ApprovalTimeoutSeconds)
	}
	if c.Serve.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Serve.Listen); err != nil {
			return fmt.Errorf("%w: serve.listen %q: %v", ErrInvalid, c.Serve.Listen, err)
		}
	}
	return nil
}
