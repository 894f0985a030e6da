package main

import (
	"github.com/spf13/cobra"
)

// selector is the branch selector of CONTRACT.md §4: --branch-dir DIR, or
// --session ID [--branch NAME].
type selector struct {
	branchDir string
	session   string
	branch    string
}

func (s *selector) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.branchDir, "branch-dir", "", "branch directory")
	f.StringVar(&s.session, "session", "", "session id")
	f.StringVar(&s.branch, "branch", "", "branch name (default: where current points)")
}

// set reports whether any selector flag was given.
func (s *selector) set() bool { return s.branchDir != "" || s.session != "" || s.branch != "" }

// resolve returns the branch directory the selector names.
func (s *selector) resolve(a *app) (string, error) {
	_ = a
	if s.session != "" {
		return "", usageErr("--session is not available in this build")
	}
	if s.branch != "" {
		return "", usageErr("--branch needs --session")
	}
	if s.branchDir == "" {
		return "", usageErr("no branch selected: give --branch-dir DIR or --session ID")
	}
	return s.branchDir, nil
}
