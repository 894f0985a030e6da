package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
)

// exitNowDenied is the exit code of exec when the stored call is denied by
// the scope as it is now (the shell's "cannot execute").
const exitNowDenied = 126

func newExecCmd(a *app) *cobra.Command {
	var sel selector
	var callID string
	cmd := &cobra.Command{
		Use:   "exec --session ID [--branch NAME] --call CALL_ID [-- COMMAND]",
		Short: "Run a shell call an agent hook decided and stored, confined, with the command's own exit status",
		Long: `Run the shell call that "scopegate hook" decided and stored under CALL_ID in
the branch. It is decided again against the scope as it is now and run
exactly as "scopegate call" runs it (the interpreter's run-time checks,
confinement); its output streams to stdout and stderr as it comes, and
scopegate exits with the command's own status: 126, with the reason on
stderr, if the scope now denies it. The run is appended to tools.org under
the same call id (:MODE: exec). A call id runs once.

COMMAND, which the hook puts last so that the agent's permission dialog
shows the user's own command, must be the stored call's command: anything
else (a command edited in the dialog) is refused with 126, and the call is
spent. A one-time grant the user gave in the agent's dialog is good for
approval_timeout_seconds after the ask, and a call whose ask was declined
is gone.`,
		Example: `  scopegate scope expand --session "$S" --allow-command ls >/dev/null && scopegate exec --session "$S" --call "$(echo '{"session_id":"'"$S"'","cwd":"'"$PWD"'","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' | scopegate hook claude-code | jq -r .hookSpecificOutput.updatedInput.command | sed "s/.*--call \([^ ]*\).*/\1/")"`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if callID == "" {
				return usageErr("--call CALL_ID is required")
			}
			command := ""
			if len(args) == 1 {
				if cmd.ArgsLenAtDash() != 0 || args[0] == "" {
					return usageErr("the command comes last, after --, and is not empty")
				}
				command = args[0]
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			ctx, stop := interruptContext(cmd.Context())
			defer stop()
			res, err := a.gateway().Exec(ctx, gateway.Target{BranchDir: dir}, callID, command, a.stdout, a.stderr)
			switch {
			case errors.Is(err, gateway.ErrCallNotFound):
				return usageErr("%v", err)
			case res.CallID == "" && err != nil:
				return &exitError{code: exitInternal, err: err}
			case !res.Decision.Allowed:
				return &exitError{code: exitNowDenied, err: fmt.Errorf("%s", res.Decision.Message)}
			}
			if code := interruptedExit(ctx); code != 0 {
				return silentExit(code)
			}
			if err != nil {
				return &exitError{code: exitInternal, err: err}
			}
			if r, ok := res.Result.(exec.Result); ok {
				return silentExit(r.ExitCode)
			}
			return &exitError{code: exitInternal, err: errors.New("the call ran but left no result")}
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&callID, "call", "", "id of the stored call (from the hook's rewritten command)")
	return cmd
}

// interruptContext is ctx cancelled by SIGINT, SIGTERM or SIGHUP, so that a
// running child is killed and the call recorded INTERRUPTED before exit.
func interruptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(signalError{s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// signalError is the cancel cause of an interrupted context.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "interrupted by " + e.sig.String() }

// interruptedExit is 128 plus the signal number when ctx was cancelled by a
// signal, else 0.
func interruptedExit(ctx context.Context) int {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return 128 + int(se.sig)
	}
	return 0
}
