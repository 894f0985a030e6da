package policy

import (
	"fmt"
	"strings"
)

// Widening is one scope expansion that lifts a denial: a flag of
// `scopegate scope expand` and its value (--read PATTERN, --allow-command
// WORDS, --roam-tag TAG…).
type Widening struct {
	Flag  WidenFlag `json:"flag"`
	Value string    `json:"value"`
}

// WidenFlag is the `scope expand` flag of a widening: a closed vocabulary,
// written as the flag itself in decisions, tools.org (:WIDEN:), grants and
// suggestions. [ParseWidenFlag] (and decoding JSON or text) refuses any
// other word, so that a flag no code knows how to apply never travels.
type WidenFlag string

// The widening flags. Narrowing flags of scope expand (--deny,
// --deny-command) are no widening.
const (
	WidenRead             WidenFlag = "--read"              // paths.read
	WidenWrite            WidenFlag = "--write"             // paths.write
	WidenCommand          WidenFlag = "--allow-command"     // shell_commands.allow
	WidenRoamSubdirectory WidenFlag = "--roam-subdirectory" // org_roam_patterns.subdirectory
	WidenRoamTag          WidenFlag = "--roam-tag"          // org_roam_patterns.tags
	WidenRoamNodeID       WidenFlag = "--roam-node-id"      // org_roam_patterns.node_ids
	WidenHost             WidenFlag = "--allow-host"        // a host entry of network
	WidenSocket           WidenFlag = "--allow-socket"      // a unix: entry of network
	// WidenNetwork with the value "any" makes the network unrestricted:
	// proposed in a hint, never offered for approval nor suggested.
	WidenNetwork WidenFlag = "--network"
)

// ParseWidenFlag returns the widening flag s spells, or an error for any
// other word.
func ParseWidenFlag(s string) (WidenFlag, error) {
	switch f := WidenFlag(s); f {
	case WidenRead, WidenWrite, WidenCommand, WidenRoamSubdirectory, WidenRoamTag,
		WidenRoamNodeID, WidenHost, WidenSocket, WidenNetwork:
		return f, nil
	}
	return "", fmt.Errorf("%q is not a widening flag of scope expand", s)
}

// String is the flag as scope expand spells it.
func (f WidenFlag) String() string { return string(f) }

// IsPath reports whether the flag widens a path list (--read, --write),
// whose values are path patterns.
func (f WidenFlag) IsPath() bool { return f == WidenRead || f == WidenWrite }

// UnmarshalText reads a flag through [ParseWidenFlag]: a grant, a
// tools.org entry or a request naming another word does not decode.
func (f *WidenFlag) UnmarshalText(text []byte) error {
	v, err := ParseWidenFlag(string(text))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// ExpandHint renders ws as the command a denial message proposes, without
// the branch's selector (entry points insert it after [ExpandCommand]).
func ExpandHint(ws ...Widening) string {
	var b strings.Builder
	b.WriteString(ExpandCommand)
	for _, w := range ws {
		b.WriteString(" " + w.Flag.String() + " " + quoteArg(w.Value))
	}
	return b.String()
}

// Widenable reports whether a reason is a scope reason: one that a wider
// scope can lift (docs/learning.md). The other reasons are hard denials or
// invalid input, which no widening lifts.
func (r Reason) Widenable() bool {
	switch r {
	case ReasonPathNotInScope, ReasonCommandNotAllowed, ReasonRedirectNotInScope,
		ReasonRoamNotInScope, ReasonHostNotInScope:
		return true
	}
	return false
}

// Widenable reports whether a wider scope lifts v: a scope reason that
// carries the widening that lifts it. A scope reason without one is a
// denial no scope can lift (a protected root, a file with hard links, a
// path that cannot be resolved).
func (v Violation) Widenable() bool {
	return v.Reason.Widenable() && len(v.Widen) > 0
}

// Widenable reports whether d is a denial that widening the scope would
// lift: every violation is widenable. This is the one definition that
// observe mode, suggestions, approvals and the hints share.
func (d Decision) Widenable() bool {
	if d.Allowed || len(d.Violations) == 0 {
		return false
	}
	for _, v := range d.Violations {
		if !v.Widenable() {
			return false
		}
	}
	return true
}

// Widenings lists the expansions that lift d, each once, in the order of
// its violations; nil when d is not widenable.
func (d Decision) Widenings() []Widening {
	if !d.Widenable() {
		return nil
	}
	var ws []Widening
	seen := map[Widening]bool{}
	for _, v := range d.Violations {
		for _, w := range v.Widen {
			if !seen[w] {
				seen[w] = true
				ws = append(ws, w)
			}
		}
	}
	return ws
}

// Observe is d as observe mode makes it: a widenable denial becomes an
// allowed decision that records what enforce mode would have denied it for
// (Observed, with every violation kept); any other decision, hard denials
// included, is returned unchanged.
func (d Decision) Observe() Decision {
	if !d.Widenable() {
		return d
	}
	o := d
	o.Allowed = true
	o.Observed = &Observed{Reason: d.Reason, Rule: d.Rule, Resource: d.Resource}
	o.Reason = ReasonAllowed
	o.Rule, o.Resource = "", ""
	o.Message = "observe mode: " + d.Tool + " runs; enforce mode would deny it: " + d.Message
	return o
}

// ObservedViolations returns vs when observe mode lets them through (every
// one widenable), else nil: the run-time form of [Decision.Observe].
func ObservedViolations(vs []Violation) []Violation {
	if len(vs) == 0 {
		return nil
	}
	for _, v := range vs {
		if !v.Widenable() {
			return nil
		}
	}
	return vs
}
