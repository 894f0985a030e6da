package learn

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
)

// DefaultMinFiles is how many distinct files below a directory calls must
// name before a suggestion widens to the directory (DIR/**) rather than
// the files themselves.
const DefaultMinFiles = 3

// Call is one recorded call that a wider scope would allow: its call id
// and the widenings that lift its denial.
type Call struct {
	ID    string
	Widen []policy.Widening
}

// Calls picks out of audit entries the calls suggest learns from: the
// observed and denied ones that carry widenings (:WIDEN:), each call id
// once (a hook's decision and exec's run of it share one), in the order
// first seen. Hard denials carry no widening and are left out.
func Calls(entries []audit.Entry) []Call {
	var out []Call
	index := map[string]int{}
	for _, e := range entries {
		if e.Decision != audit.DecisionObserved && e.Decision != audit.DecisionDenied || len(e.Widen) == 0 {
			continue
		}
		i, ok := index[e.CallID]
		if !ok {
			i = len(out)
			index[e.CallID] = i
			out = append(out, Call{ID: e.CallID})
		}
		for _, w := range e.Widen {
			if !slices.Contains(out[i].Widen, w) {
				out[i].Widen = append(out[i].Widen, w)
			}
		}
	}
	return out
}

// Options say what a suggestion may never cover. The zero value knows of
// no hard denial: callers pass the branch's.
type Options struct {
	// Deny are the hard-denied path globs: the scope's paths.deny and the
	// credential list. A pattern without a leading / or ** matches
	// anywhere, as in scope.yml; matching ignores case.
	Deny []string
	// Protected are the roots no tool call may write and no suggestion
	// may name: the sessions root, the config dir.
	Protected []string
	// Secrets are host files masked in every view (/etc/shadow…): never
	// proposed, nor any directory holding one.
	Secrets []string
	// DenyCommands are shell_commands.deny entries.
	DenyCommands []string
	// Home is the home directory, never proposed whole.
	Home string
	// ProjectRoots are the session's project root and worktrees: a
	// directory glob for files inside one never reaches above it.
	ProjectRoots []string
	// MinFiles is how many distinct files below a directory calls must
	// name for a directory glob (default DefaultMinFiles).
	MinFiles int
	// Covered reports a widening the scope already grants; nil: none.
	Covered func(policy.Widening) bool
	// Refused names the rule of the machine's managed policy a widening
	// would reach beyond ("" within it); such a widening is never
	// proposed. Nil: none.
	Refused func(policy.Widening) string
}

// Suggestion is one `scope expand` flag and the calls it allows.
type Suggestion struct {
	Flag  policy.WidenFlag `json:"flag"`
	Value string           `json:"value"`
	Calls []string         `json:"calls"`
}

// Skipped is a widening a call would need that suggest never proposes,
// and why.
type Skipped struct {
	Flag  policy.WidenFlag `json:"flag"`
	Value string           `json:"value"`
	Why   string           `json:"why"`
	Calls []string         `json:"calls"`
}

// Suggest returns the narrowest widening that allows calls, without
// anything a hard denial covers, and what it left out:
//   - paths as named, a directory glob (DIR/**) only where calls name
//     MinFiles distinct files or more below DIR, never / or a directory directly below
//     it, never the home directory or above, never above a project root
//     for files inside it; a read that a proposed write covers is dropped;
//   - commands by program name, or by program and subcommand when a
//     shell_commands.deny entry names the program;
//   - hosts, sockets and org-roam entries as used; never
//     `--network any`.
func Suggest(calls []Call, o Options) ([]Suggestion, []Skipped) {
	if o.MinFiles <= 0 {
		o.MinFiles = DefaultMinFiles
	}
	s := &suggester{o: o, byFlag: map[policy.WidenFlag]map[string][]string{}}
	for _, c := range calls {
		for _, w := range c.Widen {
			s.add(w, c.ID)
		}
	}
	var out []Suggestion
	for _, flag := range []policy.WidenFlag{policy.WidenWrite, policy.WidenRead} {
		out = append(out, s.paths(flag, out)...)
	}
	out = append(out, s.commands()...)
	out = append(out, s.others()...)
	for i := range out {
		out[i].Calls = uniq(out[i].Calls)
	}
	for i := range s.skipped {
		s.skipped[i].Calls = uniq(s.skipped[i].Calls)
	}
	slices.SortFunc(s.skipped, func(a, b Skipped) int { return cmp.Or(cmp.Compare(a.Flag, b.Flag), cmp.Compare(a.Value, b.Value)) })
	return out, s.skipped
}

// suggester is the state of one Suggest.
type suggester struct {
	o Options
	// byFlag maps a flag to its values and the calls that need each.
	byFlag  map[policy.WidenFlag]map[string][]string
	skipped []Skipped
}

func (s *suggester) add(w policy.Widening, id string) {
	if s.o.Covered != nil && s.o.Covered(w) {
		return
	}
	if s.o.Refused != nil {
		if rule := s.o.Refused(w); rule != "" {
			s.skip(w.Flag, w.Value, "beyond "+rule+" of the managed policy", []string{id})
			return
		}
	}
	m := s.byFlag[w.Flag]
	if m == nil {
		m = map[string][]string{}
		s.byFlag[w.Flag] = m
	}
	m[w.Value] = append(m[w.Value], id)
}

func (s *suggester) skip(flag policy.WidenFlag, value, why string, calls []string) {
	for i := range s.skipped {
		if s.skipped[i].Flag == flag && s.skipped[i].Value == value {
			s.skipped[i].Calls = append(s.skipped[i].Calls, calls...)
			return
		}
	}
	s.skipped = append(s.skipped, Skipped{Flag: flag, Value: value, Why: why, Calls: slices.Clone(calls)})
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func uniq(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// others are the flags taken as used, after the paths and the commands:
// org-roam entries, hosts and sockets, in the order of their spelling;
// never `--network any` nor what widens the whole network.
func (s *suggester) others() []Suggestion {
	var flags []policy.WidenFlag
	for f := range s.byFlag {
		if !f.IsPath() && f != policy.WidenCommand {
			flags = append(flags, f)
		}
	}
	slices.Sort(flags)
	var out []Suggestion
	for _, f := range flags {
		for _, v := range sortedKeys(s.byFlag[f]) {
			calls := s.byFlag[f][v]
			switch {
			case f == policy.WidenNetwork || v == "any" || v == "*" || v == "**":
				s.skip(f, v, "the whole network is never proposed", calls)
			case strings.TrimSpace(v) == "":
				s.skip(f, v, "empty value", calls)
			default:
				out = append(out, Suggestion{Flag: f, Value: v, Calls: slices.Clone(calls)})
			}
		}
	}
	return out
}

// commands proposes --allow-command entries by program name, or by
// program and subcommand where a deny entry names the program.
func (s *suggester) commands() []Suggestion {
	m := s.byFlag[policy.WidenCommand]
	merged := map[string][]string{}
	for _, v := range sortedKeys(m) {
		calls := m[v]
		words := strings.Fields(v)
		if len(words) == 0 {
			s.skip(policy.WidenCommand, v, "empty command", calls)
			continue
		}
		prog := words[0]
		if why := s.deniedCommand(words); why != "" {
			s.skip(policy.WidenCommand, v, why, calls)
			continue
		}
		entry := prog
		if len(words) > 1 && s.denyNames(prog) {
			entry = words[0] + " " + words[1]
		}
		merged[entry] = append(merged[entry], calls...)
	}
	var out []Suggestion
	for _, v := range sortedKeys(merged) {
		out = append(out, Suggestion{Flag: policy.WidenCommand, Value: v, Calls: merged[v]})
	}
	return out
}

// denyNames reports whether a shell_commands.deny entry names prog.
func (s *suggester) denyNames(prog string) bool {
	base := path.Base(prog)
	for _, d := range s.o.DenyCommands {
		if w := strings.Fields(d); len(w) > 0 && (w[0] == prog || path.Base(w[0]) == base) {
			return true
		}
	}
	return false
}

// deniedCommand says why an allow entry of words would be one a deny
// entry covers: the deny entry is the program alone, or a prefix of it.
func (s *suggester) deniedCommand(words []string) string {
	for _, d := range s.o.DenyCommands {
		dw := strings.Fields(d)
		if len(dw) == 0 || len(dw) > len(words) {
			continue
		}
		if path.Base(dw[0]) != path.Base(words[0]) {
			continue
		}
		if slices.Equal(dw[1:], words[1:len(dw)]) {
			return "shell_commands.deny has " + d
		}
	}
	return ""
}
