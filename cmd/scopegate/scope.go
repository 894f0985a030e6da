package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

func newScopeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "scope", Short: "Show and expand a branch's scope",
		Example: `  scopegate scope show --session "$S"
  scopegate scope expand --session "$S" --allow-command make`}
	cmd.AddCommand(newScopeShowCmd(a), newScopeExpandCmd(a))
	return cmd
}

func newScopeShowCmd(a *app) *cobra.Command {
	var sel selector
	var asJSON bool
	cmd := &cobra.Command{
		Use: "show SELECTOR [flags]",
		Example: `  scopegate scope show --session "$S"
  scopegate scope show --session "$S" --branch main --json`,
		Short: "Print a branch's scope.yml",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, sessions.ScopeFile)
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return usageErr("%s does not exist: every call on this branch is denied (scope_missing)", path)
			}
			if err != nil {
				return &exitError{code: exitInternal, err: err}
			}
			doc, err := policy.ParseDocument(data)
			if err != nil {
				return usageErr("%s: %v: every call on this branch is denied (scope_invalid)", path, err)
			}
			warnAmbiguous(a, path, data)
			return printScope(a, doc, data, asJSON)
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newScopeExpandCmd(a *app) *cobra.Command {
	var sel selector
	var add sessions.Expansion
	var asJSON bool
	cmd := &cobra.Command{
		Use: "expand SELECTOR [flags]",
		Long: "Add path patterns, shell commands or org-roam entries to a branch's scope.yml.\n" +
			"Give at least one of --read, --write, --deny, --allow-command, --deny-command,\n" +
			"--roam-subdirectory, --roam-tag, --roam-node-id, --allow-host, --network any;\n" +
			"each may be repeated. The\n" +
			"change is idempotent, keeps comments, and prints the resulting scope.\n\n" +
			"Path patterns are absolute doublestar globs: DIR/** is DIR and everything below it.",
		Example: `  scopegate scope expand --session "$S" --read /usr/share/doc/bash/README
  scopegate scope expand --session "$S" --write "$PWD/build/**" --allow-command make`,
		Short: "Add patterns, commands or org-roam entries to a branch's scope.yml (idempotent; prints the result)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if add.Empty() {
				return usageErr("nothing to add: give --read, --write, --deny, --allow-command, --deny-command, --roam-subdirectory, --roam-tag, --roam-node-id, --allow-host or --network any")
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			res, err := a.gateway().ExpandScope(cmd.Context(), dir, add, "cli:"+currentUser())
			if err != nil {
				return sessionErr(err)
			}
			warnAmbiguous(a, filepath.Join(dir, sessions.ScopeFile), res.Data)
			return printScope(a, res.Scope, res.Data, asJSON)
		},
	}
	sel.addFlags(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&add.Read, "read", nil, "path pattern to allow reading")
	f.StringArrayVar(&add.Write, "write", nil, "path pattern to allow writing")
	f.StringArrayVar(&add.Deny, "deny", nil, "path pattern to deny")
	f.StringArrayVar(&add.AllowCommands, "allow-command", nil, "shell command to allow")
	f.StringArrayVar(&add.DenyCommands, "deny-command", nil, "shell command to deny")
	f.StringArrayVar(&add.RoamSubdirectories, "roam-subdirectory", nil, "org-roam subdirectory pattern")
	f.StringArrayVar(&add.RoamTags, "roam-tag", nil, "org-roam tag")
	f.StringArrayVar(&add.AllowHosts, "allow-host", nil, "network entry to allow: HOST, .DOMAIN or HOST:PORT")
	f.StringVar(&add.Network, "network", "", "any: make the network unrestricted")
	f.StringArrayVar(&add.RoamNodeIDs, "roam-node-id", nil, "org-roam node id")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// warnAmbiguous warns, one line each, of the list entries of a scope file
// that are unquoted words gptel's YAML reader (or another) reads as a
// boolean, a number or null where scopegate reads a string. Only commands
// that show a scope warn; decisions read the file as they always do.
func warnAmbiguous(a *app, file string, data []byte) {
	for _, e := range yamlmsg.AmbiguousEntries(data) {
		fmt.Fprintln(a.stderr, "scopegate: warning: "+file+": "+e.String())
	}
}

// printScope prints a scope as its YAML text or as JSON.
func printScope(a *app, doc policy.Document, data []byte, asJSON bool) error {
	if asJSON {
		return writeJSON(a.stdout, doc)
	}
	if _, err := a.stdout.Write(data); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
}

// currentUser names who runs the command, for the audit of scope changes.
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}
