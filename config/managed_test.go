package config

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// contractExample is the managed.yml of docs/managed.md.
const contractExample = `paths:
  deny:    ["**/.env", "**/secrets/**"]   # added to every scope's deny
  ceiling:                                # no scope reaches beyond these
    read:  ["/home/**", "/usr/**", "/etc/**", "/opt/**"]
    write: ["/home/**", "/tmp/**"]
shell_commands:
  deny: ["ssh", "scp"]                    # added to every scope's deny
network: [".corp.example.com:443", "proxy.golang.org:443"]   # or none: the ceiling
modes: {observe: false}
approvals: deny
telemetry: {endpoint: "https://otel.corp.example.com:4318", protocol: http/protobuf}
`

func TestParseManaged(t *testing.T) {
	f, m, err := ParseManaged([]byte(contractExample), "/home/u")
	if err != nil {
		t.Fatalf("the contract's example: %v", err)
	}
	if m == nil || len(f.Paths.Deny) != 2 || f.Paths.Ceiling == nil || len(f.Paths.Ceiling.Write) != 2 ||
		f.Network.Mode != policy.NetworkList || f.Modes.Observe == nil || *f.Modes.Observe || f.Approvals != "deny" ||
		f.Telemetry == nil || f.Telemetry.Protocol != ProtocolHTTP {
		t.Errorf("parsed %+v", f)
	}
	if _, _, err := ParseManaged(nil, ""); err != nil {
		t.Errorf("empty file: %v", err)
	}
	for _, tc := range []struct{ name, yml, want string }{
		{"unknown key", "paths:\n  deny: [a]\n  ceilng: {}\n", "line 3"},
		{"unknown section", "modes: {observe: false}\nnetwrok: none\n", "line 2"},
		{"bad yaml", "paths: [\n", "line"},
		{"two documents", "approvals: deny\n---\napprovals: ask\n", "more than one YAML document"},
		{"bad glob", "paths:\n  deny:\n    - \"**/.env\"\n    - \"/a/[b\"\n", `line 4: paths.deny[1] "/a/[b": invalid glob`},
		{"bad ceiling glob", "paths:\n  ceiling:\n    read: [\"/usr/**\"]\n    write:\n      - \"${project_root}/**\"\n", "line 5: paths.ceiling.write[0]"},
		{"bad host", "network:\n  - ok.example\n  - \"*.example.com\"\n", `line 3: network[1] "*.example.com"`},
		{"bad network word", "network: some\n", "line 1"},
		{"bad command", "shell_commands:\n  deny: [\"ls 'open\"]\n", "line 2: shell_commands.deny[0]"},
		{"bad approvals", "modes: {}\napprovals: always\n", `line 2: approvals "always"`},
		{"bad observe", "modes: {observe: sometimes}\n", "line 1"},
		{"bad telemetry", "telemetry:\n  endpoint: 127.0.0.1:4318\n", "line 2: telemetry.endpoint"},
		{"telemetry without endpoint", "telemetry: {protocol: grpc}\n", "an endpoint is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseManaged([]byte(tc.yml), "/home/u")
			if !errors.Is(err, policy.ErrManagedInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrManagedInvalid naming %q", err, tc.want)
			}
		})
	}
}

// requireRoot skips a test that needs files root owns when not run as
// root, except under CI, where it fails.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test needs root (files root owns); CI runs as root")
	}
	t.Skip("needs root")
}

// managedDir is a directory for managed files that root owns and only
// root writes (t.TempDir is 0700 below the sticky /tmp).
func managedDir(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	return t.TempDir()
}

func writeManaged(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func nobody(t *testing.T) (int, int) {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// A managed file is trusted only when root owns it and the directories on
// its way, and nobody else can write any of them.
func TestManagedTrust(t *testing.T) {
	dir := managedDir(t)
	path := filepath.Join(dir, "managed.yml")
	good := "shell_commands: {deny: [ssh]}\n"
	uid, gid := nobody(t)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T) string // the path to load
		want    string                    // "" trusted
	}{
		{"root 0644", func(t *testing.T) string { writeManaged(t, path, good, 0o644); return path }, ""},
		{"group-writable", func(t *testing.T) string { writeManaged(t, path, good, 0o664); return path }, "writable by group"},
		{"world-writable", func(t *testing.T) string { writeManaged(t, path, good, 0o646); return path }, "writable by others"},
		{"owned by nobody", func(t *testing.T) string {
			writeManaged(t, path, good, 0o644)
			if err := os.Chown(path, uid, gid); err != nil {
				t.Fatal(err)
			}
			return path
		}, "belongs to uid " + strconv.Itoa(uid)},
		{"directory group-writable", func(t *testing.T) string {
			sub := filepath.Join(dir, "gw")
			if err := os.MkdirAll(sub, 0o775); err != nil {
				t.Fatal(err)
			}
			os.Chmod(sub, 0o775)
			p := filepath.Join(sub, "managed.yml")
			writeManaged(t, p, good, 0o644)
			return p
		}, sub(dir, "gw") + " is writable by group"},
		{"directory owned by nobody", func(t *testing.T) string {
			sub := filepath.Join(dir, "nb")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(sub, "managed.yml")
			writeManaged(t, p, good, 0o644)
			if err := os.Chown(sub, uid, gid); err != nil {
				t.Fatal(err)
			}
			return p
		}, "belongs to uid"},
		{"link through a directory nobody owns", func(t *testing.T) string {
			sub := filepath.Join(dir, "nb2")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			writeManaged(t, path, good, 0o644)
			link := filepath.Join(sub, "managed.yml")
			os.Remove(link)
			if err := os.Symlink(path, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(sub, uid, gid); err != nil {
				t.Fatal(err)
			}
			return link
		}, "belongs to uid"},
		{"link in a trusted directory", func(t *testing.T) string {
			writeManaged(t, path, good, 0o644)
			link := filepath.Join(dir, "link.yml")
			os.Remove(link)
			if err := os.Symlink("managed.yml", link); err != nil {
				t.Fatal(err)
			}
			return link
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.prepare(t)
			m, err := (&ManagedLoader{Path: p}).Load()
			if tc.want == "" {
				if err != nil || m == nil || m.Path != p {
					t.Fatalf("Load = %v, %v; want the policy", m, err)
				}
				return
			}
			if !errors.Is(err, ErrManagedUntrusted) || !errors.Is(err, policy.ErrManagedInvalid) ||
				!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("Load = %v, want untrusted naming %s and %q", err, p, tc.want)
			}
		})
	}
}

func sub(dir, name string) string { return filepath.Join(dir, name) }

// The fallback is read only where the installed path does not exist: it
// can never replace an installed policy.
func TestManagedFallback(t *testing.T) {
	dir := managedDir(t)
	installed, fallback := filepath.Join(dir, "managed.yml"), filepath.Join(dir, "other.yml")
	writeManaged(t, fallback, "approvals: deny\n", 0o644)
	l := &ManagedLoader{Path: installed, Fallback: fallback}
	m, err := l.Load()
	if err != nil || m == nil || !m.FromEnv || m.Path != fallback || !strings.Contains(m.Source(), ManagedEnv) {
		t.Fatalf("no installed policy: Load = %+v, %v; want the fallback", m, err)
	}
	writeManaged(t, installed, "", 0o644)
	m, err = l.Load()
	if err != nil || m == nil || m.FromEnv || m.Path != installed || m.ApprovalsAllowed() == false {
		t.Fatalf("installed (empty) policy: Load = %+v, %v; want it, not the fallback", m, err)
	}
	os.Remove(installed)
	l2 := &ManagedLoader{Path: installed, Fallback: filepath.Join(dir, "missing.yml")}
	if _, err := l2.Load(); !errors.Is(err, policy.ErrManagedInvalid) || !strings.Contains(err.Error(), "missing.yml") {
		t.Fatalf("fallback naming a missing file: %v", err)
	}
	if m, err := (&ManagedLoader{Path: installed}).Load(); m != nil || err != nil {
		t.Fatalf("no policy at all: %v, %v", m, err)
	}
}

// The loader serves the policy from its cache while the file is
// unchanged, and reads it again after a write, a chmod or a chown.
func TestManagedCache(t *testing.T) {
	dir := managedDir(t)
	path := filepath.Join(dir, "managed.yml")
	writeManaged(t, path, "approvals: deny\n", 0o644)
	l := &ManagedLoader{Path: path}
	a, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := l.Load(); b != a {
		t.Error("an unchanged file was read again")
	}
	if err := os.Chmod(path, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(); !errors.Is(err, ErrManagedUntrusted) {
		t.Fatalf("after chmod g+w: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	writeManaged(t, path, "approvals: ask\n", 0o644)
	c, err := l.Load()
	if err != nil || c == a || c.SHA256 == a.SHA256 || !c.ApprovalsAllowed() {
		t.Fatalf("after a write: %+v, %v", c, err)
	}
}

func FuzzParseManaged(f *testing.F) {
	for _, s := range []string{contractExample, "", "network: none\n", "network: any\n", "paths:\n  ceiling: {}\n",
		"paths:\n  deny: [\"~/.ssh/**\", \"**/.env\"]\n", "shell_commands:\n  deny: [\"rm -rf\", \"git push --force\"]\n",
		"network: [\"unix:/run/docker.sock\", localhost:8080, any]\n", "modes: {observe: true}\napprovals: ask\n",
		"telemetry: {endpoint: \"http://127.0.0.1:4317\", protocol: grpc, headers: {x-key: v}}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, m, err := ParseManaged(data, "/home/u")
		if err != nil {
			if !errors.Is(err, policy.ErrManagedInvalid) {
				t.Fatalf("error %v does not wrap ErrManagedInvalid", err)
			}
			if strings.ContainsAny(err.Error(), "\n") && !strings.Contains(err.Error(), "yaml") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if m == nil {
			t.Fatal("no compiled policy and no error")
		}
		// What parses compiles the same again.
		if _, err := policy.CompileManaged(file.Rules(), policy.Env{Home: "/home/u"}); err != nil {
			t.Fatalf("parsed, then does not compile: %v", err)
		}
	})
}

// BenchmarkManagedLoad is what a process pays to read the managed policy
// once (a per-call command: no cache yet): the file missing, and the
// contract's example read, its way checked, parsed and compiled.
func BenchmarkManagedLoad(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "managed.yml")
	if err := os.WriteFile(path, []byte(contractExample), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, path string }{{"file=missing", filepath.Join(dir, "none.yml")}, {"file=example", path}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := &ManagedLoader{Path: bc.path, Home: "/home/u"}
				if _, err := l.Load(); err != nil && os.Geteuid() == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
