//go:build !lean

package main

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// referenceFile is the interface as built, whose CLI part
// TestReferenceCLI checks against the command tree.
const referenceFile = "../../docs/reference.md"

// TestReferenceCLI: docs/reference.md and --help agree. Every command cobra
// knows has a heading "### `scopegate …`" in the reference's CLI section,
// and every flag it defines (its own, and the root's persistent ones under
// "### `scopegate`") a table row starting "| `--flag`" or "| `-x, --flag`"
// below it; every command and flag the reference names exists.
func TestReferenceCLI(t *testing.T) {
	data, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseReferenceCLI(string(data))
	if err != nil {
		t.Fatal(err)
	}
	built := cliFlags(newRootCmd(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}, nil))
	for _, cmd := range slices.Sorted(maps.Keys(built)) {
		flags := built[cmd]
		documented, ok := doc[cmd]
		if !ok {
			t.Errorf("%s: no heading \"### `%s`\" in %s", cmd, cmd, referenceFile)
			continue
		}
		for _, f := range flags {
			if !slices.Contains(documented, f) {
				t.Errorf("%s: flag %s is not in its table in %s", cmd, f, referenceFile)
			}
		}
	}
	for _, cmd := range slices.Sorted(maps.Keys(doc)) {
		flags := doc[cmd]
		have, ok := built[cmd]
		if !ok {
			t.Errorf("%s names command %q, which scopegate does not have", referenceFile, cmd)
			continue
		}
		for _, f := range flags {
			if !slices.Contains(have, f) {
				t.Errorf("%s names flag %s of %q, which it does not have", referenceFile, f, cmd)
			}
		}
	}
}

// cliFlags maps the path of every command of root that a user runs (not
// help, not hidden, not a help topic) to its flags as the reference writes
// them: "--name", or "-x, --name" with a shorthand. --help is left out.
func cliFlags(root *cobra.Command) map[string][]string {
	root.InitDefaultCompletionCmd()
	out := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.IsAdditionalHelpTopicCommand() {
			return
		}
		var flags []string
		add := func(f *pflag.Flag) {
			if f.Name == "help" || f.Hidden {
				return
			}
			name := "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand + ", " + name
			}
			if !slices.Contains(flags, name) {
				flags = append(flags, name)
			}
		}
		if c == root {
			c.PersistentFlags().VisitAll(add)
		}
		c.LocalNonPersistentFlags().VisitAll(add)
		out[c.CommandPath()] = flags
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

var (
	// referenceCommand is a command heading of the CLI section.
	referenceCommand = regexp.MustCompile("^### `(scopegate(?: [a-z-]+)*)`$")
	// referenceFlag is a flag row of a command's table.
	referenceFlag = regexp.MustCompile("^\\| `((?:-[a-zA-Z], )?--[a-z][a-z-]*)` \\|")
)

// parseReferenceCLI reads the "## CLI" section of the reference: its
// command headings and, below each, the flags of its table.
func parseReferenceCLI(doc string) (map[string][]string, error) {
	out := map[string][]string{}
	in, cmd := false, ""
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "## CLI":
			in = true
			continue
		case strings.HasPrefix(line, "## "):
			in = false
		}
		if !in {
			continue
		}
		if m := referenceCommand.FindStringSubmatch(line); m != nil {
			cmd = m[1]
			if _, dup := out[cmd]; dup {
				return nil, &referenceError{"command " + cmd + " has two headings"}
			}
			out[cmd] = nil
			continue
		}
		if strings.HasPrefix(line, "### ") {
			return nil, &referenceError{"heading " + line + " is not \"### `scopegate …`\""}
		}
		if m := referenceFlag.FindStringSubmatch(line); m != nil {
			if cmd == "" {
				return nil, &referenceError{"flag " + m[1] + " before any command heading"}
			}
			out[cmd] = append(out[cmd], m[1])
		}
	}
	if len(out) == 0 {
		return nil, &referenceError{"no \"## CLI\" section with \"### `scopegate …`\" headings"}
	}
	return out, nil
}

// referenceError is a reference whose CLI section is not in the fixed form.
type referenceError struct{ msg string }

func (e *referenceError) Error() string { return filepath.Base(referenceFile) + ": " + e.msg }
