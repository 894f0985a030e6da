package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
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
			ctx, stop := interruptContext(cmd.Context())
			defer stop()
			var raw []byte
			switch err := a.forwardCall(ctx, &sel, "calls", call, t.Cwd, &raw); {
			case err == nil:
				var fwd struct {
					Decision policy.Decision `json:"decision"`
				}
				if err := json.Unmarshal(raw, &fwd); err != nil {
					return &exitError{code: exitInternal, err: fmt.Errorf("serve's answer: %w", err)}
				}
				return a.finish(json.RawMessage(bytes.TrimSpace(raw)), fwd.Decision.Allowed, nil)
			case !errors.Is(err, errNoServe):
				if code := interruptedExit(ctx); code != 0 {
					return silentExit(code)
				}
				return err
			}
			res, err := a.gateway().Call(ctx, t, call)
			if code := interruptedExit(ctx); code != 0 && res.CallID != "" {
				_ = a.finish(res, res.Decision.Allowed, nil)
				return silentExit(code)
			}
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
