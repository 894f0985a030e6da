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
	var exitStatus, asJSON, progress bool
	cmd := &cobra.Command{
		Use:   "call SELECTOR [flags] [CALL_JSON | -]",
		Short: "Decide a tool call and run it confined when allowed (call result JSON on stdout; exit 0 ran, 3 denied)",
		Example: `  scopegate call --session "$S" '{"tool":"shell","args":{"command":"go test ./..."}}'
  scopegate call --session "$S" --exit-status '{"tool":"shell","args":{"command":"false"}}'
  scopegate call --session "$S" '{"tool":"write_file","args":{"path":"notes.txt","content":"hello\n"}}'`,
		Args: cobra.MaximumNArgs(1),
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
					Result   *struct {
						ExitCode int `json:"exit_code"`
					} `json:"result"`
				}
				if err := json.Unmarshal(raw, &fwd); err != nil {
					return &exitError{code: exitInternal, err: fmt.Errorf("serve's answer: %w", err)}
				}
				if ferr := a.finish(json.RawMessage(bytes.TrimSpace(raw)), fwd.Decision.Allowed, nil); ferr != nil || !exitStatus {
					return ferr
				}
				if fwd.Result != nil && fwd.Result.ExitCode != 0 {
					return silentExit(fwd.Result.ExitCode)
				}
				return nil
			case !errors.Is(err, errNoServe):
				if code := interruptedExit(ctx); code != 0 {
					return silentExit(code)
				}
				return err
			}
			warn := warner(a.stderr)
			gw := a.gatewayWith(nil, warn)
			if progress || !asJSON && isTerminal(a.stderr) {
				gw = a.gatewayWithProgress(nil, warn, a.stderr)
			}
			res, err := gw.Call(ctx, t, call)
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
			if ferr := a.finish(res, res.Decision.Allowed, err); ferr != nil || !exitStatus {
				return ferr
			}
			if code := resultExitCode(res.Result); code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
	lazyLong(cmd, func() string {
		return "Decide a tool call against a session branch's scope and, when allowed, run it\n" +
			"confined; print the call result (call id, decision and result) as JSON and\n" +
			"record it in the branch's tools.org.\n\n" +
			callHelp + "\n\n" + toolsHelp() + "\n" +
			"Exit status: 0 the call ran (whatever the command's own status; see\n" +
			"--exit-status), 3 denied, 2 usage or invalid input, 1 internal error."
	})

	sel.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&cwd, "cwd", "", "working directory of the call when it names none")
	f.BoolVar(&exitStatus, "exit-status", false, "exit with the command's own exit status when it ran and failed")
	f.BoolVar(&asJSON, "json", false, "only the JSON result: no progress on stderr even on a terminal")
	f.BoolVar(&progress, "progress", false, "stream the command's stderr to stderr as it comes (default on a terminal)")
	cmd.MarkFlagsMutuallyExclusive("json", "progress")
	return cmd
}

// resultExitCode is the exit_code of a call result (0 when it has none).
func resultExitCode(result any) int {
	if result == nil {
		return 0
	}
	data, err := json.Marshal(result)
	if err != nil {
		return exitInternal
	}
	var r struct {
		ExitCode int `json:"exit_code"`
	}
	if json.Unmarshal(data, &r) != nil {
		return exitInternal
	}
	return r.ExitCode
}
