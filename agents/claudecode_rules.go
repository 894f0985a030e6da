package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ClaudeCodeManagedDir is where Claude Code reads its managed settings on
// Linux (managed-settings.json and managed-settings.d/*.json).
const ClaudeCodeManagedDir = "/etc/claude-code"

// ClaudeSettingsFiles are the settings files Claude Code reads, in its
// order (managed, user, project, local), whether or not they exist. The
// drop-ins of managed-settings.d are the caller's to list.
func (e Env) ClaudeSettingsFiles() []string {
	files := []string{filepath.Join(ClaudeCodeManagedDir, "managed-settings.json")}
	switch {
	case e.ConfigDir != "":
		files = append(files, filepath.Join(e.ConfigDir, "settings.json"))
	case e.Home != "":
		files = append(files, filepath.Join(e.Home, ".claude", "settings.json"))
	}
	if e.ProjectDir != "" {
		files = append(files, filepath.Join(e.ProjectDir, ".claude", "settings.json"),
			filepath.Join(e.ProjectDir, ".claude", "settings.local.json"))
	}
	return files
}

// ErrInvalidRules marks an agent's rule source scopegate cannot read. The
// rules it holds cannot be kept, so the caller denies.
var ErrInvalidRules = errors.New("invalid agent rules")

// ClaudeSettings is what scopegate reads of a Claude Code settings
// document.
type ClaudeSettings struct {
	Rules Rules
	// PostToolUse says that the document installs scopegate's hook for
	// PostToolUse, which records what became of a call Claude Code asked
	// its user about.
	PostToolUse bool
}

// ParseClaudeSettings reads one Claude Code settings document (source
// names it in messages): its permissions.deny and permissions.ask entries
// for Bash, Read and Edit (and Write, MultiEdit, NotebookEdit, which Edit
// rules also cover), and whether it installs scopegate's PostToolUse hook.
// Rules for other tools are Claude Code's own to apply: scopegate never
// rewrites those calls. A document that is not a JSON object, or whose
// permission lists are not lists of strings, is an error.
func ParseClaudeSettings(data []byte, source string, e Env) (ClaudeSettings, error) {
	var doc struct {
		Permissions *struct {
			Deny []string `json:"deny"`
			Ask  []string `json:"ask"`
		} `json:"permissions"`
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return ClaudeSettings{}, fmt.Errorf("%w: %s: %v", ErrInvalidRules, source, err)
	}
	if dec.More() {
		return ClaudeSettings{}, fmt.Errorf("%w: %s: trailing data after the settings object", ErrInvalidRules, source)
	}
	var s ClaudeSettings
	s.PostToolUse = installsScopegate(doc.Hooks[string(EventPostToolUse)])
	if doc.Permissions == nil {
		return s, nil
	}
	for _, l := range []struct {
		list []string
		d    RuleDecision
	}{{doc.Permissions.Deny, RuleDeny}, {doc.Permissions.Ask, RuleAsk}} {
		for _, text := range l.list {
			if err := s.Rules.addClaudeRule(text, l.d, source, e); err != nil {
				return ClaudeSettings{}, err
			}
		}
	}
	return s, nil
}

// installsScopegate reports whether the matchers of one hook event run
// scopegate's Claude Code hook: a command hook running "hook claude-code",
// or an HTTP hook posting to its route. What is not such a list is not.
func installsScopegate(raw json.RawMessage) bool {
	var matchers []struct {
		Hooks []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			URL     string `json:"url"`
		} `json:"hooks"`
	}
	if json.Unmarshal(raw, &matchers) != nil {
		return false
	}
	for _, m := range matchers {
		for _, h := range m.Hooks {
			if h.Type == "command" && strings.Contains(h.Command, " hook "+ClaudeCode) ||
				h.Type == "http" && strings.HasSuffix(strings.TrimRight(h.URL, "/"), "/v1/hooks/"+ClaudeCode) {
				return true
			}
		}
	}
	return false
}

// ParseClaudeRuleList reads rules given as one list (--disallowedTools):
// rules separated by commas or spaces outside their parentheses.
func ParseClaudeRuleList(list string, d RuleDecision, source string, e Env) (Rules, error) {
	var r Rules
	for _, text := range splitRuleList(list) {
		if err := r.addClaudeRule(text, d, source, e); err != nil {
			return Rules{}, err
		}
	}
	return r, nil
}

// splitRuleList splits a rule list at commas and spaces outside
// parentheses.
func splitRuleList(list string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '(':
				depth++
				continue
			case ')':
				if depth > 0 {
					depth--
				}
				continue
			case ',', ' ', '\t', '\n':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if s := strings.TrimSpace(list[start:i]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	return out
}

// addClaudeRule adds one rule: Tool or Tool(content).
func (r *Rules) addClaudeRule(text string, d RuleDecision, source string, e Env) error {
	tool, content, hasContent, err := splitClaudeRule(text)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidRules, source, err)
	}
	switch tool {
	case "Bash":
		p, err := parseClaudeBash(content, hasContent)
		if err != nil {
			return fmt.Errorf("%w: %s: rule %s: %v", ErrInvalidRules, source, text, err)
		}
		r.Commands = append(r.Commands, CommandRule{Decision: d, Text: text, Source: source, pattern: p})
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit":
		globs := []string{"/**"}
		if hasContent && content != "" && content != "*" && content != "**" {
			globs, err = claudePathGlobs(content, e)
			if err != nil {
				return fmt.Errorf("%w: %s: rule %s: %v", ErrInvalidRules, source, text, err)
			}
		}
		r.Paths = append(r.Paths, PathRule{Decision: d, Write: tool != "Read", Globs: globs, Text: text, Source: source})
	}
	return nil
}

// splitClaudeRule splits Tool(content) into its tool and content.
func splitClaudeRule(text string) (tool, content string, hasContent bool, err error) {
	text = strings.TrimSpace(text)
	open := strings.IndexByte(text, '(')
	if open < 0 {
		if text == "" || strings.ContainsAny(text, ") \t") {
			return "", "", false, fmt.Errorf("rule %q is not Tool or Tool(content)", text)
		}
		return text, "", false, nil
	}
	if !strings.HasSuffix(text, ")") || open == 0 {
		return "", "", false, fmt.Errorf("rule %q is not Tool or Tool(content)", text)
	}
	return text[:open], text[open+1 : len(text)-1], true, nil
}

// claudeBash is a Claude Code Bash rule's pattern: a glob over a simple
// command's words joined by single spaces, where * matches any text
// (spaces included). Measured on Claude Code 2.1.331:
//
//	Bash, Bash(), Bash(*)  every command
//	Bash(git commit:*)     git commit, and git commit followed by a space and anything
//	Bash(npm run test *)   the same: a trailing " *" may match nothing
//	Bash(ls -la)           exactly ls -la (ls -la . and ls -al do not match)
//	Bash(* --force)        any command ending in " --force"
//	Bash(rm*)              rm, rmdir…: no word boundary without the space
type claudeBash struct {
	globs []string
}

func parseClaudeBash(content string, hasContent bool) (claudeBash, error) {
	content = strings.Join(strings.Fields(content), " ")
	if !hasContent || content == "" || content == "*" {
		return claudeBash{globs: []string{"*"}}, nil
	}
	if strings.ContainsRune(content, unknownRune) {
		return claudeBash{}, errors.New("invalid character")
	}
	for _, suffix := range []string{":*", " *"} {
		if prefix, ok := strings.CutSuffix(content, suffix); ok && prefix != "" {
			return claudeBash{globs: []string{prefix, prefix + " *"}}, nil
		}
	}
	return claudeBash{globs: []string{content}}, nil
}

func (c claudeBash) match(words []string) bool {
	subject := strings.Join(words, " ")
	for _, g := range c.globs {
		if globMatch(g, subject) {
			return true
		}
	}
	return false
}

// globMatch matches a subject against a pattern where * matches any run
// of characters; an unknownRune in the subject (text known only at run
// time) may stand for any piece of the pattern, so that a rule that could
// match the command as it will run does match (fail closed).
func globMatch(pattern, subject string) bool {
	p, s := []rune(pattern), []rune(subject)
	memo := make(map[[2]int]bool)
	var m func(i, j int) bool
	m = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case j < len(s) && s[j] == unknownRune:
			// The unknown text matches nothing of the pattern, or one more
			// piece of it.
			r = m(i, j+1) || i < len(p) && m(i+1, j)
		case i == len(p):
			r = j == len(s)
		case p[i] == '*':
			r = m(i+1, j) || j < len(s) && m(i, j+1)
		default:
			r = j < len(s) && p[i] == s[j] && m(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return m(0, 0)
}

// claudePathGlobs turns the path of a Read or Edit rule (gitignore-like,
// measured on Claude Code 2.1.331) into absolute doublestar globs:
//
//	//x    the absolute path /x
//	~/x    below the home directory
//	/x     below the project directory
//	x, ./x a name without a slash matches at any depth; a path with one is
//	       below the project directory
//
// A pattern also covers everything below what it names.
func claudePathGlobs(p string, e Env) ([]string, error) {
	var g string
	switch {
	case strings.HasPrefix(p, "//"):
		g = p[1:]
	case strings.HasPrefix(p, "~/"):
		if e.Home == "" {
			return nil, errors.New("~ with no home directory known")
		}
		g = filepath.Join(e.Home, p[2:])
	case strings.HasPrefix(p, "/"):
		if e.ProjectDir == "" {
			return nil, errors.New("a project path with no project directory known")
		}
		g = strings.TrimSuffix(e.ProjectDir, "/") + p
	default:
		rel := strings.TrimPrefix(p, "./")
		if !strings.Contains(strings.TrimSuffix(rel, "/"), "/") {
			g = "/**/" + rel
			break
		}
		if e.ProjectDir == "" {
			return nil, errors.New("a project path with no project directory known")
		}
		g = strings.TrimSuffix(e.ProjectDir, "/") + "/" + rel
	}
	g = strings.TrimSuffix(g, "/")
	if g == "" {
		g = "/"
	}
	switch {
	case g == "/":
		return []string{"/**"}, nil
	case strings.HasSuffix(g, "/**"):
		return []string{g}, nil
	}
	return []string{g, g + "/**"}, nil
}

// ClaudeCodeCommandLine is what a Claude Code process's command line adds
// to its settings files: the --settings it was given (a file or a JSON
// object) and its --disallowedTools.
type ClaudeCodeCommandLine struct {
	Settings   []string
	Disallowed []string
}

// ParseClaudeCommandLine reads a Claude Code process's arguments (argv[0]
// first). Option values are taken as Claude Code's parser takes them: the
// next argument, or after "="; --disallowedTools takes every argument up to
// the next option.
func ParseClaudeCommandLine(argv []string) ClaudeCodeCommandLine {
	var c ClaudeCodeCommandLine
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		name, value, inline := strings.Cut(a, "=")
		switch name {
		case "--settings":
			if inline {
				c.Settings = append(c.Settings, value)
			} else if i+1 < len(argv) {
				i++
				c.Settings = append(c.Settings, argv[i])
			}
		case "--disallowedTools", "--disallowed-tools":
			if inline {
				c.Disallowed = append(c.Disallowed, value)
				continue
			}
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				c.Disallowed = append(c.Disallowed, argv[i])
			}
		}
	}
	return c
}
