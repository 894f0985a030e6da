//go:build lean

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// newServeCmd is serve in the per-call build: it runs fullBinary.
func newServeCmd(a *app) *cobra.Command { return fullCmd(a, serveCmdDoc()) }

// newMCPCmd is mcp in the per-call build: it runs fullBinary.
func newMCPCmd(a *app) *cobra.Command { return fullCmd(a, mcpCmdDoc()) }

// fullCmd makes cmd replace the process with fullBinary run with this run's
// arguments, which parses them (--help included) as its own.
func fullCmd(a *app, cmd *cobra.Command) *cobra.Command {
	cmd.DisableFlagParsing = true
	cmd.RunE = func(*cobra.Command, []string) error {
		self, err := os.Executable()
		if err != nil {
			return &exitError{code: exitInternal, err: fmt.Errorf("locate the scopegate binary: %w", err)}
		}
		full := filepath.Join(filepath.Dir(self), fullBinary)
		if _, err := os.Stat(full); err != nil {
			return &exitError{code: exitInternal, err: fmt.Errorf(
				"%s: this scopegate is the per-call build, whose %s runs %s next to it: %v; build it with: go build -trimpath -ldflags='-s -w' -o %s ./cmd/scopegate",
				cmd.Name(), cmd.Name(), fullBinary, err, full)}
		}
		env := append(os.Environ(), callBinaryEnv+"="+self)
		err = syscall.Exec(full, append([]string{full}, a.args...), env)
		return &exitError{code: exitInternal, err: fmt.Errorf("run %s: %w", full, err)}
	}
	return cmd
}
