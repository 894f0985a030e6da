package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestSubcommandNames: the name each command is looked up by before it is
// built is the name it has.
func TestSubcommandNames(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	for _, c := range subcommands() {
		if got := c.build(a).Name(); got != c.name {
			t.Errorf("subcommand %q builds a command named %q", c.name, got)
		}
	}
}

// TestPartialTree: the tree built for a run finds the same command, with the
// same flags, as the whole tree; what it cannot tell gets the whole tree.
func TestPartialTree(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		whole bool
	}{
		{args: []string{"version"}},
		{args: []string{"version", "--json"}},
		{args: []string{"call", "--session", "s", "{}"}},
		{args: []string{"--sessions-dir", "/tmp/x", "check", "--scope", "f"}},
		{args: []string{"--sessions-dir=/tmp/x", "--confine", "off", "hook", "codex"}},
		{args: []string{"--config-dir", "check", "check"}},
		{args: []string{"session", "create", "--name", "n"}},
		{args: []string{"scope", "expand", "--session", "s", "--read", "x"}},
		{args: []string{"--sessions-dir"}, whole: true},
		{args: []string{"help", "call"}, whole: true},
		{args: []string{"--help"}, whole: true},
		{args: []string{"-h"}, whole: true},
		{args: []string{"--version"}, whole: true},
		{args: []string{"chek"}, whole: true},
		{args: []string{"__complete", "call", "--session", ""}, whole: true},
		{args: []string{"completion", "bash"}, whole: true},
		{args: []string{"--", "version"}, whole: true},
		{args: nil, whole: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
			part, whole := newRootCmd(a, tc.args), newRootCmd(a, nil)
			if got, want := len(part.Commands()), len(whole.Commands()); (got == want) != tc.whole {
				t.Fatalf("%d of %d commands built, want the whole tree: %v", got, want, tc.whole)
			}
			pc, pargs, perr := part.Find(tc.args)
			wc, wargs, werr := whole.Find(tc.args)
			if (perr == nil) != (werr == nil) || perr == nil && (pc.CommandPath() != wc.CommandPath() || strings.Join(pargs, " ") != strings.Join(wargs, " ")) {
				t.Fatalf("partial tree finds %v %q (%v), whole tree %v %q (%v)", pc.CommandPath(), pargs, perr, wc.CommandPath(), wargs, werr)
			}
			flags := func(c *cobra.Command) string {
				return c.LocalFlags().FlagUsages() + "\n" + c.InheritedFlags().FlagUsages()
			}
			if perr == nil && flags(pc) != flags(wc) {
				t.Fatalf("flags differ:\n%s\nwant:\n%s", flags(pc), flags(wc))
			}
		})
	}
}
