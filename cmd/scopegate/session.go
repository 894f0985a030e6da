package main

import "github.com/spf13/cobra"

func newSessionCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "session", Short: "session (not available yet)", RunE: notYet("session")}
}
