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
	"time"

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
	// (`/abs/scopegate exec --session ID --branch B --call CALL_ID --
	// COMMAND`), command being the user's own, which exec checks against
	// the stored call and the agent's dialog shows last. Required for
	// shell calls to be allowed.
	ExecCommand func(sessionID, branch, callID, command string) string
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
	// ApprovalTimeout is how long a call left to the agent's dialog may
	// wait for the user's answer before it runs (config.yml
	// approval_timeout_seconds; default DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// Agent locates the agent's own permission rules (its settings and
	// rules files, its command line), which a rewritten command would lose:
	// scopegate applies them to the user's command. Its ProjectDir defaults
	// to ProjectDir.
	Agent agents.Env
}

// DefaultApprovalTimeout is how long a call left to the agent's dialog may
// wait for its answer when HookOptions.ApprovalTimeout is zero.
const DefaultApprovalTimeout = 120 * time.Second

// agentEnv is o.Agent with its project directory.
func (o HookOptions) agentEnv() agents.Env {
	e := o.Agent
	if e.ProjectDir == "" {
		e.ProjectDir = o.ProjectDir
	}
	return e
}

func (o HookOptions) approvalTimeout() time.Duration {
	if o.ApprovalTimeout > 0 {
		return o.ApprovalTimeout
	}
	return DefaultApprovalTimeout
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

// Hook answers an agent's hook. PreToolUse: it maps the tool call, finds or
// creates the session of the agent's session id, decides every call
// (audited in tools.org with :MODE: hook, counted with via="hook") with
// the agent's own rules kept, and answers in the agent's own terms. An
// allowed shell command is stored and rewritten to ExecCommand, so that it
// runs through scopegate's own runner. The other events settle the calls
// left to the agent's user (settleAsks). Every failure is a deny with a
// reason: Hook never panics and never allows what it could not decide.
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
	if in.Event != agents.EventPreToolUse {
		return g.hookEvent(ctx, in)
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
	// will ask one (docs/approvals.md); everywhere else it is denied.
	channel := ""
	switch {
	case !o.Approvals:
	case agents.AsksUser(agent, in):
		channel = ChannelHookAsk
	case o.Ask != nil:
		t.Ask = o.Ask
	}
	g.settleExpired(ctx, t)
	var rules agentRules
	if m.Kind == agents.KindShell || channel != "" && agent == agents.ClaudeCode {
		rules, err = readAgentRules(agent, o.agentEnv())
		if err != nil && m.Kind == agents.KindShell {
			return agents.Answer{}, fmt.Errorf("%w; scopegate keeps the agent's own rules, and cannot read them", err)
		}
	}
	h := hookCall{agent: agent, in: in, m: m, branchDir: branchDir, o: o, rules: rules}
	for _, c := range m.Calls {
		c.Cwd = in.Cwd
		co := checkOptions{channel: channel, opened: opened}
		var ask *agentHit
		if m.Kind == agents.KindShell && !rules.Empty() {
			co.decide = rules.decider(agent, c, channel != "", &ask)
			co.asked = func() (string, string, bool) {
				if ask == nil {
					return "", "", false
				}
				return agent + " " + ask.text, ask.rule + " asks its user before this command runs", true
			}
		}
		if m.Kind == agents.KindFiles && channel != "" && agent == agents.ClaudeCode {
			co.askNote = fileAskNote(in.ToolName, rules.postToolUse)
		}
		res, ws, err := g.check(ctx, t, c, co)
		if err != nil {
			return agents.Answer{}, fmt.Errorf("could not record the decision: %w", err)
		}
		if !res.Decision.Allowed && ws == nil {
			return agents.Deny(agent, res.Decision.Message), nil
		}
		if t.Ask != nil {
			// The user let the call run once: what its run needs granted.
			h.granted = append(h.granted, ws...)
		} else {
			h.widen = append(h.widen, ws...)
		}
		if ask != nil {
			h.ask = ask
		}
		h.last = res
	}
	if h.widen != nil || h.ask != nil {
		return g.hookAsk(h)
	}
	if m.Kind == agents.KindFiles {
		return agents.Allow(agent), nil
	}
	if o.ExecCommand == nil {
		return agents.Answer{}, errors.New("no exec command to run shell calls through")
	}
	call := m.Calls[0]
	call.Cwd = in.Cwd
	if err := StoreCall(branchDir, h.last.CallID, call); err != nil {
		return agents.Answer{}, err
	}
	if h.granted != nil {
		grant := Grant{CallID: h.last.CallID, Call: CallSum(call), Widenings: h.granted, Channel: t.Ask.Channel(),
			Expires: g.opts.Now().Add(o.approvalTimeout())}
		if err := StoreGrant(branchDir, grant); err != nil {
			return agents.Answer{}, err
		}
	}
	return agents.Rewrite(agent, in.ToolInput, o.ExecCommand(id, filepath.Base(branchDir), h.last.CallID, shellCommand(call)))
}

// hookCall is one PreToolUse being answered.
type hookCall struct {
	agent     string
	in        agents.Input
	m         agents.Mapping
	branchDir string
	o         HookOptions
	rules     agentRules
	// last is the result of the last call of the mapping; widen what the
	// scope lacks for them; ask the agent's own rule that asks first;
	// granted what the user let the call run with once, answered through
	// HookOptions.Ask.
	last    CallResult
	widen   []policy.Widening
	ask     *agentHit
	granted []policy.Widening
}

// shellCommand is the command of a shell call.
func shellCommand(call policy.Call) string {
	var a policy.ShellArgs
	_ = policy.DecodeArgs(call.Args, &a)
	return a.Command
}

// fileAskNote is what the asked entry of a file tool says of its outcome,
// which the agent alone sees.
func fileAskNote(tool string, reported bool) string {
	if reported {
		return "Claude Code runs " + tool + " itself once its user approves; a later entry with this call id records whether it ran"
	}
	return "Claude Code runs " + tool + " itself once its user approves; whether it ran is unknown, since its settings install no PostToolUse hook of scopegate's"
}

// hookAsk answers a call denied for a scope reason, or one the agent's own
// rules ask about, with the agent's own permission dialog, naming what it
// needs. A file tool is performed by the agent once the user approves; a
// shell command is stored (with a one-time grant of what the scope lacks)
// under its call id and rewritten to the `scopegate exec` of that id, so
// that approving runs exactly this call, once, confined. The ask is
// recorded until its outcome is known (settleAsks); it expires with
// HookOptions.ApprovalTimeout.
func (g *Gateway) hookAsk(h hookCall) (agents.Answer, error) {
	call := h.m.Calls[0]
	call.Cwd = h.in.Cwd
	d := h.last.Decision
	a := pendingAsk{CallID: h.last.CallID, ToolUseID: h.in.ToolUseID, AgentTool: h.in.ToolName, Call: call,
		Reason: string(d.Reason), Rule: d.Rule, Resource: d.Resource, Message: d.Message,
		Expires: g.opts.Now().Add(h.o.approvalTimeout())}
	// The reason leads with the call, then the denial, so that the dialog
	// names what is approved and where nobody answers (a headless run
	// refuses the call with it) the model reads what it would have read
	// without approvals.
	why := strings.TrimSuffix(d.Message, ".")
	needs := "the scope stays as it is"
	if h.widen != nil {
		a.Offered = Offer{Widenings: h.widen}.Widening()
		needs = "it needs " + a.Offered + "; the scope stays as it is"
	}
	if h.ask != nil {
		asks := h.ask.rule + " asks its user before this command runs"
		if h.widen == nil {
			a.Reason, a.Rule, a.Resource, a.Message = string(policy.ReasonAllowed), h.agent+" "+h.ask.text, "", asks
			why = asks
		} else {
			a.Message = strings.TrimSuffix(a.Message, ".") + "; " + asks
			why += "; " + asks
		}
	}
	if h.m.Kind == agents.KindFiles {
		a.Reported = h.rules.postToolUse
		if err := storeAsk(h.branchDir, a); err != nil {
			return agents.Answer{}, err
		}
		return agents.Ask(h.agent, fmt.Sprintf("%s %s: %s. scopegate asks: approve to let this call run once (%s)",
			h.in.ToolName, Offer{Call: call}.what(), why, needs)), nil
	}
	if h.o.ExecCommand == nil {
		return agents.Answer{}, errors.New("no exec command to run shell calls through")
	}
	a.Shell = true
	command := shellCommand(call)
	if err := StoreCall(h.branchDir, a.CallID, call); err != nil {
		return agents.Answer{}, err
	}
	if h.widen != nil {
		grant := Grant{CallID: a.CallID, Call: CallSum(call), Widenings: h.widen, Channel: ChannelHookAsk, Expires: a.Expires}
		if err := StoreGrant(h.branchDir, grant); err != nil {
			return agents.Answer{}, err
		}
	}
	if err := storeAsk(h.branchDir, a); err != nil {
		return agents.Answer{}, err
	}
	reason := fmt.Sprintf("%s: %s. scopegate asks: approve to run exactly this command once, confined, through scopegate exec (%s)",
		policy.OneLine(command), why, needs)
	return agents.AskRewrite(h.agent, h.in.ToolInput, h.o.ExecCommand(HookSessionID(h.in.SessionID), filepath.Base(h.branchDir), a.CallID, command), reason)
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
