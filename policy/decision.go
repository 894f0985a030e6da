package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reason is the machine-readable cause of a decision.
type Reason string

// The reasons of docs/reference.md, The call and the decision. Their set is closed: metrics use them as
// label values.
const (
	ReasonAllowed            Reason = "allowed"
	ReasonPathNotInScope     Reason = "path_not_in_scope"
	ReasonPathDenied         Reason = "path_denied"
	ReasonCommandNotAllowed  Reason = "command_not_allowed"
	ReasonCommandDenied      Reason = "command_denied"
	ReasonDangerousArgument  Reason = "dangerous_argument"
	ReasonDynamicCommand     Reason = "dynamic_command"
	ReasonRedirectNotInScope Reason = "redirect_not_in_scope"
	ReasonParseError         Reason = "parse_error"
	ReasonRoamNotInScope     Reason = "roam_not_in_scope"
	ReasonHostNotInScope     Reason = "host_not_in_scope"
	ReasonUnknownTool        Reason = "unknown_tool"
	ReasonInvalidArguments   Reason = "invalid_arguments"
	ReasonScopeInvalid       Reason = "scope_invalid"
	ReasonScopeMissing       Reason = "scope_missing"
	// ReasonManaged is a denial by the machine's managed policy
	// (docs/managed.md): never widenable.
	ReasonManaged Reason = "managed"
)

// Reasons lists every reason, in a fixed order.
func Reasons() []Reason {
	return []Reason{
		ReasonAllowed, ReasonPathNotInScope, ReasonPathDenied, ReasonCommandNotAllowed,
		ReasonCommandDenied, ReasonDangerousArgument, ReasonDynamicCommand,
		ReasonRedirectNotInScope, ReasonParseError, ReasonRoamNotInScope,
		ReasonHostNotInScope, ReasonUnknownTool, ReasonInvalidArguments, ReasonScopeInvalid, ReasonScopeMissing,
		ReasonManaged,
	}
}

// Violation is one reason a call is denied.
type Violation struct {
	Reason   Reason `json:"reason"`
	Resource string `json:"resource,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Message  string `json:"message,omitempty"`
	// Widen is the scope expansion that lifts this violation, where one
	// does (see [Violation.Widenable]).
	Widen []Widening `json:"widen,omitempty"`
}

// Decision is the outcome of [Scope.Decide]. A denied decision lists every
// violation found; its top-level fields repeat the one that decides it
// ([Deciding]).
type Decision struct {
	Allowed    bool        `json:"allowed"`
	Tool       string      `json:"tool"`
	Reason     Reason      `json:"reason"`
	Rule       string      `json:"rule,omitempty"`
	Resource   string      `json:"resource,omitempty"`
	Message    string      `json:"message"`
	Violations []Violation `json:"violations,omitempty"`
	// Execution is who runs the call, an input of the decision: recursive
	// readers below denied files are allowed only when confined.
	Execution Execution `json:"execution,omitempty"`
	// Observed, on an allowed decision, is the scope denial that enforce
	// mode would have made and observe mode let through ([Decision.Observe]);
	// Violations then keep every would-be violation.
	Observed *Observed `json:"observed,omitempty"`
}

// Observed is the denial an observed call would have had in enforce mode:
// the first would-be violation's reason, rule and resource.
type Observed struct {
	Reason   Reason `json:"reason"`
	Rule     string `json:"rule,omitempty"`
	Resource string `json:"resource,omitempty"`
}

// Allow returns an allowed decision for tool.
func Allow(tool string) Decision {
	return Decision{Allowed: true, Tool: tool, Reason: ReasonAllowed, Message: tool + " is allowed by this session's scope"}
}

// Deny returns a denied decision carrying every violation, its reason,
// rule, resource and message those of the violation that decides it
// ([Deciding]); vs must not be empty.
func Deny(tool string, vs ...Violation) Decision {
	first := Deciding(vs)
	return Decision{
		Tool: tool, Reason: first.Reason, Rule: first.Rule, Resource: first.Resource,
		Message: OneLine(first.Message), Violations: vs,
	}
}

// Deciding is the violation that decides a denial: the first one no wider
// scope lifts, else the first. A call that a hard violation denies is
// denied whatever the scope becomes, so its reason, and never a widening's
// hint, is what the caller must read. vs must not be empty.
func Deciding(vs []Violation) Violation {
	for _, v := range vs {
		if !v.Widenable() {
			return v
		}
	}
	return vs[0]
}

// OneLine makes a message a single line: control characters (newlines,
// escape sequences) are shown escaped and invalid UTF-8 as \xNN, so nothing
// a caller controls can add lines or steer a terminal. Every one-line
// message scopegate prints, a denial's or an error's, goes through it.
func OneLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }) < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
