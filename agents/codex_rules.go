package agents

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CodexSystemDir is the system configuration layer of Codex.
const CodexSystemDir = "/etc/codex"

// CodexRulesDirs are the directories whose *.rules files Codex reads, one
// per configuration layer (system, user, project).
func (e Env) CodexRulesDirs() []string {
	dirs := []string{filepath.Join(CodexSystemDir, "rules")}
	switch {
	case e.ConfigDir != "":
		dirs = append(dirs, filepath.Join(e.ConfigDir, "rules"))
	case e.Home != "":
		dirs = append(dirs, filepath.Join(e.Home, ".codex", "rules"))
	}
	if e.ProjectDir != "" {
		dirs = append(dirs, filepath.Join(e.ProjectDir, ".codex", "rules"))
	}
	return dirs
}

// codexPrefix is a Codex prefix_rule's pattern: the first words of a
// command, each one of a set of alternatives. A word known only at run time
// may be any of them (fail closed); the program word also matches by its
// base name.
type codexPrefix struct {
	tokens [][]string
}

func (c codexPrefix) match(words []string) bool {
	if len(words) < len(c.tokens) {
		return false
	}
	for i, alts := range c.tokens {
		w := words[i]
		if strings.ContainsRune(w, unknownRune) {
			continue
		}
		found := false
		for _, a := range alts {
			if w == a || i == 0 && path.Base(w) == a {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ParseCodexRules reads a Codex rules file (the prefix_rule subset of its
// Starlark execpolicy language): prefix_rule(pattern=[…], decision=…,
// justification=…, match=…, not_match=…) and host_executable(…) calls,
// comments and blank lines. Rules that allow are dropped; "forbidden"
// denies and "prompt" asks. Anything else is an error naming its line: the
// rules it may hold cannot be kept.
func ParseCodexRules(data []byte, source string) (Rules, error) {
	p := &starlark{src: string(data), line: 1}
	var r Rules
	for {
		p.space()
		if p.eof() {
			return r, nil
		}
		start := p.line
		name, err := p.ident()
		if err != nil {
			return Rules{}, p.fail(source, err)
		}
		args, err := p.call()
		if err != nil {
			return Rules{}, p.fail(source, err)
		}
		switch name {
		case "prefix_rule":
			rule, keep, err := codexRule(args, source, start)
			if err != nil {
				return Rules{}, fmt.Errorf("%w: %s:%d: %v", ErrInvalidRules, source, start, err)
			}
			if keep {
				r.Commands = append(r.Commands, rule)
			}
		case "host_executable":
			// Where a program name may be found on the host: the base name
			// match covers it.
		default:
			return Rules{}, fmt.Errorf("%w: %s:%d: %s is not a call scopegate knows (prefix_rule, host_executable)", ErrInvalidRules, source, start, name)
		}
		p.space()
		if !p.eof() && p.src[p.pos] == ';' {
			p.pos++
		}
	}
}

// codexRule builds one prefix_rule from its keyword arguments; keep is
// false for a rule that allows.
func codexRule(args map[string]starValue, source string, line int) (CommandRule, bool, error) {
	for k := range args {
		switch k {
		case "pattern", "decision", "justification", "match", "not_match":
		default:
			return CommandRule{}, false, fmt.Errorf("prefix_rule has an unknown argument %s", k)
		}
	}
	pat, ok := args["pattern"]
	if !ok || pat.list == nil || len(pat.list) == 0 {
		return CommandRule{}, false, fmt.Errorf("prefix_rule needs a non-empty pattern list")
	}
	var cp codexPrefix
	var words []string
	for _, t := range pat.list {
		switch {
		case t.isString:
			cp.tokens = append(cp.tokens, []string{t.str})
			words = append(words, strconv.Quote(t.str))
		case len(t.list) > 0:
			var alts []string
			for _, a := range t.list {
				if !a.isString {
					return CommandRule{}, false, fmt.Errorf("pattern alternatives must be strings")
				}
				alts = append(alts, a.str)
			}
			cp.tokens = append(cp.tokens, alts)
			words = append(words, "["+strings.Join(quoteAll(alts), ", ")+"]")
		default:
			return CommandRule{}, false, fmt.Errorf("pattern entries must be strings or lists of strings")
		}
	}
	decision := "allow"
	if d, ok := args["decision"]; ok {
		if !d.isString {
			return CommandRule{}, false, fmt.Errorf("decision must be a string")
		}
		decision = d.str
	}
	rule := CommandRule{Text: "prefix_rule(pattern=[" + strings.Join(words, ", ") + "], decision=" + strconv.Quote(decision) + ")",
		Source: fmt.Sprintf("%s:%d", source, line), pattern: cp}
	if j, ok := args["justification"]; ok {
		if !j.isString {
			return CommandRule{}, false, fmt.Errorf("justification must be a string")
		}
		rule.Justification = j.str
	}
	switch decision {
	case "allow":
		return rule, false, nil
	case "prompt":
		rule.Decision = RuleAsk
	case "forbidden":
		rule.Decision = RuleDeny
	default:
		return CommandRule{}, false, fmt.Errorf("decision %q is not allow, prompt or forbidden", decision)
	}
	return rule, true, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// starlark reads the small part of Starlark that rules files use.
type starlark struct {
	src  string
	pos  int
	line int
}

// starValue is a string, a list, or a bare name (True, False, None).
type starValue struct {
	isString bool
	str      string
	list     []starValue
	name     string
}

func (p *starlark) eof() bool { return p.pos >= len(p.src) }

func (p *starlark) fail(source string, err error) error {
	return fmt.Errorf("%w: %s:%d: %v", ErrInvalidRules, source, p.line, err)
}

// space skips blanks, newlines and comments.
func (p *starlark) space() {
	for !p.eof() {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\\' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
			p.pos++
		case c == '#':
			for !p.eof() && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *starlark) ident() (string, error) {
	start := p.pos
	for !p.eof() {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r != '_' && !unicode.IsLetter(r) && !(p.pos > start && unicode.IsDigit(r)) {
			break
		}
		p.pos += n
	}
	if p.pos == start {
		return "", fmt.Errorf("expected a name, found %q", p.peek())
	}
	return p.src[start:p.pos], nil
}

func (p *starlark) peek() string {
	if p.eof() {
		return "end of file"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return string(r)
}

func (p *starlark) expect(c byte) error {
	p.space()
	if p.eof() || p.src[p.pos] != c {
		return fmt.Errorf("expected %q, found %q", c, p.peek())
	}
	p.pos++
	return nil
}

// call reads "(name=value, …)": keyword arguments only, each once.
func (p *starlark) call() (map[string]starValue, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	args := map[string]starValue{}
	for {
		p.space()
		if !p.eof() && p.src[p.pos] == ')' {
			p.pos++
			return args, nil
		}
		name, err := p.ident()
		if err != nil {
			return nil, err
		}
		if _, dup := args[name]; dup {
			return nil, fmt.Errorf("argument %s given twice", name)
		}
		if err := p.expect('='); err != nil {
			return nil, err
		}
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		args[name] = v
		p.space()
		if !p.eof() && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		return args, nil
	}
}

// value reads a string, a list or a name.
func (p *starlark) value(depth int) (starValue, error) {
	if depth > 8 {
		return starValue{}, fmt.Errorf("lists nested too deep")
	}
	p.space()
	if p.eof() {
		return starValue{}, fmt.Errorf("expected a value, found end of file")
	}
	switch c := p.src[p.pos]; {
	case c == '[':
		p.pos++
		var list []starValue
		for {
			p.space()
			if !p.eof() && p.src[p.pos] == ']' {
				p.pos++
				if list == nil {
					list = []starValue{}
				}
				return starValue{list: list}, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return starValue{}, err
			}
			list = append(list, v)
			p.space()
			if !p.eof() && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if err := p.expect(']'); err != nil {
				return starValue{}, err
			}
			if list == nil {
				list = []starValue{}
			}
			return starValue{list: list}, nil
		}
	case c == '"' || c == '\'' || c == 'r' && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '"' || p.src[p.pos+1] == '\''):
		s, err := p.str()
		return starValue{isString: true, str: s}, err
	default:
		name, err := p.ident()
		if err != nil {
			return starValue{}, err
		}
		switch name {
		case "True", "False", "None":
			return starValue{name: name}, nil
		}
		return starValue{}, fmt.Errorf("%s: only strings and lists are read", name)
	}
}

// str reads a one-line string literal: '…' or "…", r-prefixed or not, with
// Go's escapes (which Starlark's common ones are).
func (p *starlark) str() (string, error) {
	raw := false
	if p.src[p.pos] == 'r' {
		raw = true
		p.pos++
	}
	q := p.src[p.pos]
	if strings.HasPrefix(p.src[p.pos:], string([]byte{q, q, q})) {
		return "", fmt.Errorf("triple-quoted strings are not read")
	}
	start := p.pos + 1
	i := start
	for ; i < len(p.src); i++ {
		c := p.src[i]
		if c == '\n' {
			return "", fmt.Errorf("unterminated string")
		}
		if c == '\\' && !raw {
			i++
			continue
		}
		if c == q {
			break
		}
	}
	if i >= len(p.src) {
		return "", fmt.Errorf("unterminated string")
	}
	body := p.src[start:i]
	p.pos = i + 1
	if raw {
		return body, nil
	}
	if q == '\'' {
		body = strings.ReplaceAll(strings.ReplaceAll(body, `\'`, `'`), `"`, `\"`)
	}
	s, err := strconv.Unquote(`"` + body + `"`)
	if err != nil {
		return "", fmt.Errorf("string %q: %v", body, err)
	}
	return s, nil
}
