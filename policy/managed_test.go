package policy_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// managedProject is a project whose scope reads the whole system, writes
// the project and a scratch directory, allows a few programs and every
// host, within a managed layer whose ceiling reads and writes only the
// project (and reads the system's programs), denies .env and secrets/,
// ssh, and allows only .corp.example.com:443 and one socket.
func managedProject(t *testing.T) (proj, scratch string, sc *policy.Scope, env policy.Env) {
	t.Helper()
	root := t.TempDir()
	proj, scratch = filepath.Join(root, "proj"), filepath.Join(root, "scratch")
	for rel, c := range map[string]string{"README.md": "x", ".env": "K=v", "secrets/key": "k", "src/a.go": "package a"} {
		writeFile(t, filepath.Join(proj, rel), c, 0o644)
	}
	writeFile(t, filepath.Join(scratch, "notes"), "n", 0o644)
	env = policy.Env{Home: filepath.Join(root, "home")}
	own, err := policy.Compile(policy.Document{
		Paths:   policy.PathRules{Read: []string{"/**"}, Write: []string{proj + "/**", scratch + "/**"}, Deny: []string{"**/.git/**"}},
		Shell:   policy.ShellRules{Allow: []string{"ls", "cat", "ssh", "curl", "grep"}},
		Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"any", "unix:/run/a.sock", "unix:/run/b.sock"}},
	}, env)
	if err != nil {
		t.Fatal(err)
	}
	m, err := policy.CompileManaged(policy.ManagedRules{
		Paths: policy.ManagedPaths{Deny: []string{"**/.env", "**/secrets/**"},
			Ceiling: &policy.PathCeiling{Read: []string{"/usr/**", "/etc/**"}, Write: []string{proj + "/**"}}},
		Shell:   policy.ManagedShell{Deny: []string{"ssh"}},
		Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{".corp.example.com:443", "unix:/run/a.sock"}},
	}, env)
	if err != nil {
		t.Fatal(err)
	}
	return proj, scratch, own.Within(m), env
}

func fileCall(tool, path, cwd string) policy.Call {
	args := map[string]any{"path": path}
	if tool == policy.ToolWriteFile {
		args["content"] = "x"
	}
	raw, _ := json.Marshal(args)
	return policy.Call{Tool: tool, Args: raw, Cwd: cwd}
}

// The managed layer's denials are hard: reason managed, a rule naming the
// managed entry, no widening, unchanged by observe mode.
func TestManagedDecisions(t *testing.T) {
	proj, scratch, sc, env := managedProject(t)
	for _, tc := range []struct {
		name string
		call policy.Call
		rule string // "" allowed
	}{
		{"read in project", fileCall(policy.ToolReadFile, "README.md", proj), ""},
		{"managed deny", fileCall(policy.ToolReadFile, ".env", proj), "managed.paths.deny[0] **/.env"},
		{"managed deny below", fileCall(policy.ToolReadFile, "secrets/key", proj), "managed.paths.deny[1] **/secrets/**"},
		{"read ceiling", fileCall(policy.ToolReadFile, filepath.Join(scratch, "notes"), proj), policy.RuleManagedCeilingRead},
		{"system read", fileCall(policy.ToolReadFile, "/etc/hostname", proj), ""},
		{"write ceiling", fileCall(policy.ToolWriteFile, filepath.Join(scratch, "notes"), proj), policy.RuleManagedCeilingWrite},
		{"write in project", fileCall(policy.ToolWriteFile, "new.txt", proj), ""},
		{"command deny", shellCall("ssh host", proj), "managed.shell_commands.deny[0] ssh"},
		{"redirect ceiling", shellCall("ls > "+filepath.Join(scratch, "out"), proj), policy.RuleManagedCeilingWrite},
		{"host beyond under any", shellCall("curl https://github.com/", proj), policy.RuleManagedNetwork},
		{"host within", shellCall("curl https://git.corp.example.com/", proj), ""},
		{"host wrong port", shellCall("curl http://git.corp.example.com/", proj), policy.RuleManagedNetwork},
		{"socket beyond", shellCall("curl --unix-socket /run/b.sock http://x.corp.example.com/", proj), policy.RuleManagedNetwork},
		{"recursive reader over managed deny", shellCall("grep -r K .", proj), "managed.paths.deny[0] **/.env"},
		{"managed first", shellCall("python3 x.py; ssh host", proj), "managed.shell_commands.deny[0] ssh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := sc.Decide(tc.call, env)
			if tc.rule == "" {
				if !d.Allowed {
					t.Fatalf("denied: %s", d.Message)
				}
				return
			}
			if d.Allowed || d.Reason != policy.ReasonManaged || d.Rule != tc.rule {
				t.Fatalf("decision %v %s %q (%s), want managed %q", d.Allowed, d.Reason, d.Rule, d.Message, tc.rule)
			}
			if d.Widenable() || d.Widenings() != nil || strings.Contains(d.Message, policy.ExpandCommand) {
				t.Errorf("managed denial is widenable or hints: %+v", d)
			}
			if o := d.Observe(); o.Allowed {
				t.Errorf("observe mode lets a managed denial through")
			}
			if !strings.Contains(d.Message, "managed policy") {
				t.Errorf("message does not name the managed policy: %s", d.Message)
			}
		})
	}
}

// What is made of a scope within the layer is bounded by it: the deny
// patterns the view masks, the roots Landlock grants, the network the
// proxy and DNS stub decide.
func TestManagedWithinBounds(t *testing.T) {
	proj, scratch, sc, _ := managedProject(t)
	deny := sc.DenyPatterns()
	for _, want := range []string{"**/.env", "**/secrets/**", "**/.git/**"} {
		if !slices.Contains(deny, want) {
			t.Errorf("DenyPatterns %v lacks %s", deny, want)
		}
	}
	read, write := sc.Roots()
	realProj, _ := filepath.EvalSymlinks(proj)
	if !slices.Equal(write, []string{realProj}) {
		t.Errorf("write roots %v, want [%s]", write, realProj)
	}
	for _, r := range read {
		if r == "/" || strings.HasPrefix(r, filepath.Dir(scratch)) && r != realProj {
			t.Errorf("read root %s beyond the ceiling (%v)", r, read)
		}
	}
	n := sc.Network()
	if n.Mode() != policy.NetworkList {
		t.Errorf("mode %s, want list (any within a host ceiling)", n.Mode())
	}
	if ok, rule := n.AllowHost("github.com", 443); ok || rule != policy.RuleManagedNetwork {
		t.Errorf("AllowHost github.com = %v %s", ok, rule)
	}
	if ok, _ := n.AllowHost("x.corp.example.com", 443); !ok {
		t.Error("AllowHost x.corp.example.com:443 refused")
	}
	if ok, _ := n.AllowAddr("x.corp.example.com", 443, netip.MustParseAddr("10.0.0.1")); ok {
		t.Error("a private address is allowed")
	}
	if got := n.Sockets(); !slices.Equal(got, []string{"/run/a.sock"}) {
		t.Errorf("Sockets = %v", got)
	}
	if ok, rule := n.AllowSocket("/run/b.sock"); ok || rule != policy.RuleManagedNetwork {
		t.Errorf("AllowSocket b = %v %s", ok, rule)
	}
	if got := n.WithAnyHost().Mode(); got != policy.NetworkList {
		t.Errorf("observe mode's network under a ceiling: %s", got)
	}
}

func TestManagedNetworkModes(t *testing.T) {
	for _, tc := range []struct {
		scope, ceiling string
		want           policy.NetworkMode
	}{
		{"network: any\n", "none", policy.NetworkNone},
		{"network: any\n", "any", policy.NetworkAny},
		{"network: any\n", "[a.example]", policy.NetworkList},
		{"network: none\n", "[a.example]", policy.NetworkNone},
		{"network: [b.example]\n", "[a.example]", policy.NetworkList},
	} {
		doc, _ := policy.ParseDocument([]byte(tc.scope))
		sc, err := policy.Compile(doc, policy.Env{})
		if err != nil {
			t.Fatal(err)
		}
		ceil := policy.NetworkRules{Mode: policy.NetworkMode(tc.ceiling)}
		if strings.HasPrefix(tc.ceiling, "[") {
			ceil = policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{strings.Trim(tc.ceiling, "[]")}}
		}
		m, err := policy.CompileManaged(policy.ManagedRules{Network: ceil}, policy.Env{})
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.Within(m).Network().Mode(); got != tc.want {
			t.Errorf("%q within %s: %s, want %s", tc.scope, tc.ceiling, got, tc.want)
		}
	}
}

func TestManagedBeyondAndRefuses(t *testing.T) {
	proj, _, sc, env := managedProject(t)
	m := sc.Managed()
	got := m.Beyond(sc.Document(), env)
	want := map[string]string{
		"paths.read[0] /**":           policy.RuleManagedCeilingRead,
		"shell_commands.allow[2] ssh": "managed.shell_commands.deny[0] ssh",
		"network[0] any":              policy.RuleManagedNetwork,
		"network[2] unix:/run/b.sock": policy.RuleManagedNetwork,
	}
	for _, e := range got {
		if strings.HasPrefix(e.Entry, "paths.write[1]") {
			continue // the scratch directory
		}
		if want[e.Entry] != e.Rule {
			t.Errorf("unexpected excess %+v", e)
		}
		delete(want, e.Entry)
	}
	if len(want) > 0 {
		t.Errorf("Beyond missed %v (got %+v)", want, got)
	}
	for _, tc := range []struct {
		w    policy.Widening
		rule string
	}{
		{policy.Widening{Flag: "--read", Value: "/usr/share/doc/**"}, ""},
		{policy.Widening{Flag: "--read", Value: proj + "/src/*.go"}, ""},
		{policy.Widening{Flag: "--read", Value: "/srv/**"}, policy.RuleManagedCeilingRead},
		{policy.Widening{Flag: "--read", Value: "**/*.go"}, policy.RuleManagedCeilingRead},
		{policy.Widening{Flag: "--write", Value: "/usr/local/**"}, policy.RuleManagedCeilingWrite},
		{policy.Widening{Flag: "--write", Value: proj + "/build/**"}, ""},
		{policy.Widening{Flag: "--allow-command", Value: "ssh -v"}, "managed.shell_commands.deny[0] ssh"},
		{policy.Widening{Flag: "--allow-command", Value: "scp"}, ""},
		{policy.Widening{Flag: "--allow-host", Value: "a.corp.example.com:443"}, ""},
		{policy.Widening{Flag: "--allow-host", Value: ".b.corp.example.com:443"}, ""},
		{policy.Widening{Flag: "--allow-host", Value: "a.corp.example.com"}, policy.RuleManagedNetwork},
		{policy.Widening{Flag: "--allow-host", Value: "github.com:443"}, policy.RuleManagedNetwork},
		{policy.Widening{Flag: "--allow-socket", Value: "/run/a.sock"}, ""},
		{policy.Widening{Flag: "--allow-socket", Value: "/run/docker.sock"}, policy.RuleManagedNetwork},
		{policy.Widening{Flag: "--network", Value: "any"}, policy.RuleManagedNetwork},
		{policy.Widening{Flag: "--deny", Value: "/**"}, ""},
	} {
		if got := m.Refuses(tc.w, env); got != tc.rule {
			t.Errorf("Refuses(%s %s) = %q, want %q", tc.w.Flag, tc.w.Value, got, tc.rule)
		}
	}
}

func TestCompileManagedRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		r    policy.ManagedRules
		list string
		i    int
	}{
		"bad deny glob":    {policy.ManagedRules{Paths: policy.ManagedPaths{Deny: []string{"**/.env", "/a/[b"}}}, "paths.deny", 1},
		"bad ceiling glob": {policy.ManagedRules{Paths: policy.ManagedPaths{Ceiling: &policy.PathCeiling{Write: []string{"${x}/**"}}}}, "paths.ceiling.write", 0},
		"bad command":      {policy.ManagedRules{Shell: policy.ManagedShell{Deny: []string{"ls 'open"}}}, "shell_commands.deny", 0},
		"bad host":         {policy.ManagedRules{Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"ok.example", "*.example.com"}}}, "network", 1},
		"bad socket":       {policy.ManagedRules{Network: policy.NetworkRules{Mode: policy.NetworkList, Hosts: []string{"unix:run/x"}}}, "network", 0},
		"tilde no home":    {policy.ManagedRules{Paths: policy.ManagedPaths{Deny: []string{"~/.ssh/**"}}}, "paths.deny", 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := policy.CompileManaged(tc.r, policy.Env{})
			var ee *policy.EntryError
			if !errors.As(err, &ee) || ee.List != tc.list || ee.Index != tc.i {
				t.Fatalf("CompileManaged = %v, want an EntryError at %s[%d]", err, tc.list, tc.i)
			}
		})
	}
}
