package agents

import (
	"fmt"
	"strings"
)

// Env is what locates an agent's own rules: the agent's environment as its
// hook process inherits it, which the model cannot steer.
type Env struct {
	// ProjectDir is where the agent was started: CLAUDE_PROJECT_DIR (whose
	// .claude/settings.json and settings.local.json Claude Code reads), the
	// hook's working directory for Codex (whose .codex/rules it reads).
	ProjectDir string `json:"project_dir,omitempty"`
	// ConfigDir is the agent's own directory when the environment names
	// one: CLAUDE_CONFIG_DIR (else ~/.claude), CODEX_HOME (else ~/.codex).
	ConfigDir string `json:"config_dir,omitempty"`
	// Home is the home directory.
	Home string `json:"home,omitempty"`
	// PID is the agent's process (CLAUDE_PID), whose command line may add
	// settings; 0 when not known.
	PID int `json:"pid,omitempty"`
}

// RuleDecision is what one of an agent's own permission rules asks for a
// call it matches.
type RuleDecision int

// The decisions of an agent's own rules that scopegate keeps. Rules that
// allow are not kept: scopegate's scope decides what is allowed.
const (
	// RuleAsk: the agent asks its user before the call runs (Claude Code's
	// permissions.ask, Codex's decision "prompt").
	RuleAsk RuleDecision = iota + 1
	// RuleDeny: the agent refuses the call (Claude Code's
	// permissions.deny and --disallowedTools, Codex's "forbidden").
	RuleDeny
)

// String is the decision as the agents' documents spell it in scopegate's
// messages.
func (d RuleDecision) String() string {
	switch d {
	case RuleAsk:
		return "ask"
	case RuleDeny:
		return "deny"
	}
	return fmt.Sprintf("RuleDecision(%d)", int(d))
}

// CommandRule is one of an agent's own rules over shell commands: a Claude
// Code permission rule for Bash, or a Codex prefix_rule.
type CommandRule struct {
	Decision RuleDecision
	// Text is the rule as the user wrote it (Bash(echo:*),
	// prefix_rule(pattern=["echo"])).
	Text string
	// Source is where it was read: a file, or the agent's command line.
	Source string
	// Justification is the rule's own rationale, when it gives one (Codex).
	Justification string
	pattern       cmdPattern
}

// cmdPattern matches the words of one form of a simple command (see
// commandForms); a word holding unknownRune is known only at run time.
type cmdPattern interface {
	match(words []string) bool
}

// PathRule is one of Claude Code's rules over files (Read, Edit), which
// Claude Code also applies to the files a Bash command reads or writes.
type PathRule struct {
	Decision RuleDecision
	// Write: an Edit rule (the files a command writes); else a Read rule
	// (the files it reads or writes).
	Write bool
	// Globs are the absolute doublestar patterns the rule stands for.
	Globs  []string
	Text   string
	Source string
}

// Rules are an agent's own permission rules that scopegate applies to a
// shell command before it answers with a rewritten command: the agent
// matches its rules against the command it is given back, so a rewrite
// would otherwise lose them.
type Rules struct {
	Commands []CommandRule
	Paths    []PathRule
}

// Add appends the rules of more.
func (r *Rules) Add(more Rules) {
	r.Commands = append(r.Commands, more.Commands...)
	r.Paths = append(r.Paths, more.Paths...)
}

// Empty reports whether there is no rule.
func (r Rules) Empty() bool { return len(r.Commands) == 0 && len(r.Paths) == 0 }

// MatchCommand returns the command rule a shell command hits: the first
// rule that denies, else the first that asks; ok is false when none does.
// Every simple command anywhere in the command is matched, as the agents
// do, in each of its forms (see commandForms). A command that cannot be
// parsed is an error: the caller denies it.
func (r Rules) MatchCommand(command string) (rule CommandRule, ok bool, err error) {
	if len(r.Commands) == 0 {
		return CommandRule{}, false, nil
	}
	forms, err := commandForms(command)
	if err != nil {
		return CommandRule{}, false, err
	}
	var ask *CommandRule
	for i := range r.Commands {
		cr := &r.Commands[i]
		if ask != nil && cr.Decision != RuleDeny {
			continue
		}
		for _, f := range forms {
			if !cr.pattern.match(f) {
				continue
			}
			if cr.Decision == RuleDeny {
				return *cr, true, nil
			}
			ask = cr
			break
		}
	}
	if ask != nil {
		return *ask, true, nil
	}
	return CommandRule{}, false, nil
}

// Describe is the rule and where it comes from, for a message: "Claude
// Code's permission rule Bash(echo:*) (deny, in /p/.claude/settings.json)".
func (c CommandRule) Describe(agent string) string {
	return describeRule(agent, c.Text, c.Decision, c.Source)
}

// Describe is the rule and where it comes from, for a message.
func (p PathRule) Describe(agent string) string {
	return describeRule(agent, p.Text, p.Decision, p.Source)
}

func describeRule(agent, text string, d RuleDecision, source string) string {
	who := "the agent's"
	switch agent {
	case ClaudeCode:
		who = "Claude Code's permission rule"
	case Codex:
		who = "Codex's rule"
	}
	return fmt.Sprintf("%s %s (%s, in %s)", who, oneLine(text), d, oneLine(source))
}

// oneLine keeps a rule's text on one line in messages.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
