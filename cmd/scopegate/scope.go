package main

import "github.com/spf13/cobra"

func newScopeCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "scope", Short: "scope (not available yet)", RunE: notYet("scope")}
}
