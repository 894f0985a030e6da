package gateway

import (
	"testing"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// A one-time grant of a host widens the network list in memory: none
// becomes a list of that host, a list gains it, any stays any.
func TestWidenDocumentHosts(t *testing.T) {
	x, err := sessions.ExpansionOf(policy.Widening{Flag: "--allow-host", Value: "example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   policy.NetworkRules
		mode policy.NetworkMode
		want []string
	}{
		{"none", policy.NetworkRules{}, policy.NetworkList, []string{"example.com:8443"}},
		{"list", policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"github.com"}}, policy.NetworkList, []string{"github.com", "example.com:8443"}},
		{"any", policy.NetworkRules{Mode: policy.NetworkAny}, policy.NetworkAny, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := widenDocument(policy.Document{Network: tc.in}, x)
			if doc.Network.Mode != tc.mode || len(doc.Network.Hosts) != len(tc.want) {
				t.Fatalf("network = %+v, want %s %v", doc.Network, tc.mode, tc.want)
			}
			for i := range tc.want {
				if doc.Network.Hosts[i] != tc.want[i] {
					t.Fatalf("network = %+v, want %v", doc.Network, tc.want)
				}
			}
			sc, err := policy.Compile(doc, policy.Env{})
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := sc.Network().AllowHost("example.com", 8443); !ok {
				t.Fatalf("example.com:8443 not allowed by %+v", doc.Network)
			}
		})
	}
	if _, err := sessions.ExpansionOf(policy.Widening{Flag: "--allow-host", Value: "*.example.com"}); err == nil {
		t.Fatal("an invalid host entry was accepted as a widening")
	}
}

// A one-time grant of a unix socket names it in the network list: none
// and a host list gain the entry, any becomes the list [any, unix:…] and
// still allows every host.
func TestWidenDocumentSockets(t *testing.T) {
	x, err := sessions.ExpansionOf(policy.Widening{Flag: "--allow-socket", Value: "/run/docker.sock"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   policy.NetworkRules
		mode policy.NetworkMode
	}{
		{"none", policy.NetworkRules{}, policy.NetworkNone},
		{"list", policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"github.com"}}, policy.NetworkList},
		{"any", policy.NetworkRules{Mode: policy.NetworkAny}, policy.NetworkAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := policy.Compile(widenDocument(policy.Document{Network: tc.in}, x), policy.Env{})
			if err != nil {
				t.Fatal(err)
			}
			n := sc.Network()
			if ok, _ := n.AllowSocket("/run/docker.sock"); !ok || n.Mode() != tc.mode {
				t.Fatalf("network %+v: mode %s, socket allowed %v; want mode %s", n, n.Mode(), ok, tc.mode)
			}
		})
	}
	if _, err := sessions.ExpansionOf(policy.Widening{Flag: "--allow-socket", Value: "run/x.sock"}); err == nil {
		t.Fatal("a relative socket was accepted as a widening")
	}
}
