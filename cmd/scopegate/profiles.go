package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/profiles"
)

func newProfilesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "profiles", Short: "List and show scope profiles",
		Example: `  scopegate profiles list
  scopegate profiles show research`}
	cmd.AddCommand(newProfilesListCmd(a), newProfilesShowCmd(a))
	return cmd
}

func newProfilesListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list [flags]",
		Example: `  scopegate profiles list`,
		Short:   "List the scope profiles (user profiles override built-ins by name)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.profileLoader().List()
			if err != nil {
				return sessionErr(err)
			}
			if asJSON {
				return writeJSON(a.stdout, list)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROFILE\tSOURCE")
			for _, p := range list {
				src := p.Source
				if p.Overrides {
					src += " (overrides built-in)"
				}
				fmt.Fprintf(tw, "%s\t%s\n", p.Name, src)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newProfilesShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "show NAME",
		Example: `  scopegate profiles show coding`,
		Short:   "Print a scope profile as written (after the machine's managed policy, as comments)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, source, err := a.profileLoader().Raw(args[0])
			if err != nil {
				return sessionErr(err)
			}
			if source == profiles.SourceBuiltin {
				source = "built-in profile " + args[0]
			}
			warnAmbiguous(a, source, data)
			// Sessions made from the profile are decided within the
			// machine's managed policy: it is shown first, as comments.
			if err := writeManagedComment(a.stdout, a.managedView(nil)); err != nil {
				return err
			}
			_, err = a.stdout.Write(data)
			return err
		},
	}
}
