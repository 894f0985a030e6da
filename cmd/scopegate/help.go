package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/policy"
)

// toolsHelp lists the tools and their arguments, from the tool table the
// decisions use.
func toolsHelp() string {
	var b strings.Builder
	b.WriteString("Tools (\"?\" marks an optional argument):\n")
	for _, t := range policy.ToolSpecs() {
		fmt.Fprintf(&b, "  %-17s %s\n", t.Name, t.Usage())
		for _, a := range t.Args {
			opt := ""
			if !a.Required {
				opt = ", optional"
			}
			fmt.Fprintf(&b, "      %-13s %s%s: %s\n", a.Name, a.Type, opt, a.Description)
		}
	}
	return b.String()
}

// callHelp is what check and call say about the call they read.
const callHelp = `The call is a JSON object {"tool": ..., "args": {...}, "cwd": ...}, given as
the last argument, or on stdin when the argument is absent or "-". "cwd" is
optional: it defaults to --cwd, then the session's project root, then its
first worktree.

The branch is chosen with --session ID [--branch NAME] or --branch-dir DIR
(see "scopegate help selectors").`

// selectorsTopic is the help topic that explains the branch selectors.
func selectorsTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "selectors",
		Short: "How check, call, scope and audit choose a session branch",
		Long: `Every decision is made against the scope.yml of one session branch. The
commands check, call, scope show, scope expand and audit take one of:

  --session ID [--branch NAME]
      A session of the sessions root (--sessions-dir, SCOPEGATE_SESSIONS_DIR,
      default ~/.gptel/sessions). NAME defaults to the branch the session's
      "current" link points to. "scopegate session list" lists the ids,
      "scopegate branch list ID" the branches.

  --branch-dir DIR
      A branch directory named by path (<sessions root>/ID/branches/NAME).

  --scope FILE          (check only)
      Decide against a scope file directly: no session, nothing audited.

Give exactly one of them; --branch needs --session.`,
		Example: `  S=$(scopegate session create --name demo --profile coding --project-root "$PWD" | jq -r .session_id)
  scopegate check --session "$S" '{"tool":"list_dir","args":{"path":"."}}'
  scopegate audit --session "$S" --branch main`,
	}
}

// lazyLong gives cmd the long description long returns, made when help is
// shown: a run of the command does not pay for text it never prints.
func lazyLong(cmd *cobra.Command, long func() string) {
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.Long = long()
		c.SetHelpFunc(nil)
		c.HelpFunc()(c, args)
	})
}
