package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

func newAuditCmd(a *app) *cobra.Command {
	var sel selector
	var decision, since string
	var asJSON bool
	cmd := &cobra.Command{
		Use: "audit SELECTOR [flags]",
		Example: `  scopegate audit --session "$S"
  scopegate audit --session "$S" --decision denied --since 2h
  scopegate audit --session "$S" --since 2026-11-22 --json`,
		Short: "List the audited decisions of a session branch (its tools.org)",
		Long: `List the entries of a session branch's tools.org, oldest first: one line per
decision with its status (allowed, denied, error for a call that ran and
failed or exited non-zero, interrupted, asked for a call left to the agent's
permission dialog), the command's exit code and a summary.
Entries made by check (decision only) are marked "(check)".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := audit.Filter{Decision: decision}
			switch decision {
			case "", audit.StatusAllowed, audit.StatusDenied, audit.StatusError, audit.StatusInterrupted, audit.StatusAsked, audit.StatusObserved:
			default:
				return usageErr("--decision %q: want allowed, denied, error, interrupted, asked or observed", decision)
			}
			dir, entries, err := a.readEntries(sel, since, f)
			if err != nil {
				return err
			}
			if asJSON {
				if entries == nil {
					entries = []audit.Entry{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			// A branch not enforced says so first (scope mode).
			if mode, err := sessions.ReadMode(dir); err != nil || mode != sessions.ModeEnforce {
				if err != nil {
					mode = "invalid (calls are enforced)"
				}
				fmt.Fprintf(a.stdout, "# mode: %s\n", mode)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tCALL_ID\tTOOL\tSTATUS\tEXIT\tREASON\tSUMMARY")
			for _, e := range entries {
				reason := e.Reason
				if e.Error != "" {
					reason = e.Error
				}
				status := e.Status()
				if audit.DecisionOnly(e.Mode) {
					status += " (" + e.Mode + ")"
				}
				exit := "-"
				if e.ExitCode != nil {
					exit = strconv.Itoa(*e.ExitCode)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339),
					e.CallID, policy.OneLine(e.Tool), status, exit, policy.OneLine(reason), policy.OneLine(e.Summary))
			}
			return tw.Flush()
		},
	}
	sel.addFlags(cmd)
	cmd.AddCommand(newAuditVerifyCmd(a))
	cmd.Flags().StringVar(&decision, "decision", "", "only entries with this status: allowed, denied, error (ran and failed), interrupted or observed (ran in observe mode, would have been denied)")
	cmd.Flags().StringVar(&since, "since", "", "only entries at or after this time: a duration ago (90m, 2h, 3d), a date (2026-11-22, local midnight) or an RFC 3339 time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func newAuditVerifyCmd(a *app) *cobra.Command {
	var sel selector
	var asJSON bool
	cmd := &cobra.Command{
		Use: "verify SELECTOR [--json]",
		Example: `  scopegate audit verify --session "$S"
  scopegate audit verify --session "$S" --json   # exit 3 names the first break`,
		Short: "Check that a branch's tools.org is whole: no entry edited, removed, reordered or cut",
		Long: `Check the chain of a session branch's tools.org: every entry scopegate writes
carries :CHAIN:, a SHA-256 over the entry's text and the :CHAIN: of the entry
before it, and the branch directory keeps the latest value, so an edited,
removed, reordered or cut entry is found. Exit 0 when the chain holds; exit 3
naming the first entry where it breaks (line, call id) and how. Headings
written by other programs (gptel's own tool calls) are listed, not breaks.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			r, err := audit.Verify(filepath.Join(dir, "tools.org"))
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else {
				printVerify(a, r)
			}
			if !r.OK {
				return silentExit(exitDenied)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// printVerify prints a verify report for a reader: the verdict, the first
// break on a line of its own, then the others and the foreign entries.
func printVerify(a *app, r audit.Report) {
	w := a.stdout
	head := "no chain head"
	if r.Head != nil {
		head = fmt.Sprintf("head at entry %d", r.Head.Seq)
	}
	if r.OK {
		fmt.Fprintf(w, "chain holds: %d entries, %s\n", r.Entries, head)
	} else {
		b := r.Breaks[0]
		fmt.Fprintf(w, "chain broken: %s at line %d", b.Kind, b.Line)
		if b.CallID != "" {
			fmt.Fprintf(w, " (call %s)", policy.OneLine(b.CallID))
		}
		fmt.Fprintf(w, ": %s\n", b.Detail)
		fmt.Fprintf(w, "%d entries, %s, %d break(s)\n", r.Entries, head, len(r.Breaks))
		for _, b := range r.Breaks[1:] {
			fmt.Fprintf(w, "  %s at line %d (call %s): %s\n", b.Kind, b.Line, policy.OneLine(b.CallID), b.Detail)
		}
	}
	if r.Unrecorded > 0 {
		fmt.Fprintf(w, "%d last entries past the chain head (an append stopped before it recorded the head; the next one will)\n", r.Unrecorded)
	}
	if r.Unchained > 0 {
		fmt.Fprintf(w, "%d entries written before the chain began\n", r.Unchained)
	}
	for _, f := range r.Foreign {
		fmt.Fprintf(w, "not scopegate's, skipped: line %d: * %s\n", f.Line, policy.OneLine(f.Headline))
	}
}

// parseSince reads --since: a duration before now ("90m", "2h", "3d"), a
// date (local midnight) or an RFC 3339 time.
// readEntries reads the entries of the branch sel selects, filtered by f
// and, when since is set, by --since; it returns the branch directory too.
func (a *app) readEntries(sel selector, since string, f audit.Filter) (string, []audit.Entry, error) {
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			return "", nil, usageErr("%v", err)
		}
		f.Since = t
	}
	dir, err := sel.resolve(a)
	if err != nil {
		return "", nil, err
	}
	f.Warn = func(err error) { fmt.Fprintln(a.stderr, "scopegate: warning: tools.org: "+policy.OneLine(err.Error())) }
	entries, err := audit.ReadFile(filepath.Join(dir, audit.LogFile), f)
	if err != nil {
		return "", nil, &exitError{code: exitInternal, err: err}
	}
	return dir, entries, nil
}

func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04", s, time.Local); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (90m, 2h, 3d), a date (2026-11-22) or an RFC 3339 time (2026-11-22T10:30:00Z)", s)
}
