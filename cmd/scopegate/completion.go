package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// completer completes session ids, branch names, profiles, presets and the
// values of enumerated flags from the resolved global options.
type completer struct{ a *app }

type completeFunc = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective)

// quiet is a copy of the app whose warnings go nowhere: completion output
// is parsed by the shell.
func (c completer) quiet() *app {
	q := *c.a
	q.stderr = io.Discard
	_ = q.resolveDirs()
	return &q
}

func (c completer) sessions(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	list, err := c.quiet().store().List(context.Background())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(list, prefix, func(s sessions.Summary) cobra.Completion {
		return cobra.CompletionWithDesc(s.SessionID, s.Preset)
	}), cobra.ShellCompDirectiveNoFileComp
}

// matching are the completions of the items whose completion starts with
// prefix.
func matching[T any](items []T, prefix string, completion func(T) cobra.Completion) []cobra.Completion {
	var out []cobra.Completion
	for _, it := range items {
		if c := completion(it); strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// branchesOf completes the branches of session id.
func (c completer) branchesOf(id, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if id == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.quiet().store().Branches(id)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(list, prefix, func(b sessions.BranchInfo) cobra.Completion { return b.Name }),
		cobra.ShellCompDirectiveNoFileComp
}

// branchFlag completes --branch from the command's --session.
func (c completer) branchFlag(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	id, _ := cmd.Flags().GetString("session")
	return c.branchesOf(id, prefix)
}

// sessionThenBranch completes ID, then NAME (branch create/switch/list).
func (c completer) sessionThenBranch(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return c.sessions(cmd, args, prefix)
	case 1:
		if cmd.Name() == "create" { // a new name: nothing to offer
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.branchesOf(args[0], prefix)
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func (c completer) profiles(_ *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.quiet().profileLoader().List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(list, prefix, func(p profiles.Info) cobra.Completion { return p.Name }),
		cobra.ShellCompDirectiveNoFileComp
}

func (c completer) presets(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	m, err := c.quiet().profileLoader().Presets()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for name := range m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// addCompletions registers the completions of every command of root by
// its flags and positional arguments.
func addCompletions(root *cobra.Command, a *app) {
	c := completer{a: a}
	values := map[string][]string{
		"decision":       {"allowed", "denied", "error", "interrupted", "asked"},
		"confine":        {"landlock", "best-effort", "off"},
		"session-action": {"archive", "remove"},
		"log-level":      {"debug", "info", "warn", "error"},
		"since":          {"1h", "24h", "7d"},
	}
	byFlag := map[string]completeFunc{
		"session": c.sessions,
		"branch":  c.branchFlag,
		"from":    c.branchFlag,
		"profile": c.profiles,
		"preset":  c.presets,
	}
	dirs := []string{"branch-dir", "sessions-dir", "config-dir", "roam-dir", "project-root", "worktree", "cwd"}
	byArgs := map[string]completeFunc{
		"scopegate session show":  c.sessions,
		"scopegate branch list":   c.sessionThenBranch,
		"scopegate branch create": c.sessionThenBranch,
		"scopegate branch switch": c.sessionThenBranch,
		"scopegate profiles show": c.profiles,
	}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		register := func(name string, fn completeFunc) {
			if cmd.Flags().Lookup(name) != nil || cmd.PersistentFlags().Lookup(name) != nil {
				_ = cmd.RegisterFlagCompletionFunc(name, fn)
			}
		}
		if cmd == root || cmd.LocalNonPersistentFlags().HasFlags() {
			for name, vals := range values {
				register(name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
			}
			for name, fn := range byFlag {
				register(name, fn)
			}
			for _, name := range dirs {
				if f := cmd.Flags().Lookup(name); f != nil || cmd.PersistentFlags().Lookup(name) != nil {
					_ = cmd.MarkFlagDirname(name)
				}
			}
		}
		if fn, ok := byArgs[cmd.CommandPath()]; ok {
			cmd.ValidArgsFunction = fn
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
