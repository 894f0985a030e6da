package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
)

// replayChange is one recorded call whose decision would change.
type replayChange struct {
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Was     string `json:"was"`
	WouldBe string `json:"would_be"`
	// Reason is the candidate scope's reason for the new decision.
	Reason  string `json:"reason"`
	Summary string `json:"-"`
}

// replayReport is scope replay --json.
type replayReport struct {
	Changed   []replayChange `json:"changed"`
	Unchanged int            `json:"unchanged"`
}

func newScopeReplayCmd(a *app) *cobra.Command {
	var sel selector
	var scopeFile, since string
	var asJSON bool
	cmd := &cobra.Command{
		Use: "replay SELECTOR --scope FILE [flags]",
		Long: "Decide every call recorded in the branch's tools.org again against the scope in\n" +
			"FILE, as enforce mode would, and print each call whose decision would change\n" +
			"(was → would be) and a count. A call is counted once (a hook's decision and its\n" +
			"run share a call id); shell calls are decided on their recorded command and\n" +
			"working directory. An observed call was not allowed by its scope: it changes\n" +
			"when FILE allows it.\n\n" +
			"Exit codes: 0 when no call that was allowed would now be denied, 3 when at\n" +
			"least one would (the candidate refuses past work), 2 for a bad FILE or usage.",
		Example: `  cp "$(scopegate session show "$S" --json | jq -r .session_dir)/current/scope.yml" tighter.yml
  # edit tighter.yml, e.g. remove curl from shell_commands.allow
  scopegate scope replay --session "$S" --scope tighter.yml --since 7d`,
		Short: "Decide the branch's recorded calls again against a candidate scope and show what would change",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scopeFile == "" {
				return usageErr("give --scope FILE, the candidate scope to replay the calls against")
			}
			abs, err := filepath.Abs(scopeFile)
			if err != nil {
				return usageErr("--scope %q: %v", scopeFile, err)
			}
			data, err := os.ReadFile(abs)
			if err != nil {
				return usageErr("--scope: %v", err)
			}
			if _, err := policy.ParseDocument(data); err != nil {
				return usageErr("%s: %v", abs, err)
			}
			dir, entries, err := a.readEntries(sel, since, audit.Filter{})
			if err != nil {
				return err
			}
			rep, tightened := replay(a, dir, abs, entries)
			if asJSON {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else if err := printReplay(a, rep, tightened); err != nil {
				return err
			}
			if tightened > 0 {
				return silentExit(exitDenied)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&scopeFile, "scope", "", "candidate scope file to decide the calls against (required)")
	f.StringVar(&since, "since", "", "only calls at or after this time: a duration ago (90m, 2h, 3d), a date or an RFC 3339 time")
	f.BoolVar(&asJSON, "json", false, `print JSON: {"changed": [{call_id, tool, was, would_be, reason}], "unchanged": N}`)
	return cmd
}

// replay decides each recorded call once, the first entry of its call id
// (the decision, where a hook's run follows it), against scopeFile. It
// returns the report and how many allowed calls would now be denied.
func replay(a *app, dir, scopeFile string, entries []audit.Entry) (replayReport, int) {
	g := a.gateway()
	rep := replayReport{Changed: []replayChange{}}
	seen := map[string]bool{}
	tightened := 0
	for _, e := range entries {
		if !policy.KnownTool(e.Tool) || seen[e.CallID] || e.ArgsTruncated != "" {
			continue
		}
		var was string
		switch e.Decision {
		case audit.DecisionAllowed:
			was = "allowed"
		case audit.DecisionDenied:
			was = "denied"
		case audit.DecisionObserved:
			was = "observed"
		default:
			continue
		}
		seen[e.CallID] = true
		call := policy.Call{Tool: e.Tool, Args: e.Args, Cwd: e.Cwd}
		d := g.Redecide(dir, scopeFile, call, replayExecution(e))
		wouldBe := "denied"
		if d.Allowed {
			wouldBe = "allowed"
		}
		if (was == "allowed") == d.Allowed {
			rep.Unchanged++
			continue
		}
		if was == "allowed" {
			tightened++
		}
		rep.Changed = append(rep.Changed, replayChange{CallID: e.CallID, Tool: e.Tool, Was: was, WouldBe: wouldBe,
			Reason: string(d.Reason), Summary: e.Summary})
	}
	return rep, tightened
}

// replayExecution is who ran a recorded call: its caller for a check and
// for a hook's file tool, scopegate for the rest.
func replayExecution(e audit.Entry) policy.Execution {
	switch {
	case e.Mode == audit.ModeCheck, e.Mode == audit.ModeHook && e.Tool != policy.ToolShell:
		return policy.ExecutionExternal
	}
	return policy.ExecutionConfined
}

func printReplay(a *app, rep replayReport, tightened int) error {
	if len(rep.Changed) > 0 {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CALL_ID\tTOOL\tWAS\t\tWOULD BE\tREASON\tSUMMARY")
		for _, c := range rep.Changed {
			fmt.Fprintf(tw, "%s\t%s\t%s\t→\t%s\t%s\t%s\n", c.CallID, c.Tool, c.Was, c.WouldBe, c.Reason, policy.OneLine(c.Summary))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(a.stdout, "%d changed (%d now denied), %d unchanged\n", len(rep.Changed), tightened, rep.Unchanged)
	return err
}
