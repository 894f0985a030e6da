package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// newManagedPageEnv is a page env under a managed policy of text (root's,
// 0644), where text's %ROOT% and %PROJ% are the env's directories.
func newManagedPageEnv(t *testing.T, text string, set func(*gateway.Options, *Options)) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root: a managed policy is trusted only as root's")
		}
		t.Skip("needs root: a managed policy is trusted only as root's")
	}
	path := filepath.Join(t.TempDir(), "managed.yml")
	e := newPageEnvWith(t, "", time.Minute, func(g *gateway.Options, o *Options) {
		g.Managed = &config.ManagedLoader{Path: path}
		if set != nil {
			set(g, o)
		}
	})
	text = strings.NewReplacer("%ROOT%", e.root, "%PROJ%", e.proj).Replace(text)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPageOffersManaged: while a page is open, a call the managed policy
// denies is denied at once, never put on the page, over HTTP and from a
// hook; a call within the ceiling but not the scope is still offered; with
// approvals: deny nothing is; an expansion beyond the ceiling is a 403
// naming the managed rule.
func TestPageOffersManaged(t *testing.T) {
	t.Run("ceiling", func(t *testing.T) {
		e := newManagedPageEnv(t, "paths:\n  ceiling:\n    read: [\"%PROJ%/**\", \"%ROOT%/in/**\"]\n    write: [\"%PROJ%/**\"]\n"+
			"shell_commands:\n  deny: [date]\n", func(g *gateway.Options, o *Options) {
			o.Hooks = gateway.HookOptions{ExecCommand: func(s, b, c, _ string) string { return "scopegate exec --call " + c }}
		})
		_, beyond := e.outside()
		s := e.openStream("")
		s.next("hello")
		var res gateway.CallResult
		e.mustDo("POST", "/v1/sessions/s1/calls", beyond, 200, &res)
		if d := res.Decision; d.Allowed || d.Reason != policy.ReasonManaged || d.Rule != policy.RuleManagedCeilingRead {
			t.Fatalf("read beyond the ceiling: %+v, want denied by %s", d, policy.RuleManagedCeilingRead)
		}
		input := `{"session_id":"codex-m","cwd":"` + e.proj + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"date"}}`
		if code, data := e.do("POST", "/v1/hooks/codex", input, ProjectDirHeader, e.proj); code != 200 ||
			!strings.Contains(string(data), `"deny"`) || !strings.Contains(string(data), "managed.shell_commands.deny[0]") {
			t.Fatalf("hook of a managed-denied command: %d %s", code, data)
		}
		if v, _ := e.srv.page.offers.snapshot(); len(v.Pending) != 0 || len(v.Settled) != 0 {
			t.Fatalf("the page was offered a managed denial: %+v", v)
		}
		for _, en := range e.entries() {
			if en.Offered != "" || en.Channel != "" {
				t.Errorf("entry %s offered %q on %q", en.CallID, en.Offered, en.Channel)
			}
		}
		// Within the ceiling, beyond the scope: offered as before.
		in := filepath.Join(e.root, "in", "f.txt")
		if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, []byte("in\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan gateway.CallResult, 1)
		go func() {
			var r gateway.CallResult
			_, data := e.do("POST", "/v1/sessions/s1/calls", e.callJSON("read_file", map[string]any{"path": in}))
			json.Unmarshal(data, &r)
			done <- r
		}()
		o := s.pending(1).Pending[0]
		if o.Widening != "--read "+in {
			t.Fatalf("offer %+v", o)
		}
		if code, data := e.answer(o.ID, gateway.AnswerOnce); code != 200 {
			t.Fatalf("answer: %d %s", code, data)
		}
		if r := <-done; !r.Decision.Allowed {
			t.Fatalf("approved within the ceiling: %+v", r.Decision)
		}
		code, data := e.do("POST", "/v1/sessions/s1/scope/expand", `{"read":["`+e.root+`/out/**"]}`)
		if code != http.StatusForbidden || !strings.Contains(string(data), `"`+CodeManaged+`"`) || !strings.Contains(string(data), policy.RuleManagedCeilingRead) {
			t.Errorf("expand beyond the ceiling: %d %s, want 403 %s naming %s", code, data, CodeManaged, policy.RuleManagedCeilingRead)
		}
	})
	t.Run("approvals deny", func(t *testing.T) {
		e := newManagedPageEnv(t, "approvals: deny\n", nil)
		_, body := e.outside()
		e.openStream("").next("hello")
		var res gateway.CallResult
		e.mustDo("POST", "/v1/sessions/s1/calls", body, 200, &res)
		if res.Decision.Allowed || res.Decision.Reason != policy.ReasonPathNotInScope {
			t.Fatalf("read beyond the scope: %+v", res.Decision)
		}
		if v, _ := e.srv.page.offers.snapshot(); len(v.Pending)+len(v.Settled) != 0 || e.entries()[0].Offered != "" {
			t.Fatalf("offered under approvals: deny: %+v %+v", v, e.entries()[0])
		}
	})
}
