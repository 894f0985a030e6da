package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		file    string // "" means no file
		want    Config
		wantErr bool
	}{
		{name: "missing file", want: Default()},
		{name: "empty file", file: "\n", want: Default()},
		{name: "partial", file: "retention:\n  audit_days: 7\n", want: Config{
			Retention: Retention{AuditDays: 7, SessionDays: DefaultSessionDays, SessionAction: ActionArchive},
			Serve:     Serve{Listen: DefaultListen}, Hooks: Hooks{Profile: DefaultHookProfile, OtherTools: DefaultOtherTools},
			Approvals: DefaultApprovals, ApprovalTimeoutSeconds: DefaultApprovalTimeoutSeconds}},
		{name: "all", file: "retention:\n  audit_days: 0\n  session_days: 30\n  session_action: remove\nserve:\n  listen: 127.0.0.1:9000\n  token_file: /t\nhooks:\n  profile: restricted\n  other_tools: deny\napprovals: deny\napproval_timeout_seconds: 5\n",
			want: Config{Retention: Retention{AuditDays: 0, SessionDays: 30, SessionAction: ActionRemove},
				Serve: Serve{Listen: "127.0.0.1:9000", TokenFile: "/t"}, Hooks: Hooks{Profile: "restricted", OtherTools: "deny"}, Approvals: "deny", ApprovalTimeoutSeconds: 5}},
		{name: "bad approval timeout", file: "approval_timeout_seconds: -1\n", wantErr: true},
		{name: "bad approvals", file: "approvals: always\n", wantErr: true},
		{name: "bad other_tools", file: "hooks:\n  other_tools: maybe\n", wantErr: true},
		{name: "unknown key", file: "retention:\n  audit_day: 7\n", wantErr: true},
		{name: "negative", file: "retention:\n  audit_days: -1\n", wantErr: true},
		{name: "bad action", file: "retention:\n  session_action: shred\n", wantErr: true},
		{name: "bad listen", file: "serve:\n  listen: nowhere\n", wantErr: true},
		{name: "two documents", file: "retention: {}\n---\nserve: {}\n", wantErr: true},
		{name: "not yaml", file: "retention: [\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(dir, FileName), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Load(dir)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Load: err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Load = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o700); err != nil { // a directory cannot be read as a file
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("Load of a directory named config.yml: no error")
	}
}

func TestGptelPresetsDirResolved(t *testing.T) {
	home, _ := os.UserHomeDir()
	for in, want := range map[string]string{"../presets": "/cfg/presets", "/abs/p": "/abs/p", "~/gptel/presets": filepath.Join(home, "gptel/presets")} {
		dir := filepath.Join(t.TempDir(), "cfg")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte("gptel_presets_dir: "+in+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(dir)
		if want == "/cfg/presets" {
			want = filepath.Join(filepath.Dir(dir), "presets")
		}
		if err != nil || c.GptelPresetsDir != want {
			t.Errorf("%s: %q, %v; want %q", in, c.GptelPresetsDir, err, want)
		}
	}
}

// The telemetry section is strict: unknown keys and bad values are errors
// naming the file and line.
func TestTelemetrySection(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("retention:\n  audit_days: 3\ntelemetry:\n  endpoint: http://127.0.0.1:4317\n  protocol: grpc\n  headers: {x-api-key: k}\n")
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Telemetry.Endpoint != "http://127.0.0.1:4317" || c.Telemetry.Protocol != ProtocolGRPC || c.Telemetry.Headers["x-api-key"] != "k" {
		t.Errorf("telemetry = %+v", c.Telemetry)
	}
	for _, tc := range []struct{ yml, want string }{
		{"retention:\n  audit_days: 3\ntelemetry:\n  protocol: thrift\n", "line 3: telemetry.protocol \"thrift\""},
		{"telemetry:\n  endpoint: 127.0.0.1:4318\n", "line 1: telemetry.endpoint"},
		{"telemetry:\n  endpiont: http://x:1\n", "line 2"},
	} {
		write(tc.yml)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), FileName) {
			t.Errorf("%q: err = %v, want it to name %s and %q", tc.yml, err, FileName, tc.want)
		}
	}
}

// TestCache: a cached config is read again when config.yml changes, comes
// back when it is removed, and an unusable file is an error until fixed.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	c := &Cache{Dir: dir}
	load := func(wantApprovals string, wantErr bool) {
		t.Helper()
		got, err := c.Load()
		if (err != nil) != wantErr {
			t.Fatalf("Load: err = %v, want error %v", err, wantErr)
		}
		if err == nil && got.Approvals != wantApprovals {
			t.Fatalf("Load: approvals %q, want %q", got.Approvals, wantApprovals)
		}
	}
	load(ApprovalsAsk, false)
	if err := os.WriteFile(path, []byte("approvals: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load(ApprovalsDeny, false)
	load(ApprovalsDeny, false)
	if err := os.WriteFile(path, []byte("approvals: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load("", true)
	load("", true)
	if err := os.WriteFile(path, []byte("approvals: ask\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load(ApprovalsAsk, false)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	load(ApprovalsAsk, false)
	if err := os.WriteFile(path, []byte("approvals: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load(ApprovalsDeny, false)
}

// BenchmarkCache is what reading config.yml for every call costs while it
// is unchanged (a stat), against parsing it each time.
func BenchmarkCache(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("approvals: ask\napproval_timeout_seconds: 60\nhooks:\n  profile: coding\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		c := &Cache{Dir: dir}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Load(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parsed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}
