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
		cfgs := &config.Cache{Dir: a.configDir}
		if _, err := cfgs.Load(); err != nil {
			return usageErr("%v", err)
		}
		ctx, stop := interruptContext(cmd.Context())
		defer stop()
		// A long-running process: the directories the private view's walk
		// looks at are watched, as serve's are.
		warn := warner(a.stderr)
		gopts := a.gatewayOptions(nil, warn, nil)
		if dirs, err := watch.NewDirs(watch.DirsOptions{}); err == nil {
			defer dirs.Close()
			gopts.Dirs = dirs
		}
		s := mcp.NewServer(mcp.Options{Gateway: gateway.New(gopts), BranchDir: dir, SessionID: id,
			Branch: filepath.Base(dir), Version: readVersion().Version, Approvals: approvalSettings(cfgs, warn), Warn: warn})
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

// approvalSettings reads what config.yml says of approvals for each call
// (cached while the file is unchanged). A config.yml that cannot be used
// offers nothing, with a warning: the call is then refused as without
// approvals.
func approvalSettings(cfgs *config.Cache, warn func(string)) func() gateway.Approvals {
	return func() gateway.Approvals {
		cfg, err := cfgs.Load()
		if err != nil {
			warn(fmt.Sprintf("%v: approvals are off until it is fixed", err))
			return gateway.Approvals{}
		}
		return gateway.Approvals{Ask: cfg.Approvals != config.ApprovalsDeny, Timeout: cfg.ApprovalTimeout()}
	}
}
