package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

func newScopeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "scope", Short: "Show, expand and learn a branch's scope",
		Example: `  scopegate scope show --session "$S"
  scopegate scope expand --session "$S" --allow-command make
  scopegate scope mode --session "$S" observe
  scopegate scope suggest --session "$S" --apply`}
	cmd.AddCommand(newScopeShowCmd(a), newScopeExpandCmd(a), newScopeModeCmd(a), newScopeSuggestCmd(a), newScopeReplayCmd(a))
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
			mode, merr := sessions.ReadMode(dir)
			if merr != nil {
				fmt.Fprintln(a.stderr, "scopegate: warning: "+policy.OneLine(merr.Error())+"; calls on this branch are enforced")
				mode = "invalid"
			}
			managed := a.managedView(&doc)
			if asJSON {
				return writeJSON(a.stdout, scopeJSON{doc: doc, mode: mode, managed: managed})
			}
			// The file as it is; a branch not enforced says so first, and
			// the machine's managed policy, as comments, so that the output
			// stays the scope's YAML.
			if mode != sessions.ModeEnforce {
				note := ""
				if mode == sessions.ModeObserve && managed != nil && (managed.Error != "" || managed.Modes != nil && !*managed.Modes.Observe) {
					note = "; refused by " + policy.RuleManagedObserve + ": calls are enforced"
				}
				if _, err := fmt.Fprintf(a.stdout, "# mode: %s (scopegate scope mode)%s\n", mode, note); err != nil {
					return &exitError{code: exitInternal, err: err}
				}
			}
			if err := writeManagedComment(a.stdout, managed); err != nil {
				return &exitError{code: exitInternal, err: err}
			}
			return printScope(a, doc, data, false)
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
			"--roam-subdirectory, --roam-tag, --roam-node-id, --allow-host, --allow-socket,\n" +
			"--network any;\n" +
			"each may be repeated. The\n" +
			"change is idempotent and keeps comments. It prints each entry it added and\n" +
			"the file it wrote (--json: the resulting scope).\n\n" +
			"Path patterns are absolute doublestar globs: DIR/** is DIR and everything below it.",
		Example: `  scopegate scope expand --session "$S" --read /usr/share/doc/bash/README
  scopegate scope expand --session "$S" --write "$PWD/build/**" --allow-command make`,
		Short: "Add patterns, commands or org-roam entries to a branch's scope.yml (idempotent; prints what it added)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if add.Empty() {
				return usageErr("nothing to add: give --read, --write, --deny, --allow-command, --deny-command, --roam-subdirectory, --roam-tag, --roam-node-id, --allow-host, --allow-socket or --network any")
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			res, err := a.gateway().ExpandScope(cmd.Context(), dir, add, "cli:"+currentUser())
			if err != nil {
				return sessionErr(err)
			}
			file := filepath.Join(dir, sessions.ScopeFile)
			warnAmbiguous(a, file, res.Data)
			if asJSON {
				return printScope(a, res.Scope, res.Data, true)
			}
			return printExpanded(a, file, res)
		},
	}
	sel.addFlags(cmd)
	f := cmd.Flags()
	addExpandFlags(f, &add)
	f.BoolVar(&asJSON, "json", false, "print the resulting scope as JSON")
	return cmd
}

// addExpandFlags defines the flags of scope expand, each adding to add:
// also how scope suggest --apply turns its suggestions into an expansion.
func addExpandFlags(f *pflag.FlagSet, add *sessions.Expansion) {
	f.StringArrayVar(&add.Read, "read", nil, "path pattern to allow reading")
	f.StringArrayVar(&add.Write, "write", nil, "path pattern to allow writing")
	f.StringArrayVar(&add.Deny, "deny", nil, "path pattern to deny")
	f.StringArrayVar(&add.AllowCommands, "allow-command", nil, "shell command to allow")
	f.StringArrayVar(&add.DenyCommands, "deny-command", nil, "shell command to deny")
	f.StringArrayVar(&add.RoamSubdirectories, "roam-subdirectory", nil, "org-roam subdirectory pattern")
	f.StringArrayVar(&add.RoamTags, "roam-tag", nil, "org-roam tag")
	f.StringArrayVar(&add.AllowHosts, "allow-host", nil, "network entry to allow: HOST, .DOMAIN or HOST:PORT")
	f.StringArrayVar(&add.AllowSockets, "allow-socket", nil, "host unix socket to allow, by absolute path (a unix: network entry)")
	f.StringVar((*string)(&add.Network), "network", "", "any: make the network unrestricted")
	f.StringArrayVar(&add.RoamNodeIDs, "roam-node-id", nil, "org-roam node id")
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

// printExpanded prints what an expansion changed: each entry it added,
// with its list, and the file it wrote; or that nothing was added.
func printExpanded(a *app, file string, res sessions.Expanded) error {
	var b strings.Builder
	entries := res.Entries()
	for _, e := range entries {
		fmt.Fprintf(&b, "added to %s: %s\n", e.List, policy.OneLine(e.Value))
	}
	if len(entries) == 0 {
		fmt.Fprintf(&b, "nothing added: %s already has every entry\n", file)
	} else {
		fmt.Fprintf(&b, "wrote %s\n", file)
	}
	if _, err := io.WriteString(a.stdout, b.String()); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
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

// scopeJSON is a scope as scope show --json prints it: the scope's
// sections, the branch's mode and the machine's managed policy.
type scopeJSON struct {
	doc     policy.Document
	mode    string
	managed *managedJSON
}

// MarshalJSON puts "mode" (and "managed", when there is a managed policy)
// before the sections of the scope.
func (s scopeJSON) MarshalJSON() ([]byte, error) {
	doc, err := json.Marshal(s.doc)
	if err != nil {
		return nil, err
	}
	mode, _ := json.Marshal(s.mode)
	out := append([]byte(`{"mode":`), mode...)
	if s.managed != nil {
		m, err := json.Marshal(s.managed)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"managed":`...), m...)
	}
	if len(doc) > 2 {
		out = append(out, ',')
	}
	return append(out, doc[1:]...), nil
}
