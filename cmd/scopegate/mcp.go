//go:build !lean

package main

import (
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/mcp"
	"github.com/scopegate/scopegate/sessions"
)

func newMCPCmd(a *app) *cobra.Command {
	var sel selector
	var create bool
	var profile, projectRoot string
	cmd := mcpCmdDoc()
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var dir, id string
		switch {
		case create && sel.set():
			return usageErr("give either --create or a session, not both")
		case create:
			root := projectRoot
			if root == "" {
				root, _ = os.Getwd()
			}
			abs, err := filepath.Abs(root)
			if err != nil {
				return usageErr("--project-root %q: %v", root, err)
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return usageErr("--project-root %s is not a directory", abs)
			}
			c, err := a.store().CreateWithProfile(cmd.Context(), a.profileLoader(),
				sessions.CreateOptions{Name: "mcp", ProjectRoot: abs}, profile, warner(a.stderr))
			if err != nil {
				return sessionErr(err)
			}
			fmt.Fprintf(a.stderr, "scopegate: serving MCP for new session %s\n", c.SessionID)
			dir, id = c.BranchDir, c.SessionID
		default:
			d, err := sel.resolve(a)
			if err != nil {
				return err
			}
			dir, id = d, sel.session
			if id == "" {
				id = filepath.Base(filepath.Dir(filepath.Dir(d)))
			}
		}
		cfg, err := config.Load(a.configDir)
		if err != nil {
			return usageErr("%v", err)
		}
		ctx, stop := interruptContext(cmd.Context())
		defer stop()
		// A long-running process: the directories the private view's walk
		// looks at are watched, as serve's are.
		gopts := a.gatewayOptions(nil, warner(a.stderr), nil)
		if dirs, err := watch.NewDirs(watch.DirsOptions{}); err == nil {
			defer dirs.Close()
			gopts.Dirs = dirs
		}
		s := mcp.NewServer(mcp.Options{Gateway: gateway.New(gopts), BranchDir: dir, SessionID: id,
			Branch: filepath.Base(dir), Version: readVersion().Version, Approvals: cfg.Approvals != config.ApprovalsDeny,
			ApprovalTimeout: cfg.ApprovalTimeout()})
		if err := s.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
			return &exitError{code: exitInternal, err: fmt.Errorf("mcp: %w", err)}
		}
		return nil
	}
	sel.addFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&create, "create", false, "create a fresh session to serve")
	f.StringVar(&profile, "profile", "coding", "with --create: the scope profile of the new session")
	f.StringVar(&projectRoot, "project-root", "", "with --create: the project root (default: the working directory)")
	return cmd
}
