package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/server/client"
)

func newHookCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook claude-code|codex",
		Short: "Answer an agent's hooks: its hook JSON on stdin, its answer on stdout",
		Long: `Answer an agent's hooks. The agent's hook JSON comes on stdin and the
answer goes to stdout in the agent's own format.

PreToolUse decides the tool call: a denial carries scopegate's reason for
the model; an allowed shell command is rewritten to "scopegate exec", which
runs exactly the decided call, confined, the user's command as its last
argument; allowed file tools are left to the agent. The agent's own
permission rules, which it would match against the rewritten command, are
applied to the user's command first (Claude Code's settings and command
line, Codex's rules files). Where the agent asks its user (Claude Code in
auto, default, acceptEdits and plan mode), a call the scope denies for a
scope reason is left to its permission dialog.

The other events (PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop,
SessionEnd) record what became of the calls the user was asked about, and
remove the stored calls and grants of those that did not run.

The session is the agent's own session id (created on first use from
config.yml hooks.profile, default coding, with ${project_root} the git
top-level of CLAUDE_PROJECT_DIR for Claude Code or of the hook's working
directory for Codex). Whatever cannot be decided is denied: the hook never
exits 1, which both agents take as "run the tool".

Claude Code, in ~/.claude/settings.json (the same hook for PostToolUse,
PostToolUseFailure, UserPromptSubmit, Stop and SessionEnd):
  {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
    {"type": "command", "command": "/usr/local/bin/scopegate hook claude-code"}]}]}}

Codex, in ~/.codex/config.toml:
  [[hooks.PreToolUse]]
  [[hooks.PreToolUse.hooks]]
  type = "command"
  command = "/usr/local/bin/scopegate hook codex"`,
		Example: `  echo '{"session_id":"demo-1","cwd":".","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"README.md"}}' | CLAUDE_PROJECT_DIR="$PWD" scopegate hook claude-code
  echo '{"session_id":"demo-1","cwd":".","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl http://example.com"}}' | scopegate hook codex`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: agents.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runHook(cmd.Context(), args[0])
		},
	}
	return cmd
}

// runHook answers one hook: every outcome is an answer on stdout with exit
// 0, or exit 2 with a one-line reason on stderr. The whole answer, from
// reading the input to the decision, runs under one recover and one
// deadline: a panic or a decision that takes longer (a lock held, a hung
// serve) is a deny, never a silence the agent could take as "run the tool".
func (a *app) runHook(ctx context.Context, agent string) error {
	if !slices.Contains(agents.Names(), agent) {
		return usageErr("unknown agent %q: give claude-code or codex", agent)
	}
	ctx, cancel := context.WithTimeout(ctx, hookDeadline)
	defer cancel()
	done := make(chan agents.Answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- agents.Refuse(agent, "internal error while deciding this tool call")
			}
		}()
		done <- a.answerHook(ctx, agent)
	}()
	select {
	case ans := <-done:
		return a.writeAnswer(ans)
	case <-ctx.Done():
		return a.writeAnswer(agents.Refuse(agent, fmt.Sprintf("no decision within %s", hookDeadline)))
	}
}

// answerHook reads the hook input and decides it; whatever fails is a
// refusal naming why.
func (a *app) answerHook(ctx context.Context, agent string) agents.Answer {
	input, err := io.ReadAll(io.LimitReader(a.stdin, maxCallBytes+1))
	if err != nil || len(input) > maxCallBytes {
		return agents.Refuse(agent, "the hook input could not be read")
	}
	cfg, err := config.Load(a.configDir)
	if err != nil {
		return agents.Refuse(agent, err.Error()+" (every tool call is denied until it is fixed)")
	}
	opts, err := a.hookOptions(agent, cfg.Hooks)
	if err != nil {
		return agents.Refuse(agent, err.Error())
	}
	opts.Approvals = cfg.Approvals != config.ApprovalsDeny
	opts.ApprovalTimeout = cfg.ApprovalTimeout()
	return a.decideHook(ctx, agent, input, opts)
}

// hookDeadline bounds one hook decision; agents wait 60 s (Claude Code's
// default, and the timeout the README's settings give) before they give up.
const hookDeadline = 20 * time.Second

// decideHook forwards the hook to the serve holding the sessions root, or
// decides it in-process when there is none.
func (a *app) decideHook(ctx context.Context, agent string, input []byte, opts gateway.HookOptions) agents.Answer {
	var raw []byte
	agentEnv, err := json.Marshal(opts.Agent)
	if err != nil {
		return agents.Refuse(agent, err.Error())
	}
	h := map[string]string{client.ProjectDirHeader: opts.ProjectDir, client.AgentEnvHeader: string(agentEnv)}
	switch err := a.forward(ctx, "/v1/hooks/"+agent, h, input, &raw); {
	case err == nil:
		return agents.Answer{Stdout: raw}
	case !errors.Is(err, errNoServe):
		return agents.Refuse(agent, err.Error())
	}
	return a.gateway().Hook(ctx, agent, input, opts)
}

// hookOptions are the gateway's hook options for agent: the project
// directory the model cannot steer, and the exec command line naming this
// binary (or the per-call build that handed this run over) by absolute path
// with every global option spelled out (Codex runs it under a login shell,
// which resets PATH and may reset the environment).
func (a *app) hookOptions(agent string, h config.Hooks) (gateway.HookOptions, error) {
	o := gateway.HookOptions{Profile: h.Profile, OtherTools: h.OtherTools}
	o.Agent.Home, _ = os.UserHomeDir()
	switch agent {
	case agents.ClaudeCode:
		o.ProjectDir = os.Getenv("CLAUDE_PROJECT_DIR")
		o.Agent.ConfigDir = os.Getenv("CLAUDE_CONFIG_DIR")
		if pid, err := strconv.Atoi(os.Getenv("CLAUDE_PID")); err == nil && pid > 0 {
			o.Agent.PID = pid
		}
	case agents.Codex:
		wd, err := os.Getwd()
		if err != nil {
			return o, fmt.Errorf("hook working directory: %w", err)
		}
		o.ProjectDir = wd
		o.Agent.ConfigDir = os.Getenv("CODEX_HOME")
	default:
		return o, fmt.Errorf("unknown agent %q (known: %s)", agent, strings.Join(agents.Names(), ", "))
	}
	exe, err := os.Executable()
	if err != nil {
		return o, fmt.Errorf("locate the scopegate binary: %w", err)
	}
	if a.callBinary != "" {
		exe = a.callBinary
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	confine, _, err := a.confinement()
	if err != nil {
		return o, err
	}
	o.ExecCommand = a.execCommand(exe, confine)
	return o, nil
}

// execCommand returns the function building the `scopegate exec` command
// line of a stored call, run with confinement confine; the user's command
// comes last, where the agent's permission dialog shows it.
func (a *app) execCommand(exe, confine string) func(sessionID, branch, callID, command string) string {
	return func(sessionID, branch, callID, command string) string {
		words := []string{exe, "--sessions-dir", a.sessionsDir, "--config-dir", a.configDir, "--roam-dir", a.roamDir,
			"--confine", confine, "exec", "--session", sessionID, "--branch", branch, "--call", callID, "--", command}
		for i, w := range words {
			words[i] = policy.ShellQuote(w)
		}
		return strings.Join(words, " ")
	}
}

// writeAnswer prints a hook answer and returns the exit it asks for.
func (a *app) writeAnswer(ans agents.Answer) error {
	if len(ans.Stdout) > 0 {
		if _, err := io.Copy(a.stdout, bytes.NewReader(ans.Stdout)); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("write hook answer: %w", err)}
		}
	}
	if ans.Exit != 0 {
		return &exitError{code: ans.Exit, err: fmt.Errorf("%s", ans.Stderr)}
	}
	return nil
}
