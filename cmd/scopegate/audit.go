package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := audit.Filter{Decision: decision}
			switch decision {
			case "", audit.DecisionAllowed, audit.DecisionDenied, audit.DecisionInterrupted:
			default:
				return usageErr("--decision %q: want allowed, denied or interrupted", decision)
			}
			if since != "" {
				t, err := time.Parse(time.RFC3339, since)
				if err != nil {
					return usageErr("--since %q: not an RFC 3339 time", since)
				}
				f.Since = t
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			f.Warn = func(err error) { fmt.Fprintln(a.stderr, "scopegate: warning: tools.org: "+oneLine(err.Error())) }
			entries, err := audit.ReadFile(filepath.Join(dir, "tools.org"), f)
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
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tCALL_ID\tTOOL\tDECISION\tREASON\tSUMMARY")
			for _, e := range entries {
				reason := e.Reason
				if e.Error != "" {
					reason = "error"
				}
				dec := e.Decision
				if audit.DecisionOnly(e.Mode) {
					dec += " (" + e.Mode + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339),
					e.CallID, oneLine(e.Tool), dec, oneLine(reason), oneLine(e.Summary))
			}
			return tw.Flush()
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&decision, "decision", "", "only entries with this decision: allowed, denied or interrupted")
	cmd.Flags().StringVar(&since, "since", "", "only entries at or after this RFC 3339 time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}
