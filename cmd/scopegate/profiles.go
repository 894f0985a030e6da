package main

import "github.com/spf13/cobra"

func newProfilesCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "profiles", Short: "profiles (not available yet)", RunE: notYet("profiles")}
}
