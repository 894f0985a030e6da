package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamplesRun runs every line of every command's Examples as written,
// in a shell with $S naming a session of a fresh sessions root, and requires
// that none is a usage or internal error.
func TestExamplesRun(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("jq is needed by the examples: %v", err)
	}
	w := newWorkspace(t)
	bin := filepath.Dir(scopegateBin)
	scope := "paths:\n  read: [\"" + w.proj + "/**\"]\n"
	// tighter.yml: the candidate scope of scope replay's example, which
	// the example makes with cp (not a scopegate command, so not run here).
	for name, data := range map[string]string{"README.md": "# demo\n", "scope.yml": scope, "tighter.yml": scope} {
		if err := os.WriteFile(filepath.Join(w.proj, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root := newRootCmd(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// serve runs until stopped; exec runs a call an agent hook stored.
		if c.Name() == "serve" || c.Name() == "exec" {
			return
		}
		for line := range strings.SplitSeq(c.Example, "\n") {
			line = strings.TrimSpace(line)
			// Lines that are not scopegate commands are configuration to
			// copy (agent settings) or another program's command.
			if !strings.HasPrefix(line, "scopegate ") && !strings.HasPrefix(line, "S=") && !strings.HasPrefix(line, "echo ") {
				continue
			}
			t.Run(c.CommandPath()+": "+line, func(t *testing.T) {
				cmd := exec.Command("sh", "-c", line)
				cmd.Dir = w.proj
				cmd.Env = append(w.cmd().Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "S="+w.id,
					"SCOPEGATE_CONFINE=best-effort")
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				// 0 ran or allowed, 3 denied; --exit-status passes the
				// command's own status through.
				if code != 0 && code != exitDenied && !strings.Contains(line, "--exit-status") {
					t.Fatalf("exit %d\n%s", code, out)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestEveryCommandHasExamples: a newcomer finds an Examples section on
// every command.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCmd(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// cobra's own help and completion commands document themselves.
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" && c.Parent() == root {
			return
		}
		if c.Example == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
