package audit

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/scopegate/scopegate/policy"
)

// The decisions an entry records (its :DECISION: property).
const (
	DecisionAllowed     = "allowed"
	DecisionDenied      = "denied"
	DecisionInterrupted = "interrupted"
	// DecisionAsked marks a hook's decision left to the agent's own
	// permission dialog (an offer through Claude Code's "ask"): whether the
	// user let the call run is the agent's to know; a shell call that ran
	// has an exec entry of its own.
	DecisionAsked = "asked"
	// DecisionObserved marks a call that ran in observe mode although
	// enforce mode would have denied it for a scope reason (docs/learning.md);
	// Reason, Rule and Resource say what it would have been denied by, and
	// Widen what lifts it.
	DecisionObserved = "observed"
	// DecisionExpanded marks a scope change (not a tool call): who widened
	// the branch's scope, and with what.
	DecisionExpanded = "expanded"
)

// ToolScopeExpand is the :TOOL: of a scope-change entry.
const ToolScopeExpand = "scope_expand"

// ToolScopeMode is the :TOOL: of the entry of a change of a branch's mode
// (enforce, observe): a scope change like an expansion.
const ToolScopeMode = "scope_mode"

// The modes an entry records (its :MODE: property). A call run by
// scopegate call or over HTTP has no mode.
const (
	// ModeCheck marks an entry written for a decision only (scopegate
	// check): it has no Result.
	ModeCheck = "check"
	// ModeHook marks the decision an agent hook answered; it has no Result
	// (a shell command it allowed runs later as a ModeExec entry with the
	// same call id).
	ModeHook = "hook"
	// ModeExec marks the run of a call a hook decided (scopegate exec).
	ModeExec = "exec"
	// ModeMCP marks a call made through the MCP server.
	ModeMCP = "mcp"
	// ModeScope marks a scope change made by the user.
	ModeScope = "scope"
)

// DecisionOnly reports whether entries of mode record a decision without a
// run (and so without a Result).
func DecisionOnly(mode string) bool {
	return mode == ModeCheck || mode == ModeHook || mode == ModeScope
}

// DefaultMaxOutput is the cap on each of stdout and stderr kept in an entry
// when [Log.MaxOutput] is zero.
const DefaultMaxOutput = 64 << 10

// Errors callers branch on.
var (
	// ErrShortWrite reports that the kernel accepted only part of an entry.
	ErrShortWrite = errors.New("short write")
	// ErrMalformed reports a tools.org entry the reader could not parse.
	ErrMalformed = errors.New("malformed entry")
)

// Entry is one audited decision: a level-1 heading of tools.org.
//
// Time is when the call was decided; it is kept to the millisecond. A
// call that was allowed but failed to run has Decision "allowed" and a
// non-empty Error; its headline keyword is ERROR.
type Entry struct {
	CallID   string    `json:"call_id"`
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
	Decision string    `json:"decision"`
	Reason   string    `json:"reason,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Resource string    `json:"resource,omitempty"`
	Message  string    `json:"message,omitempty"`
	Cwd      string    `json:"cwd,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	// AgentTool is the agent's own name of the tool (Bash, Edit, apply_patch)
	// for entries made through a hook.
	AgentTool string `json:"agent_tool,omitempty"`
	// Widen lists the scope expansions that lift a denied or observed
	// call's scope denial (policy.Decision.Widenings), for scope suggest;
	// :WIDEN: in the drawer, as one line of JSON.
	Widen []policy.Widening `json:"widen,omitempty"`
	Args  json.RawMessage   `json:"args,omitempty"`
	// Summary is the headline text after "TOOL: ". Empty means derived from
	// Args (command, path, pattern, node id, title). Read back, it is the
	// headline as written: one line, possibly cut with "…".
	Summary        string `json:"summary,omitempty"`
	ExitCode       *int   `json:"exit_code,omitempty"`
	DurationMS     *int64 `json:"duration_ms,omitempty"`
	Stdout         string `json:"stdout,omitempty"`
	Stderr         string `json:"stderr,omitempty"`
	TruncatedBytes int64  `json:"truncated_bytes,omitempty"`
	Confinement    string `json:"confinement,omitempty"`
	// ArgsTruncated is "<size> sha256:<hex>" when the arguments were cut
	// to the cap in tools.org (read back; set by the writer).
	ArgsTruncated string `json:"args_truncated,omitempty"`
	Error         string `json:"error,omitempty"`
	// Offered is the widening a denied call was offered to the user with
	// (`--read /p/x`), Channel how they were asked (mcp:elicitation,
	// hook:ask) and Answer what they answered (once, session, deny,
	// decline, cancel, timeout, error; ask when the agent's own dialog
	// asked them).
	Offered string `json:"offered,omitempty"`
	Channel string `json:"channel,omitempty"`
	Answer  string `json:"answer,omitempty"`
	// Approved is once or session when the call ran because the user
	// approved it: under a one-time grant, or after the widening was
	// applied to the branch.
	Approved string `json:"approved,omitempty"`
	// Network lists the connections a shell call's programs attempted
	// (its ** Network section; :NET_DENIED: counts the refused ones).
	Network []Conn `json:"network,omitempty"`
	// Managed is the hex SHA-256 of the machine's managed policy (or
	// "none" once it is gone), on the first entry of a branch after it
	// changed (:MANAGED:).
	Managed string `json:"managed,omitempty"`
}

// Conn is one connection of a call, as its result lists it: the host and
// port asked for, whether it was allowed, and the rule that decided.
type Conn struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule,omitempty"`
}

// NetDenied counts the refused connections of e.
func (e *Entry) NetDenied() int {
	n := 0
	for _, c := range e.Network {
		if !c.Allowed {
			n++
		}
	}
	return n
}

// Keyword is the entry's headline keyword: its Status in capitals.
func (e *Entry) Keyword() string {
	if st := e.Status(); st != "" {
		return strings.ToUpper(st)
	}
	return "UNKNOWN"
}

// The statuses of an entry: its decision, and for an allowed call that ran,
// whether it succeeded.
const (
	StatusAllowed     = "allowed"
	StatusDenied      = "denied"
	StatusError       = "error"
	StatusInterrupted = "interrupted"
	StatusAsked       = "asked"
	StatusObserved    = "observed"
)

// Status is the one word that sums an entry up, the same in its heading, in
// tables and in JSON: denied; interrupted; error for an allowed call that
// failed to run or exited non-zero; observed for a call observe mode let
// through; else allowed. "" for an unknown decision.
func (e *Entry) Status() string {
	switch e.Decision {
	case DecisionInterrupted:
		return StatusInterrupted
	case DecisionDenied:
		return StatusDenied
	case DecisionAsked:
		return StatusAsked
	case DecisionExpanded:
		return DecisionExpanded
	case DecisionObserved:
		return StatusObserved
	case DecisionAllowed:
		if !DecisionOnly(e.Mode) && (e.Error != "" || e.ExitCode != nil && *e.ExitCode != 0) {
			return StatusError
		}
		return StatusAllowed
	}
	return ""
}

// Filter selects entries when reading. The zero Filter selects all.
type Filter struct {
	// Decision keeps only entries with this Status: allowed, denied, error,
	// interrupted or observed ("" keeps all).
	Decision string
	// Since keeps only entries whose Time is not before it (zero keeps all).
	Since time.Time
	// Warn is told about each entry skipped because it could not be parsed
	// (a torn last entry after a crash, a hand-written heading); nil ignores.
	Warn func(error)
}

func (f *Filter) match(e *Entry) bool {
	if f.Decision != "" && e.Status() != f.Decision {
		return false
	}
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	return true
}
