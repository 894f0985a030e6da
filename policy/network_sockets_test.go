package policy_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func TestNetworkSockets(t *testing.T) {
	for _, tc := range []struct {
		name, yml, mode string
		sockets         []string
	}{
		{"sockets alone", "network:\n  - unix:/run/docker.sock\n", "none", []string{"/run/docker.sock"}},
		{"any and a socket", "network: [any, unix:/run/docker.sock]\n", "any", []string{"/run/docker.sock"}},
		{"hosts and sockets", "network:\n  - github.com\n  - unix:/run/a.sock\n  - unix:/home/u/.b.sock\n", "list", []string{"/run/a.sock", "/home/u/.b.sock"}},
		{"any scalar", "network: any\n", "any", []string{}},
		{"none", "network: none\n", "none", []string{}},
		{"list without sockets", "network: [github.com]\n", "list", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := compileNet(t, tc.yml)
			if got := n.Mode(); got.String() != tc.mode {
				t.Errorf("Mode() = %q, want %q", got, tc.mode)
			}
			if got := n.Sockets(); !slices.Equal(got, tc.sockets) {
				t.Errorf("Sockets() = %q, want %q", got, tc.sockets)
			}
			for _, s := range tc.sockets {
				if ok, rule := n.AllowSocket(s); !ok || !strings.HasSuffix(rule, " unix:"+s) {
					t.Errorf("AllowSocket(%q) = %v, %q", s, ok, rule)
				}
			}
			if ok, rule := n.AllowSocket("/run/other.sock"); ok || rule != "network" {
				t.Errorf("AllowSocket(/run/other.sock) = %v, %q", ok, rule)
			}
			// A socket entry is no host.
			if ok, _ := n.AllowHost("unix", 80); ok && tc.mode != "any" {
				t.Errorf("a socket entry allows a host")
			}
		})
	}
}

func TestNetworkSocketsInvalid(t *testing.T) {
	long := "/" + strings.Repeat("a", 107)
	for _, tc := range []struct {
		name, entry, want string
	}{
		{"empty", "unix:", "names no socket"},
		{"relative", "unix:run/docker.sock", "absolute path"},
		{"not clean", "unix:/run/../etc/x.sock", "not clean"},
		{"trailing slash", "unix:/run/x/", "not clean"},
		{"root", "unix:/", "not clean"},
		{"pattern", "unix:/run/*.sock", "not a pattern"},
		{"control", "unix:/run/a\tb", "control character"},
		{"too long", "unix:" + long, "longer than a socket address"},
		{"none in a list", "none", "none is not an entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := policy.Document{Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"github.com", tc.entry}}}
			_, err := policy.Compile(doc, policy.Env{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "network[1]") {
				t.Errorf("Compile(%q) = %v, want an error naming network[1] and %q", tc.entry, err, tc.want)
			}
			if p, ok := strings.CutPrefix(tc.entry, "unix:"); ok && policy.ValidateSocketPath(p) == nil {
				t.Errorf("ValidateSocketPath(%q) accepted", p)
			}
		})
	}
	for _, h := range []string{"any", "none", "unix:/run/docker.sock"} {
		if err := policy.ValidateHostEntry(h); err == nil {
			t.Errorf("ValidateHostEntry(%q) accepted", h)
		}
	}
	if err := policy.ValidateSocketPath("/" + strings.Repeat("a", 106)); err != nil {
		t.Errorf("a path of 107 bytes: %v", err)
	}
}

// TestNetworkSocketsRoundTrip checks that the list form is written back as
// it was read.
func TestNetworkSocketsRoundTrip(t *testing.T) {
	in := "network:\n    - any\n    - unix:/run/docker.sock\n"
	doc, err := policy.ParseDocument([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc.Network)
	if err != nil || string(b) != `["any","unix:/run/docker.sock"]` {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// TestProgSockets checks the unix sockets commands name: refused unless an
// entry names them, under every mode, with the --allow-socket widening.
func TestProgSockets(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "app.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link.sock")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	named := []string{"unix:/run/docker.sock", "unix:" + link}
	for _, tc := range []struct {
		cmd   string
		entry string // the widening; "" when allowed
	}{
		{"curl --unix-socket /run/docker.sock http://localhost/v1.43/containers/json", ""},
		{"curl --unix-socket=/run/docker.sock http://evil.example/", ""},
		{"curl --unix-socket /run/dbus/system_bus_socket http://x/", "/run/dbus/system_bus_socket"},
		{"curl --unix-sock /run/other.sock http://x/", "/run/other.sock"},
		{"nc -U /run/docker.sock", ""},
		{"nc -U /var/run/../run/docker.sock", ""},
		{"nc -vU /run/other.sock", "/run/other.sock"},
		{"ncat --unixsock /run/other.sock", "/run/other.sock"},
		{"nc -U app.sock", ""},  // through the link's entry, relative to the cwd
		{"nc -U link.sock", ""}, // the entry itself
		{"nc -U ./x.sock", "DIR/x.sock"},
		{"socat - UNIX-CONNECT:/run/other.sock", "/run/other.sock"},
		{"socat - unix-client:/run/docker.sock", ""},
		{"socat UNIX-SENDTO:/run/other.sock,type=2 -", "/run/other.sock"},
		{"socat - GOPEN:" + sock, ""},
		{"socat - plain", ""}, // a file, not a socket
		{"socat - TCP:localhost:80", ""},
	} {
		for _, mode := range []string{"none", "list", "any"} {
			var entries []string
			switch mode {
			case "list":
				entries = append(entries, "localhost:80", "localhost")
			case "any":
				entries = append(entries, "any")
			}
			nr := policy.NetworkRules{Mode: policy.NetworkList, Hosts: append(entries, named...)}
			sc, err := policy.Compile(policy.Document{Paths: readAll, Shell: policy.ShellRules{Allow: []string{"curl", "nc", "ncat", "socat"}}, Network: nr}, policy.Env{})
			if err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(policy.ShellArgs{Command: tc.cmd})
			d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: dir}, policy.Env{})
			want := strings.ReplaceAll(tc.entry, "DIR", dir)
			if want == "" {
				if !d.Allowed && !(mode == "none" && strings.Contains(tc.cmd, "TCP:")) {
					t.Errorf("%s (%s): denied: %s", tc.cmd, mode, d.Message)
				}
				continue
			}
			w := policy.Widening{Flag: "--allow-socket", Value: want}
			if d.Allowed || d.Reason != policy.ReasonHostNotInScope || d.Rule != "network" || !slices.Contains(d.Widenings(), w) {
				t.Errorf("%s (%s): %+v, want host_not_in_scope with %v", tc.cmd, mode, d, w)
				continue
			}
			if hint := policy.ExpandHint(w); !strings.Contains(d.Message, hint) {
				t.Errorf("%s (%s): message %q lacks %q", tc.cmd, mode, d.Message, hint)
			}
			// The widening, applied, allows the call.
			nr.Hosts = append(nr.Hosts, policy.SocketEntry(want))
			sc, _ = policy.Compile(policy.Document{Paths: readAll, Shell: policy.ShellRules{Allow: []string{"curl", "nc", "ncat", "socat"}}, Network: nr}, policy.Env{})
			if d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: dir}, policy.Env{}); !d.Allowed {
				t.Errorf("%s (%s): still denied after --allow-socket %s: %s", tc.cmd, mode, want, d.Message)
			}
		}
	}
}

// TestProgSocketsSSH checks the local socket an ssh -R forwarding connects
// to: refused unless an entry names it, as well as checked as a file
// written to.
func TestProgSocketsSSH(t *testing.T) {
	nr := policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"any", "unix:/run/docker.sock"}}
	sc, err := policy.Compile(policy.Document{Paths: policy.PathRules{Read: []string{"/**"}, Write: []string{"/**"}},
		Shell: policy.ShellRules{Allow: []string{"ssh"}}, Network: nr}, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, denied := range map[string]bool{
		"ssh -R 9000:/run/docker.sock git.example.org":                           false,
		"ssh -R 9000:/run/other.sock git.example.org":                            true,
		"ssh -o 'RemoteForward 9000 /run/other.sock' git.example.org":            true,
		"ssh -o RemoteForward=/tmp/remote.sock:/run/docker.sock git.example.org": false,
	} {
		args, _ := json.Marshal(policy.ShellArgs{Command: cmd})
		d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: "/"}, policy.Env{})
		w := policy.Widening{Flag: "--allow-socket", Value: "/run/other.sock"}
		if denied != !d.Allowed || denied && !slices.Contains(d.Widenings(), w) {
			t.Errorf("%s: %+v, want denied %v with %v", cmd, d, denied, w)
		}
	}
}

// FuzzSocketEntry checks unix: entries: Compile and ValidateSocketPath
// agree; an accepted entry names an absolute, clean path that it alone
// allows, and no host.
func FuzzSocketEntry(f *testing.F) {
	for _, s := range []string{"/run/docker.sock", "/home/u/.gnupg/S.gpg-agent", "run/x", "/a/../b", "/a/*", "/", "", "/a\x00b", "/ä/ö.sock"} {
		f.Add(s, "/run/other.sock")
	}
	f.Fuzz(func(t *testing.T, path, other string) {
		entry := policy.SocketEntry(path)
		doc := policy.Document{Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{entry}}}
		sc, err := policy.Compile(doc, policy.Env{})
		if (err == nil) != (policy.ValidateSocketPath(path) == nil) {
			t.Fatalf("Compile and ValidateSocketPath disagree on %q: %v", path, err)
		}
		if err != nil {
			return
		}
		if !filepath.IsAbs(path) || filepath.Clean(path) != path || len(path) > 107 {
			t.Fatalf("accepted %q", path)
		}
		n := sc.Network()
		if ok, rule := n.AllowSocket(path); !ok || rule != "network[0] "+entry {
			t.Fatalf("AllowSocket(%q) = %v, %q", path, ok, rule)
		}
		if ok, _ := n.AllowSocket(other); ok != (other == path) {
			t.Fatalf("entry %q: AllowSocket(%q) = %v", entry, other, ok)
		}
		if n.Mode() != policy.NetworkNone {
			t.Fatalf("entry %q: mode %s", entry, n.Mode())
		}
	})
}
