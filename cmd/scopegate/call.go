package main

import (
	"errors"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/gateway"
)

func newCallCmd(a *app) *cobra.Command {
	var sel selector
	var cwd string
	cmd := &cobra.Command{
		Use:   "call SELECTOR [--cwd DIR] [CALL_JSON]",
		Short: "Decide a tool call and run it confined when allowed (call result JSON on stdout; exit 0 ran, 3 denied)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			call, err := readCall(a, args)
			if err != nil {
				return err
			}
			if cwd != "" {
				if cwd, err = filepath.Abs(cwd); err != nil {
					return usageErr("--cwd: %v", err)
				}
			}
			t, err := a.target(&sel, "")
			if err != nil {
				return err
			}
			t.Cwd = cwd
			res, err := a.gateway().Call(cmd.Context(), t, call)
			if errors.Is(err, gateway.ErrNoBranch) {
				return usageErr("%v", err)
			}
			if res.CallID != "" {
				if werr := writeJSON(a.stdout, res); werr != nil {
					return &exitError{code: exitInternal, err: werr}
				}
			}
			if err != nil {
				return &exitError{code: exitInternal, err: err}
			}
			if !res.Decision.Allowed {
				return silentExit(exitDenied)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory of the call when it names none")
	return cmd
}
