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
		Use:   "call SELECTOR [flags] [CALL_JSON | -]",
		Short: "Decide a tool call and run it confined when allowed (call result JSON on stdout; exit 0 ran, 3 denied)",
		Long: "Decide a tool call against a session branch's scope and, when allowed, run it\n" +
			"confined; print the call result (call id, decision and result) as JSON and\n" +
			"record it in the branch's tools.org.\n\n" +
			callHelp + "\n\n" + toolsHelp() + "\n" +
			"Exit status: 0 the call ran (whatever the command's own status; see\n" +
			"--exit-status), 3 denied, 2 usage or invalid input, 1 internal error.",
		Example: `  scopegate call --session "$S" '{"tool":"shell","args":{"command":"go test ./..."}}'
  scopegate call --session "$S" --exit-status '{"tool":"shell","args":{"command":"false"}}'
  scopegate call --session "$S" '{"tool":"write_file","args":{"path":"notes.txt","content":"hello\n"}}'`,
		Args: cobra.MaximumNArgs(1),
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
