package main

import "github.com/spf13/cobra"

func newAuditCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "audit", Short: "audit (not available yet)", RunE: notYet("audit")}
}
