// Package deptest enforces the package dependency direction of docs/design.md.
package deptest

import (
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/scopegate/scopegate"

// allowed lists, for every package of the module, the module packages it may
// import (directly or not). A package missing here fails the test: the
// design's picture must be updated with it.
var allowed = map[string][]string{
	"policy":                {"internal/yamlmsg"},
	"metrics":               {},
	"telemetry":             {"audit", "policy", "internal/yamlmsg", "internal/atomicfile"},
	"roam":                  {"internal/atomicfile"},
	"profiles":              {"policy", "internal/yamlmsg"},
	"sessions":              {"policy", "profiles", "internal/yamlmsg", "internal/atomicfile"},
	"audit":                 {"policy", "internal/yamlmsg", "internal/atomicfile"},
	"exec":                  {"internal/watch", "policy", "exec/netproxy", "internal/yamlmsg", "internal/atomicfile"},
	"exec/netproxy":         {},
	"agents":                {"policy", "internal/yamlmsg"},
	"learn":                 {"audit", "policy", "internal/yamlmsg", "internal/atomicfile"},
	"gateway":               {"internal/watch", "agents", "policy", "profiles", "sessions", "exec", "exec/netproxy", "audit", "metrics", "roam", "config", "internal/yamlmsg", "internal/atomicfile"},
	"mcp":                   {"internal/watch", "gateway", "agents", "policy", "profiles", "sessions", "exec", "exec/netproxy", "audit", "metrics", "roam", "config", "internal/yamlmsg", "internal/atomicfile"},
	"cmd/scopegate":         {"telemetry", "learn", "internal/watch", "mcp", "agents", "gateway", "policy", "profiles", "sessions", "exec", "exec/netproxy", "audit", "metrics", "roam", "server", "server/client", "config", "internal/yamlmsg", "internal/atomicfile"},
	"server":                {"internal/watch", "mcp", "agents", "gateway", "policy", "profiles", "sessions", "exec", "exec/netproxy", "audit", "metrics", "roam", "config", "server/client", "internal/yamlmsg", "internal/atomicfile"},
	"server/client":         {},
	"config":                {"policy", "internal/yamlmsg"},
	"cmd/loadgen":           {},
	"internal/deptest":      {},
	"internal/orgcheck":     {},
	"internal/npmclient":    {},
	"internal/yamlmsg":      {},
	"internal/atomicfile":   {},
	"internal/watch":        {},
	"sessions/sessionstest": {"policy", "profiles", "sessions", "internal/atomicfile"},
}

type pkg struct {
	ImportPath string
	Deps       []string
}

func TestDependencyDirection(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps=false", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		rules, ok := allowed[name]
		if !ok {
			t.Errorf("package %s has no dependency rule: add it here and to docs/design.md", name)
			continue
		}
		ok2 := map[string]bool{}
		for _, r := range rules {
			ok2[r] = true
		}
		var bad []string
		for _, d := range p.Deps {
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			dn := strings.TrimPrefix(d, module+"/")
			if !ok2[dn] {
				bad = append(bad, dn)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s must not depend on %v", name, bad)
		}
	}
	if n < 3 {
		t.Fatalf("go list found only %d packages", n)
	}
}

// mayImportGateway are the packages allowed to import gateway: the entry
// points — the CLI, the HTTP server and the MCP server.
var mayImportGateway = map[string]bool{module + "/cmd/scopegate": true, module + "/server": true, module + "/mcp": true}

func TestOnlyEntryPointsImportGateway(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || mayImportGateway[fields[0]] {
			continue
		}
		for _, imp := range fields[1:] {
			if imp == module+"/gateway" {
				t.Errorf("%s imports gateway; only cmd/scopegate, server and mcp may", fields[0])
			}
		}
	}
}

// perCallExcluded are the packages the per-call build (cmd/scopegate with
// -tags lean) must not link: every process pays the package initialisation
// of what its binary links, and these serve only serve and mcp.
var perCallExcluded = []string{
	"net/http",
	"crypto/tls",
	"github.com/prometheus/",
	"google.golang.org/protobuf/",
	"github.com/modelcontextprotocol/go-sdk/",
	"github.com/google/jsonschema-go/",
	module + "/server",
	module + "/metrics",
	module + "/mcp",
}

func TestPerCallBuildLeavesOutServe(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "lean", "-deps", "./cmd/scopegate")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list found only %d packages", len(deps))
	}
	for _, d := range deps {
		for _, x := range perCallExcluded {
			if d == x || strings.HasSuffix(x, "/") && strings.HasPrefix(d, x) {
				t.Errorf("the per-call build links %s", d)
			}
		}
	}
}
