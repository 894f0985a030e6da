// Command scopegate is the gateway between an AI agent's tool calls and the
// machine: it decides each call against the session branch's scope.yml, runs
// it confined or refuses it, audits it in tools.org and counts it in metrics.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/config"
	scexec "github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/policy"
)

// Exit codes: 0 success or allowed, 1 internal error, 2 usage or invalid
// input, 3 denied.
const (
	exitOK       = 0
	exitInternal = 1
	exitUsage    = 2
	exitDenied   = 3
)

func main() {
	if scexec.IsHelper(os.Args) { // the hidden Landlock helper: confine, then exec the program
		os.Exit(scexec.RunHelper(os.Args))
	}
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// app is what every subcommand shares: the standard streams and the global
// options.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	sessionsDir    string
	configDir      string
	roamDir        string
	// confine is how shell calls are confined: landlock, best-effort, off.
	confine string
	// args are the arguments of this run, for the per-call build to hand
	// serve and mcp over to the default build.
	args []string
	// callBinary is the per-call build that handed this run over, if any
	// (see callBinaryEnv); "" means this executable.
	callBinary string
	// export is the export of this run's audit events (export.go).
	export *exportState
	// managed reads the machine's managed policy (managedLoader).
	managed *config.ManagedLoader
}

// exitError carries an exit code up to Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageErr is an invalid-input error: exit 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends with a code and no message (the JSON was already printed).
func silentExit(code int) error { return &exitError{code: code} }

// Main runs scopegate with args and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, args: args, callBinary: takeCallBinary()}
	root := newRootCmd(a, args)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	a.closeEvents()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "scopegate: "+policy.OneLine(ee.err.Error()))
		}
		return ee.code
	}
	// cobra's own errors are flag and argument errors.
	fmt.Fprintln(stderr, "scopegate: "+policy.OneLine(err.Error()))
	if isCobraUsage(err) {
		return exitUsage
	}
	return exitInternal
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "required flag", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// newRootCmd is the command tree for args: the root with the command args
// run, or with every command when args (nil: always) need the whole tree.
func newRootCmd(a *app, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "scopegate",
		Short: "Decide, run and audit an AI agent's tool calls against a session's scope",
		Long: `scopegate stands between an AI agent's tool calls and the machine. Each call
(read_file, write_file, edit_file, list_dir, glob, grep, shell, roam_*) is
decided against the scope.yml of a session branch, run confined when allowed
or refused with a reason, appended to the branch's tools.org and counted in
metrics.

Exit codes: 0 success or allowed, 3 denied, 2 usage or invalid input (one-line
reason on stderr), 1 internal error.`,
		Example: `  S=$(scopegate session create --name demo --profile coding --project-root "$PWD" | jq -r .session_id)
  scopegate check --session "$S" '{"tool":"read_file","args":{"path":"README.md"}}'
  scopegate call --session "$S" '{"tool":"shell","args":{"command":"ls"}}'
  scopegate audit --session "$S"`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := a.confinement(); err != nil {
				return usageErr("%v", err)
			}
			return a.resolveDirs()
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&a.sessionsDir, "sessions-dir", "", "sessions root (env SCOPEGATE_SESSIONS_DIR, default ~/.gptel/sessions)")
	f.StringVar(&a.configDir, "config-dir", "", "config dir (env SCOPEGATE_CONFIG_DIR, default $XDG_CONFIG_HOME/scopegate)")
	f.StringVar(&a.roamDir, "roam-dir", "", "org-roam directory (env SCOPEGATE_ROAM_DIR, default ~/org-roam)")
	f.StringVar(&a.confine, "confine", "", "confinement of shell calls: landlock (refuse where Landlock is missing), best-effort, off (env SCOPEGATE_CONFINE, default landlock)")
	// A run builds only the command it runs: the whole tree with its flags
	// and completions cost every call about 0.5 ms and 200 kB warm, more
	// cold. Help, completion and anything not recognised get the whole tree.
	all, name := subcommands(), subcommandName(root, args)
	for _, c := range all {
		if c.name == name {
			root.AddCommand(c.build(a))
			// Neither --version nor the completion command can follow a
			// command name.
			root.CompletionOptions.DisableDefaultCmd = true
			return root
		}
	}
	for _, c := range all {
		root.AddCommand(c.build(a))
	}
	addVersionFlag(root, a)
	addCompletions(root, a)
	return root
}

// addVersionFlag gives root --version (-v), which prints what `scopegate
// version` prints. cobra's own prints "NAME version VERSION" unless given a
// template, and a template makes text/template's method lookup reachable,
// which keeps every exported method of every linked type in the binary
// (1.4 MB of the per-call build). Root runs nothing, so cobra answers it
// with help: the help function prints the version instead.
func addVersionFlag(root *cobra.Command, a *app) {
	var show bool
	root.Flags().BoolVarP(&show, "version", "v", false, "version for "+root.Name())
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if asked, _ := c.Flags().GetBool("help"); c == root && show && !asked {
			fmt.Fprintln(a.stdout, readVersion().String())
			return
		}
		help(c, args)
	})
}

// subcommand builds one of the root's commands.
type subcommand struct {
	// name is the command's name, as typed after the global options.
	name  string
	build func(*app) *cobra.Command
}

// subcommands are the root's commands, in the order help lists them.
func subcommands() []subcommand {
	return []subcommand{
		{"selectors", func(*app) *cobra.Command { return selectorsTopic() }},
		{"check", newCheckCmd},
		{"call", newCallCmd},
		{"hook", newHookCmd},
		{"exec", newExecCmd},
		{"mcp", newMCPCmd},
		{"session", newSessionCmd},
		{"branch", newBranchCmd},
		{"scope", newScopeCmd},
		{"profiles", newProfilesCmd},
		{"audit", newAuditCmd},
		{"serve", newServeCmd},
		{"gc", newGCCmd},
		{"prompt", newPromptCmd},
		{"version", newVersionCmd},
		{exportEventsCmd, newExportEventsCmd},
	}
}

// subcommandName is the command args run, when the global options before it
// are plain to see (long options of root, "--name=value" or "--name value");
// "" when the whole tree is needed to tell: help, completion, shorthands,
// unknown options.
func subcommandName(root *cobra.Command, args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			return arg
		}
		name, _, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		f := root.PersistentFlags().Lookup(name)
		if !strings.HasPrefix(arg, "--") || f == nil {
			return ""
		}
		if !inline && f.NoOptDefVal == "" {
			i++ // the option's value
		}
	}
	return ""
}

// resolveDirs applies docs/reference.md, Files: flag, then environment, then default.
func (a *app) resolveDirs() error {
	home, _ := os.UserHomeDir()
	pick := func(flag *string, env, def string) {
		if *flag == "" {
			*flag = os.Getenv(env)
		}
		if *flag == "" {
			*flag = def
		}
		if *flag != "" {
			if abs, err := filepath.Abs(*flag); err == nil {
				*flag = abs
			}
		}
	}
	cfgHome := os.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" && home != "" {
		cfgHome = filepath.Join(home, ".config")
	}
	var defSessions, defConfig, defRoam string
	if home != "" {
		defSessions = filepath.Join(home, ".gptel", "sessions")
		defRoam = filepath.Join(home, "org-roam")
	}
	if cfgHome != "" {
		defConfig = filepath.Join(cfgHome, "scopegate")
	}
	pick(&a.sessionsDir, "SCOPEGATE_SESSIONS_DIR", defSessions)
	pick(&a.configDir, "SCOPEGATE_CONFIG_DIR", defConfig)
	pick(&a.roamDir, "SCOPEGATE_ROAM_DIR", defRoam)
	return nil
}
