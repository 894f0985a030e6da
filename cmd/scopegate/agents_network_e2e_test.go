package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

// netAgentCase is the set-up of the agents' network tests: two servers on
// the host's loopback, one at a port the hook's profile names and one at a
// port it does not. The allowed server answers /ok, and redirects /go to
// the denied server, so that the denied host is known only when curl runs:
// neither the hook's decision nor the confined shell's check of curl's
// arguments sees it, only the proxy does.
type netAgentCase struct {
	root, sessions, cfg, proj string
	allowedPort, deniedPort   int
	allowedHits, deniedHits   *atomic.Int64
	// commands are the two shell commands the model runs: a curl to the
	// allowed server, then one that follows its redirect to the denied one.
	commands [2]string
}

// allowedBody is what the allowed server answers.
const allowedBody = "SCOPEGATE-E2E-ALLOWED-4c1d"

// deniedBody is what the denied server would answer: it must never reach
// the model.
const deniedBody = "SCOPEGATE-E2E-LEAKED-92be"

func newNetAgentCase(t *testing.T) *netAgentCase {
	t.Helper()
	requireProgram(t, "curl")
	root := t.TempDir()
	c := &netAgentCase{root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"),
		proj: filepath.Join(root, "proj"), allowedHits: new(atomic.Int64), deniedHits: new(atomic.Int64)}
	c.deniedPort = serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.deniedHits.Add(1)
		fmt.Fprint(w, deniedBody)
	}))
	c.allowedPort = serveHostLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.allowedHits.Add(1)
		if r.URL.Path == "/go" {
			http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/secret", c.deniedPort), http.StatusFound)
			return
		}
		fmt.Fprint(w, allowedBody)
	}))
	for _, d := range []string{c.proj, filepath.Join(root, "home"), filepath.Join(c.cfg, "scope-profiles")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The hook creates the agent's session from this profile: curl may run,
	// and only the allowed server's port is in network.
	profile := fmt.Sprintf(`paths:
  read: ["/**"]
  write: ["${project_root}/**"]
  deny: ["**/.git/**"]
shell_commands:
  allow: [curl]
network:
  - localhost:%d
`, c.allowedPort)
	files := map[string]string{
		filepath.Join(c.cfg, "scope-profiles", "netcheck.yml"): profile,
		filepath.Join(c.cfg, "config.yml"):                     "hooks:\n  profile: netcheck\n",
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", c.proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	c.commands = [2]string{
		fmt.Sprintf("curl -sS --max-time 30 --fail-with-body http://localhost:%d/ok", c.allowedPort),
		fmt.Sprintf("curl -sSL --max-time 30 --fail-with-body http://localhost:%d/go", c.allowedPort),
	}
	return c
}

// hookCommand is the command line of scopegate's hook for agent.
func (c *netAgentCase) hookCommand(agent string) string {
	return policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(c.sessions) + " --config-dir " + policy.ShellQuote(c.cfg) +
		" --roam-dir " + policy.ShellQuote(filepath.Join(c.root, "roam")) + " hook " + agent
}

// refusal is the proxy's answer to the denied request, as the program
// prints it.
func (c *netAgentCase) refusal() []string {
	hp := "localhost:" + strconv.Itoa(c.deniedPort)
	return []string{"scopegate: connection to " + hp + " refused", "scope expand --allow-host " + hp}
}

// check asserts what the servers saw and what the branch's tools.org
// recorded: the allowed request got through, the denied one never reached
// its server, and the exec entry of the denied command lists the refused
// connection and counts it in :NET_DENIED:.
func (c *netAgentCase) check(t *testing.T, outputs [2]string) {
	t.Helper()
	if !strings.Contains(outputs[0], allowedBody) {
		t.Errorf("curl to the allowed port: output %q, want the server's answer %q", outputs[0], allowedBody)
	}
	for _, want := range c.refusal() {
		if !strings.Contains(outputs[1], want) {
			t.Errorf("curl to the denied port: output %q, want the proxy's refusal containing %q", outputs[1], want)
		}
	}
	if strings.Contains(outputs[1], deniedBody) {
		t.Errorf("curl to the denied port: output %q carries the denied server's answer", outputs[1])
	}
	if n := c.allowedHits.Load(); n != 2 {
		t.Errorf("the allowed server got %d requests, want 2 (/ok and /go)", n)
	}
	if n := c.deniedHits.Load(); n != 0 {
		t.Errorf("the denied server got %d requests, want none", n)
	}

	files, err := filepath.Glob(filepath.Join(c.sessions, "*", "branches", "main", "tools.org"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want exactly one session made by the hook, found tools.org files %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	entries, err := audit.ReadFile(files[0], audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var execs []audit.Entry
	for _, e := range entries {
		if e.Mode == audit.ModeExec {
			execs = append(execs, e)
		}
	}
	if len(execs) != 2 {
		t.Fatalf("tools.org has %d exec entries, want 2 (one per curl):\n%s", len(execs), raw)
	}
	allowed, denied := execs[0], execs[1]
	if allowed.Summary != c.commands[0] || denied.Summary != c.commands[1] {
		t.Fatalf("exec entries %q and %q, want %q then %q", allowed.Summary, denied.Summary, c.commands[0], c.commands[1])
	}
	ap, dp := "localhost:"+strconv.Itoa(c.allowedPort), "localhost:"+strconv.Itoa(c.deniedPort)
	if got, want := describeConns(allowed.Network), "allowed "+ap; got != want {
		t.Errorf("exec entry %s (%s): network %q, want %q", allowed.CallID, allowed.Summary, got, want)
	}
	if got, want := describeConns(denied.Network), "allowed "+ap+"; denied "+dp; got != want {
		t.Errorf("exec entry %s (%s): network %q, want %q", denied.CallID, denied.Summary, got, want)
	}
	if allowed.NetDenied() != 0 || denied.NetDenied() != 1 {
		t.Errorf("denied connections: %d and %d, want 0 and 1", allowed.NetDenied(), denied.NetDenied())
	}
	if n := strings.Count(string(raw), ":NET_DENIED: 1\n"); n != 1 {
		t.Errorf("tools.org has %d :NET_DENIED: 1 properties, want 1:\n%s", n, raw)
	}
	if n := strings.Count(string(raw), "\n** Network\n"); n != 2 {
		t.Errorf("tools.org has %d Network sections, want 2:\n%s", n, raw)
	}
}

// describeConns lists connections as "allowed host:port; denied host:port".
func describeConns(cs []audit.Conn) string {
	var out []string
	for _, c := range cs {
		d := "denied"
		if c.Allowed {
			d = "allowed"
		}
		out = append(out, d+" "+c.Host+":"+strconv.Itoa(c.Port))
	}
	return strings.Join(out, "; ")
}

// TestClaudeCodeNetwork drives the real Claude Code under scopegate's
// command hook: a Bash curl goes through scopegate's proxy, which lets the
// port the scope names through and refuses the redirect to the other one;
// the refusal is what the model sees.
func TestClaudeCodeNetwork(t *testing.T) {
	claude := npmclient.Bin(t, "claude")
	c := newNetAgentCase(t)
	if err := os.MkdirAll(filepath.Join(c.root, "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := []toolStep{
		{"Bash", map[string]any{"command": c.commands[0], "description": "fetch the allowed URL"}},
		{"Bash", map[string]any{"command": c.commands[1], "description": "fetch the denied URL"}},
	}
	model := newMockAnthropic(t, script)
	hook := map[string]any{"type": "command", "timeout": 60, "command": c.hookCommand("claude-code")}
	runClaude(t, claude, c.root, c.proj, model, hook)

	r0, r1 := model.result(0), model.result(1)
	if r0.isError {
		t.Errorf("curl to the allowed port: tool result %+v, want success", r0)
	}
	if !r1.isError {
		t.Errorf("curl to the denied port: tool result %+v, want an error (curl's exit status 22)", r1)
	}
	if model.sawAnywhere(deniedBody) {
		t.Error("the denied server's answer reached the model")
	}
	c.check(t, [2]string{r0.content, r1.content})
}

// TestCodexNetwork drives the real Codex CLI under scopegate's hook with
// the same two commands as TestClaudeCodeNetwork.
func TestCodexNetwork(t *testing.T) {
	codex := npmclient.Bin(t, "codex")
	c := newNetAgentCase(t)
	codexHome := filepath.Join(c.root, "codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	model := newMockResponses(t, c.commands[:])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, out := codexCommand(ctx, t, codex, codexHome, model.url, c.hookCommand("codex"), c.proj, filepath.Join(c.root, "home"))
	if err := cmd.Run(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out.String())
	}

	o0, o1 := model.output(0), model.output(1)
	if !strings.Contains(o1, "exited with code 22") {
		t.Errorf("curl to the denied port: output %q, want curl's exit code 22", o1)
	}
	model.mu.Lock()
	leaked := strings.Contains(strings.Join(model.bodies, "\n"), deniedBody)
	model.mu.Unlock()
	if leaked {
		t.Error("the denied server's answer reached the model")
	}
	c.check(t, [2]string{o0, o1})
}
