package main

import "github.com/spf13/cobra"

func newCheckCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "check", Short: "check (not available yet)", RunE: notYet("check")}
}
