package policy

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// arg is one field of a command after expansion: its value when it is known
// before the command runs, or unknown (a command substitution, an unknown
// variable…). A process substitution is known not to be a file operand.
//
// An unknown value is unbounded when no checked command produced it: a
// variable the script never set (it comes from the environment, or is
// empty), an array element, a slice, an indirection, a default or
// replacement applied to such a value, or any text with a ".." component
// around an unknown part. It may be any path at all, so it is refused where
// a file is expected. A value produced by a checked command (a command
// substitution, a line read from a pipe, a loop over command output) is
// checked when it is used, at run time.
type arg struct {
	s         string
	known     bool
	procSubst bool
	unbounded bool
	// dash says that an unknown value starts with a literal "-": an
	// option (--format=$x), not a file operand.
	dash bool
	// number says that the unknown parts of the value are a number
	// ($(nproc), $((…)), a variable arithmetic assigned) after the literal
	// text in prefix (make -j$(nproc)).
	number bool
	prefix string
	// data says that the unknown parts of the value include data read at
	// run time: a command substitution of a program that prints file
	// content or variables (cat, head, echo $x…), not names or numbers.
	data bool
	// lit is the literal text before the first part known only at run
	// time (--format= in --format="$X").
	lit string
	// suffix is the literal text after the last part known only at run
	// time (/.env in "$(dirname x)/.env").
	suffix string
}

// knownArgs makes args of literal strings.
func knownArgs(ss []string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = arg{s: s, known: true}
	}
	return out
}

// words expands words into fields the way bash would (braces, tildes,
// parameters, quote removal, globbing on the handed-in filesystem), after
// checking the commands nested in them.
func (c *checker) words(ws []*syntax.Word, st *shellState) []arg {
	out := make([]arg, 0, len(ws))
	for _, w := range ws {
		c.nested(w, st)
		if isProcSubstWord(w) {
			out = append(out, arg{s: "/dev/fd/63", known: true, procSubst: true})
			continue
		}
		if lit, ok := plainLiteral(w); ok {
			out = append(out, arg{s: lit, known: true})
			continue
		}
		ifsSplit := st.customIFS && unquotedExpansion(w.Parts) // fields a set IFS splits
		if ifsSplit || !c.static(w.Parts, st) {
			a := arg{unbounded: ifsSplit || c.unboundedWord(w.Parts, st) || dotDotText(w.Parts), dash: literalDash(w.Parts)}
			a.prefix, a.number = c.numberWord(w.Parts, st)
			a.data = c.dataWord(w.Parts, st)
			a.lit = literalPrefix(w.Parts)
			a.suffix = literalSuffix(w.Parts)
			out = append(out, a)
			continue
		}
		fields, err := expand.Fields(c.expandConfig(st), w)
		if err != nil {
			out = append(out, arg{unbounded: true})
			continue
		}
		for _, f := range fields {
			out = append(out, arg{s: f, known: true})
		}
	}
	return out
}

// literal expands a word that must stay one field (an assignment value, a
// redirection target) when it is statically known.
func (c *checker) literal(w *syntax.Word, st *shellState) (string, bool) {
	if w == nil {
		return "", true
	}
	if !c.static(w.Parts, st) {
		return "", false
	}
	s, err := expand.Literal(c.expandConfig(st), w)
	if err != nil {
		return "", false
	}
	return s, true
}

// static reports whether every part of a word is known before it runs.
func (c *checker) static(parts []syntax.WordPart, st *shellState) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if ansiBraceEscape(p) {
				return false
			}
		case *syntax.Lit:
		case *syntax.DblQuoted:
			if !c.static(p.Parts, st) {
				return false
			}
		case *syntax.ParamExp:
			if p.Index != nil && p.Param != nil && knownIndex(p, st) {
				continue // ${a[@]}, ${a[0]} of an array whose elements are known
			}
			if p.Excl || p.Width || p.IsSet || p.Index != nil || p.Names != 0 || p.Param == nil {
				return false
			}
			if _, ok := c.varValue(p.Param.Value, st); !ok {
				return false
			}
			if p.Exp != nil && p.Exp.Word != nil && !c.static(p.Exp.Word.Parts, st) {
				return false
			}
			if p.Repl != nil && ((p.Repl.Orig != nil && !c.static(p.Repl.Orig.Parts, st)) || (p.Repl.With != nil && !c.static(p.Repl.With.Parts, st))) {
				return false
			}
			if p.Repl != nil && p.Repl.Orig != nil && extGlobText(p.Repl.Orig.Parts) ||
				p.Exp != nil && p.Exp.Word != nil && extGlobText(p.Exp.Word.Parts) {
				// ${x//+(a)/}, ${x#@(a|b)}: under shopt -s extglob bash
				// matches extended patterns, which the expansion library
				// takes literally.
				return false
			}
			if p.Repl != nil && p.Repl.Orig != nil && strings.IndexAny(literalPrefix(p.Repl.Orig.Parts), "#%") == 0 {
				// ${x/#pat/rep}, ${x/%pat/rep}: replacements anchored at
				// the start or end, which the expansion library does not
				// apply (it leaves the value as it is).
				return false
			}
			if p.Slice != nil {
				return false
			}
		case *syntax.CmdSubst:
			if _, ok := c.pureOutput(p, st); !ok {
				return false
			}
		case *syntax.ArithmExp:
			if !constantArith(p.X) {
				return false
			}
		case *syntax.ExtGlob:
			return false // bash matches it against files (shopt -s extglob); expand does not
		default:
			return false
		}
	}
	return true
}

// knownIndex reports whether a subscripted expansion reads an array whose
// elements are known, at @, * or a literal index, with no other operator.
func knownIndex(p *syntax.ParamExp, st *shellState) bool {
	if _, ok := st.arrays[p.Param.Value]; !ok || p.Excl || p.Width || p.IsSet || p.Names != 0 ||
		p.Slice != nil || p.Repl != nil || p.Exp != nil {
		return false
	}
	w, ok := p.Index.(*syntax.Word)
	if !ok {
		return false
	}
	lit, ok := plainLiteral(w)
	return ok && (lit == "@" || lit == "*" || lit != "" && strings.Trim(lit, "0123456789") == "")
}

// unboundedWord reports whether the unknown parts of a word include an
// unbounded value (see arg).
func (c *checker) unboundedWord(parts []syntax.WordPart, st *shellState) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			if c.unboundedWord(p.Parts, st) {
				return true
			}
		case *syntax.ParamExp:
			if c.static([]syntax.WordPart{p}, st) || p.Width {
				continue // known, or ${#x}: a number
			}
			if p.Excl || p.Index != nil || p.Names != 0 || p.Param == nil || p.Slice != nil || p.Repl != nil || p.Exp != nil {
				return true
			}
			if st.posChecked && isPositional(p.Param.Value) {
				continue // a function's argument, checked at each call
			}
			if v, ok := st.vars[p.Param.Value]; !ok || (v == nil && st.unbounded[p.Param.Value]) {
				if !st.numeric[p.Param.Value] {
					return true
				}
			}
		case *syntax.ExtGlob:
			return true // any file an extended glob matches
		case *syntax.SglQuoted:
			if ansiBraceEscape(p) {
				return true
			}
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.Lit:
		default:
			return true
		}
	}
	return false
}

// numberWord reports whether a word is literal text (returned) followed by
// a number known only at run time: one arithmetic expansion, ${#x}, a
// variable arithmetic assigned, or the output of a number printer; quoted or not (a
// number is one field).
func (c *checker) numberWord(parts []syntax.WordPart, st *shellState) (prefix string, ok bool) {
	if len(parts) == 1 {
		if dq, isDq := parts[0].(*syntax.DblQuoted); isDq {
			parts = dq.Parts
		}
	}
	if len(parts) == 0 || len(parts) > 2 {
		return "", false
	}
	if len(parts) == 2 {
		lit, isLit := parts[0].(*syntax.Lit)
		if !isLit {
			return "", false
		}
		prefix = lit.Value
		parts = parts[1:]
		if dq, isDq := parts[0].(*syntax.DblQuoted); isDq && len(dq.Parts) == 1 {
			parts = dq.Parts
		}
	}
	switch p := parts[0].(type) {
	case *syntax.ArithmExp:
		return prefix, true
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Index != nil || p.Names != 0 || p.Slice != nil || p.Repl != nil || p.Exp != nil {
			return "", false
		}
		return prefix, p.Width || st.numeric[p.Param.Value]
	case *syntax.CmdSubst:
		if len(p.Stmts) != 1 || len(p.Stmts[0].Redirs) > 0 {
			return "", false
		}
		call, isCall := p.Stmts[0].Cmd.(*syntax.CallExpr)
		if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 {
			return "", false
		}
		name, _ := plainLiteral(call.Args[0])
		return prefix, printsNumber(name) && !st.maybeFuncs[name] // a function of that name prints anything
	}
	return "", false
}

// dataWord reports whether a word's unknown parts include data read at
// run time (see arg.data): a substitution whose output may be file
// content, or a variable assigned one.
func (c *checker) dataWord(parts []syntax.WordPart, st *shellState) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			if c.dataWord(p.Parts, st) {
				return true
			}
		case *syntax.CmdSubst:
			if len(p.Stmts) != 1 || !printsNames(p.Stmts[0].Cmd, true, st) {
				return true
			}
		case *syntax.ProcSubst:
			return true
		case *syntax.ParamExp:
			if p.Param != nil && st.dataVars[p.Param.Value] {
				return true
			}
		}
	}
	return false
}

// literalPrefix is the literal text a word starts with, up to its first
// expansion.
func literalPrefix(parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			b.WriteString(literalPrefix(p.Parts))
			if !literalParts(p.Parts) {
				return b.String()
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// ansiBraceEscape reports whether an ANSI-C quoted string ($'…') holds
// bash's \x{HH} escape, which the expansion library leaves as text:
// $'\x{2e}env' is .env to bash.
func ansiBraceEscape(q *syntax.SglQuoted) bool {
	return q.Dollar && strings.Contains(q.Value, `\x{`)
}

// extGlobText reports whether a pattern's literal text holds an extended
// glob operator: ?( *( +( @( or !(.
func extGlobText(parts []syntax.WordPart) bool {
	for _, p := range parts {
		var v string
		switch p := p.(type) {
		case *syntax.Lit:
			v = p.Value
		case *syntax.SglQuoted:
			continue // quoted: literal text in bash too
		case *syntax.DblQuoted:
			continue
		case *syntax.ExtGlob:
			return true
		}
		for _, op := range []string{"?(", "*(", "+(", "@(", "!("} {
			if strings.Contains(v, op) {
				return true
			}
		}
	}
	return false
}

// literalSuffix is the literal text a word ends with, after its last
// expansion; "" when that text holds glob or escape syntax.
func literalSuffix(parts []syntax.WordPart) string {
	var tail []string
	for i := len(parts) - 1; i >= 0; i-- {
		var v string
		switch p := parts[i].(type) {
		case *syntax.Lit:
			v = p.Value
		case *syntax.SglQuoted:
			if p.Dollar {
				return ""
			}
			v = p.Value
		case *syntax.DblQuoted:
			v = literalSuffix(p.Parts)
			if !literalParts(p.Parts) {
				return strings.Join(append([]string{v}, tail...), "")
			}
		default:
			return strings.Join(tail, "")
		}
		if strings.ContainsAny(v, "*?[]{}~\\") {
			return ""
		}
		tail = append([]string{v}, tail...)
	}
	return strings.Join(tail, "")
}

// isPositional reports whether a parameter name is a positional one ($1,
// $@, $*, $#).
func isPositional(name string) bool {
	if name == "@" || name == "*" || name == "#" {
		return true
	}
	_, err := strconv.Atoi(name)
	return err == nil && name != "0"
}

// unquotedExpansion reports whether a word has an expansion outside
// double quotes, which IFS splits into fields.
func unquotedExpansion(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			return true
		}
	}
	return false
}

// literalDash reports whether a word starts with a literal "-".
func literalDash(parts []syntax.WordPart) bool {
	if len(parts) == 0 {
		return false
	}
	switch p := parts[0].(type) {
	case *syntax.Lit:
		return strings.HasPrefix(p.Value, "-")
	case *syntax.SglQuoted:
		return strings.HasPrefix(p.Value, "-")
	case *syntax.DblQuoted:
		return literalDash(p.Parts)
	}
	return false
}

// dotDotText reports whether the literal text of a word has a ".."
// component: around a part known only at run time it climbs out of
// wherever that part leads.
func dotDotText(parts []syntax.WordPart) bool {
	for _, p := range parts {
		var s string
		switch p := p.(type) {
		case *syntax.Lit:
			s = p.Value
		case *syntax.SglQuoted:
			s = p.Value
		case *syntax.DblQuoted:
			if dotDotText(p.Parts) {
				return true
			}
			continue
		default:
			continue
		}
		if !strings.Contains(s, "/") {
			continue // $a..$b: a git revision range, not a path step
		}
		for comp := range strings.SplitSeq(s, "/") {
			if comp == ".." {
				return true
			}
		}
	}
	return false
}

// varValue returns a variable's value when it is statically known.
func (c *checker) varValue(name string, st *shellState) (string, bool) {
	if v, ok := st.vars[name]; ok {
		if v == nil {
			return "", false
		}
		return *v, true
	}
	switch name {
	case "HOME":
		return c.env.Home, c.env.Home != ""
	case "PWD":
		return st.cwd, st.cwd != ""
	case "@", "*":
		return strings.Join(st.pos, " "), st.posKnown
	case "#":
		return strconv.Itoa(len(st.pos)), st.posKnown
	}
	if n, err := strconv.Atoi(name); err == nil {
		if !st.posKnown {
			return "", false
		}
		if n == 0 {
			return shellName, true
		}
		if n <= len(st.pos) {
			return st.pos[n-1], true
		}
		return "", true
	}
	if c.env.Getenv != nil {
		return c.env.Getenv(name)
	}
	return "", false
}

// plainLiteral returns the value of a word that needs no expansion at all:
// one literal or single-quoted part without glob, brace, tilde or escape
// syntax (most words of most commands).
func plainLiteral(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if strings.ContainsAny(p.Value, "*?[]{}~\\") {
			return "", false
		}
		return p.Value, true
	case *syntax.SglQuoted:
		if p.Dollar {
			return "", false
		}
		return p.Value, true
	}
	return "", false
}

// expandConfig returns the expansion configuration of a state; it reads
// the state's variables and cwd live, so one serves the state's whole walk.
func (c *checker) expandConfig(st *shellState) *expand.Config {
	if st.cfg == nil {
		st.cfg = c.newExpandConfig(st)
	}
	return st.cfg
}

// newExpandConfig builds an expansion configuration. An expansion in
// progress must not share its configuration with a nested one (a command
// substitution evaluated while its word expands).
func (c *checker) newExpandConfig(st *shellState) *expand.Config {
	cfg := &expand.Config{Env: staticEnv{c: c, st: st}, GlobStar: st.shopt["globstar"], DotGlob: st.shopt["dotglob"],
		NoCaseGlob: st.shopt["nocaseglob"], NullGlob: st.shopt["nullglob"], ExtGlob: st.shopt["extglob"]}
	cfg.CmdSubst = func(w io.Writer, cs *syntax.CmdSubst) error {
		out, ok := c.pureOutput(cs, st)
		if !ok {
			return errNotStatic
		}
		_, err := io.WriteString(w, out)
		return err
	}
	fsys := c.env.fs()
	cfg.ReadDir2 = func(dir string) ([]fs.DirEntry, error) {
		if st.cwd == "" && !strings.HasPrefix(dir, "/") {
			return nil, errNotStatic // relative to a directory known only at run time
		}
		return fsys.ReadDir(dir)
	}
	return cfg
}

// staticEnv is the expand.Environ of a static walk.
type staticEnv struct {
	c  *checker
	st *shellState
}

// Get returns a variable the checker knows before the command runs; others
// fail the expansion.
func (e staticEnv) Get(name string) expand.Variable {
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		// ~user: resolved only through the Env; an unknown user becomes a
		// path that is outside every scope, never a lookup of our own.
		if e.c.env.HomeOf != nil {
			if h, ok := e.c.env.HomeOf(user); ok {
				return expand.Variable{Set: true, Kind: expand.String, Str: h}
			}
		}
		return expand.Variable{Set: true, Kind: expand.String, Str: "/nonexistent-home-of-" + user}
	}
	if name == "IFS" {
		return expand.Variable{Set: true, Kind: expand.String, Str: " \t\n"}
	}
	if list, ok := e.st.arrays[name]; ok {
		return expand.Variable{Set: true, Kind: expand.Indexed, List: list}
	}
	if name == "@" || name == "*" {
		// $*, ${@}, "$*": expand reads the positional parameters as a
		// list, one element per parameter.
		if !e.st.posKnown {
			return expand.Variable{}
		}
		return expand.Variable{Set: true, Kind: expand.Indexed, List: slices.Clone(e.st.pos)}
	}
	v, ok := e.c.varValue(name, e.st)
	if !ok {
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: v}
}

// Each lists no variables: expansions only look names up.
func (e staticEnv) Each(func(name string, vr expand.Variable) bool) {}

// errNotStatic fails an expansion that needs a value known only at run time.
var errNotStatic = errors.New("not known before the command runs")

// maxPureOutput bounds the output of a substitution evaluated statically.
const maxPureOutput = 64 << 10

// pureOutput computes the output of a command substitution that has no
// effect but its output, so that what it expands to is checked like a
// literal: $(<file), or a command whose output is known (knownOutput).
func (c *checker) pureOutput(cs *syntax.CmdSubst, st *shellState) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	s := cs.Stmts[0]
	if s.Negated || s.Background || s.Coprocess {
		return "", false
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if s.Cmd == nil && len(s.Redirs) == 1 && s.Redirs[0].Op == syntax.RdrIn {
		// $(<file)
		return c.pureFile(s.Redirs[0].Word, st)
	}
	if !ok || len(s.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return "", false
	}
	for _, w := range call.Args {
		if !c.static(w.Parts, st) {
			return "", false
		}
	}
	cfg := c.newExpandConfig(st)
	fields, err := expand.Fields(cfg, call.Args...)
	if err != nil || len(fields) == 0 {
		return "", false
	}
	return c.knownOutput(fields, call, cfg, st)
}

// pureFile reads a small file that the command may read, for $(<file) and
// $(cat file).
func (c *checker) pureFile(w *syntax.Word, st *shellState) (string, bool) {
	if !c.static(w.Parts, st) {
		return "", false
	}
	name, err := expand.Literal(c.newExpandConfig(st), w)
	if err != nil || name == "" || strings.HasPrefix(name, "-") {
		return "", false
	}
	abs, err := absPath(name, st.cwd, c.env)
	if err != nil || (st.cwd == "" && !strings.HasPrefix(name, "/")) {
		return "", false
	}
	if vs := c.s.checkAbs(abs, AccessRead, c.env, pathSource{}); vs != nil {
		return "", false // the read itself is refused where it is checked
	}
	data, err := c.env.fs().ReadFile(abs)
	if err != nil || len(data) >= maxPureOutput {
		return "", false
	}
	return strings.TrimRight(string(data), "\n"), true
}

// constantArith reports whether an arithmetic expression uses only number
// literals (its value is then known: $((1+1))).
func constantArith(x syntax.ArithmExpr) bool {
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, isWord := n.(*syntax.Word); isWord {
			lit := w.Lit()
			if lit == "" || lit[0] < '0' || lit[0] > '9' {
				ok = false
			}
			return false
		}
		return true
	})
	return ok
}
