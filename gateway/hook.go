package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// The values of hooks.other_tools: what a hook answers for a tool scopegate
// does not map (web fetch, sub-agents, MCP tools).
const (
	OtherToolsAllow = "allow"
	OtherToolsAsk   = "ask"
	OtherToolsDeny  = "deny"
)

// HookOptions configure Hook. The zero value creates sessions from the
// coding profile and asks the user about unmapped tools.
type HookOptions struct {
	// Profile is the scope profile of sessions a hook creates (default
	// "coding").
	Profile string
	// OtherTools is OtherToolsAllow, OtherToolsAsk or OtherToolsDeny
	// (default ask).
	OtherTools string
	// ProjectDir is the agent's project directory as the user started it,
	// which the model cannot steer: CLAUDE_PROJECT_DIR for Claude Code, the
	// hook process's working directory for Codex. A session a hook creates
	// gets the git top-level of it (or it) as ${project_root}; an existing
	// session keeps its own.
	ProjectDir string
	// ExecCommand is the command line that runs a stored shell call
	// (`/abs/scopegate exec --session ID --branch B --call CALL_ID`).
	// Required for shell calls to be allowed.
	ExecCommand func(sessionID, branch, callID string) string
	// Approvals leaves a call denied for a scope reason to the agent's own
	// permission dialog where it will ask its user (config.yml approvals:
	// ask); otherwise it is denied.
	Approvals bool
	// Ask, when set with Approvals, is a channel that puts such a call to
	// the user where the agent will not ask them (Codex, and Claude Code in
	// the modes that do not ask): the hook waits for the answer, which must
	// come well inside the agent's hook timeout. Once lets the call run
	// once (a shell call under a one-time grant through `scopegate exec`),
	// session widens the branch first; any other answer denies it.
	Ask Asker
}

// HookSessionID is the scopegate session id of an agent's session id: the
// id itself when it is a valid session id, else "agent-" and the first 32
// hex digits of its SHA-256. The same agent session always maps to the same
// scopegate session.
func HookSessionID(agentSessionID string) string {
	if sessions.ValidateID(agentSessionID) == nil {
		return agentSessionID
	}
	sum := sha256.Sum256([]byte(agentSessionID))
	return "agent-" + hex.EncodeToString(sum[:16])
}

// Hook answers an agent's PreToolUse hook: it maps the tool call, finds or
// creates the session of the agent's session id, decides every call
// (audited in tools.org with :MODE: hook, counted with via="hook"), and
// answers in the agent's own terms. An allowed shell command is stored and
// rewritten to ExecCommand, so that it runs through scopegate's own runner.
// Every failure is a deny with a reason: Hook never panics and never
// allows what it could not decide.
func (g *Gateway) Hook(ctx context.Context, agent string, input []byte, o HookOptions) (ans agents.Answer) {
	defer func() {
		if r := recover(); r != nil {
			g.opts.Warn(fmt.Sprintf("hook: internal error: %v\n%s", r, debug.Stack()))
			ans = agents.Refuse(agent, "internal error while deciding this tool call")
		}
	}()
	ans, err := g.hook(ctx, agent, input, o)
	if err != nil {
		return agents.Refuse(agent, err.Error())
	}
	return ans
}

func (g *Gateway) hook(ctx context.Context, agent string, input []byte, o HookOptions) (agents.Answer, error) {
	in, err := agents.ParseInput(input)
	if err != nil {
		return agents.Answer{}, err
	}
	m, err := agents.Map(agent, in)
	if err != nil {
		return agents.Answer{}, err
	}
	if m.Kind == agents.KindOther {
		return otherTool(agent, in.ToolName, o.OtherTools)
	}
	id := HookSessionID(in.SessionID)
	branchDir, opened, err := g.hookSession(ctx, id, o)
	if err != nil {
		return agents.Answer{}, err
	}
	t := Target{BranchDir: branchDir, Via: ViaHook, AgentTool: in.ToolName}
	if m.Kind == agents.KindNetwork {
		t.Cwd = in.Cwd
		call, co, err := hostCheck(t, m.URL, m.Host, m.Port)
		if err != nil {
			return agents.Answer{}, err
		}
		co.opened = opened
		res, _, err := g.check(ctx, t, call, co)
		if err != nil {
			return agents.Answer{}, fmt.Errorf("could not record the decision: %w", err)
		}
		if !res.Decision.Allowed {
			return agents.Deny(agent, res.Decision.Message), nil
		}
		return agents.Allow(agent), nil
	}
	// A call denied for a scope reason is left to the user where the agent
	// will ask one (CONTRACT §9); everywhere else it is denied.
	channel := ""
	switch {
	case !o.Approvals:
	case agents.AsksUser(agent, in):
		channel = ChannelHookAsk
	case o.Ask != nil:
		t.Ask = o.Ask
	}
	var last CallResult
	var widen, granted []policy.Widening
	for _, c := range m.Calls {
		c.Cwd = in.Cwd
		res, ws, err := g.check(ctx, t, c, checkOptions{channel: channel, opened: opened})
		if err != nil {
			return agents.Answer{}, fmt.Errorf("could not record the decision: %w", err)
		}
		if !res.Decision.Allowed && ws == nil {
			return agents.Deny(agent, res.Decision.Message), nil
		}
		if t.Ask != nil {
			granted = append(granted, ws...)
		} else {
			widen = append(widen, ws...)
		}
		last = res
	}
	if widen != nil {
		return g.hookAsk(agent, in, m, branchDir, last, widen, o)
	}
	if m.Kind == agents.KindFiles {
		return agents.Allow(agent), nil
	}
	if o.ExecCommand == nil {
		return agents.Answer{}, errors.New("no exec command to run shell calls through")
	}
	call := m.Calls[0]
	call.Cwd = in.Cwd
	if err := StoreCall(branchDir, last.CallID, call); err != nil {
		return agents.Answer{}, err
	}
	if granted != nil {
		// The user let this call run once: its run gets the grant.
		if err := StoreGrant(branchDir, Grant{CallID: last.CallID, Call: CallSum(call), Widenings: granted, Channel: t.Ask.Channel()}); err != nil {
			return agents.Answer{}, err
		}
	}
	return agents.Rewrite(agent, in.ToolInput, o.ExecCommand(id, filepath.Base(branchDir), last.CallID))
}

// hookAsk answers a call denied for a scope reason with the agent's own
// permission dialog, naming the widening. A file tool is performed by the
// agent once the user approves; a shell command is stored with a one-time
// grant under its call id and rewritten to the `scopegate exec` of that id,
// so that approving runs exactly this call, once, confined.
func (g *Gateway) hookAsk(agent string, in agents.Input, m agents.Mapping, branchDir string, last CallResult, ws []policy.Widening, o HookOptions) (agents.Answer, error) {
	o1 := Offer{Call: m.Calls[0], Decision: last.Decision, Widenings: ws}
	// The reason leads with the denial, so that where nobody answers (a
	// headless run refuses the call with it) the model reads what it would
	// have read without approvals.
	if m.Kind == agents.KindFiles {
		return agents.Ask(agent, fmt.Sprintf("%s. scopegate asks: approve to let this call run once (it needs %s; the scope stays as it is)",
			strings.TrimSuffix(last.Decision.Message, "."), o1.Widening())), nil
	}
	if o.ExecCommand == nil {
		return agents.Answer{}, errors.New("no exec command to run shell calls through")
	}
	call := m.Calls[0]
	call.Cwd = in.Cwd
	if err := StoreCall(branchDir, last.CallID, call); err != nil {
		return agents.Answer{}, err
	}
	if err := StoreGrant(branchDir, Grant{CallID: last.CallID, Call: CallSum(call), Widenings: ws, Channel: ChannelHookAsk}); err != nil {
		return agents.Answer{}, err
	}
	reason := fmt.Sprintf("%s. scopegate asks: approve to run exactly this command once, confined, through scopegate exec "+
		"under a one-time grant (it needs %s; the scope stays as it is)", strings.TrimSuffix(last.Decision.Message, "."), o1.Widening())
	return agents.AskRewrite(agent, in.ToolInput, o.ExecCommand(HookSessionID(in.SessionID), filepath.Base(branchDir), last.CallID), reason)
}

// hookSession returns the branch directory of session id, creating the
// session from the hook profile on first use, and the branch as it opened
// an existing session (nil for a new one). Concurrent first calls create
// it once (sessions.Store.Create publishes by rename).
func (g *Gateway) hookSession(ctx context.Context, id string, o HookOptions) (string, *sessions.Branch, error) {
	store := &sessions.Store{Root: g.opts.SessionsDir, Warn: g.opts.Warn}
	if _, err := os.Stat(store.SessionDir(id)); err == nil {
		b, err := store.Open(id, "")
		if err != nil {
			return "", nil, err
		}
		return b.Dir, b, nil
	}
	if o.ProjectDir == "" || !filepath.IsAbs(o.ProjectDir) {
		return "", nil, fmt.Errorf("no absolute project directory to create session %s from (CLAUDE_PROJECT_DIR for Claude Code, the hook's working directory for Codex)", id)
	}
	if fi, err := os.Stat(o.ProjectDir); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("project directory %s is not a directory", o.ProjectDir)
	}
	profile := o.Profile
	if profile == "" {
		profile = "coding"
	}
	root := gitTopLevel(o.ProjectDir)
	c, err := store.CreateWithProfile(ctx, profiles.Loader{ConfigDir: g.opts.ConfigDir, PresetsDir: g.opts.PresetsDir},
		sessions.CreateOptions{ID: id, Name: id, ExistOK: true, ProjectRoot: root}, profile, g.opts.Warn)
	if err != nil {
		return "", nil, fmt.Errorf("create session %s: %w", id, err)
	}
	return c.BranchDir, nil, nil
}

// gitTopLevel is the nearest directory at or above dir holding .git, else
// dir itself.
func gitTopLevel(dir string) string {
	dir = filepath.Clean(dir)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func otherTool(agent, tool, mode string) (agents.Answer, error) {
	switch mode {
	case OtherToolsAllow:
		return agents.Allow(agent), nil
	case "", OtherToolsAsk:
		return agents.Ask(agent, fmt.Sprintf("scopegate does not decide %s (hooks.other_tools: ask)", tool)), nil
	case OtherToolsDeny:
		return agents.Deny(agent, fmt.Sprintf("scopegate: %s is not a tool scopegate decides, and hooks.other_tools is deny", tool)), nil
	}
	return agents.Answer{}, fmt.Errorf("hooks.other_tools is %q, not allow, ask or deny", mode)
}
