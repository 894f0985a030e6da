package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The managed layer (docs/managed.md): one policy over every session of the
// machine, whatever the agent, written by its administrator in
// /etc/scopegate/managed.yml. Its rules are a hard layer of every
// decision: a scope is decided within it, never beyond.
//
//	paths.deny           added to every scope's paths.deny
//	paths.ceiling.read   no scope reads beyond these (nor beyond write)
//	paths.ceiling.write  no scope writes beyond these
//	shell_commands.deny  added to every scope's shell_commands.deny
//	network              none, or the hosts and unix: sockets no scope's
//	                     network reaches beyond
//
// What the layer refuses is a denial with ReasonManaged and a rule naming
// the managed entry ("managed.paths.deny[2] **/secrets/**",
// "managed.paths.ceiling.write", "managed.network"): no widening lifts it,
// so it is never hinted, offered, suggested or observed through. A scope
// is combined with the layer by [Scope.Within]: its deny lists gain the
// managed ones, its roots are bounded by the ceiling's and its network by
// the managed network, so that everything made from the combined scope
// (the runner's masks and Landlock roots, the proxy and DNS stub) is
// bounded too.

// ErrManagedInvalid marks a managed policy that cannot be used (unreadable,
// untrusted, invalid): every call is then denied with ReasonManaged.
var ErrManagedInvalid = errors.New("managed policy cannot be used")

// managedPrefix begins the rule of every managed entry.
const managedPrefix = "managed."

// The rules of the managed layer's denials that name a list, not an entry.
const (
	RuleManagedCeilingRead  = "managed.paths.ceiling.read"
	RuleManagedCeilingWrite = "managed.paths.ceiling.write"
	RuleManagedNetwork      = "managed.network"
	// RuleManagedObserve and RuleManagedApprovals name the managed
	// settings that refuse observe mode and approvals.
	RuleManagedObserve   = "managed.modes.observe"
	RuleManagedApprovals = "managed.approvals"
	// RuleManagedFile is the rule of a denial because the managed policy
	// cannot be used.
	RuleManagedFile = "managed"
)

// IsManagedRule reports whether a rule names an entry of the managed layer.
func IsManagedRule(rule string) bool {
	return rule == RuleManagedFile || strings.HasPrefix(rule, managedPrefix)
}

// ManagedRules are the rules of managed.yml that decisions apply. Every
// section is optional: a missing one constrains nothing (unlike a scope,
// where missing means empty). Within a ceiling, a missing list is empty.
type ManagedRules struct {
	Paths ManagedPaths `yaml:"paths,omitempty" json:"paths"`
	Shell ManagedShell `yaml:"shell_commands,omitempty" json:"shell_commands"`
	// Network is the network ceiling; Mode "" (no network key) is none.
	Network NetworkRules `yaml:"network,omitempty" json:"-"`
}

// ManagedPaths is the paths section of managed.yml.
type ManagedPaths struct {
	// Deny are globs added to every scope's paths.deny.
	Deny []string `yaml:"deny,omitempty" json:"deny,omitempty"`
	// Ceiling, when set, bounds every scope's read and write patterns.
	Ceiling *PathCeiling `yaml:"ceiling,omitempty" json:"ceiling,omitempty"`
}

// PathCeiling is paths.ceiling: the globs below which scopes may grant
// reads (Read, and Write: writing implies reading) and writes (Write).
type PathCeiling struct {
	Read  []string `yaml:"read" json:"read"`
	Write []string `yaml:"write" json:"write"`
}

// ManagedShell is the shell_commands section of managed.yml.
type ManagedShell struct {
	// Deny are entries added to every scope's shell_commands.deny.
	Deny []string `yaml:"deny,omitempty" json:"deny,omitempty"`
}

// MarshalJSON writes the rules with the network ceiling only when there is
// one.
func (r ManagedRules) MarshalJSON() ([]byte, error) {
	type plain ManagedRules
	out := struct {
		plain
		Network *NetworkRules `json:"network,omitempty"`
	}{plain: plain(r)}
	if r.Network.Mode != "" {
		out.Network = &r.Network
	}
	return json.Marshal(out)
}

// EntryError is an entry of managed rules that cannot be compiled: which
// list, which entry, and why. The caller names the file and line.
type EntryError struct {
	// List is the entry's list: "paths.deny", "paths.ceiling.read",
	// "paths.ceiling.write", "shell_commands.deny" or "network".
	List  string
	Index int
	Value string
	Err   error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("%s[%d] %q: %v", e.List, e.Index, e.Value, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Managed is the compiled managed layer: immutable, shared by every scope
// combined with it.
type Managed struct {
	rules    ManagedRules
	deny     []glob
	denyCmds []entry
	// ceiling says whether paths.ceiling is set; ceilRead and ceilWrite
	// are its lists, readRoots and writeRoots their roots ("/" for a
	// pattern that matches anywhere).
	ceiling               bool
	ceilRead, ceilWrite   []glob
	readRoots, writeRoots []string
	// net is the network ceiling, nil when there is none.
	net *Network
}

// CompileManaged validates and compiles managed rules: globs as in
// scope.yml (~ is env.Home), shell entries split into words, the network
// in scope.yml's syntax. The first entry that does not compile is an
// *EntryError.
func CompileManaged(r ManagedRules, env Env) (*Managed, error) {
	m := &Managed{rules: r}
	var err error
	if m.deny, err = compileManagedGlobs("paths.deny", r.Paths.Deny, true, env); err != nil {
		return nil, err
	}
	if c := r.Paths.Ceiling; c != nil {
		m.ceiling = true
		if m.ceilRead, err = compileManagedGlobs("paths.ceiling.read", c.Read, false, env); err != nil {
			return nil, err
		}
		if m.ceilWrite, err = compileManagedGlobs("paths.ceiling.write", c.Write, false, env); err != nil {
			return nil, err
		}
		for _, g := range m.ceilWrite {
			m.writeRoots = appendRoot(m.writeRoots, cmpRoot(g.root))
		}
		m.readRoots = slices.Clone(m.writeRoots)
		for _, g := range m.ceilRead {
			m.readRoots = appendRoot(m.readRoots, cmpRoot(g.root))
		}
	}
	table := programTable()
	for i, e := range r.Shell.Deny {
		es, err := compileEntries(managedPrefix+"shell_commands.deny", []string{e}, table, env.fs())
		if err != nil {
			return nil, &EntryError{List: "shell_commands.deny", Index: i, Value: e, Err: errors.New("not a command and its words")}
		}
		es[0].rule = fmt.Sprintf("%sshell_commands.deny[%d] %s", managedPrefix, i, e)
		es[0].managed = true
		m.denyCmds = append(m.denyCmds, es[0])
	}
	if r.Network.Mode != "" {
		for i, h := range r.Network.Hosts {
			if err := validateNetworkEntry(h); err != nil {
				return nil, &EntryError{List: "network", Index: i, Value: h, Err: err}
			}
		}
		n, err := compileNetwork(r.Network)
		if err != nil {
			return nil, &EntryError{List: "network", Value: r.Network.Mode.String(), Err: err}
		}
		m.net = &n
	}
	return m, nil
}

// cmpRoot is a ceiling glob's root: its literal prefix, or / for a pattern
// that matches anywhere.
func cmpRoot(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// validateNetworkEntry checks one entry of a network list as
// compileNetwork does.
func validateNetworkEntry(h string) error {
	switch {
	case h == anyEntry:
		return nil
	case h == string(NetworkNone):
		return errors.New("none is not an entry: a list without hosts reaches none (leave it out)")
	case strings.HasPrefix(h, socketPrefix):
		_, err := parseSocketEntry(h)
		return err
	}
	_, err := parseHostEntry(h)
	return err
}

// compileManagedGlobs compiles one managed list of path patterns, each
// rule "managed.LIST[i] PATTERN"; a pattern that does not compile is an
// *EntryError.
func compileManagedGlobs(list string, pats []string, foldCase bool, env Env) ([]glob, error) {
	out := make([]glob, 0, len(pats))
	for i, p := range pats {
		p = CleanPattern(p)
		if err := validatePattern(p); err != nil {
			return nil, &EntryError{List: list, Index: i, Value: p, Err: err}
		}
		gs, err := compileGlobs(managedPrefix+list, []string{p}, foldCase, env)
		if err != nil {
			return nil, &EntryError{List: list, Index: i, Value: p, Err: errors.Unwrap(err)}
		}
		gs[0].rule = fmt.Sprintf("%s%s[%d] %s", managedPrefix, list, i, p)
		gs[0].managed = true
		out = append(out, gs[0])
	}
	return out, nil
}

// CeilingRoots returns the directories below which the path ceiling lets
// scopes read and write; ok is false when there is no ceiling.
func (m *Managed) CeilingRoots() (read, write []string, ok bool) {
	if m == nil || !m.ceiling {
		return nil, nil, false
	}
	return slices.Clone(m.readRoots), slices.Clone(m.writeRoots), true
}

// Rules returns the rules the layer was compiled from.
func (m *Managed) Rules() ManagedRules { return m.rules }

// Within returns s within the managed layer m: the scope a decision is
// made with. Its deny lists begin with m's, its read and write roots are
// bounded by the ceiling's, its paths by the ceiling, its network by m's.
// Document is still s's own. A nil m is s itself.
func (s *Scope) Within(m *Managed) *Scope {
	if m == nil {
		return s
	}
	if s.managed != nil {
		s = s.own
	}
	w := &Scope{doc: s.doc, read: s.read, write: s.write, allow: s.allow, roam: s.roam, programs: s.programs,
		readRoots: s.readRoots, writeRoots: s.writeRoots, net: s.net, managed: m, own: s}
	w.deny = append(slices.Clip(m.deny), s.deny...)
	w.denyCmds = append(slices.Clip(m.denyCmds), s.denyCmds...)
	if m.ceiling {
		w.readRoots = boundRoots(s.readRoots, m.readRoots)
		w.writeRoots = boundRoots(s.writeRoots, m.writeRoots)
	}
	if m.net != nil {
		w.net = s.net.within(m.net)
	}
	return w
}

// Managed returns the managed layer s was combined with, nil for none.
func (s *Scope) Managed() *Managed { return s.managed }

// boundRoots is the part of roots below the ceiling's roots: a root below
// a ceiling root stays, a ceiling root below a root replaces it.
func boundRoots(roots, ceiling []string) []string {
	var out []string
	for _, r := range roots {
		for _, c := range ceiling {
			switch {
			case within(r, c):
				out = appendRoot(out, r)
			case within(c, r):
				out = appendRoot(out, c)
			}
		}
	}
	return out
}

// ceilingViolation is the denial of an access beyond the path ceiling, nil
// when both the spelling and the resolution of the path are within it.
func (m *Managed) ceilingViolation(abs, resolved string, access Access, src pathSource) []Violation {
	if m == nil || !m.ceiling {
		return nil
	}
	if access == AccessWrite {
		if inAny(m.ceilWrite, abs) && inAny(m.ceilWrite, resolved) {
			return nil
		}
		return []Violation{{Reason: ReasonManaged, Resource: abs, Rule: RuleManagedCeilingWrite,
			Message: fmt.Sprintf("%swriting %s is beyond %s of the machine's managed policy; no scope change can allow it", describe(src), shown(abs, resolved), RuleManagedCeilingWrite)}}
	}
	in := func(p string) bool { return inAny(m.ceilRead, p) || inAny(m.ceilWrite, p) }
	if in(abs) && in(resolved) {
		return nil
	}
	return []Violation{{Reason: ReasonManaged, Resource: abs, Rule: RuleManagedCeilingRead,
		Message: fmt.Sprintf("%sreading %s is beyond %s of the machine's managed policy; no scope change can allow it", describe(src), shown(abs, resolved), RuleManagedCeilingRead)}}
}

// allowsWrite reports whether the path ceiling lets abs (both its
// spellings) be written.
func (m *Managed) allowsWrite(abs, resolved string) bool {
	return m == nil || !m.ceiling || inAny(m.ceilWrite, abs) && inAny(m.ceilWrite, resolved)
}

// owner names whose list a rule belongs to, for messages.
func owner(rule string) string {
	if IsManagedRule(rule) {
		return "the machine's managed policy"
	}
	return "this session's scope"
}

// denyReason is the reason of a denial by a deny entry with rule.
func denyReason(rule string, scopeReason Reason) Reason {
	if IsManagedRule(rule) {
		return ReasonManaged
	}
	return scopeReason
}

// managedFirst moves the violations of the managed layer before the
// others (keeping their order): a decision the layer refuses reports it.
func managedFirst(vs []Violation) []Violation {
	i := slices.IndexFunc(vs, func(v Violation) bool { return v.Reason == ReasonManaged })
	if i <= 0 {
		return vs
	}
	out := make([]Violation, 0, len(vs))
	for _, v := range vs {
		if v.Reason == ReasonManaged {
			out = append(out, v)
		}
	}
	for _, v := range vs {
		if v.Reason != ReasonManaged {
			out = append(out, v)
		}
	}
	return out
}

// DenyManaged is the decision for every call while the managed policy
// cannot be used.
func DenyManaged(tool string, err error) Decision {
	return Deny(tool, Violation{Reason: ReasonManaged, Rule: RuleManagedFile,
		Message: "the machine's managed policy cannot be used, so every call is denied until its administrator fixes it: " + err.Error()})
}

// Excess is an entry of a scope that reaches beyond the managed layer:
// what lies beyond has no effect.
type Excess struct {
	// Entry is the scope's entry ("paths.read[0] /**", "network any").
	Entry string `json:"entry"`
	// Rule is the managed rule it reaches beyond.
	Rule string `json:"rule"`
}

// Beyond lists the entries of doc that reach, wholly or in part, beyond
// m: read and write patterns not within the ceiling, allow entries a
// managed deny entry covers, network entries beyond the managed network.
func (m *Managed) Beyond(doc Document, env Env) []Excess {
	var out []Excess
	check := func(entry string, w Widening) {
		if rule := m.Refuses(w, env); rule != "" {
			out = append(out, Excess{Entry: entry, Rule: rule})
		}
	}
	for i, p := range doc.Paths.Read {
		check(fmt.Sprintf("paths.read[%d] %s", i, p), Widening{Flag: WidenRead, Value: p})
	}
	for i, p := range doc.Paths.Write {
		check(fmt.Sprintf("paths.write[%d] %s", i, p), Widening{Flag: WidenWrite, Value: p})
	}
	for i, e := range doc.Shell.Allow {
		check(fmt.Sprintf("shell_commands.allow[%d] %s", i, e), Widening{Flag: WidenCommand, Value: e})
	}
	switch doc.Network.Mode {
	case NetworkAny:
		check("network any", Widening{Flag: WidenNetwork, Value: anyEntry})
	case NetworkList:
		for i, h := range doc.Network.Hosts {
			entry := fmt.Sprintf("network[%d] %s", i, h)
			switch {
			case h == anyEntry:
				check(entry, Widening{Flag: WidenNetwork, Value: anyEntry})
			case strings.HasPrefix(h, socketPrefix):
				check(entry, Widening{Flag: WidenSocket, Value: strings.TrimPrefix(h, socketPrefix)})
			default:
				check(entry, Widening{Flag: WidenHost, Value: h})
			}
		}
	}
	return out
}

// Refuses returns the managed rule a widening would reach beyond, "" when
// it stays within m: a path pattern not provably within the ceiling, an
// allow entry a managed deny entry covers, a host or socket the managed
// network does not reach, the whole network under a network ceiling.
// Deny entries and org-roam entries never reach beyond.
func (m *Managed) Refuses(w Widening, env Env) string {
	if m == nil {
		return ""
	}
	switch w.Flag {
	case WidenRead:
		if m.ceiling && !patternWithin(w.Value, append(slices.Clip(m.ceilRead), m.ceilWrite...), env) {
			return RuleManagedCeilingRead
		}
	case WidenWrite:
		if m.ceiling && !patternWithin(w.Value, m.ceilWrite, env) {
			return RuleManagedCeilingWrite
		}
	case WidenCommand:
		return m.deniedCommand(w.Value)
	case WidenHost:
		if m.net != nil && !m.net.coversEntry(w.Value) {
			return RuleManagedNetwork
		}
	case WidenSocket:
		if m.net != nil {
			if ok, _ := m.net.ownAllowSocket(filepath.Clean(w.Value)); !ok {
				return RuleManagedNetwork
			}
		}
	case WidenNetwork:
		if m.net != nil && m.net.ownMode() != NetworkAny {
			return RuleManagedNetwork
		}
	}
	return ""
}

// deniedCommand is the rule of the managed deny entry that covers the
// allow entry text (the deny entry's words begin it), "" for none.
func (m *Managed) deniedCommand(text string) string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return ""
	}
	for _, e := range m.denyCmds {
		dw := strings.Fields(e.text)
		if len(dw) == 0 || len(dw) > len(words) || path.Base(dw[0]) != path.Base(words[0]) {
			continue
		}
		if slices.Equal(dw[1:], words[1:len(dw)]) {
			return e.rule
		}
	}
	return ""
}

// patternWithin reports whether every path the pattern p (as scope.yml
// writes it) matches is matched by one of gs: p is one of their patterns,
// p is a literal path one matches, or p's literal prefix lies below the
// directory of a DIR/** among them. Anything else may reach beyond.
func patternWithin(p string, gs []glob, env Env) bool {
	p = CleanPattern(p)
	if (p == "~" || strings.HasPrefix(p, "~/")) && env.Home != "" {
		p = EscapeGlob(env.Home) + p[1:]
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "**") {
		p = "**/" + p
	}
	var lit string
	if strings.HasPrefix(p, "/") {
		prefix, rest := splitLiteral(p)
		lit = filepath.Clean("/" + unescapeGlob(prefix))
		if rest == "" {
			for i := range gs {
				if gs[i].match(lit, lit) {
					return true
				}
			}
		}
	}
	for _, g := range gs {
		for _, pat := range g.patterns {
			if pat == p {
				return true
			}
			if sh := shapeOf(pat); sh.kind == shapeUnder && (sh.lit == "" || lit != "" && within(lit, sh.lit)) {
				return true
			}
		}
	}
	return false
}
