package policy_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// compileNet compiles a scope whose only section is network.
func compileNet(t testing.TB, yml string) policy.Network {
	t.Helper()
	doc, err := policy.ParseDocument([]byte(yml))
	if err != nil {
		t.Fatalf("parse %q: %v", yml, err)
	}
	sc, err := policy.Compile(doc, policy.Env{})
	if err != nil {
		t.Fatalf("compile %q: %v", yml, err)
	}
	return sc.Network()
}

func TestNetworkModes(t *testing.T) {
	for _, tc := range []struct {
		name, yml, mode string
	}{
		{"missing", "paths: {read: [/x/**]}\n", "none"},
		{"empty value", "network:\n", "none"},
		{"none", "network: none\n", "none"},
		{"any", "network: any\n", "any"},
		{"empty list", "network: []\n", "none"},
		{"list", "network:\n  - github.com\n", "list"},
		{"flow list", "network: [github.com, localhost:8080]\n", "list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compileNet(t, tc.yml).Mode(); got.String() != tc.mode {
				t.Errorf("Mode() = %q, want %q", got, tc.mode)
			}
		})
	}
}

func TestNetworkInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, yml, want string
	}{
		{"other keyword", "network: all\n", `not "all"`},
		{"boolean", "network: true\n", "network is none, any or a list"},
		{"mapping", "network: {github.com: 443}\n", "network is none, any or a list"},
		{"nested list", "network:\n  - [a, b]\n", "network[0] is not a host"},
		{"null item", "network:\n  -\n", "network[0] is not a host"},
		{"star", "network:\n  - '*.example.com'\n", "may not begin with *"},
		{"inner star", "network:\n  - a.*.example.com\n", "wildcards"},
		{"url", "network:\n  - https://github.com\n", "URL"},
		{"path", "network:\n  - /etc/hosts\n", "path"},
		{"host path", "network:\n  - github.com/foo\n", "path"},
		{"user", "network:\n  - git@github.com\n", "user part"},
		{"space", "network:\n  - 'a b'\n", "space"},
		{"empty", "network:\n  - ''\n", "empty entry"},
		{"port zero", "network:\n  - github.com:0\n", "port"},
		{"port big", "network:\n  - github.com:65536\n", "port"},
		{"port sign", "network:\n  - github.com:+80\n", "port"},
		{"port empty", "network:\n  - 'github.com:'\n", "port"},
		{"no host", "network:\n  - ':80'\n", "no host"},
		{"ipv6 port no brackets", "network:\n  - 'fe80::1::80'\n", "[address]:port"},
		{"bad brackets", "network:\n  - '[github.com]:80'\n", "not an IPv6"},
		{"v4 in brackets", "network:\n  - '[1.2.3.4]:80'\n", "not an IPv6"},
		{"unclosed", "network:\n  - '[::1'\n", "unclosed"},
		{"numeric", "network:\n  - 2130706433\n", "neither a host name"},
		{"hex ip", "network:\n  - 0x7f.1\n", "neither a host name"},
		{"short ip", "network:\n  - 127.1\n", "neither a host name"},
		{"bad ip", "network:\n  - 1.2.3.256\n", "neither a host name"},
		{"empty label", "network:\n  - a..b\n", "empty label"},
		{"dot only", "network:\n  - .\n", "empty host name"},
		{"unicode", "network:\n  - bücher.example\n", "xn--"},
		{"bad char", "network:\n  - 'a;b.com'\n", "character"},
		{"zone", "network:\n  - 'fe80::1%eth0'\n", "character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := policy.ParseDocument([]byte(tc.yml))
			if err == nil {
				_, err = policy.Compile(doc, policy.Env{})
			}
			if err == nil {
				t.Fatalf("%q: no error", tc.yml)
			}
			if !errors.Is(err, policy.ErrInvalidScope) {
				t.Errorf("%q: error %v does not wrap ErrInvalidScope", tc.yml, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: error %q does not say %q", tc.yml, err, tc.want)
			}
		})
	}
}

func TestNetworkInvalidNamesEntry(t *testing.T) {
	doc, err := policy.ParseDocument([]byte("network:\n  - github.com\n  - https://evil.example/x\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = policy.Compile(doc, policy.Env{})
	if err == nil || !strings.Contains(err.Error(), `network[1] "https://evil.example/x"`) {
		t.Fatalf("error %v does not name the entry", err)
	}
}

// netScope is the list of the host tests.
const netScope = `network:
  - github.com
  - .githubusercontent.com
  - proxy.golang.org:443
  - localhost:8080
  - 10.0.0.5:5432
  - '[fd00::7]:9000'
  - ::1
  - 169.254.169.254
  - Example.ORG.
  - .internal
  - 140.82.112.3
`

func TestNetworkAllowHost(t *testing.T) {
	n := compileNet(t, netScope)
	for _, tc := range []struct {
		host string
		port int
		rule string // "" when refused
	}{
		{"github.com", 443, "network[0] github.com"},
		{"github.com", 80, "network[0] github.com"},
		{"GitHub.COM.", 443, "network[0] github.com"},
		{"github.com", 22, ""},
		{"api.github.com", 443, ""},
		{"evilgithub.com", 443, ""},
		{"github.com.evil.example", 443, ""},
		{"raw.githubusercontent.com", 443, "network[1] .githubusercontent.com"},
		{"a.b.githubusercontent.com", 80, "network[1] .githubusercontent.com"},
		{"githubusercontent.com", 443, ""},
		{"xgithubusercontent.com", 443, ""},
		{"proxy.golang.org", 443, "network[2] proxy.golang.org:443"},
		{"proxy.golang.org", 80, ""},
		{"localhost", 8080, "network[3] localhost:8080"},
		{"LOCALHOST.", 8080, "network[3] localhost:8080"},
		{"localhost", 8081, ""},
		{"127.0.0.1", 8080, "network[3] localhost:8080"},
		{"127.1.2.3", 8080, "network[3] localhost:8080"},
		{"[::1]", 8080, "network[3] localhost:8080"},
		{"::ffff:127.0.0.1", 8080, "network[3] localhost:8080"},
		{"10.0.0.5", 5432, "network[4] 10.0.0.5:5432"},
		{"10.0.0.5", 443, ""},
		{"10.0.0.6", 5432, ""},
		{"fd00::7", 9000, "network[5] [fd00::7]:9000"},
		{"[fd00::7]", 9000, "network[5] [fd00::7]:9000"},
		{"[fd00::7%eth0]", 9000, "network[5] [fd00::7]:9000"},
		{"::1", 443, "network[6] ::1"},
		{"169.254.169.254", 80, "network[7] 169.254.169.254"},
		{"169.254.169.254", 8080, ""},
		{"example.org", 443, "network[8] Example.ORG."},
		{"www.example.org", 443, ""},
		{"metadata.google.internal", 80, "network[9] .internal"},
		{"140.82.112.3", 443, "network[10] 140.82.112.3"},
		{"2130706433", 8080, ""},
		{"0x7f.1", 8080, ""},
		{"", 443, ""},
		{"github.com", 0, ""},
		{"github.com", 70000, ""},
		{"git hub.com", 443, ""},
		{"bücher.example", 443, ""},
	} {
		t.Run(tc.host+":"+itoa(tc.port), func(t *testing.T) {
			ok, rule := n.AllowHost(tc.host, tc.port)
			want := tc.rule
			if want == "" {
				want = "network"
			}
			if ok != (tc.rule != "") || rule != want {
				t.Errorf("AllowHost(%q, %d) = %v, %q; want %v, %q", tc.host, tc.port, ok, rule, tc.rule != "", want)
			}
		})
	}
}

func TestNetworkAllowAddr(t *testing.T) {
	n := compileNet(t, netScope)
	for _, tc := range []struct {
		host string
		port int
		ip   string
		rule string // "" when refused
	}{
		{"github.com", 443, "140.82.112.4", "network[0] github.com"},
		{"github.com", 443, "2606:50c0:8000::154", "network[0] github.com"},
		{"github.com", 22, "140.82.112.4", ""},
		{"evil.example", 443, "140.82.112.4", ""},
		// a DNS answer pointing an allowed public name inside
		{"github.com", 443, "127.0.0.1", ""},
		{"github.com", 443, "::2", ""},
		{"github.com", 443, "10.1.2.3", ""},
		{"github.com", 443, "192.168.1.1", ""},
		{"github.com", 443, "172.16.0.1", ""},
		{"github.com", 443, "100.64.0.1", ""},
		{"github.com", 443, "169.254.1.1", ""},
		{"github.com", 443, "fd12::1", ""},
		{"github.com", 443, "fe80::1", ""},
		{"github.com", 443, "0.0.0.0", ""},
		{"github.com", 443, "::", ""},
		{"github.com", 443, "::ffff:10.0.0.1", ""},
		{"github.com", 443, "64:ff9b::a9fe:a9fe", ""},
		{"github.com", 443, "64:ff9b::8c52:7004", "network[0] github.com"},
		{"github.com", 443, "2002:a00:1::1", ""},
		{"github.com", 443, "224.0.0.1", ""},
		{"github.com", 443, "255.255.255.255", ""},
		// a named address is reachable, by any allowed name pointing at it
		{"raw.githubusercontent.com", 443, "140.82.112.3", "network[1] .githubusercontent.com"},
		{"db.githubusercontent.com", 443, "169.254.169.254", "network[7] 169.254.169.254"},
		{"github.com", 443, "::1", "network[6] ::1"},
		{"github.com", 443, "10.0.0.5", ""},
		// metadata only where named exactly
		{"metadata.google.internal", 80, "169.254.169.254", "network[7] 169.254.169.254"},
		{"metadata.google.internal", 443, "169.254.170.2", ""},
		{"169.254.169.254", 80, "169.254.169.254", "network[7] 169.254.169.254"},
		{"169.254.169.254", 80, "169.254.169.253", ""},
		// loopback through localhost
		{"localhost", 8080, "127.0.0.1", "network[3] localhost:8080"},
		{"localhost", 8080, "::1", "network[3] localhost:8080"},
		{"localhost", 8080, "10.0.0.9", ""},
		{"localhost", 8080, "140.82.112.4", ""},
		{"127.0.0.1", 8080, "127.0.0.1", "network[3] localhost:8080"},
		{"127.0.0.1", 8080, "127.0.0.2", ""},
		{"10.0.0.5", 5432, "10.0.0.5", "network[4] 10.0.0.5:5432"},
		{"fd00::7", 9000, "fd00::7", "network[5] [fd00::7]:9000"},
		{"::1", 443, "::1", "network[6] ::1"},
		{"::1", 443, "127.0.0.1", ""},
	} {
		t.Run(tc.host+"->"+tc.ip, func(t *testing.T) {
			ok, rule := n.AllowAddr(tc.host, tc.port, netip.MustParseAddr(tc.ip))
			want := tc.rule
			if want == "" {
				want = "network"
			}
			if ok != (tc.rule != "") || rule != want {
				t.Errorf("AllowAddr(%q, %d, %s) = %v, %q; want %v, %q", tc.host, tc.port, tc.ip, ok, rule, tc.rule != "", want)
			}
		})
	}
	if ok, _ := n.AllowAddr("github.com", 443, netip.Addr{}); ok {
		t.Error("AllowAddr with no address allowed")
	}
}

// TestNetworkMetadata checks the cloud metadata addresses: refused under a
// broad list, for a name and as a literal, unless an entry is the address.
func TestNetworkMetadata(t *testing.T) {
	broad := compileNet(t, "network: [localhost, .com, .internal, metadata.google.internal, 10.0.0.1, '[fd00:ec2::1]:80']\n")
	for _, a := range []string{"169.254.169.254", "169.254.170.2", "169.254.169.253", "169.254.0.23", "fd00:ec2::254",
		"100.100.100.200", "192.0.0.192", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe"} {
		ip := netip.MustParseAddr(a)
		for _, host := range []string{"metadata.google.internal", "x.com", "localhost"} {
			if ok, rule := broad.AllowAddr(host, 80, ip); ok {
				t.Errorf("AllowAddr(%s, 80, %s) allowed by %s", host, a, rule)
			}
		}
		if ok, rule := broad.AllowHost(a, 80); ok {
			t.Errorf("AllowHost(%s, 80) allowed by %s", a, rule)
		}
		exact := compileNet(t, "network: ['"+a+"']\n")
		if ok, _ := exact.AllowAddr(a, 80, ip); !ok {
			t.Errorf("AllowAddr(%s) refused where an entry is the address", a)
		}
	}
}

func TestNetworkNoneAny(t *testing.T) {
	none := compileNet(t, "network: none\n")
	missing := compileNet(t, "")
	anyNet := compileNet(t, "network: any\n")
	ip := netip.MustParseAddr("127.0.0.1")
	for _, n := range []policy.Network{none, missing} {
		if ok, rule := n.AllowHost("localhost", 80); ok || rule != "network" {
			t.Errorf("none: AllowHost = %v, %q", ok, rule)
		}
		if ok, _ := n.AllowAddr("localhost", 80, ip); ok {
			t.Error("none: AllowAddr allowed")
		}
	}
	if ok, rule := anyNet.AllowHost("evil.example", 4444); !ok || rule != "network any" {
		t.Errorf("any: AllowHost = %v, %q", ok, rule)
	}
	if ok, _ := anyNet.AllowAddr("evil.example", 4444, ip); !ok {
		t.Error("any: AllowAddr refused")
	}
}

func TestNetworkDocumentRoundTrip(t *testing.T) {
	for _, yml := range []string{"network: none\n", "network: any\n", "network:\n  - github.com\n  - .x.org:8443\n  - '[::1]:80'\n", ""} {
		doc, err := policy.ParseDocument([]byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		out, err := doc.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := policy.ParseDocument(out)
		if err != nil {
			t.Fatalf("re-parse %q: %v", out, err)
		}
		if back.Network.Mode != doc.Network.Mode || strings.Join(back.Network.Hosts, ",") != strings.Join(doc.Network.Hosts, ",") {
			t.Errorf("%q: round trip gives %+v, want %+v", yml, back.Network, doc.Network)
		}
		if yml == "" && strings.Contains(string(out), "network") {
			t.Errorf("a missing network key is written: %q", out)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON policy.Document
		if err := json.Unmarshal(js, &fromJSON); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if want := compileNet(t, yml).Mode(); func() policy.NetworkMode {
			sc, err := policy.Compile(fromJSON, policy.Env{})
			if err != nil {
				t.Fatal(err)
			}
			return sc.Network().Mode()
		}() != want {
			t.Errorf("%s: JSON round trip changes the mode", js)
		}
	}
}

func TestValidateHostEntry(t *testing.T) {
	for _, ok := range []string{"github.com", ".github.com", "github.com:22", "[::1]:8080", "::1", "10.0.0.1:5432", "localhost", "xn--bcher-kva.example"} {
		if err := policy.ValidateHostEntry(ok); err != nil {
			t.Errorf("ValidateHostEntry(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"*.github.com", "https://github.com", "", "a b", "github.com:http"} {
		if err := policy.ValidateHostEntry(bad); err == nil {
			t.Errorf("ValidateHostEntry(%q) accepted", bad)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// FuzzNetworkEntry checks entry parsing and matching: never a panic; a
// valid entry allows the host it names (at its port, or 443) and nothing
// else at an unlisted port; the decision ignores case and a trailing dot;
// a DNS answer for a name is never a non-public address it does not name.
func FuzzNetworkEntry(f *testing.F) {
	for _, s := range []string{"github.com", ".githubusercontent.com", "proxy.golang.org:443", "localhost:8080",
		"10.0.0.5:5432", "[fd00::7]:9000", "::1", "169.254.169.254", "*.x.com", "https://a.b", "a..b", "127.1", "Example.ORG."} {
		f.Add(s, "api.github.com", 443)
	}
	f.Fuzz(func(t *testing.T, entry, host string, port int) {
		if entry == "any" || strings.HasPrefix(entry, "unix:") {
			return // not a host (FuzzSocketEntry)
		}
		doc := policy.Document{Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{entry}}}
		sc, err := policy.Compile(doc, policy.Env{})
		if (err == nil) != (policy.ValidateHostEntry(entry) == nil) {
			t.Fatalf("Compile and ValidateHostEntry disagree on %q: %v", entry, err)
		}
		if err != nil {
			return
		}
		n := sc.Network()
		rule := "network[0] " + entry
		ok, r := n.AllowHost(host, port)
		if ok && r != rule || !ok && r != "network" {
			t.Fatalf("AllowHost(%q, %d) = %v, %q", host, port, ok, r)
		}
		up, ur := n.AllowHost(strings.ToUpper(host)+".", port)
		if !strings.HasSuffix(host, ".") && !strings.ContainsAny(host, "[]%") && (up != ok || ur != r) {
			t.Fatalf("AllowHost(%q) = %v but AllowHost(%q) = %v", host, ok, strings.ToUpper(host)+".", up)
		}
		// The entry's own host is allowed.
		h, p := entry, 443
		if hh, pp, err := net.SplitHostPort(entry); err == nil {
			h, p = hh, mustAtoi(t, pp)
		}
		if strings.HasPrefix(h, ".") {
			h = "a" + h
		}
		if ok, _ := n.AllowHost(h, p); !ok {
			t.Fatalf("entry %q does not allow %q:%d", entry, h, p)
		}
		for _, a := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "fd00:ec2::254", "192.168.0.1"} {
			ip := netip.MustParseAddr(a)
			if ok, _ := n.AllowAddr("host.example", p, ip); ok {
				t.Fatalf("entry %q: a name resolving to %s allowed", entry, a)
			}
		}
	})
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("port %q: %v", s, err)
	}
	return n
}

func TestHostReason(t *testing.T) {
	if !policy.ReasonHostNotInScope.Widenable() {
		t.Error("host_not_in_scope is not widenable")
	}
	found := false
	for _, r := range policy.Reasons() {
		found = found || r == policy.ReasonHostNotInScope
	}
	if !found {
		t.Error("host_not_in_scope is not in Reasons()")
	}
}

// BenchmarkNetworkAllow measures the decision of one connection (its host,
// then the address it resolved to) against a list of the size of the
// coding profile's.
func BenchmarkNetworkAllow(b *testing.B) {
	n := compileNet(b, "network: [proxy.golang.org:443, sum.golang.org:443, registry.npmjs.org:443, pypi.org:443, "+
		"files.pythonhosted.org:443, crates.io:443, static.crates.io:443, index.crates.io:443, github.com:443, "+
		"codeload.github.com:443, .githubusercontent.com:443]\n")
	ip := netip.MustParseAddr("185.199.108.133")
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := n.AllowHost("objects.githubusercontent.com", 443); !ok {
			b.Fatal("refused")
		}
		if ok, _ := n.AllowAddr("objects.githubusercontent.com", 443, ip); !ok {
			b.Fatal("refused")
		}
	}
}
