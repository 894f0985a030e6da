package main

import "github.com/spf13/cobra"

func newServeCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "serve", Short: "serve (not available yet)", RunE: notYet("serve")}
}
