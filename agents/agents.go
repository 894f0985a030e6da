// Package agents maps the PreToolUse hooks of coding agents to scopegate
// calls and scopegate's decisions back to the agents' answers. One file per
// agent: Claude Code (claudecode.go) and Codex (codex.go). It is pure
// mapping: bytes in, calls and bytes out, no I/O.
//
// Everything the package cannot map is an error, and callers deny on
// errors: unknown or malformed input never becomes an allow.
package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scopegate/scopegate/policy"
)

// The agents scopegate answers hooks of.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// Names lists the agents, in a fixed order.
func Names() []string { return []string{ClaudeCode, Codex} }

// ErrInvalidInput marks hook input that cannot be mapped.
var ErrInvalidInput = errors.New("invalid hook input")

// Event is a hook event scopegate answers.
type Event string

// The hook events scopegate answers. PreToolUse decides a tool call; the
// others tell what became of the calls left to the agent's user: a tool
// ran (PostToolUse, PostToolUseFailure), or a turn or the session ended
// (UserPromptSubmit, Stop, SessionEnd), so that no call the user was asked
// about is still waiting.
const (
	EventPreToolUse         Event = "PreToolUse"
	EventPostToolUse        Event = "PostToolUse"
	EventPostToolUseFailure Event = "PostToolUseFailure"
	EventUserPromptSubmit   Event = "UserPromptSubmit"
	EventStop               Event = "Stop"
	EventSessionEnd         Event = "SessionEnd"
)

// Events lists the events, in a fixed order.
func Events() []Event {
	return []Event{EventPreToolUse, EventPostToolUse, EventPostToolUseFailure, EventUserPromptSubmit, EventStop, EventSessionEnd}
}

// ToolEvent reports whether the event is about one tool call (it names
// the tool and its input).
func (e Event) ToolEvent() bool {
	return e == EventPreToolUse || e == EventPostToolUse || e == EventPostToolUseFailure
}

// Input is what scopegate reads of a hook input. Both agents send the same
// envelope.
type Input struct {
	SessionID string          `json:"session_id"`
	Cwd       string          `json:"cwd"`
	Event     Event           `json:"hook_event_name"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// ToolUseID is the agent's id of the tool call: the same in the
	// PreToolUse and the PostToolUse of one call.
	ToolUseID string `json:"tool_use_id"`
	// PermissionMode is Claude Code's permission_mode as sent (a JSON
	// string, or anything else, which AsksUser takes as unknown).
	PermissionMode json.RawMessage `json:"permission_mode"`
}

// AsksUser reports whether the agent shows a user its permission dialog
// when the hook answers "ask", judged from the hook input alone and failing
// closed. Codex has no ask. Claude Code sends its permission mode: in
// default, acceptEdits, plan and auto (an interactive session's default
// mode) an interactive session asks its user, and a headless one (-p),
// which has nobody to ask, refuses the call (measured, docs/approvals.md);
// bypassPermissions and dontAsk exist not to ask, and a missing or unknown
// mode is not relied on.
func AsksUser(agent string, in Input) bool {
	if agent != ClaudeCode {
		return false
	}
	var mode string
	if json.Unmarshal(in.PermissionMode, &mode) != nil {
		return false
	}
	switch mode {
	case "default", "acceptEdits", "plan", "auto":
		return true
	}
	return false
}

// ParseInput reads a hook input. It must be one JSON object naming one of
// Events and a session id, and for a tool event a tool and the tool's
// input object; other fields of the envelope are the agents' own and are
// ignored.
func ParseInput(data []byte) (Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return Input{}, fmt.Errorf("%w: not a JSON object (%v)", ErrInvalidInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Input{}, fmt.Errorf("%w: trailing data after the hook input", ErrInvalidInput)
	}
	switch {
	case !slices.Contains(Events(), in.Event):
		return Input{}, fmt.Errorf("%w: hook_event_name is %q, scopegate answers %s", ErrInvalidInput, in.Event, eventList())
	case in.SessionID == "":
		return Input{}, fmt.Errorf("%w: no session_id", ErrInvalidInput)
	case !in.Event.ToolEvent():
		return in, nil
	case in.ToolName == "":
		return Input{}, fmt.Errorf("%w: no tool_name", ErrInvalidInput)
	case len(bytes.TrimSpace(in.ToolInput)) == 0 || bytes.TrimSpace(in.ToolInput)[0] != '{':
		return Input{}, fmt.Errorf("%w: tool_input of %s is not an object", ErrInvalidInput, in.ToolName)
	}
	return in, nil
}

// eventList names the events for a message.
func eventList() string {
	names := make([]string, 0, len(Events()))
	for _, e := range Events() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// Kind says how a mapped tool call is handled.
type Kind int

const (
	// KindFiles is a file tool the agent performs itself once allowed: every
	// call of the mapping must be allowed.
	KindFiles Kind = iota + 1
	// KindShell is a shell command: one shell call, run by `scopegate exec`
	// when allowed.
	KindShell
	// KindOther is a tool the mapping does not cover (web search,
	// sub-agents, MCP tools): hooks.other_tools decides.
	KindOther
	// KindNetwork is a tool the agent runs itself that connects to a host
	// (Claude Code's WebFetch): the scope's network decides URL's host.
	KindNetwork
)

// Mapping is an agent's tool call as scopegate calls.
type Mapping struct {
	Kind  Kind
	Calls []policy.Call
	// URL, Host and Port are what a KindNetwork tool connects to.
	URL  string
	Host string
	Port int
}

// Map maps a hook input of agent to scopegate calls. The calls carry no
// cwd: the hook's cwd is the caller's to check.
func Map(agent string, in Input) (Mapping, error) {
	switch agent {
	case ClaudeCode:
		return mapClaudeCode(in)
	case Codex:
		return mapCodex(in)
	}
	return Mapping{}, fmt.Errorf("unknown agent %q (known: claude-code, codex)", agent)
}

// Answer is a hook answer in the agent's own terms: what to print on
// stdout, and the exit code (0 with a JSON answer, or 2 with a one-line
// reason in Stderr).
type Answer struct {
	Stdout []byte
	Stderr string
	Exit   int
}

// Deny is agent's answer refusing the tool call with reason (never empty:
// both agents run the tool on a deny without one).
func Deny(agent, reason string) Answer {
	if reason == "" {
		reason = "scopegate denied this tool call"
	}
	return Answer{Stdout: preToolUse(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason})}
}

// Refuse is agent's answer refusing a tool call scopegate could not decide
// (unreadable input, a broken config, an internal error, no decision in
// time): "scopegate: ", why on one line, "; the tool call is denied". Every
// hook entry point refuses through it.
func Refuse(agent, why string) Answer {
	return Deny(agent, "scopegate: "+policy.OneLine(why)+"; the tool call is denied")
}

// Ack is the answer to an event that decides nothing (every event but
// PreToolUse): no output, exit 0, which both agents take as "go on".
func Ack() Answer { return Answer{} }

// Allow is agent's answer letting the tool call run as it is. Codex takes
// no bare allow: its form is an empty answer.
func Allow(agent string) Answer {
	if agent == Codex {
		return Answer{}
	}
	return Answer{Stdout: preToolUse(map[string]any{"permissionDecision": "allow",
		"permissionDecisionReason": "allowed by scopegate"})}
}

// Ask is agent's answer leaving the call to the user. Codex has no ask: it
// gets a deny.
func Ask(agent, reason string) Answer {
	if agent == Codex {
		return Deny(agent, reason)
	}
	return Answer{Stdout: preToolUse(map[string]any{"permissionDecision": "ask", "permissionDecisionReason": reason})}
}

// AskRewrite is agent's answer leaving a shell tool call to the user with
// its command replaced by command (the `scopegate exec` that runs exactly
// this call under a one-time grant once the user approves). Codex has no
// ask: it gets a deny.
func AskRewrite(agent string, input json.RawMessage, command, reason string) (Answer, error) {
	if agent == Codex {
		return Deny(agent, reason), nil
	}
	var fields map[string]any
	if err := json.Unmarshal(input, &fields); err != nil {
		return Answer{}, fmt.Errorf("%w: tool_input: %v", ErrInvalidInput, err)
	}
	fields["command"] = command
	return Answer{Stdout: preToolUse(map[string]any{"permissionDecision": "ask", "permissionDecisionReason": reason,
		"updatedInput": fields})}, nil
}

// Rewrite is agent's answer allowing a shell tool call with its command
// replaced by command (the `scopegate exec` that runs the decided call).
// input is the agent's original tool_input, kept but for the command.
func Rewrite(agent string, input json.RawMessage, command string) (Answer, error) {
	var fields map[string]any
	if err := json.Unmarshal(input, &fields); err != nil {
		return Answer{}, fmt.Errorf("%w: tool_input: %v", ErrInvalidInput, err)
	}
	fields["command"] = command
	return Answer{Stdout: preToolUse(map[string]any{"permissionDecision": "allow",
		"permissionDecisionReason": "allowed by scopegate; runs confined through scopegate exec",
		"updatedInput":             fields})}, nil
}

func preToolUse(fields map[string]any) []byte {
	fields["hookEventName"] = "PreToolUse"
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": fields})
	return append(out, '\n')
}

// call builds a scopegate call from args, one of the contract's typed args
// (policy.*Args); their encoding cannot fail, so an error can only be a bug,
// reported as invalid input.
func call(tool string, args any) (policy.Call, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return policy.Call{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	return policy.Call{Tool: tool, Args: raw}, nil
}

// one is the mapping of kind to the single call of tool with args.
func one(kind Kind, tool string, args any) (Mapping, error) {
	c, err := call(tool, args)
	if err != nil {
		return Mapping{}, err
	}
	return Mapping{Kind: kind, Calls: []policy.Call{c}}, nil
}

// fields decodes a tool_input object into v, naming the tool on failure,
// and requires the string field name, decoded into *value, to be set (no
// requirement when value is nil).
func fields(in Input, v any, name string, value *string) error {
	if err := json.Unmarshal(in.ToolInput, v); err != nil {
		return fmt.Errorf("%w: tool_input of %s: %v", ErrInvalidInput, in.ToolName, err)
	}
	if value != nil {
		return need(in, name, *value)
	}
	return nil
}

// need reports a missing required string field.
func need(in Input, name, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s without %s", ErrInvalidInput, in.ToolName, name)
	}
	return nil
}
