package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/policy"
)

// agentRules are an agent's own permission rules as a hook reads them.
type agentRules struct {
	agents.Rules
	// postToolUse: Claude Code's settings install scopegate's PostToolUse
	// hook, which reports that a call its user was asked about ran.
	postToolUse bool
}

// readAgentRules reads the rules an agent applies to its shell commands,
// which it would match against scopegate's rewritten command instead of
// the user's: Claude Code's settings files (managed, user, project, local)
// and what its command line adds (--settings, --disallowedTools); Codex's
// rules files of every configuration layer. A source that does not exist
// holds no rule; one that cannot be read or parsed is an error, and the
// caller denies.
func readAgentRules(agent string, e agents.Env) (agentRules, error) {
	var r agentRules
	switch agent {
	case agents.ClaudeCode:
		files := e.ClaudeSettingsFiles()
		dropIns, _ := filepath.Glob(filepath.Join(agents.ClaudeCodeManagedDir, "managed-settings.d", "*.json"))
		sort.Strings(dropIns)
		files = append(files[:1], append(dropIns, files[1:]...)...)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return agentRules{}, fmt.Errorf("read Claude Code's settings: %w", err)
			}
			if err := r.addClaudeSettings(data, f, e); err != nil {
				return agentRules{}, err
			}
		}
		if e.PID > 0 {
			if err := r.addClaudeCommandLine(e); err != nil {
				return agentRules{}, err
			}
		}
	case agents.Codex:
		for _, dir := range e.CodexRulesDirs() {
			files, err := filepath.Glob(filepath.Join(dir, "*.rules"))
			if err != nil {
				return agentRules{}, fmt.Errorf("list Codex's rules in %s: %w", dir, err)
			}
			sort.Strings(files)
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return agentRules{}, fmt.Errorf("read Codex's rules: %w", err)
				}
				rules, err := agents.ParseCodexRules(data, f)
				if err != nil {
					return agentRules{}, err
				}
				r.Add(rules)
			}
		}
	}
	return r, nil
}

func (r *agentRules) addClaudeSettings(data []byte, source string, e agents.Env) error {
	s, err := agents.ParseClaudeSettings(data, source, e)
	if err != nil {
		return err
	}
	r.Add(s.Rules)
	r.postToolUse = r.postToolUse || s.PostToolUse
	return nil
}

// addClaudeCommandLine adds what the command line of the Claude Code
// process e.PID adds to its settings files: each --settings (a file,
// relative to that process's working directory, or a JSON object) and
// --disallowedTools.
func (r *agentRules) addClaudeCommandLine(e agents.Env) error {
	proc := filepath.Join("/proc", strconv.Itoa(e.PID))
	raw, err := os.ReadFile(filepath.Join(proc, "cmdline"))
	if err != nil {
		return fmt.Errorf("read the command line of Claude Code (CLAUDE_PID %d), which may add settings: %w", e.PID, err)
	}
	argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	cl := agents.ParseClaudeCommandLine(argv)
	for _, s := range cl.Settings {
		if strings.HasPrefix(strings.TrimSpace(s), "{") {
			if err := r.addClaudeSettings([]byte(s), "--settings of Claude Code's command line", e); err != nil {
				return err
			}
			continue
		}
		f := s
		if !filepath.IsAbs(f) {
			cwd, err := os.Readlink(filepath.Join(proc, "cwd"))
			if err != nil {
				return fmt.Errorf("find Claude Code's --settings file %s: %w", s, err)
			}
			f = filepath.Join(cwd, f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read Claude Code's --settings: %w", err)
		}
		if err := r.addClaudeSettings(bytes.TrimSpace(data), f, e); err != nil {
			return err
		}
	}
	for _, list := range cl.Disallowed {
		rules, err := agents.ParseClaudeRuleList(list, agents.RuleDeny, "--disallowedTools of Claude Code's command line", e)
		if err != nil {
			return err
		}
		r.Add(rules)
	}
	return nil
}

// agentHit is one of the agent's own rules a call meets.
type agentHit struct {
	decision agents.RuleDecision
	// rule describes the rule and its source; text is its text;
	// justification its own rationale, if any.
	rule, text, justification string
	// path is the file a path rule matched ("" for a command rule).
	path string
}

// violation is the denial of a call by the hit: the agent's own rule
// refuses it, or asks its user where nobody can be asked.
func (h agentHit) violation(agent string) policy.Violation {
	v := policy.Violation{Reason: policy.ReasonCommandDenied, Resource: h.text, Rule: agent + " " + h.text}
	what := "this command"
	if h.path != "" {
		v.Reason, v.Resource = policy.ReasonPathDenied, h.path
		what = "this command, which reads or writes " + h.path
	}
	switch {
	case h.decision == agents.RuleAsk && agent == agents.Codex:
		v.Message = h.rule + " asks its user before " + what + " runs, and Codex's hook cannot ask, so it is refused"
	case h.decision == agents.RuleAsk:
		v.Message = h.rule + " asks its user before " + what + " runs, and nobody can be asked here, so it is refused"
	default:
		v.Message = h.rule + " refuses " + what
	}
	if h.justification != "" {
		v.Message += ": " + h.justification
	}
	return v
}

// decider is the decision of a shell call with the agent's own rules kept:
// the scope's decision, and a denial besides by every rule of the agent's
// that refuses the call, or asks about it where nobody can be asked
// (canAsk false). Where the user can be asked, *ask is the first rule that
// asks, and the scope's decision is left as it is.
func (r agentRules) decider(agent string, call policy.Call, canAsk bool, ask **agentHit) func(*policy.Scope, policy.Env) policy.Decision {
	return func(sc *policy.Scope, env policy.Env) policy.Decision {
		d := sc.Decide(call, env)
		*ask = nil
		var vs []policy.Violation
		for _, h := range r.check(agent, call, env) {
			if h.decision == agents.RuleAsk && canAsk {
				if *ask == nil {
					hit := h
					*ask = &hit
				}
				continue
			}
			vs = append(vs, h.violation(agent))
		}
		if len(vs) == 0 {
			return d
		}
		if !d.Allowed {
			vs = append(vs, d.Violations...)
		}
		out := policy.Deny(call.Tool, vs...)
		out.Execution = d.Execution
		return out
	}
}

// check finds the agent's own rules a shell call meets: its command rules
// on every simple command, Claude Code's Read and Edit rules on the files
// the command reads and writes (as scopegate's own decision finds them,
// with the same environment env). A command that does not parse is not
// checked here: the scope's decision denies it.
func (r agentRules) check(agent string, call policy.Call, env policy.Env) []agentHit {
	var a policy.ShellArgs
	if call.Tool != policy.ToolShell || policy.DecodeArgs(call.Args, &a) != nil {
		return nil
	}
	var hits []agentHit
	if cr, ok, err := r.MatchCommand(a.Command); err == nil && ok {
		hits = append(hits, agentHit{decision: cr.Decision, rule: cr.Describe(agent), text: cr.Text, justification: cr.Justification})
	}
	return append(hits, r.checkPaths(agent, call, env)...)
}

// checkPaths decides call against a scope that reads everything, writes
// nothing and denies what the Read rules name: a path it denies met a Read
// rule; a path it does not let the call write is matched against the Edit
// rules.
func (r agentRules) checkPaths(agent string, call policy.Call, env policy.Env) []agentHit {
	if len(r.Paths) == 0 {
		return nil
	}
	var doc policy.Document
	doc.Paths.Read = []string{"/**"}
	var byIndex []agents.PathRule
	for _, p := range r.Paths {
		if p.Write {
			continue
		}
		for _, g := range p.Globs {
			doc.Paths.Deny = append(doc.Paths.Deny, g)
			byIndex = append(byIndex, p)
		}
	}
	sc, err := policy.Compile(doc, policy.Env{Home: env.Home, Cwd: env.Cwd, FS: env.FS, Execution: env.Execution})
	if err != nil {
		// A glob the rules make that a scope cannot hold: every path is
		// taken to meet the rule (fail closed).
		return []agentHit{{decision: agents.RuleDeny, rule: "the agent's Read and Edit rules (" + err.Error() + ")"}}
	}
	var hits []agentHit
	for _, v := range sc.Decide(call, env).Violations {
		switch v.Reason {
		case policy.ReasonPathDenied:
			var i int
			if _, err := fmt.Sscanf(v.Rule, "paths.deny[%d]", &i); err == nil && i >= 0 && i < len(byIndex) {
				p := byIndex[i]
				hits = append(hits, agentHit{decision: p.Decision, rule: p.Describe(agent), text: p.Text, path: v.Resource})
			}
		case policy.ReasonPathNotInScope, policy.ReasonRedirectNotInScope:
			for _, w := range v.Widen {
				if w.Flag != policy.WidenWrite {
					continue
				}
				for _, p := range r.Paths {
					if p.Write && matchesAny(p.Globs, w.Value) {
						hits = append(hits, agentHit{decision: p.Decision, rule: p.Describe(agent), text: p.Text, path: w.Value})
					}
				}
			}
		}
	}
	return hits
}

// matchesAny reports whether path matches one of globs.
func matchesAny(globs []string, path string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, path); ok {
			return true
		}
	}
	return false
}
