package main

import "github.com/spf13/cobra"

func newCallCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "call", Short: "call (not available yet)", RunE: notYet("call")}
}
