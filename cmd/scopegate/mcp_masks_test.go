package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// `scopegate mcp` watches the project's directories between calls, as
// serve does: once a call has walked the project, new names made in it
// (a directory holding a .env, a hard link to a file outside the project,
// a file renamed into place as a .env, a directory holding a .env renamed
// to elsewhere in the project) are masked for the next call of the same
// process.
func TestMCPMasksChangesBetweenCalls(t *testing.T) {
	requireProgram(t, "python3")
	s := newCodingSession(t, nil)
	writeSecret := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("TOKEN="+maskCanary+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSecret(filepath.Join(s.proj, "held", "sub", ".env"))
	scaleTree(t, filepath.Join(s.proj, "gen"), 2_000, 20)
	outside := t.TempDir()

	cmd := s.w.cmd("mcp", "--session", s.id)
	cmd.Env = append(cmd.Env, s.env...)
	ctx := t.Context()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	shell := func(command string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "shell", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s: %s", command, b.String())
		}
		return b.String()
	}
	shell("ls -d .")

	writeSecret(filepath.Join(s.proj, "gen", "d0", "d5", "newdir", ".env"))
	writeSecret(filepath.Join(outside, "secret.txt"))
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(s.proj, "gen", "d0", "d7", "linked.txt")); err != nil {
		t.Fatal(err)
	}
	writeSecret(filepath.Join(s.proj, "staged.txt"))
	if err := os.Rename(filepath.Join(s.proj, "staged.txt"), filepath.Join(s.proj, "gen", "d0", "d9", ".env")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.proj, "held"), filepath.Join(s.proj, "gen", "d0", "d11", "moved")); err != nil {
		t.Fatal(err)
	}
	script := "import os\nos.chdir(" + strconv.Quote(s.proj) + ")\nfor p in ['gen/d0/d5/newdir/.env', 'gen/d0/d7/linked.txt', 'gen/d0/d9/.env', 'gen/d0/d11/moved/sub/.env']:\n" +
		"    try:\n        print(p, repr(open(p).read()))\n    except OSError as e:\n        print(p, e)\nprint('leak ran')\n"
	if err := os.WriteFile(filepath.Join(s.proj, "changed.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := shell("python3 " + filepath.Join(s.proj, "changed.py"))
	if !strings.Contains(out, "leak ran") || strings.Contains(out, maskCanary) {
		t.Errorf("after changes between two calls of one mcp process: %s", out)
	}
}
