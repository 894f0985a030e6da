package gateway

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/exec/netproxy"
)

// connCounter is an Observer that counts connections.
type connCounter struct {
	nopObserver
	allowed, denied int
}

func (c *connCounter) ObserveConnections(allowed, denied int) {
	c.allowed += allowed
	c.denied += denied
}

// TestResultConnections: the connections of a shell result reach the
// call's tools.org entry (** Network, :NET_DENIED:), read back the same,
// and are counted by decision.
func TestResultConnections(t *testing.T) {
	res := exec.Result{ExitCode: 0, Stdout: "ok\n", NetworkMode: exec.NetworkProxy, Network: []netproxy.Conn{
		{Host: "github.com", Port: 443, Allowed: true, Rule: "network[0] github.com"},
		{Host: "evil.example", Port: 443, Rule: "network"},
		{Host: "169.254.169.254", Port: 80, Rule: "network"},
	}}
	obs := &connCounter{}
	g := &Gateway{opts: Options{Observer: obs}}
	out := outcome{result: res, exitCode: res.ExitCode, stdout: res.Stdout, network: res.Network}
	e := audit.Entry{CallID: "01TEST", Time: time.Unix(1700000000, 0).UTC(), Tool: "shell", Decision: audit.DecisionAllowed,
		Args: []byte(`{"command":"curl https://github.com"}`)}
	out.fill(&e, 12*time.Millisecond)
	g.observeConnections(out.network)
	if obs.allowed != 1 || obs.denied != 2 {
		t.Errorf("counted %d allowed, %d denied; want 1, 2", obs.allowed, obs.denied)
	}

	path := filepath.Join(t.TempDir(), "tools.org")
	if err := (&audit.Log{Path: path}).Append(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{":NET_DENIED: 2\n", "** Network\n#+begin_example\nallowed github.com:443 network[0] github.com\n" +
		"denied evil.example:443 network\ndenied 169.254.169.254:80 network\n#+end_example\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("tools.org lacks %q:\n%s", want, text)
		}
	}
	got, err := audit.ReadFile(path, audit.Filter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("read back: %v, %d entries", err, len(got))
	}
	want := []audit.Conn{{Host: "github.com", Port: 443, Allowed: true, Rule: "network[0] github.com"},
		{Host: "evil.example", Port: 443, Rule: "network"}, {Host: "169.254.169.254", Port: 80, Rule: "network"}}
	if !reflect.DeepEqual(got[0].Network, want) {
		t.Errorf("read back %+v, want %+v", got[0].Network, want)
	}

	// No connections: no section, no property, nothing counted.
	e2 := audit.Entry{CallID: "01TEST2", Tool: "shell", Decision: audit.DecisionAllowed}
	outcome{}.fill(&e2, 0)
	g.observeConnections(nil)
	if e2.Network != nil || obs.allowed != 1 || obs.denied != 2 {
		t.Errorf("a call without connections: %+v, counted %d, %d", e2.Network, obs.allowed, obs.denied)
	}
}
