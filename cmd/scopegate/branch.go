package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/sessions"
)

func newBranchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "branch", Short: "Create, switch and list a session's branches",
		Example: `  scopegate branch list "$S"
  scopegate branch create "$S" try-2 --switch`}
	cmd.AddCommand(newBranchCreateCmd(a), newBranchSwitchCmd(a), newBranchListCmd(a))
	return cmd
}

func validIDAndBranch(id, name string) error {
	if err := sessions.ValidateID(id); err != nil {
		return usageErr("%v", err)
	}
	if err := sessions.ValidateBranch(name); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

func newBranchCreateCmd(a *app) *cobra.Command {
	var from, at string
	var doSwitch bool
	cmd := &cobra.Command{
		Use: "create ID NAME [flags]",
		Example: `  scopegate branch create "$S" experiment --switch
  scopegate branch create "$S" retry --from main`,
		Short: "Create a branch from another one (scope and metadata copied)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validIDAndBranch(args[0], args[1]); err != nil {
				return err
			}
			opts := sessions.BranchOptions{From: from, Switch: doSwitch}
			if from != "" {
				if err := sessions.ValidateBranch(from); err != nil {
					return usageErr("--from: %v", err)
				}
			}
			if cmd.Flags().Changed("at") {
				n, err := strconv.ParseInt(at, 10, 64)
				if err != nil || n < 1 {
					return usageErr("--at %q: want a position of 1 or more", at)
				}
				opts.At = &n
			}
			c, err := a.store().CreateBranch(cmd.Context(), args[0], args[1], opts)
			if err != nil {
				return sessionErr(err)
			}
			return writeJSON(a.stdout, c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "parent branch (default: where current points)")
	f.StringVar(&at, "at", "", "branch point position in the parent's session.md")
	f.BoolVar(&doSwitch, "switch", false, "make the new branch current")
	return cmd
}

func newBranchSwitchCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "switch ID NAME",
		Example: `  scopegate branch switch "$S" main`,
		Short:   "Point the session's current branch at NAME",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validIDAndBranch(args[0], args[1]); err != nil {
				return err
			}
			st := a.store()
			if err := st.Switch(args[0], args[1]); err != nil {
				return sessionErr(err)
			}
			dir, err := st.Resolve(args[0], args[1])
			if err != nil {
				return sessionErr(err)
			}
			return writeJSON(a.stdout, sessions.Created{SessionID: args[0], SessionDir: st.SessionDir(args[0]), Branch: args[1], BranchDir: dir})
		},
	}
}

func newBranchListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list ID [flags]",
		Example: `  scopegate branch list "$S"`,
		Short:   "List a session's branches",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sessions.ValidateID(args[0]); err != nil {
				return usageErr("%v", err)
			}
			list, err := a.store().Branches(args[0])
			if err != nil {
				return sessionErr(err)
			}
			if asJSON {
				return writeJSON(a.stdout, list)
			}
			return printBranches(a, list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printBranches(a *app, list []sessions.BranchInfo) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  BRANCH\tPARENT\tAT\tCREATED\tMODE")
	for _, b := range list {
		mark := " "
		if b.Current {
			mark = "*"
		}
		pos := "-"
		if b.BranchPointPosition != nil {
			pos = strconv.FormatInt(*b.BranchPointPosition, 10)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\n", mark, b.Name, dash(b.ParentBranch), pos, stamp(b.Created), b.Mode)
	}
	return tw.Flush()
}
