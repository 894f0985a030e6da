package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/gateway"
)

// TestHelperPath: Options.HelperPath is the helper of every runner of a
// call: the one that asks, for the decision, whether git's repository
// will be read-only (which probes the host for the private view), and the
// one that runs the call.
func TestHelperPath(t *testing.T) {
	p := newGitProject(t)
	_, dir := p.newBranch(t, "enforce")
	log := filepath.Join(p.root, "helper.log")
	helper := filepath.Join(p.root, "helper")
	script := "#!/bin/sh\necho \"$1\" >> '" + log + "'\nexec '" + helperPath(t) + "' \"$@\"\n"
	if err := os.WriteFile(helper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	g := p.newGateway(t, helper)
	res, err := g.Call(context.Background(), gateway.Target{BranchDir: dir}, call("shell", map[string]any{"command": "git status --short"}, p.proj))
	if err != nil {
		t.Fatal(err)
	}
	confined(t, res)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the helper never ran: %v", err)
	}
	if got, want := strings.Fields(string(data)), []string{"__scopegate-probe-namespaces", "__scopegate-confine"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the helper ran as %q, want %q: the probe for the decision, then the run", got, want)
	}
}
