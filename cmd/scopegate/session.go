package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

func newSessionCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "Create, list and show sessions",
		Example: `  S=$(scopegate session create --name demo --project-root "$PWD" --print-id)
  scopegate session list
  scopegate session show "$S"`}
	cmd.AddCommand(newSessionCreateCmd(a), newSessionListCmd(a), newSessionShowCmd(a))
	return cmd
}

func newSessionCreateCmd(a *app) *cobra.Command {
	var opts sessions.CreateOptions
	var profile string
	var printID bool
	cmd := &cobra.Command{
		Use: "create --name NAME [flags]",
		Example: `  scopegate session create --name demo --profile coding --project-root "$PWD"
  S=$(scopegate session create --name demo --project-root "$PWD" --print-id)
  scopegate session create --name demo --id my-agent-42 --exist-ok`,
		Short: "Create a session (prints its ids and directories as JSON)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The CLI words its flags, takes paths relative to its working
			// directory and finds the project root from it; the rest is
			// shared with serve.
			if cmd.Flags().Changed("id") && opts.ID == "" {
				return usageErr("--id is empty: give a session id, or leave --id out for a generated one")
			}
			if opts.ID == "" && strings.TrimSpace(opts.Name) == "" {
				return usageErr("give --name NAME (or --id ID)")
			}
			if opts.ExistOK && opts.ID == "" {
				return usageErr("--exist-ok needs --id")
			}
			for i, w := range opts.Worktrees {
				abs, err := filepath.Abs(w)
				if err != nil {
					return usageErr("--worktree %q: %v", w, err)
				}
				opts.Worktrees[i] = abs
			}
			if opts.ProjectRoot != "" {
				abs, err := filepath.Abs(opts.ProjectRoot)
				if err != nil {
					return usageErr("--project-root %q: %v", opts.ProjectRoot, err)
				}
				opts.ProjectRoot = abs
			} else if wd, err := os.Getwd(); err == nil && len(opts.Worktrees) == 0 {
				// With worktrees the session is scoped to them: no project
				// root is guessed from wherever the command runs.
				opts.ProjectRoot, _ = profiles.FindProjectRoot(wd)
			}
			if err := a.gateway().RefuseMode(opts.Mode); err != nil {
				return sessionErr(err)
			}
			c, err := a.store().CreateWithProfile(cmd.Context(), a.profileLoader(), opts, profile, warner(a.stderr))
			if err != nil {
				// An unknown preset may be one of gptel's preset files,
				// which config.yml names: when config.yml does not load,
				// that is the error to fix.
				if errors.Is(err, profiles.ErrNotFound) && opts.Preset != "" {
					if _, cerr := config.Load(a.configDir); cerr != nil {
						return usageErr("%v", cerr)
					}
				}
				return sessionErr(err)
			}
			if printID {
				_, err := fmt.Fprintln(a.stdout, c.SessionID)
				return err
			}
			return writeJSON(a.stdout, c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "human name; the generated id is made from it")
	f.StringVar(&opts.ID, "id", "", "session id to use instead of a generated one")
	f.BoolVar(&opts.ExistOK, "exist-ok", false, "with --id: return the existing session instead of failing")
	f.StringVar(&opts.Preset, "preset", sessions.DefaultPreset, "preset recorded in metadata.yml; its scope profile seeds scope.yml")
	f.StringVar(&profile, "profile", "", "scope profile to use instead of the preset's")
	f.StringVar(&opts.ProjectRoot, "project-root", "", "project root for ${project_root} (default: found from the working directory)")
	f.StringArrayVar(&opts.Worktrees, "worktree", nil, "worktree directory the session may read and write (repeatable; overrides profiles)")
	f.BoolVar(&printID, "print-id", false, "print only the session id instead of the JSON")
	f.StringVar(&opts.Mode, "mode", sessions.ModeEnforce, "mode of the main branch: enforce, or observe (scope denials run and are recorded; see scope suggest)")
	return cmd
}

func newSessionListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list [flags]",
		Example: `  scopegate session list
  scopegate session list --json | jq -r '.[].session_id'`,
		Short: "List sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.store().List(cmd.Context())
			if err != nil {
				return sessionErr(err)
			}
			if asJSON {
				if list == nil {
					list = []sessions.Summary{}
				}
				return writeJSON(a.stdout, list)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tBRANCH\tPRESET\tCREATED\tUPDATED")
			for _, s := range list {
				preset := s.Preset
				if s.Error != "" {
					preset = "(unreadable)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.SessionID, dash(s.CurrentBranch), dash(preset), stamp(s.Created), stamp(s.Updated))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newSessionShowCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "show ID [flags]",
		Example: `  scopegate session show "$S"
  scopegate session show "$S" --json`,
		Short: "Show a session: metadata, current branch and all branches",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := a.store().Show(args[0])
			if err != nil {
				return sessionErr(err)
			}
			if asJSON {
				return writeJSON(a.stdout, info)
			}
			w := a.stdout
			fmt.Fprintf(w, "session:   %s\n", info.SessionID)
			fmt.Fprintf(w, "dir:       %s\n", info.SessionDir)
			fmt.Fprintf(w, "current:   %s\n", info.CurrentBranch)
			if info.MetadataError != "" {
				fmt.Fprintf(w, "metadata:  unreadable: %s\n", policy.OneLine(info.MetadataError))
			} else {
				fmt.Fprintf(w, "preset:    %s\n", dash(info.Preset))
				fmt.Fprintf(w, "created:   %s\n", stamp(info.Created))
				fmt.Fprintf(w, "updated:   %s\n", stamp(info.Updated))
				for _, kv := range [][2]string{{"type", info.Type}, {"parent", info.ParentSessionID}, {"project", info.ProjectRoot}} {
					if kv[1] != "" {
						fmt.Fprintf(w, "%-10s %s\n", kv[0]+":", kv[1])
					}
				}
				for _, wt := range info.Worktrees {
					fmt.Fprintf(w, "worktree:  %s\n", wt)
				}
			}
			fmt.Fprintln(w, "branches:")
			return printBranches(a, info.Branches)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
