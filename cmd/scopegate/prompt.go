package main

import "github.com/spf13/cobra"

func newPromptCmd(a *app) *cobra.Command {
	_ = a
	return &cobra.Command{Use: "prompt", Short: "prompt (not available yet)", RunE: notYet("prompt")}
}
