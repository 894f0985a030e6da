package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
)

func newPromptCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "prompt",
		Short:   "Record system prompt changes of a session branch",
		Example: `  scopegate prompt log --session "$S" --new "You are a careful engineer."`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newPromptLogCmd(a))
	return cmd
}

func newPromptLogCmd(a *app) *cobra.Command {
	var sel selector
	var newFile, newText, prevFile, prevText string
	cmd := &cobra.Command{
		Use:     "log SELECTOR (--new-file F | --new TEXT) [flags]",
		Example: `  scopegate prompt log --session "$S" --new "You are a careful engineer."`,
		Short:   "Append a System Prompt Change entry to the branch's system-prompts.org",
		Long: "Append a System Prompt Change entry to the branch's system-prompts.org.\n" +
			"Without --previous or --previous-file, the previous prompt is the new prompt\n" +
			"of the last entry. Nothing is written when the prompt did not change.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("new-file") == f.Changed("new") {
				return usageErr("give exactly one of --new-file F or --new TEXT")
			}
			if f.Changed("previous") && f.Changed("previous-file") {
				return usageErr("give at most one of --previous TEXT or --previous-file F")
			}
			c := audit.PromptChange{New: newText, Previous: prevText}
			if newFile != "" {
				data, err := os.ReadFile(newFile)
				if err != nil {
					return usageErr("--new-file: %v", err)
				}
				c.New = string(data)
				if abs, err := filepath.Abs(newFile); err == nil {
					c.Source = abs
				}
			}
			if prevFile != "" {
				data, err := os.ReadFile(prevFile)
				if err != nil {
					return usageErr("--previous-file: %v", err)
				}
				c.Previous = string(data)
			}
			dir, err := sel.resolve(a)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, "system-prompts.org")
			if !f.Changed("previous") && !f.Changed("previous-file") {
				changes, err := audit.ReadPrompts(path, func(err error) {
					fmt.Fprintln(a.stderr, "scopegate: warning: system-prompts.org: "+policy.OneLine(err.Error()))
				})
				if err != nil {
					return err
				}
				if len(changes) > 0 {
					c.Previous = changes[len(changes)-1].New
					if sameText(c.Previous, c.New) {
						fmt.Fprintln(a.stderr, "scopegate: system prompt unchanged; nothing logged")
						return nil
					}
				}
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usageErr("branch directory %s does not exist", dir)
			}
			l := &audit.PromptLog{Path: path, Now: time.Now}
			return l.Append(cmd.Context(), c)
		},
	}
	sel.addFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&newFile, "new-file", "", "file holding the new system prompt")
	fl.StringVar(&newText, "new", "", "the new system prompt")
	fl.StringVar(&prevText, "previous", "", "the previous system prompt (default: the last logged one)")
	fl.StringVar(&prevFile, "previous-file", "", "file holding the previous system prompt")
	return cmd
}

// sameText compares prompts as system-prompts.org keeps them: a block ends
// with a newline.
func sameText(logged, s string) bool {
	if s != "" && s[len(s)-1] != '\n' {
		s += "\n"
	}
	return logged == s
}
