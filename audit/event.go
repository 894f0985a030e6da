package audit

// The kinds of an Event. Kinds to come (approvals, network connections) add
// their own constant; a sink exports any kind it is given.
const (
	// EventDecision is a decided tool call: a check, a hook decision, a
	// call (denied, or run with its result) or an INTERRUPTED record.
	EventDecision = "decision"
	// EventScopeChange is a widening of a branch's scope.
	EventScopeChange = "scope_change"
	// EventApproval is an approval asked, granted or refused.
	EventApproval = "approval"
	// EventConnection is a network connection of a call.
	EventConnection = "connection"
)

// Event is one audited happening as a sink outside tools.org sees it: the
// entry that was appended (or would have been, when the append failed) and
// where it came from. Sinks (telemetry) must not block: they are called on
// the decision's path.
type Event struct {
	// Kind is one of the Event* kinds.
	Kind string `json:"kind"`
	// Session and Branch name the branch the entry belongs to.
	Session string `json:"session,omitempty"`
	Branch  string `json:"branch,omitempty"`
	// Via is the entry point (cli, http, hook, mcp).
	Via string `json:"via,omitempty"`
	// Entry is the tools.org entry.
	Entry Entry `json:"entry"`
	// Attrs are further attributes of the kinds that need them (a
	// connection's host and port, an approval's approver), exported as
	// they are.
	Attrs map[string]string `json:"attrs,omitempty"`
}
