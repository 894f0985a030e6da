package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/sessions"
)

func newScopeModeCmd(a *app) *cobra.Command {
	var sel selector
	cmd := &cobra.Command{
		Use: "mode SELECTOR enforce|observe",
		Long: "Set a branch's mode. In enforce mode (the default) a call outside the scope is\n" +
			"denied. In observe mode a call that enforce mode would deny for a scope reason\n" +
			"(path_not_in_scope, command_not_allowed, redirect_not_in_scope,\n" +
			"roam_not_in_scope, host_not_in_scope) runs, and is recorded in tools.org as\n" +
			"observed with what it would have been denied by; every other denial (paths.deny,\n" +
			"shell_commands.deny, credential stores, protected roots, dangerous arguments,\n" +
			"invalid input) stays. The change is recorded in tools.org (:MODE: scope).\n" +
			"Then `scopegate scope suggest` proposes the scope the observed calls need.",
		Example: `  scopegate scope mode --session "$S" observe
  scopegate scope mode --session "$S" enforce`,
		Short: "Set a branch's mode: enforce, or observe (scope denials run and are recorded)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sessions.ValidMode(args[0]); err != nil {
				return usageErr("%v", err)
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			changed, err := a.gateway().SetMode(cmd.Context(), dir, args[0], "cli:"+currentUser())
			if err != nil {
				return sessionErr(err)
			}
			if !changed {
				_, err = fmt.Fprintf(a.stdout, "mode: %s (unchanged)\n", args[0])
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "mode: %s\n", args[0])
			return err
		},
	}
	sel.addFlags(cmd)
	return cmd
}
