package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// This package builds two ways. The default build has every command. Built
// with -tags lean, it leaves out serve and mcp, and with them net/http's
// server, the Prometheus client and the MCP SDK, whose package
// initialisation every process of a build pays, whatever the command: the
// per-call commands (hook, check, call, exec, and the Landlock helper) start
// afresh for every tool call. Its serve and mcp replace the process with
// fullBinary, the default build installed next to it, run with the same
// arguments.

// fullBinary is the name of the default build next to a per-call build.
const fullBinary = "scopegate-full"

// callBinaryEnv names, for the default build that a per-call build handed
// serve or mcp to, that per-call build: the exec commands hooks are
// rewritten to and the Landlock helpers run it, as it starts faster.
const callBinaryEnv = "SCOPEGATE_CALL_BINARY"

// takeCallBinary reads and unsets callBinaryEnv, so that no program a call
// runs inherits it; "" unless it names an absolute path.
func takeCallBinary() string {
	exe := os.Getenv(callBinaryEnv)
	os.Unsetenv(callBinaryEnv)
	if !filepath.IsAbs(exe) {
		return ""
	}
	return exe
}

// serveCmdDoc is the serve command's usage and help, which both builds show.
func serveCmdDoc() *cobra.Command {
	return &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the HTTP API for every session of the sessions root",
		Long: `Serve the HTTP API (JSON in and out) for every session of the sessions root:
/v1/sessions, /v1/sessions/{id}/check, /v1/sessions/{id}/calls,
/v1/sessions/{id}/scope/expand, /v1/sessions/{id}/audit, /v1/events,
/metrics (Prometheus) and /healthz. It listens on loopback unless
--token-file is given; one serve runs per sessions root.`,
		Example: `  scopegate serve
  scopegate serve --listen 127.0.0.1:7412
  scopegate serve --unix /tmp/scopegate.sock`,
	}
}

// mcpCmdDoc is the mcp command's usage and help, which both builds show.
func mcpCmdDoc() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp (--session ID [--branch NAME] | --create [--profile P] [--project-root DIR])",
		Short: "Serve scopegate's tools to an MCP client over stdio, every call through the gateway",
		Long: `Serve the tools of a session branch (read_file, write_file, edit_file,
list_dir, glob, grep, shell, roam_*) to an MCP client over stdio. Every call
is decided against the branch's scope.yml, run confined, recorded in
tools.org (:MODE: mcp) and counted with via="mcp". The branch's scope.yml and
tools.org are read-only resources. A denied call is a tool result with
isError and scopegate's reason; arguments that do not fit a tool are an
invalid-params error. --create starts a fresh session (its id on stderr).

Claude Code:  claude mcp add scopegate -- scopegate mcp --create --profile coding --project-root "$PWD"
Codex:        [mcp_servers.scopegate] command = "scopegate", args = ["mcp", "--session", "ID"]`,
		Example: `  scopegate mcp --session "$S" < /dev/null
  scopegate mcp --create --profile coding --project-root "$PWD" < /dev/null`,
	}
}
