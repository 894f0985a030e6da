package main

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
)

// netProbes are the hosts, ports and resolved addresses whose decisions a
// rewrite must keep.
var netProbes = []struct {
	host string
	port int
	ip   string
}{
	{"github.com", 443, "140.82.112.4"}, {"github.com", 80, "140.82.112.4"}, {"github.com", 22, "140.82.112.4"},
	{"raw.githubusercontent.com", 443, "185.199.108.133"}, {"githubusercontent.com", 443, "185.199.108.133"},
	{"proxy.golang.org", 443, "142.250.1.1"}, {"proxy.golang.org", 80, "142.250.1.1"},
	{"localhost", 8080, "127.0.0.1"}, {"127.0.0.1", 8080, "127.0.0.1"}, {"localhost", 9090, "127.0.0.1"},
	{"10.0.0.5", 5432, "10.0.0.5"}, {"db.internal", 5432, "10.0.0.5"},
	{"169.254.169.254", 80, "169.254.169.254"}, {"evil.example", 443, "203.0.113.9"},
	{"::1", 443, "::1"}, {"example.org", 443, "93.184.216.34"},
}

// socketProbes are the unix sockets whose decisions a rewrite must keep.
var socketProbes = []string{"/run/docker.sock", "/var/run/docker.sock", "/home/u/.gnupg/S.gpg-agent", "/run/user/1000/bus"}

// netDecisions are the decisions of a scope file's network over netProbes.
func netDecisions(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		t.Fatalf("%s:\n%s\n%v", file, data, err)
	}
	sc, err := policy.Compile(doc, policy.Env{Home: "/"})
	if err != nil {
		t.Fatalf("%s:\n%s\n%v", file, data, err)
	}
	n := sc.Network()
	out := []string{"mode " + n.Mode().String(), "sockets " + strings.Join(n.Sockets(), " ")}
	for _, p := range socketProbes {
		ok, _ := n.AllowSocket(p)
		out = append(out, fmt.Sprintf("unix:%s %v", p, ok))
	}
	for _, p := range netProbes {
		h, _ := n.AllowHost(p.host, p.port)
		a, _ := n.AllowAddr(p.host, p.port, netip.MustParseAddr(p.ip))
		out = append(out, fmt.Sprintf("%s:%d host=%v addr=%v", p.host, p.port, h, a))
	}
	return out
}

// TestGptelNetworkRoundTrip rewrites a scope holding each form of the
// network section with gptel's scope writer (as gptel's scope expansion
// does, adding a write pattern) and checks that yaml.el reads every entry
// as the string scopegate reads, and that the network decisions are
// unchanged. The built-in profiles' lists are among the forms.
func TestGptelNetworkRoundTrip(t *testing.T) {
	requireProgram(t, "emacs")
	var l profiles.Loader
	coding, err := l.Load("coding")
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]string{
		"none":    "network: none\n",
		"any":     "network: any\n",
		"missing": "",
		"list": "network:\n  - github.com\n  - .githubusercontent.com\n  - proxy.golang.org:443\n  - localhost:8080\n" +
			"  - 10.0.0.5:5432\n  - 169.254.169.254\n  - Example.ORG.\n  - ::1\n",
		"coding":            "network:\n  - " + strings.Join(coding.Network.Hosts, "\n  - ") + "\n",
		"sockets":           "network:\n  - unix:/run/docker.sock\n  - unix:/home/u/.gnupg/S.gpg-agent\n",
		"any and sockets":   "network:\n  - any\n  - unix:/run/docker.sock\n",
		"hosts and sockets": "network: [github.com, \"unix:/run/user/1000/bus\", localhost:8080]\n",
	}
	dir := t.TempDir()
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".yml")
			text := "paths:\n  read:\n    - \"/srv/**\"\nshell_commands:\n  allow:\n    - curl\n" + form
			if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			before := netDecisions(t, file)
			doc, _ := policy.ParseDocument([]byte(text))
			recs := gptelEmacs(t, "dump", nil, file)
			got := lists(recs)["network"]
			if len(got) != len(doc.Network.Hosts) {
				t.Errorf("yaml.el reads %d network entries, scopegate %d: %+v", len(got), len(doc.Network.Hosts), got)
			}
			for i, r := range got {
				if i < len(doc.Network.Hosts) && (r.Type != "string" || r.Value != doc.Network.Hosts[i]) {
					t.Errorf("network[%d]: yaml.el reads %s %q, scopegate %q", i, r.Type, r.Value, doc.Network.Hosts[i])
				}
			}
			gptelEmacs(t, "rewrite", []string{"GPTEL_ADD_WRITE=/srv/out/**"}, file)
			after := netDecisions(t, file)
			if strings.Join(before, "\n") != strings.Join(after, "\n") {
				data, _ := os.ReadFile(file)
				t.Errorf("network decisions changed by gptel's rewrite:\n%s\nbefore:\n%s\nafter:\n%s", data, strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
			data, _ := os.ReadFile(file)
			if !strings.Contains(string(data), "/srv/out/**") {
				t.Errorf("the rewrite did not add the write pattern:\n%s", data)
			}
			t.Logf("rewritten:\n%s", data)
		})
	}
}
