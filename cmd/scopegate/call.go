package main

import (
	"errors"

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
			t, call, err := a.callInput(&sel, "", cwd, args)
			if err != nil {
				return err
			}
			res, err := a.gateway().Call(cmd.Context(), t, call)
			if errors.Is(err, gateway.ErrNoBranch) {
				return usageErr("%v", err)
			}
			if res.CallID == "" {
				return &exitError{code: exitInternal, err: err}
			}
			return a.finish(res, res.Decision.Allowed, err)
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory of the call when it names none")
	return cmd
}
