package main

import "github.com/spf13/cobra"

func newBranchCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "branch", Short: "branch (not available yet)", RunE: notYet("branch")}
}
