package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/learn"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

func newScopeSuggestCmd(a *app) *cobra.Command {
	var sel selector
	var since string
	var asJSON, apply bool
	cmd := &cobra.Command{
		Use: "suggest SELECTOR [flags]",
		Long: "Read the branch's observed and denied calls in tools.org and propose the\n" +
			"narrowest widening that would allow them, as a scope expand command.\n" +
			"Paths are proposed as named; a directory glob DIR/** only where calls name\n" +
			fmt.Sprintf("%d distinct files or more below DIR, never / or a directory directly below it,\n", learn.DefaultMinFiles) +
			"never the home directory or above it, never above the project root for files\n" +
			"inside it. Commands by program name, or program and subcommand where\n" +
			"shell_commands.deny names the program. Hosts and org-roam entries as used.\n" +
			"Never what a hard denial covers (paths.deny, the credential list, host\n" +
			"secrets, the sessions root and config dir, shell_commands.deny), nor the\n" +
			"whole network; what is left out is listed as a comment. --apply applies the\n" +
			"suggestion as one expansion, recorded in tools.org.",
		Example: `  scopegate scope suggest --session "$S"
  scopegate scope suggest --session "$S" --since 2h --json
  scopegate scope suggest --session "$S" --apply`,
		Short: "Propose the narrowest scope widening that allows the branch's observed and denied calls",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, entries, err := a.readEntries(sel, since, audit.Filter{})
			if err != nil {
				return err
			}
			o, err := a.learnOptions(dir)
			if err != nil {
				return err
			}
			sugs, skipped := learn.Suggest(learn.Calls(entries), o)
			if apply && len(sugs) > 0 {
				if err := a.applySuggestions(cmd, dir, sugs); err != nil {
					return err
				}
			}
			if asJSON {
				if sugs == nil {
					sugs = []learn.Suggestion{}
				}
				return writeJSON(a.stdout, sugs)
			}
			return printSuggestions(a, sel.printed(dir), sugs, skipped, apply)
		},
	}
	sel.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&since, "since", "", "only calls at or after this time: a duration ago (90m, 2h, 3d), a date or an RFC 3339 time")
	f.BoolVar(&asJSON, "json", false, "print the suggestion as JSON: [{flag, value, calls}]")
	f.BoolVar(&apply, "apply", false, "apply the suggestion to the branch's scope.yml (one audited expansion)")
	return cmd
}

// learnOptions are the hard denials of a branch, which no suggestion may
// cover: its scope's paths.deny and shell_commands.deny, the credential
// list, the host's secrets, the protected roots, the home directory; and
// its project roots.
func (a *app) learnOptions(dir string) (learn.Options, error) {
	g := a.gateway()
	protected, scope, env, err := g.HardDenials(dir)
	if err != nil {
		return learn.Options{}, usageErr("%v: fix the scope before asking for a suggestion", err)
	}
	doc := scope.Document()
	home, _ := os.UserHomeDir()
	o := learn.Options{
		Deny:         append(slices.Clone(doc.Paths.Deny), profiles.CredentialDeny()...),
		Protected:    append(slices.Clone(protected), dir),
		Secrets:      exec.HostSecretPaths(),
		DenyCommands: doc.Shell.Deny,
		Home:         home,
	}
	if md, err := sessions.ReadMetadata(dir, nil); err == nil {
		if md.ProjectRoot != "" {
			o.ProjectRoots = append(o.ProjectRoots, md.ProjectRoot)
		}
		o.ProjectRoots = append(o.ProjectRoots, md.Worktrees...)
	}
	o.Covered = func(w policy.Widening) bool { return covered(scope, doc, env, w) }
	if m := scope.Managed(); m != nil {
		// The managed layer's deny lists are hard denials too, and nothing
		// beyond it is proposed.
		r := m.Rules()
		o.Deny = append(o.Deny, r.Paths.Deny...)
		o.DenyCommands = append(slices.Clone(o.DenyCommands), r.Shell.Deny...)
		o.Refused = func(w policy.Widening) string { return m.Refuses(w, env) }
	}
	return o, nil
}

// covered reports whether the scope already grants a widening: the
// suggestion leaves out what an expansion since the call has added.
func covered(scope *policy.Scope, doc policy.Document, env policy.Env, w policy.Widening) bool {
	switch w.Flag {
	case policy.WidenRead, policy.WidenWrite:
		access := policy.AccessRead
		if w.Flag == policy.WidenWrite {
			access = policy.AccessWrite
		}
		p, glob := strings.CutSuffix(w.Value, "/**")
		if strings.ContainsAny(p, "*?[{\\") || !filepath.IsAbs(p) {
			return false
		}
		if scope.CheckPath(p, access, "/", env) != nil {
			return false
		}
		return !glob || scope.CheckPath(filepath.Join(p, "scopegate-probe"), access, "/", env) == nil
	case policy.WidenCommand:
		words := strings.Fields(w.Value)
		for _, e := range doc.Shell.Allow {
			if ew := strings.Fields(e); len(ew) > 0 && len(ew) <= len(words) && slices.Equal(ew, words[:len(ew)]) {
				return true
			}
		}
	case policy.WidenRoamSubdirectory:
		return slices.Contains(doc.OrgRoam.Subdirectory, w.Value)
	case policy.WidenRoamTag:
		return slices.Contains(doc.OrgRoam.Tags, w.Value)
	case policy.WidenRoamNodeID:
		return slices.Contains(doc.OrgRoam.NodeIDs, w.Value)
	}
	return false
}

// applySuggestions applies sugs to the branch as one expansion
// (sessions.ExpansionOf): a suggestion that cannot be applied is a usage
// error, and nothing is applied.
func (a *app) applySuggestions(cmd *cobra.Command, dir string, sugs []learn.Suggestion) error {
	ws := make([]policy.Widening, len(sugs))
	for i, s := range sugs {
		ws[i] = policy.Widening{Flag: s.Flag, Value: s.Value}
	}
	add, err := sessions.ExpansionOf(ws...)
	if err != nil {
		return usageErr("%v; nothing was applied", err)
	}
	if _, err := a.gateway().ExpandScope(cmd.Context(), dir, add, "cli:"+currentUser()+" (scope suggest --apply)"); err != nil {
		return sessionErr(err)
	}
	return nil
}

// printSuggestions prints the suggestion as a scope expand command, each
// flag with the number of calls it allows, and what was left out.
func printSuggestions(a *app, selector string, sugs []learn.Suggestion, skipped []learn.Skipped, applied bool) error {
	var b strings.Builder
	for _, s := range skipped {
		fmt.Fprintf(&b, "# not proposed: %s %s (%s): %s\n", s.Flag, policy.ShellQuote(s.Value), s.Why, calls(s.Calls))
	}
	if len(sugs) == 0 {
		b.WriteString("# nothing to suggest: no observed or denied call of this branch needs a wider scope\n")
		_, err := fmt.Fprint(a.stdout, b.String())
		return err
	}
	for _, s := range sugs {
		fmt.Fprintf(&b, "# %s %s: %s\n", s.Flag, policy.ShellQuote(s.Value), calls(s.Calls))
	}
	b.WriteString(policy.ExpandCommand + " " + selector)
	for _, s := range sugs {
		b.WriteString(" \\\n  " + s.Flag.String() + " " + policy.ShellQuote(s.Value))
	}
	b.WriteString("\n")
	if applied {
		b.WriteString("# applied to scope.yml (recorded in tools.org)\n")
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}

// calls says how many calls, and which.
func calls(ids []string) string {
	word := "calls"
	if len(ids) == 1 {
		word = "call"
	}
	shown := ids
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), "…")
	}
	return fmt.Sprintf("%d %s (%s)", len(ids), word, strings.Join(shown, " "))
}
