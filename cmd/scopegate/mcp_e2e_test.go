package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
)

// mcpWorkspace is a session whose scope is written by the test: read and
// write the project (but its .env), a few shell commands, gptel notes.
func mcpWorkspace(t *testing.T) *workspace {
	t.Helper()
	w := newWorkspace(t)
	for name, content := range map[string]string{"a.txt": "hello mcp\n", ".env": "KEY=" + secretCanary + "\n"} {
		if err := os.WriteFile(filepath.Join(w.proj, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scope := fmt.Sprintf(`paths:
  read: [%[1]q]
  write: [%[1]q]
  deny: ["**/.env"]
org_roam_patterns:
  subdirectory: ["gptel/**"]
  tags: ["gptel"]
  node_ids: []
shell_commands:
  allow: ["echo", "sleep"]
`, w.proj+"/**")
	if err := os.WriteFile(filepath.Join(w.branch, "scope.yml"), []byte(scope), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// inspector runs the real MCP inspector CLI against target (a scopegate
// command line for stdio, a URL for HTTP) and decodes its JSON answer.
func inspector(t *testing.T, w *workspace, target []string, args ...string) map[string]any {
	t.Helper()
	argv := []string{"-e", "SCOPEGATE_SESSIONS_DIR=" + w.sessions, "-e", "SCOPEGATE_CONFIG_DIR=" + w.cfg,
		"-e", "SCOPEGATE_ROAM_DIR=" + filepath.Join(w.root, "roam"), "-e", "HOME=" + filepath.Join(w.root, "home"), "--cli"}
	argv = append(append(argv, target...), args...)
	stdoutS, stderrS, err := runInspector(t, argv)
	stdout, stderr := bytes.NewBufferString(stdoutS), bytes.NewBufferString(stderrS)
	out := stdout.Bytes()
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		out = out[i:]
	}
	var v map[string]any
	if jerr := json.Unmarshal(out, &v); jerr != nil {
		t.Fatalf("inspector %v: %v / %v\nstdout: %s\nstderr: %s", args, err, jerr, stdout.String(), stderr.String())
	}
	return v
}

// inspectorRaw is inspector without decoding: stdout, stderr and the exit.
func inspectorRaw(t *testing.T, w *workspace, target []string, args ...string) (string, string, error) {
	t.Helper()
	argv := []string{"-e", "SCOPEGATE_SESSIONS_DIR=" + w.sessions, "-e", "SCOPEGATE_CONFIG_DIR=" + w.cfg, "--cli"}
	return runInspector(t, append(append(argv, target...), args...))
}

func runInspector(t *testing.T, argv []string) (string, string, error) {
	t.Helper()
	bin := npmclient.Bin(t, "mcp-inspector-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv...)
	// inspector-cli 1.0.3 finds its own package.json through a path relative
	// to the working directory: run it where that path resolves.
	cmd.Dir = filepath.Join(npmclient.Dir(), "node_modules")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// mcpText is the text content of a tool result.
func mcpText(r map[string]any) string {
	var b strings.Builder
	content, _ := r["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestMCPInspector lists the tools and calls every tool, once allowed and
// once denied, through the real MCP inspector CLI, over stdio and over
// serve's Streamable HTTP.
func TestMCPInspector(t *testing.T) {
	npmclient.Bin(t, "mcp-inspector-cli") // skips (fails under CI=true) before anything when it is missing
	w := mcpWorkspace(t)
	s := startServe(t, w)
	targets := map[string][]string{
		"stdio": {scopegateBin, "mcp", "--session", w.id},
		"http":  {s.url + "/v1/sessions/" + w.id + "/mcp", "--transport", "http"},
	}
	for _, name := range []string{"stdio", "http"} {
		target := targets[name]
		t.Run(name, func(t *testing.T) {
			list := inspector(t, w, target, "--method", "tools/list")
			tools, _ := list["tools"].([]any)
			names := map[string]map[string]any{}
			for _, x := range tools {
				m := x.(map[string]any)
				names[m["name"].(string)] = m
			}
			for _, want := range []string{"read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell",
				"roam_create_node", "roam_read_node", "roam_add_tags", "roam_link_nodes"} {
				if names[want] == nil {
					t.Errorf("tools/list has no %s", want)
				}
			}
			if ann, _ := names["read_file"]["annotations"].(map[string]any); ann["readOnlyHint"] != true {
				t.Errorf("read_file annotations %v, want readOnlyHint", ann)
			}
			if ann, _ := names["shell"]["annotations"].(map[string]any); ann["destructiveHint"] != true || ann["openWorldHint"] != true {
				t.Errorf("shell annotations %v", ann)
			}

			call := func(tool string, args ...string) map[string]any {
				a := []string{"--method", "tools/call", "--tool-name", tool}
				for _, kv := range args {
					a = append(a, "--tool-arg", kv)
				}
				return inspector(t, w, target, a...)
			}
			p := func(name string) string { return "path=" + filepath.Join(w.proj, name) }
			cases := []struct {
				tool            string
				allowed, denied []string
				wantAllowed     string // in the allowed result's text
			}{
				{"read_file", []string{p("a.txt")}, []string{p(".env")}, "hello mcp"},
				{"write_file", []string{p("new-" + name + ".txt"), "content=x"}, []string{"path=" + filepath.Join(w.root, "outside.txt"), "content=x"}, "bytes_written"},
				{"edit_file", []string{p("a.txt"), "old_string=hello mcp", "new_string=hello mcp!"}, []string{p(".env"), "old_string=KEY", "new_string=K"}, "replacements"},
				{"list_dir", []string{"path=" + w.proj}, []string{"path=/etc"}, "a.txt"},
				{"glob", []string{"pattern=*.txt", "path=" + w.proj}, []string{"pattern=*", "path=/etc"}, "a.txt"},
				{"grep", []string{"pattern=hello", "path=" + w.proj}, []string{"pattern=root", "path=/etc"}, "a.txt"},
				{"shell", []string{"command=echo from-mcp"}, []string{"command=curl http://example.invalid"}, "from-mcp"},
				{"roam_create_node", []string{"title=Notes " + name, "subdirectory=gptel", `tags=["gptel"]`}, []string{"title=Secret", "subdirectory=private"}, "Notes"},
			}
			for _, c := range cases {
				if r := call(c.tool, c.allowed...); r["isError"] == true || !strings.Contains(mcpText(r), c.wantAllowed) {
					t.Errorf("%s allowed call: %v", c.tool, r)
				}
				r := call(c.tool, c.denied...)
				sc, _ := r["structuredContent"].(map[string]any)
				dec, _ := sc["decision"].(map[string]any)
				if r["isError"] != true || dec["allowed"] != false || !strings.Contains(mcpText(r), "scope") {
					t.Errorf("%s denied call: %v", c.tool, r)
				}
			}
			// The node tools: node ids are denied until the user lists them.
			created := call("roam_create_node", "title=Linked "+name, "subdirectory=gptel")
			var node struct {
				ID string `json:"id"`
			}
			sc, _ := created["structuredContent"].(map[string]any)
			res, _ := sc["result"].(map[string]any)
			raw, _ := json.Marshal(res["node"])
			if json.Unmarshal(raw, &node); node.ID == "" {
				t.Fatalf("roam_create_node gave no node id: %v", created)
			}
			for _, c := range [][]string{{"roam_read_node", "node_id=" + node.ID}, {"roam_add_tags", "node_id=" + node.ID, `tags=["gptel"]`},
				{"roam_link_nodes", "source_id=" + node.ID, "target_id=" + node.ID}} {
				if r := call(c[0], c[1:]...); r["isError"] != true || !strings.Contains(mcpText(r), "org_roam_patterns.node_ids") {
					t.Errorf("%s of an unlisted node: %v", c[0], r)
				}
			}
			w.run(0, "scope", "expand", "--session", w.id, "--roam-node-id", node.ID)
			for _, c := range [][]string{{"roam_read_node", "node_id=" + node.ID}, {"roam_add_tags", "node_id=" + node.ID, `tags=["gptel"]`},
				{"roam_link_nodes", "source_id=" + node.ID, "target_id=" + node.ID}} {
				if r := call(c[0], c[1:]...); r["isError"] == true {
					t.Errorf("%s of a listed node: %v", c[0], r)
				}
			}
			// Invalid arguments are a JSON-RPC invalid-params error, not a call.
			before := len(w.entries())
			stdout, stderr, err := inspectorRaw(t, w, target, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "pathh=x")
			if err == nil || !strings.Contains(stdout+stderr, "-32602") || !strings.Contains(stdout+stderr, `no argument "pathh"`) {
				t.Errorf("invalid arguments: %v\nstdout %s\nstderr %s", err, stdout, stderr)
			}
			if after := len(w.entries()); after != before {
				t.Errorf("invalid arguments made %d tools.org entries, want none", after-before)
			}
		})
	}
	// Every MCP call is audited with :MODE: mcp and counted with via="mcp".
	for _, e := range w.entries() {
		if e.Mode != audit.ModeMCP && e.Mode != audit.ModeScope {
			t.Errorf("entry %s has mode %q", e.CallID, e.Mode)
		}
	}
	_, text := get(t, s.url+"/metrics")
	if v := metricValue(t, text, "scopegate_tool_calls_total", `via="mcp"`); v < 20 {
		t.Errorf("serve counted %v MCP decisions, want the HTTP ones", v)
	}
}

// TestMCPProgressCancelResources runs a script on the MCP TypeScript SDK's
// Client: it reads both resources, starts a long shell call, gets progress
// notifications and cancels it; the process group dies and tools.org
// records the call as interrupted.
func TestMCPProgressCancelResources(t *testing.T) {
	node := npmclient.Node(t)
	w := mcpWorkspace(t)
	secs := fmt.Sprintf("3%d.%d", os.Getpid()%10, os.Getpid()%997)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(npmclient.Dir(), "mcp", "progress-cancel.mjs"), scopegateBin, w.id, "sleep "+secs)
	cmd.Env = append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+w.sessions, "SCOPEGATE_CONFIG_DIR="+w.cfg, "HOME="+filepath.Join(w.root, "home"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("progress-cancel.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Resources []struct{ Name, URI, MimeType, Text string }
		Progress  []map[string]any
		Cancelled bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Resources) != 2 || !strings.Contains(got.Resources[0].Text+got.Resources[1].Text, "shell_commands") {
		t.Errorf("resources %+v, want scope.yml and tools.org", got.Resources)
	}
	if len(got.Progress) < 2 || !got.Cancelled {
		t.Fatalf("progress %v, cancelled %v: want two progress notifications, then a cancellation", got.Progress, got.Cancelled)
	}
	waitFor(t, "the cancelled child to die", func() bool { return len(pidsOf(t, "sleep "+secs)) == 0 })
	waitFor(t, "the INTERRUPTED entry", func() bool {
		es, err := audit.ReadFile(filepath.Join(w.branch, "tools.org"), audit.Filter{Decision: audit.DecisionInterrupted})
		return err == nil && len(es) == 1 && es[0].Mode == audit.ModeMCP
	})
}
