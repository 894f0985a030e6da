package policy

import (
	"slices"
	"testing"
)

func TestNetworkLoopbackPorts(t *testing.T) {
	for _, tt := range []struct {
		rules NetworkRules
		want  []int
	}{
		{NetworkRules{Mode: NetworkList, Hosts: []string{"localhost:8080", "127.0.0.1:9000", "[::1]:9000", "github.com", "10.0.0.1:22", "localhost"}}, []int{80, 443, 8080, 9000}},
		{NetworkRules{Mode: NetworkList, Hosts: []string{"github.com", ".example.com:8080"}}, nil},
		{NetworkRules{Mode: NetworkAny}, nil},
	} {
		n, err := compileNetwork(tt.rules)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.LoopbackPorts(); !slices.Equal(got, tt.want) {
			t.Errorf("LoopbackPorts of %v = %v, want %v", tt.rules.Hosts, got, tt.want)
		}
	}
}
