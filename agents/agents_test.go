package agents_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/agents"
)

func input(tool, toolInput string) string {
	return `{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + toolInput + `}`
}

func TestMap(t *testing.T) {
	tests := []struct {
		name, agent, in string
		kind            agents.Kind
		calls           []string // tool and args JSON of each call
	}{
		{"bash", agents.ClaudeCode, input("Bash", `{"command":"go test ./...","timeout":60000,"description":"d"}`),
			agents.KindShell, []string{`shell {"command":"go test ./...","timeout_ms":60000}`}},
		{"read", agents.ClaudeCode, input("Read", `{"file_path":"/p/a.go","offset":10,"limit":5}`),
			agents.KindFiles, []string{`read_file {"limit":5,"offset":10,"path":"/p/a.go"}`}},
		{"write", agents.ClaudeCode, input("Write", `{"file_path":"/p/b","content":"x"}`),
			agents.KindFiles, []string{`write_file {"content":"x","path":"/p/b"}`}},
		{"edit", agents.ClaudeCode, input("Edit", `{"file_path":"/p/b","old_string":"a","new_string":"b"}`),
			agents.KindFiles, []string{`edit_file {"new_string":"b","old_string":"a","path":"/p/b"}`}},
		{"multiedit", agents.ClaudeCode, input("MultiEdit", `{"file_path":"/p/b","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}`),
			agents.KindFiles, []string{`edit_file {"new_string":"b","old_string":"a","path":"/p/b"}`,
				`edit_file {"new_string":"d","old_string":"c","path":"/p/b","replace_all":true}`}},
		{"notebook", agents.ClaudeCode, input("NotebookEdit", `{"notebook_path":"/p/n.ipynb","new_source":"print(1)","cell_id":"c1"}`),
			agents.KindFiles, []string{`write_file {"content":"print(1)","path":"/p/n.ipynb"}`}},
		{"glob", agents.ClaudeCode, input("Glob", `{"pattern":"**/*.go","path":"/p"}`),
			agents.KindFiles, []string{`glob {"path":"/p","pattern":"**/*.go"}`}},
		{"grep", agents.ClaudeCode, input("Grep", `{"pattern":"TODO","glob":"*.go","output_mode":"content"}`),
			agents.KindFiles, []string{`grep {"include":"*.go","pattern":"TODO"}`}},
		{"ls", agents.ClaudeCode, input("LS", `{"path":"/p"}`),
			agents.KindFiles, []string{`list_dir {"path":"/p"}`}},
		{"webfetch", agents.ClaudeCode, input("WebFetch", `{"url":"https://x","prompt":"p"}`), agents.KindNetwork, nil},
		{"websearch", agents.ClaudeCode, input("WebSearch", `{"query":"x"}`), agents.KindOther, nil},
		{"mcp", agents.ClaudeCode, input("mcp__fs__read", `{}`), agents.KindOther, nil},
		{"codex bash", agents.Codex, input("Bash", `{"command":"ls -la"}`),
			agents.KindShell, []string{`shell {"command":"ls -la"}`}},
		{"codex patch", agents.Codex, input("apply_patch", `{"command":"*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n"}`),
			agents.KindFiles, []string{`write_file {"content":"","path":"new.txt"}`, `write_file {"content":"","path":"a.go"}`,
				`write_file {"content":"","path":"b.go"}`, `write_file {"content":"","path":"old.txt"}`}},
		{"codex mcp", agents.Codex, input("mcp__fs__write", `{"path":"x"}`), agents.KindOther, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := agents.ParseInput([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			m, err := agents.Map(tt.agent, in)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != tt.kind {
				t.Errorf("kind %v, want %v", m.Kind, tt.kind)
			}
			var got []string
			for _, c := range m.Calls {
				var args map[string]any
				if err := json.Unmarshal(c.Args, &args); err != nil {
					t.Fatal(err)
				}
				norm, _ := json.Marshal(args)
				got = append(got, c.Tool+" "+string(norm))
			}
			if !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls\n got %q\nwant %q", got, tt.calls)
			}
		})
	}
}

// Malformed or unknown input is an error, never a mapping (callers deny).
// TestMapWebFetch checks the host and port a WebFetch connects to.
func TestMapWebFetch(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/x":             "github.com:443",
		"http://docs.example/a?b#c":        "docs.example:80",
		"HTTPS://user@Example.COM:8443/":   "Example.COM:8443",
		"https://[::1]:8080/":              "::1:8080",
		"https://github.com@evil.example/": "evil.example:443",
	} {
		in, err := agents.ParseInput([]byte(input("WebFetch", `{"url":"`+url+`","prompt":"p"}`)))
		if err != nil {
			t.Fatal(err)
		}
		m, err := agents.Map(agents.ClaudeCode, in)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if got := m.Host + ":" + strconv.Itoa(m.Port); m.Kind != agents.KindNetwork || got != want || m.URL != url {
			t.Errorf("%s: %v %s %q, want network %s", url, m.Kind, got, m.URL, want)
		}
	}
}

func TestMapRefusesMalformed(t *testing.T) {
	bad := []struct{ name, agent, in string }{
		{"not json", agents.ClaudeCode, `{`},
		{"array", agents.ClaudeCode, `[]`},
		{"two objects", agents.ClaudeCode, input("Bash", `{"command":"ls"}`) + `{}`},
		{"other event", agents.ClaudeCode, strings.Replace(input("Bash", `{"command":"ls"}`), "PreToolUse", "SubagentStop", 1)},
		{"no session", agents.ClaudeCode, strings.Replace(input("Bash", `{"command":"ls"}`), `"s1"`, `""`, 1)},
		{"no tool", agents.ClaudeCode, input("", `{}`)},
		{"tool input not object", agents.ClaudeCode, input("Bash", `"ls"`)},
		{"bash without command", agents.ClaudeCode, input("Bash", `{}`)},
		{"bash command not string", agents.ClaudeCode, input("Bash", `{"command":["rm","-rf","/"]}`)},
		{"read without path", agents.ClaudeCode, input("Read", `{}`)},
		{"multiedit without edits", agents.ClaudeCode, input("MultiEdit", `{"file_path":"/p/a"}`)},
		{"unknown agent", "cursor", input("Bash", `{"command":"ls"}`)},
		{"webfetch without url", agents.ClaudeCode, input("WebFetch", `{"prompt":"p"}`)},
		{"webfetch file url", agents.ClaudeCode, input("WebFetch", `{"url":"file:///etc/passwd"}`)},
		{"webfetch relative url", agents.ClaudeCode, input("WebFetch", `{"url":"evil.example/x"}`)},
		{"webfetch no host", agents.ClaudeCode, input("WebFetch", `{"url":"https:///x"}`)},
		{"webfetch bad port", agents.ClaudeCode, input("WebFetch", `{"url":"https://x:99999/"}`)},
		{"codex patch without envelope", agents.Codex, input("apply_patch", `{"command":"*** Update File: a\n-x\n+y\n"}`)},
		{"codex patch unknown header", agents.Codex, input("apply_patch", `{"command":"*** Begin Patch\n*** Chmod File: a\n*** End Patch"}`)},
		{"codex patch stray line", agents.Codex, input("apply_patch", `{"command":"*** Begin Patch\n*** Update File: a\nrm -rf /\n*** End Patch"}`)},
		{"codex patch touching nothing", agents.Codex, input("apply_patch", `{"command":"*** Begin Patch\n*** End Patch"}`)},
		{"codex patch empty path", agents.Codex, input("apply_patch", `{"command":"*** Begin Patch\n*** Add File: \n*** End Patch"}`)},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			in, err := agents.ParseInput([]byte(tt.in))
			if err == nil {
				_, err = agents.Map(tt.agent, in)
			}
			if err == nil {
				t.Fatal("mapped, want an error")
			}
			if tt.agent != "cursor" && !errors.Is(err, agents.ErrInvalidInput) {
				t.Errorf("error %v does not wrap ErrInvalidInput", err)
			}
		})
	}
}

func TestAnswers(t *testing.T) {
	decode := func(a agents.Answer) map[string]any {
		var out struct {
			H map[string]any `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(a.Stdout, &out); err != nil {
			t.Fatalf("answer %q: %v", a.Stdout, err)
		}
		return out.H
	}
	for _, agent := range agents.Names() {
		d := decode(agents.Deny(agent, ""))
		if d["permissionDecision"] != "deny" || d["permissionDecisionReason"] == "" || d["hookEventName"] != "PreToolUse" {
			t.Errorf("%s deny: %v (a deny needs a non-empty reason)", agent, d)
		}
		r, err := agents.Rewrite(agent, json.RawMessage(`{"command":"ls","description":"list"}`), "/bin/scopegate exec --call X")
		if err != nil {
			t.Fatal(err)
		}
		h := decode(r)
		upd, _ := h["updatedInput"].(map[string]any)
		if h["permissionDecision"] != "allow" || upd["command"] != "/bin/scopegate exec --call X" || upd["description"] != "list" {
			t.Errorf("%s rewrite: %v", agent, h)
		}
	}
	for _, agent := range agents.Names() {
		why := "config.yml:3: bad\nline\x1b[2J"
		d := decode(agents.Refuse(agent, why))
		want := `scopegate: config.yml:3: bad\nline\x1b[2J; the tool call is denied`
		if d["permissionDecision"] != "deny" || d["permissionDecisionReason"] != want {
			t.Errorf("%s refuse: %v, want a deny with reason %q (one line, control characters escaped)", agent, d, want)
		}
	}
	if a := agents.Allow(agents.Codex); len(a.Stdout) != 0 || a.Exit != 0 {
		t.Errorf("codex allow is %q exit %d, want an empty answer", a.Stdout, a.Exit)
	}
	if d := decode(agents.Ask(agents.Codex, "why")); d["permissionDecision"] != "deny" {
		t.Errorf("codex has no ask: got %v, want deny", d)
	}
	if d := decode(agents.Ask(agents.ClaudeCode, "why")); d["permissionDecision"] != "ask" {
		t.Errorf("claude ask: %v", d)
	}
}

func TestAsksUser(t *testing.T) {
	for _, tt := range []struct {
		agent, mode string
		want        bool
	}{
		{agents.ClaudeCode, `"default"`, true},
		{agents.ClaudeCode, `"acceptEdits"`, true},
		{agents.ClaudeCode, `"plan"`, true},
		{agents.ClaudeCode, `"bypassPermissions"`, false},
		{agents.ClaudeCode, `"dontAsk"`, false},
		{agents.ClaudeCode, `"auto"`, true},
		{agents.ClaudeCode, `"Default"`, false},
		{agents.ClaudeCode, `""`, false},
		{agents.ClaudeCode, ``, false},
		{agents.ClaudeCode, `null`, false},
		{agents.ClaudeCode, `1`, false},
		{agents.Codex, `"default"`, false},
	} {
		raw := `{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/x"}`
		if tt.mode != "" {
			raw += `,"permission_mode":` + tt.mode
		}
		in, err := agents.ParseInput([]byte(raw + "}"))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := agents.AsksUser(tt.agent, in); got != tt.want {
			t.Errorf("AsksUser(%s, permission_mode %s) = %v, want %v", tt.agent, tt.mode, got, tt.want)
		}
	}
}

func TestAskRewrite(t *testing.T) {
	a, err := agents.AskRewrite(agents.ClaudeCode, json.RawMessage(`{"command":"curl x","description":"fetch"}`), "/bin/scopegate exec --call X", "needs --allow-command curl")
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		H map[string]any `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(a.Stdout, &out); err != nil {
		t.Fatal(err)
	}
	upd, _ := out.H["updatedInput"].(map[string]any)
	if out.H["permissionDecision"] != "ask" || out.H["permissionDecisionReason"] != "needs --allow-command curl" ||
		upd["command"] != "/bin/scopegate exec --call X" || upd["description"] != "fetch" {
		t.Errorf("ask rewrite: %v", out.H)
	}
	c, err := agents.AskRewrite(agents.Codex, json.RawMessage(`{"command":"curl x"}`), "/bin/scopegate exec --call X", "why")
	if err != nil || !strings.Contains(string(c.Stdout), `"deny"`) || strings.Contains(string(c.Stdout), "exec --call") {
		t.Errorf("codex ask rewrite: %s %v, want a deny without the rewrite", c.Stdout, err)
	}
	if _, err := agents.AskRewrite(agents.ClaudeCode, json.RawMessage(`[1]`), "x", "why"); err == nil {
		t.Error("AskRewrite of a non-object tool_input succeeded")
	}
}

// TestParseInputEvents: the events that are not about one tool call need
// no tool; the tool events do.
func TestParseInputEvents(t *testing.T) {
	for _, ev := range agents.Events() {
		raw := `{"session_id":"s","hook_event_name":"` + string(ev) + `"}`
		_, err := agents.ParseInput([]byte(raw))
		if (err == nil) == ev.ToolEvent() {
			t.Errorf("%s without a tool: err %v", ev, err)
		}
	}
	in, err := agents.ParseInput([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Write","tool_use_id":"toolu_1","tool_input":{"file_path":"/x","content":""},"tool_response":{}}`))
	if err != nil || in.ToolUseID != "toolu_1" || in.Event != agents.EventPostToolUse {
		t.Errorf("%+v %v", in, err)
	}
}
