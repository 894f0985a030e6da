package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/npmclient"
)

// elicitStep is one call of an elicit.mjs scenario and how the client
// answers an offer.
type elicitStep struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Answer    string         `json:"answer"`
	During    *elicitCall    `json:"during,omitempty"`
}

type elicitCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// elicitOut is what elicit.mjs saw of one step.
type elicitOut struct {
	Offers []struct {
		Message string         `json:"message"`
		Schema  map[string]any `json:"schema"`
		During  *struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"during"`
	} `json:"offers"`
	IsError  bool           `json:"isError"`
	Text     string         `json:"text"`
	Decision map[string]any `json:"decision"`
	Error    string         `json:"error"`
}

// runElicit runs e2e/mcp/elicit.mjs with target (stdio: the binary and
// session; http: the URL) and returns its outputs, one per step.
func runElicit(t *testing.T, w *workspace, target []string, steps []elicitStep) []elicitOut {
	t.Helper()
	node := npmclient.Node(t)
	scenario, _ := json.Marshal(steps)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{filepath.Join(npmclient.Dir(), "mcp", "elicit.mjs")}, target...)
	cmd := exec.CommandContext(ctx, node, append(args, string(scenario))...)
	cmd.Env = append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+w.sessions, "SCOPEGATE_CONFIG_DIR="+w.cfg,
		"SCOPEGATE_ROAM_DIR="+filepath.Join(w.root, "roam"), "HOME="+filepath.Join(w.root, "home"), "LATE_MS=4000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("elicit.mjs: %v\n%s", err, stderr.String())
	}
	var got []elicitOut
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(steps) {
		t.Fatalf("elicit.mjs output %s: %v", out, err)
	}
	return got
}

// TestMCPApprovals drives scopegate's MCP server with the real MCP
// TypeScript SDK client declaring elicitation, over stdio and serve's
// Streamable HTTP: a call denied for a scope reason is offered with its
// exact widening; once runs it and leaves the scope as it was, so the same
// call is offered again; session widens the scope (audited) and later calls
// are not offered; deny, decline, cancel and a timeout deny; other calls
// run while an offer is open; a credential read is never offered. The MCP
// inspector CLI, which declares no elicitation, is denied as before.
func TestMCPApprovals(t *testing.T) {
	npmclient.Node(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			w := mcpWorkspace(t)
			if err := os.MkdirAll(w.cfg, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte("approval_timeout_seconds: 2\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(w.root, "outside", "notes.txt")
			// The session answer widens by a directory and a program.
			other := filepath.Join(w.root, "other")
			for _, d := range []string{filepath.Dir(outside), other} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for p, text := range map[string]string{outside: "outside-content\n", filepath.Join(other, "widened-ok"): ""} {
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var s *served
			target := []string{"stdio", scopegateBin, w.id}
			if transport == "http" {
				s = startServe(t, w)
				target = []string{"http", s.url + "/v1/sessions/" + w.id + "/mcp"}
			}
			read := map[string]any{"path": outside}
			steps := []elicitStep{
				{Tool: "read_file", Arguments: read, Answer: "once",
					During: &elicitCall{Tool: "shell", Arguments: map[string]any{"command": "echo while-offered"}}},
				{Tool: "read_file", Arguments: read, Answer: "decline"},
				{Tool: "read_file", Arguments: read, Answer: "deny"},
				{Tool: "read_file", Arguments: read, Answer: "cancel"},
				{Tool: "read_file", Arguments: read, Answer: "late"},
				{Tool: "shell", Arguments: map[string]any{"command": "ls " + other}, Answer: "session"},
				{Tool: "shell", Arguments: map[string]any{"command": "ls -1 " + other}, Answer: "decline"},
				{Tool: "read_file", Arguments: map[string]any{"path": filepath.Join(w.proj, ".env")}, Answer: "once"},
			}
			got := runElicit(t, w, target, steps)

			// 0: offered with the exact file, never its directory; other
			// calls ran while it was open; once ran the call.
			o := got[0]
			if len(o.Offers) != 1 || !strings.Contains(o.Offers[0].Message, "--read "+outside) ||
				strings.Contains(o.Offers[0].Message, "--read "+filepath.Dir(outside)+"/**") {
				t.Fatalf("step 0 offers %+v, want one naming --read %s", o.Offers, outside)
			}
			if d := o.Offers[0].During; d == nil || d.IsError || !strings.Contains(d.Text, "while-offered") {
				t.Errorf("a call made while the offer was open: %+v", d)
			}
			if o.IsError || !strings.Contains(o.Text, "outside-content") {
				t.Errorf("once: %+v, want the file's content", o)
			}
			// 1–4: offered again (once left the scope as it was), and denied.
			for i, why := range map[int]string{1: "decline", 2: "deny", 3: "cancel", 4: "timeout"} {
				if len(got[i].Offers) != 1 || !got[i].IsError || strings.Contains(got[i].Text, "outside-content") ||
					got[i].Decision["allowed"] != false {
					t.Errorf("step %d (%s): %+v, want an offer and a denial", i, why, got[i])
				}
			}
			// 5: session widened the scope by both widenings the command
			// lacks and ran; 6: not offered again.
			if len(got[5].Offers) != 1 || !strings.Contains(got[5].Offers[0].Message, "--allow-command ls --read '"+other+"/**'") ||
				got[5].IsError || !strings.Contains(got[5].Text, "widened-ok") {
				t.Errorf("session: %+v", got[5])
			}
			if len(got[6].Offers) != 0 || got[6].IsError || !strings.Contains(got[6].Text, "widened-ok") {
				t.Errorf("after session: %+v, want a run without an offer", got[6])
			}
			// 7: a credential read is never offered.
			if len(got[7].Offers) != 0 || !got[7].IsError || strings.Contains(got[7].Text, secretCanary) {
				t.Errorf("credential read: %+v, want a denial without an offer", got[7])
			}

			scope, err := os.ReadFile(filepath.Join(w.branch, "scope.yml"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(scope), outside) || !strings.Contains(string(scope), other) || !strings.Contains(string(scope), `"ls"`) {
				t.Errorf("scope.yml after once and session:\n%s", scope)
			}
			// tools.org: each call's entry says what was offered, through
			// which channel, and the answer; the widening is a scope change
			// naming the channel.
			answers := map[string]int{}
			var expanded int
			for _, e := range w.entries() {
				if e.Decision == audit.DecisionExpanded {
					expanded++
					if e.Resource != gateway.ChannelElicitation || !strings.Contains(e.Summary, "ls") || !strings.Contains(e.Summary, other) {
						t.Errorf("scope change %+v, want ls and %s added by %s", e, other, gateway.ChannelElicitation)
					}
					continue
				}
				if e.Offered == "" {
					continue
				}
				answers[e.Answer]++
				if e.Channel != gateway.ChannelElicitation {
					t.Errorf("entry %s channel %q", e.CallID, e.Channel)
				}
				switch e.Answer {
				case "once", "session":
					if e.Approved != e.Answer || e.Decision != audit.DecisionAllowed {
						t.Errorf("approved entry %+v", e)
					}
				default:
					if e.Approved != "" || e.Decision != audit.DecisionDenied {
						t.Errorf("refused entry %+v", e)
					}
				}
			}
			want := map[string]int{"once": 1, "decline": 1, "deny": 1, "cancel": 1, "timeout": 1, "session": 1}
			if expanded != 1 || len(answers) != len(want) {
				t.Errorf("answers in tools.org %v (%d scope changes), want %v and one", answers, expanded, want)
			}
			for a, n := range want {
				if answers[a] != n {
					t.Errorf("answers in tools.org %v, want %v", answers, want)
					break
				}
			}
			if left, _ := filepath.Glob(filepath.Join(w.branch, gateway.GrantsDir, "*")); len(left) != 0 {
				t.Errorf("grants left: %v", left)
			}
			// The late answer of step 4 ran nothing.
			for _, e := range w.entries() {
				if e.Tool == "read_file" && e.Decision == audit.DecisionAllowed && e.Approved == "" {
					t.Errorf("a read of the outside file ran without approval: %+v", e)
				}
			}
			if s != nil {
				_, text := get(t, s.url+"/metrics")
				for a, n := range want {
					if v := metricValue(t, text, "scopegate_approvals_total", `answer="`+a+`"`); v != float64(n) {
						t.Errorf("scopegate_approvals_total{answer=%q} = %v, want %d", a, v, n)
					}
				}
			}

			// A client without elicitation: denied as before, not offered.
			insp := []string{scopegateBin, "mcp", "--session", w.id}
			if s != nil {
				insp = []string{s.url + "/v1/sessions/" + w.id + "/mcp", "--transport", "http"}
			}
			npmclient.Bin(t, "mcp-inspector-cli")
			before := len(w.entries())
			r := inspector(t, w, insp, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path="+outside)
			if r["isError"] != true || strings.Contains(mcpText(r), "outside-content") || !strings.Contains(mcpText(r), "--read") {
				t.Errorf("inspector: %v, want the denial with its hint", r)
			}
			es := w.entries()
			if len(es) != before+1 || es[len(es)-1].Offered != "" || es[len(es)-1].Decision != audit.DecisionDenied {
				t.Errorf("inspector entry %+v, want a denial without an offer", es[len(es)-1])
			}
		})
	}
}
