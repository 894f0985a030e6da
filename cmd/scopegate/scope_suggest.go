package main

import "github.com/spf13/cobra"

func newScopeSuggestCmd(a *app) *cobra.Command { return &cobra.Command{Use: "suggest", Hidden: true} }
func newScopeReplayCmd(a *app) *cobra.Command  { return &cobra.Command{Use: "replay", Hidden: true} }
