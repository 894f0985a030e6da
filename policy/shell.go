package policy

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxNesting bounds recursion through sh -c strings, wrappers and
// substitutions; deeper nesting is denied, never skipped.
const maxNesting = 16

// checker walks one shell program and collects every violation.
type checker struct {
	s     *Scope
	env   Env
	vs    []Violation
	seen  map[string]bool // dedup of violations
	depth int
	// arithDepth counts arithmetic text evaluated again (arithText).
	arithDepth int
	calls      int // simple commands checked, compared with the tree's count
	// calling are the functions whose body is being checked for a call
	// (a recursive call is not walked again).
	calling map[string]bool
	// wroteIgnoreFile says that the command writes a .gitignore, .ignore
	// or .rgignore: what they ignore is then not relied on.
	wroteIgnoreFile bool
	// written are the files the command writes, by absolute path.
	written map[string]bool
}

// newChecker is a checker of calls on scope s in env, before its first
// violation.
func newChecker(s *Scope, env Env) *checker {
	return &checker{s: s, env: env, seen: map[string]bool{}}
}

// shellState is what a walk knows at a point of the program, grouped by
// what each field follows. A subshell starts from a copy, a program's own
// check sees one that shares the walk's variables: clone is the one place
// that copies fields, one a line, and a new field is added there.
type shellState struct {
	// The working directory.

	// cwd is the working directory, "" when it is known only at run time.
	cwd string
	// cwdDeferred says that cwd holds only for the rest of the && list
	// being walked: a cd in it may fail (its directory does not exist) or
	// may not run. The statement's end makes cwd unknown.
	cwdDeferred bool
	// made are the directories mkdir creates earlier in the script: a cd
	// to one of them is taken to succeed.
	made map[string]bool

	// Variables.

	// vars are the variables with their statically known values (absent
	// or nil: unknown).
	vars map[string]*string
	// numeric are variables last assigned by arithmetic: they hold numbers.
	numeric map[string]bool
	// unbounded are unknown variables whose value no checked command
	// produced (see arg.unbounded); absent from vars means unbounded too.
	unbounded map[string]bool
	// dataVars are variables assigned data read at run time (see
	// arg.data).
	dataVars map[string]bool
	// arrays are the indexed arrays whose every element is known,
	// assigned whole (a=(x y), declare -a a=(…)); any other assignment
	// to the name forgets it.
	arrays map[string][]string
	// customIFS says that the script set IFS: unquoted expansions split
	// in ways the checker does not follow.
	customIFS bool
	// pending is the variables' state before the first element of the &&
	// list being walked that may not run: the statement's end merges it
	// (mergeMaybe).
	pending *shellState

	// Positional parameters.

	// pos are the positional parameters $1…, when known (sh -c).
	pos []string
	// posKnown says that pos is all of them.
	posKnown bool
	// posChecked says that the positional parameters, unknown here, are
	// checked at each call of the function being declared.
	posChecked bool

	// Functions.

	// funcs are the functions certainly defined at this point of this
	// shell: declared earlier, unconditionally, and not unset since.
	funcs map[string]bool
	// funcBodies are the bodies of the functions certainly defined, which
	// are checked where they are called.
	funcBodies map[string]*syntax.Stmt
	// maybeFuncs are every function the script may have defined (so a
	// name printer called by that name is not trusted).
	maybeFuncs map[string]bool
	// funcVars are, per function, the variables its body assigns: a call
	// makes them unknown.
	funcVars map[string][]string
	// cwdFuncs are the functions whose body changes the directory.
	cwdFuncs map[string]bool

	// Control flow and shell options.

	// cond counts the conditional constructs around the walk: a function
	// declared inside one may or may not exist afterwards.
	cond int
	// shopt are the glob options the script set (globstar, dotglob…).
	shopt map[string]bool
	// cfg is the expansion configuration, built on first use; never
	// shared by clones.
	cfg *expand.Config

	// The statement being checked.

	// pipedIn says that stdin is the output of the command before a pipe.
	pipedIn bool
	// pipedText is the output of the command before the pipe, when it is
	// known before it runs (echo .env | xargs cat).
	pipedText *string
	// stdinFile is the file the statement being checked reads on standard
	// input (< FILE), "" when none.
	stdinFile string
	// stdinText is the known text of the here-string or here-document the
	// statement being checked reads on standard input (nil: none known).
	stdinText *string
	// editorSafe says that the simple command being checked has an editor
	// that runs nothing (GIT_EDITOR=true as its prefix).
	editorSafe bool
}

// A copy of a walk's state ([shellState.clone]) is for one of these.
type stateCopy uint8

const (
	// forSubshell is the state a subshell starts with, and the state
	// before a region that may not run, which mergeMaybe merges back: a
	// copy, so that what it changes does not leak back. Empty maps stay
	// nil; the setters make them. What belongs to the statement being
	// checked, and the expansion configuration, start anew.
	forSubshell stateCopy = iota
	// forProgram is the state a program's own check (its row's
	// programCheck) sees; the caller sets the working directory its
	// options give. The walk's variables and functions are shared, not
	// copied, and so are the directories made when the row records them
	// (spec.makesDirs), so that what the check records holds for the rest
	// of the line; the statement's input and editor are the walk's; the
	// rest starts empty.
	forProgram
)

// clone is the one copy of a walk's state, one field a line: a new field
// is added here, with what each kind of copy does with it.
func (st *shellState) clone(k stateCopy) *shellState {
	sub := k == forSubshell
	if !sub {
		makeMap(&st.vars) // shared: made here so that both sides hold it
		makeMap(&st.funcs)
	}
	return &shellState{
		cwd:         st.cwd,
		cwdDeferred: sub && st.cwdDeferred,
		made:        copyOrShare(sub, st.made),

		vars:      copyOrShare(sub, st.vars),
		numeric:   copyOrNone(sub, st.numeric),
		unbounded: copyOrNone(sub, st.unbounded),
		dataVars:  copyOrNone(sub, st.dataVars),
		arrays:    copyOrNone(sub, st.arrays),
		customIFS: sub && st.customIFS,
		pending:   nil, // the copy's own && lists

		pos:        st.pos,
		posKnown:   st.posKnown,
		posChecked: sub && st.posChecked,

		funcs:      copyOrShare(sub, st.funcs),
		funcBodies: copyOrNone(sub, st.funcBodies),
		maybeFuncs: copyOrShare(sub, st.maybeFuncs),
		funcVars:   copyOrNone(sub, st.funcVars),
		cwdFuncs:   copyOrNone(sub, st.cwdFuncs),

		cond:  st.cond,
		shopt: copyOrNone(sub, st.shopt),
		cfg:   nil, // built on first use

		pipedIn:    st.pipedIn,
		pipedText:  keepIf(!sub, st.pipedText),
		stdinFile:  keepIf(!sub, st.stdinFile),
		stdinText:  keepIf(!sub, st.stdinText),
		editorSafe: !sub && st.editorSafe,
	}
}

// copyOrShare is m copied for a subshell, shared with a program's check.
func copyOrShare[M ~map[K]V, K comparable, V any](sub bool, m M) M {
	if sub {
		return maps.Clone(m)
	}
	return m
}

// copyOrNone is m copied for a subshell; a program's check starts
// without.
func copyOrNone[M ~map[K]V, K comparable, V any](sub bool, m M) M {
	if sub {
		return maps.Clone(m)
	}
	return nil
}

// keepIf is v when keep holds, else v's zero value.
func keepIf[T any](keep bool, v T) T {
	if keep {
		return v
	}
	var zero T
	return zero
}

// makeMap makes *m when it is nil.
func makeMap[K comparable, V any](m *map[K]V) {
	if *m == nil {
		*m = map[K]V{}
	}
}

// setIn sets (*m)[k] to v, making the map on first use: the one way the
// checker adds to a map it may not have made yet.
func setIn[K comparable, V any](m *map[K]V, k K, v V) {
	makeMap(m)
	(*m)[k] = v
}

// setVar records a variable's value (nil: unknown).
func (st *shellState) setVar(name string, val *string) {
	setIn(&st.vars, name, val)
	delete(st.arrays, name)
	if name == "IFS" && (val == nil || *val != " \t\n") {
		st.customIFS = true
	}
}

// setFlag sets or clears name in a set the state keeps, making the set on
// first use.
func setFlag(m *map[string]bool, name string, on bool) {
	if !on {
		delete(*m, name)
		return
	}
	setIn(m, name, true)
}

// sameValue reports whether two recorded values are the same (nil:
// unknown).
func sameValue(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// setNumeric records that a variable holds a number.
func (st *shellState) setNumeric(name string) {
	setIn(&st.numeric, name, true)
}

// setFunc records that a function is certainly defined.
func (st *shellState) setFunc(name string) {
	setIn(&st.funcs, name, true)
}

// maxLoopItems is the most items of a for loop whose body is checked
// once per item.
const maxLoopItems = 1024

// redirectsStdin reports whether redirections replace standard input.
func redirectsStdin(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}

// stdinFromProcSubst reports whether a statement's standard input is
// redirected from a process substitution, <(cmd), and from nothing after.
func stdinFromProcSubst(rs []*syntax.Redirect) bool {
	from := false
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
			if r.N == nil || r.N.Value == "0" {
				from = r.Op == syntax.RdrIn && r.Word != nil && isProcSubstWord(r.Word)
			}
		}
	}
	return from
}

// setUnbounded records whether the unknown value of a variable is unbounded.
func (st *shellState) setUnbounded(name string, on bool) {
	if !on {
		delete(st.unbounded, name)
		return
	}
	setIn(&st.unbounded, name, true)
}

// conditional walks f with the state marked conditional: afterwards, what
// f changed (directory, variables) may or may not have happened.
func (st *shellState) conditional(f func()) {
	st.cond++
	cwd := st.cwd
	before := st.clone(forSubshell)
	defer func() {
		st.cond--
		if st.cwd != cwd {
			st.cwd, st.cwdDeferred = "", false // the cd in it may not have run
		}
		st.mergeMaybe(before)
	}()
	f()
}

// mergeMaybe makes each variable a region changed hold either its value
// from before (a clone made then) or from after the region: unknown, a
// number only if both are, unbounded or data if either is.
func (st *shellState) mergeMaybe(before *shellState) {
	if st.posKnown != before.posKnown || !slices.Equal(st.pos, before.pos) {
		st.posKnown = false // set -- or shift may not have run
	}
	for name, v := range st.vars {
		old, had := before.vars[name]
		if had && sameValue(old, v) &&
			before.numeric[name] == st.numeric[name] && before.unbounded[name] == st.unbounded[name] {
			continue
		}
		wasNumber := before.numeric[name] || had && old != nil && safeArith(*old)
		isNumber := st.numeric[name] || v != nil && safeArith(*v)
		unbounded := !had || before.unbounded[name] || st.unbounded[name]
		data := before.dataVars[name] || st.dataVars[name]
		st.setVar(name, nil)
		if wasNumber && isNumber {
			st.setNumeric(name)
		} else {
			delete(st.numeric, name)
		}
		st.setUnbounded(name, unbounded)
		if data {
			setFlag(&st.dataVars, name, true)
		}
	}
}

// add records a violation, once.
func (c *checker) add(v Violation) {
	v.Message = OneLine(v.Message)
	key := string(v.Reason) + "\x00" + v.Resource + "\x00" + v.Rule
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.vs = append(c.vs, v)
}

// addAll records violations.
func (c *checker) addAll(vs []Violation) {
	for _, v := range vs {
		c.add(v)
	}
}

// newParser is the bash parser every command line is read with.
func newParser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}

// checkShell decides a shell command: every simple command anywhere in it.
func (s *Scope) checkShell(cmd, cwd string, env Env) []Violation {
	env.FS = withMemo(env.fs())
	c := newChecker(s, env)
	c.program(cmd, newState(cwd))
	return c.vs
}

// program parses and checks a whole shell program (the top-level command, or
// the string of an sh -c, a trap action, a watch command…).
func (c *checker) program(src string, st *shellState) {
	if c.depth > maxNesting {
		c.add(Violation{Reason: ReasonParseError, Resource: clip(src),
			Message: "commands nested deeper than the checker follows; run them as separate calls"})
		return
	}
	if strings.ContainsRune(src, 0) {
		c.add(Violation{Reason: ReasonParseError, Resource: "NUL", Message: "the command contains a NUL byte"})
		return
	}
	if !utf8.ValidString(src) {
		c.add(Violation{Reason: ReasonParseError, Resource: "UTF-8",
			Message: "the command is not valid UTF-8"})
		return
	}
	if strings.ContainsRune(src, '\r') {
		// bash reads a carriage return as part of a word; other parsers
		// (this one included) as a blank: the two would run different commands.
		c.add(Violation{Reason: ReasonParseError, Resource: "CR",
			Message: "the command contains a carriage return, which shells read differently; use plain \\n line endings"})
		return
	}
	parser, _ := c.s.parsers.Get().(*syntax.Parser)
	if parser == nil {
		parser = newParser()
	}
	f, err := parser.Parse(strings.NewReader(src), "")
	c.s.parsers.Put(parser)
	if err != nil {
		c.add(Violation{Reason: ReasonParseError, Resource: clip(src),
			Message: "the command cannot be parsed as bash: " + err.Error()})
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	total := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			total++
		}
		return true
	})
	before := c.calls
	c.stmts(f.Stmts, st)
	// Fail closed: every simple command of the tree must have been checked.
	if c.calls-before < total {
		c.add(Violation{Reason: ReasonParseError, Resource: clip(src),
			Message: "the command uses a shell construct the checker does not follow; split it into simpler commands"})
	}
}

// stmts checks a list of statements in order, in one shell state.
func (c *checker) stmts(ss []*syntax.Stmt, st *shellState) {
	for _, s := range ss {
		c.stmt(s, st)
		if st.cwdDeferred {
			st.cwd, st.cwdDeferred = "", false
		}
		if st.pending != nil {
			st.mergeMaybe(st.pending)
			st.pending = nil
		}
	}
}

// stmt checks one statement: its redirections, then its command.
func (c *checker) stmt(s *syntax.Stmt, st *shellState) {
	if s.Background || s.Coprocess {
		// A background job runs in a subshell: its cd does not persist.
		st = st.clone(forSubshell)
	}
	if st.pipedIn && redirectsStdin(s.Redirs) && !stdinFromProcSubst(s.Redirs) {
		// What reads stdin here reads a file or a here-document, not the
		// output of the command before the pipe.
		st.pipedIn = false
		defer func() { st.pipedIn = true }()
	} else if !st.pipedIn && stdinFromProcSubst(s.Redirs) {
		// done < <(cmd): stdin is a checked command's output, as in
		// cmd | while …
		st.pipedIn = true
		defer func() { st.pipedIn = false }()
	}
	defer func(was string) { st.stdinFile = was }(st.stdinFile)
	defer func(was *string) { st.stdinText = was }(st.stdinText)
	for _, r := range s.Redirs {
		c.redirect(r, st)
	}
	if s.Cmd != nil {
		cwd := st.cwd
		c.command(s.Cmd, st)
		if len(s.Redirs) > 0 && st.cwd != cwd {
			st.cwdDeferred = true // a redirection that fails stops the cd
		}
	}
}

// command walks one command: pipelines and lists, compound commands,
// function definitions, down to the simple commands (callExpr).
func (c *checker) command(cmd syntax.Command, st *shellState) {
	switch cmd := cmd.(type) {
	case *syntax.CallExpr:
		c.callExpr(cmd, st)
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			// Each side of a pipeline runs in its own subshell (the last
			// one in this shell under shopt -s lastpipe).
			c.stmt(cmd.X, st.clone(forSubshell))
			y := st.clone(forSubshell)
			y.pipedIn = true
			y.pipedText = nil
			if out, ok := c.pureOutput(&syntax.CmdSubst{Stmts: []*syntax.Stmt{cmd.X}}, st); ok {
				y.pipedText = &out // echo, printf or cat of a known file
			}
			c.stmt(cmd.Y, y)
			if st.shopt["lastpipe"] && y.cwd != st.cwd {
				st.cwd = ""
			}
			return
		}
		c.stmt(cmd.X, st)
		if cmd.Op == syntax.OrStmt {
			// Y runs when X failed: X's cd and assignments may not have
			// run.
			if st.cwdDeferred {
				st.cwd, st.cwdDeferred = "", false
			}
			if st.pending != nil {
				st.mergeMaybe(st.pending)
				st.pending = nil
			}
		}
		cwd := st.cwd
		before := st.clone(forSubshell)
		st.cond++
		c.stmt(cmd.Y, st)
		st.cond--
		if st.cwd != cwd {
			if cmd.Op == syntax.AndStmt {
				st.cwdDeferred = true // holds for the rest of the && list
			} else {
				st.cwd, st.cwdDeferred = "", false
			}
		}
		if cmd.Op == syntax.AndStmt {
			if st.pending == nil {
				st.pending = before // Y's changes hold for the rest of the && list
			}
		} else {
			st.mergeMaybe(before)
		}
	case *syntax.Block:
		c.stmts(cmd.Stmts, st)
	case *syntax.Subshell:
		c.stmts(cmd.Stmts, st.clone(forSubshell))
	case *syntax.IfClause:
		st.conditional(func() {
			for ic := cmd; ic != nil; ic = ic.Else {
				c.stmts(ic.Cond, st)
				c.stmts(ic.Then, st)
			}
		})
	case *syntax.WhileClause:
		st.conditional(func() {
			c.stmts(cmd.Cond, st)
			c.stmts(cmd.Do, st)
		})
	case *syntax.ForClause:
		c.forClause(cmd, st)
	case *syntax.CaseClause:
		c.words([]*syntax.Word{cmd.Word}, st)
		st.conditional(func() {
			for _, item := range cmd.Items {
				for _, p := range item.Patterns {
					c.nested(p, st)
				}
				c.stmts(item.Stmts, st)
			}
		})
	case *syntax.FuncDecl:
		c.funcDecl(cmd, st)
	case *syntax.ArithmCmd:
		c.arithm(cmd.X, st, false)
	case *syntax.TestClause:
		c.testExpr(cmd.X, st)
	case *syntax.DeclClause:
		c.declClause(cmd, st)
	case *syntax.LetClause:
		for _, x := range cmd.Exprs {
			c.arithm(x, st, false)
		}
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			c.stmt(cmd.Stmt, st)
		}
	case *syntax.CoprocClause:
		if cmd.Stmt != nil {
			c.stmt(cmd.Stmt, st.clone(forSubshell))
		}
	case *syntax.TestDecl:
		c.add(Violation{Reason: ReasonParseError, Resource: "@test", Message: "bats @test declarations are not shell commands"})
	default:
		c.add(Violation{Reason: ReasonParseError, Resource: fmt.Sprintf("%T", cmd),
			Message: "the command uses a shell construct the checker does not follow"})
	}
}

// forClause checks a for loop: a loop over known items is checked with each
// item in turn; its variable is otherwise known only at run time.
func (c *checker) forClause(cmd *syntax.ForClause, st *shellState) {
	switch loop := cmd.Loop.(type) {
	case *syntax.WordIter:
		name := loop.Name.Value
		if !loop.InPos.IsValid() {
			// for x; do …: the positional parameters.
			c.addAll(c.s.envAssign(name, nil, st.cwd, c.env))
			st.setVar(name, nil)
			st.setUnbounded(name, true)
			break
		}
		args := c.words(loop.Items, st)
		known, unbounded := true, false
		for _, a := range args {
			known = known && a.known
			unbounded = unbounded || a.unbounded
			// The loop (and select) assigns each item to its variable.
			c.addAll(c.s.envAssign(name, keepIf(a.known, &a.s), st.cwd, c.env))
		}
		if known && len(args) > 0 && len(args) <= maxLoopItems {
			// The body is checked with each item in turn; the walk
			// goes on with the last.
			for _, a := range args[:len(args)-1] {
				item := st.clone(forSubshell)
				item.setVar(name, ptr(a.s))
				item.setUnbounded(name, false)
				item.conditional(func() { c.stmts(cmd.Do, item) })
			}
			st.setVar(name, ptr(args[len(args)-1].s))
			st.setUnbounded(name, false)
			break
		}
		st.setVar(name, nil)
		// Items from a command's output stay bounded; more known items
		// than maxLoopItems are not checked one by one, so refused.
		st.setUnbounded(name, unbounded || known)
	case *syntax.CStyleLoop:
		c.arithm(loop.Init, st, false)
		c.arithm(loop.Cond, st, false)
		c.arithm(loop.Post, st, true) // runs only after the body
	}
	st.conditional(func() { c.stmts(cmd.Do, st) })
}

// funcDecl checks a function's body and records its name, so that calls to
// it are not taken for programs: only when it is certainly defined.
func (c *checker) funcDecl(cmd *syntax.FuncDecl, st *shellState) {
	changesCwd := false
	var assigns []string
	piped := false // f() { …; } | cmd: a pipeline, run in a subshell
	if cmd.Body != nil {
		_, piped = cmd.Body.Cmd.(*syntax.BinaryCmd)
	}
	// A function certainly defined is checked here with its arguments
	// ($1…) taken as values checked where it is called, and checked
	// again at each call with that call's arguments. One that may or may
	// not be defined is checked here alone, its arguments unknown.
	deferred := st.cond == 0 && !piped && cmd.Body != nil && len(funcNames(cmd)) > 0
	if cmd.Body != nil {
		switch cmd.Body.Cmd.(type) {
		case *syntax.Block, *syntax.Subshell:
		default:
			deferred = false // f() 0, f() for …: checked here
		}
	}
	for _, name := range funcNames(cmd) {
		deferred = deferred && isName(name)
	}
	if cmd.Body != nil {
		body := st.clone(forSubshell)
		body.posChecked = deferred
		c.stmt(cmd.Body, body)
		changesCwd = body.cwd != st.cwd || body.cwdDeferred
		assigns = changedVars(st, body)
	}
	for _, name := range funcNames(cmd) {
		if deferred {
			setIn(&st.funcBodies, name, cmd.Body)
		} else {
			delete(st.funcBodies, name)
		}
	}
	for _, name := range funcNames(cmd) {
		setFlag(&st.maybeFuncs, name, true)
		if len(assigns) > 0 {
			setIn(&st.funcVars, name, assigns)
		} else {
			delete(st.funcVars, name)
		}
		setFlag(&st.cwdFuncs, name, changesCwd)
	}
	for _, name := range funcNames(cmd) {
		if st.cond == 0 && !piped {
			st.setFunc(name)
		} else {
			delete(st.funcs, name) // may or may not be defined
		}
	}
}

// testExpr checks the words and nested commands of a [[ … ]] test.
func (c *checker) testExpr(x syntax.TestExpr, st *shellState) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		c.testExpr(x.X, st)
		c.testExpr(x.Y, st)
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// -eq and friends evaluate both sides as arithmetic.
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					c.arithVars(w, st)
				}
			}
		}
	case *syntax.UnaryTest:
		c.testExpr(x.X, st)
		if x.Op == syntax.TsVarSet {
			if w, ok := x.X.(*syntax.Word); ok {
				c.subscriptName(w, st)
			}
		}
	case *syntax.ParenTest:
		c.testExpr(x.X, st)
	case *syntax.Word:
		c.nested(x, st)
	}
}

// arithm checks an arithmetic expression: subscripts and nested commands
// in it run at evaluation. cond says it may not run (see arithWalk).
func (c *checker) arithm(x syntax.ArithmExpr, st *shellState, cond bool) {
	if x == nil {
		return
	}
	c.arithWalk(x, st, cond)
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			c.nested(w, st)
			return false
		}
		return true
	})
}

// nested checks the commands hidden inside a word: $(…), `…`, <(…), >(…),
// also inside parameter expansions and arithmetic.
func (c *checker) nested(w *syntax.Word, st *shellState) {
	if w == nil || literalParts(w.Parts) {
		return
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			// A command substitution runs in a subshell.
			c.stmts(n.Stmts, st.clone(forSubshell))
			return false
		case *syntax.ProcSubst:
			c.stmts(n.Stmts, st.clone(forSubshell))
			return false
		case *syntax.ArithmExp:
			c.arithVars(n.X, st)
		case *syntax.ParamExp:
			c.paramOps(n, st)
		}
		return true
	})
}

// literalParts reports whether word parts are literal text alone (plain,
// single- or double-quoted), with nothing for nested to look at.
func literalParts(parts []syntax.WordPart) bool {
	for _, part := range parts {
		switch part := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if !literalParts(part.Parts) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// declClause checks declare, export, local and the like: the variables
// they set and the attributes they give (-n namerefs).
func (c *checker) declClause(d *syntax.DeclClause, st *shellState) {
	// declare/typeset/export/local/readonly/nameref: assignments that may
	// set dangerous variables. With -p they print the names they are
	// given (declare -p PATH), and assign none.
	printOnly := false
	for _, a := range d.Args {
		if v, ok := c.literal(a.Value, st); ok && a.Naked && a.Value != nil && strings.HasPrefix(v, "-") && strings.Contains(v, "p") {
			printOnly = true
		}
	}
	for _, a := range d.Args {
		if printOnly && a.Naked && a.Name != nil {
			continue
		}
		if a.Naked && a.Value != nil {
			if v, ok := c.literal(a.Value, st); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "n") {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: d.Variant.Value + " " + v,
					Message: "name references make assignments reach other variables; assign variables directly"})
			}
			if v, ok := c.literal(a.Value, st); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "i") {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: d.Variant.Value + " " + v,
					Message: "the integer attribute makes bash evaluate every value assigned as arithmetic, which can run commands; use $((…))"})
			}
			if v, ok := c.literal(a.Value, st); ok {
				c.caseAttribute(d.Variant.Value, v)
			}
		}
		c.assign(a, st, true)
	}
}

// caseAttribute refuses declare -l, -u and -c: bash changes the case of
// every value the variable is given afterwards (declare -l x=.ENV makes
// x .env), which the checker does not follow.
func (c *checker) caseAttribute(name, opt string) {
	if strings.HasPrefix(opt, "-") && strings.ContainsAny(opt, "luc") {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: name + " " + opt,
			Message: "the case attributes (-l, -u, -c) change every value assigned afterwards; assign the value in the case it is used"})
	}
}

// assign checks one assignment (a prefix of a command when cmd is true, or
// a plain assignment / export when it is false) and records a known value.
func (c *checker) assign(a *syntax.Assign, st *shellState, persist bool) {
	if a.Value != nil {
		c.nested(a.Value, st)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			c.nested(e.Value, st)
			if e.Index != nil {
				c.arithm(e.Index, st, false)
			}
		}
	}
	if a.Index != nil {
		c.arithm(a.Index, st, false)
	}
	if a.Name == nil {
		// export "$x", declare "$name=…": the name is dynamic.
		if a.Value != nil {
			if v, ok := c.literal(a.Value, st); ok {
				name, _, _ := strings.Cut(v, "=")
				if !plainSubscript(name) {
					c.add(Violation{Reason: ReasonDynamicCommand, Resource: clip(name),
						Message: "an array subscript in a quoted assignment is evaluated by bash as arithmetic, which can run commands"})
				}
				c.addAll(c.s.envAssign(name, nil, st.cwd, c.env))
				return
			}
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: clip(nodeText(a.Value)),
				Message: "a variable whose name is known only at run time cannot be checked"})
		}
		return
	}
	name := a.Name.Value
	var val *string
	if a.Value != nil && a.Array == nil {
		if v, ok := c.literal(a.Value, st); ok {
			if a.Append {
				// f+=x appends to a known value.
				if old, known := c.varValue(name, st); known {
					v = old + v
					val = &v
				}
			} else {
				val = &v
			}
		}
	} else if a.Value == nil && a.Array == nil && !a.Naked {
		empty := ""
		val = &empty
	}
	c.addAll(c.s.envAssign(name, val, st.cwd, c.env))
	if persist {
		if a.Naked {
			return // export NAME: value unchanged
		}
		data := val == nil && a.Value != nil && c.dataWord(a.Value.Parts, st)
		oldArray, hadArray := st.arrays[name]
		st.setVar(name, val)
		st.setUnbounded(name, val == nil && a.Value != nil && c.unboundedWord(a.Value.Parts, st))
		if a.Array != nil && !a.Naked && (!a.Append || hadArray) {
			c.knownArray(a, st, oldArray)
		}
		setFlag(&st.dataVars, name, data)
		delete(st.numeric, name)
		if a.Value != nil && len(a.Value.Parts) == 1 {
			if _, ok := a.Value.Parts[0].(*syntax.ArithmExp); ok {
				st.setNumeric(name) // x=$((…)) holds a number
			}
		}
	}
}

// knownArray records an indexed array assigned whole when every element
// is known (after the assignment made the name unknown).
func (c *checker) knownArray(a *syntax.Assign, st *shellState, old []string) {
	name := a.Name.Value
	list := append([]string(nil), old...) // a+=(…) appends to the old elements

	for _, e := range a.Array.Elems {
		if e.Index != nil || e.Value == nil {
			return // a[i]=x, associative arrays
		}
		for _, f := range c.words([]*syntax.Word{e.Value}, st) {
			if !f.known {
				return
			}
			list = append(list, f.s)
		}
	}
	setIn(&st.arrays, name, list)
	first := ""
	if len(list) > 0 {
		first = list[0]
	}
	st.vars[name] = &first // $a is the first element
}

// redirect checks one redirection: the file read or written, heredocs and
// the commands nested in its word.
func (c *checker) redirect(r *syntax.Redirect, st *shellState) {
	if r.Hdoc != nil {
		c.nested(r.Hdoc, st)
	}
	if r.Word == nil {
		return
	}
	c.nested(r.Word, st)
	if r.N == nil || r.N.Value == "0" {
		switch r.Op {
		case syntax.WordHdoc:
			// <<< WORD: the word and a newline.
			st.stdinText = nil
			if v, ok := c.literal(r.Word, st); ok {
				v += "\n"
				st.stdinText = &v
			}
		case syntax.Hdoc, syntax.DashHdoc:
			st.stdinText = nil
			if v, ok := c.literal(r.Hdoc, st); ok && r.Hdoc != nil {
				st.stdinText = &v
			}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			st.stdinText = nil
		}
	}
	var access Access
	switch r.Op {
	case syntax.RdrIn:
		access = AccessRead
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.AppClob, syntax.RdrInOut:
		access = AccessWrite
	case syntax.DplIn, syntax.DplOut:
		// n>&m duplicates a descriptor; >&file (no digits) writes a file.
		if lit, ok := c.literal(r.Word, st); ok && (isFD(lit) || lit == "-") {
			return
		}
		access = AccessWrite
		if r.Op == syntax.DplIn {
			access = AccessRead
		}
	default: // here-docs and here-strings
		return
	}
	if isProcSubstWord(r.Word) {
		return // >(…): its commands were checked; the target is a pipe
	}
	args := c.words([]*syntax.Word{r.Word}, st)
	if len(args) != 1 {
		c.add(Violation{Reason: ReasonRedirectNotInScope, Resource: clip(nodeText(r.Word)),
			Message: "a redirection target must expand to exactly one file"})
		return
	}
	if !args[0].known {
		if args[0].unbounded {
			c.add(Violation{Reason: ReasonRedirectNotInScope, Resource: clip(nodeText(r.Word)),
				Message: "the redirection target " + clip(nodeText(r.Word)) + " is known only at run time (a variable or parameter expansion), so it cannot be checked against the scope; write the path literally"})
		} else {
			c.addAll(c.s.deniedTail(args[0].suffix, "the redirection target "+clip(nodeText(r.Word))))
		}
		return // a command's output: checked by the run-time open handler
	}
	if !filepath.IsAbs(args[0].s) && st.cwd == "" && !safeDevice(args[0].s, access) {
		c.unknownCwd("redirection " + args[0].s)
	}
	if access == AccessWrite {
		c.noteWrite(args[0].s, st.cwd)
	}
	if access == AccessRead && len(args) == 1 && args[0].known && (r.N == nil || r.N.Value == "0") {
		st.stdinFile = args[0].s // < FILE: what the command reads on standard input
	}
	c.addAll(c.s.checkRedirect(args[0].s, access, st.cwd, c.env))
}

// checkRedirect checks one redirection target.
func (s *Scope) checkRedirect(target string, access Access, cwd string, env Env) []Violation {
	if safeDevice(target, access) {
		return nil
	}
	if !filepath.IsAbs(target) && cwd == "" {
		return nil // relative to a directory known only at run time
	}
	what := "redirection to"
	if access == AccessRead {
		what = "redirection from"
	}
	return s.checkPath(target, access, cwd, env, pathSource{redirect: true, what: what + " " + target})
}

// safeDevice reports whether a path is a harmless device file.
func safeDevice(p string, access Access) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",
		"/dev/fd/0", "/dev/fd/1", "/dev/fd/2":
		return true
	case "/dev/zero", "/dev/urandom", "/dev/random":
		return access == AccessRead
	}
	return false
}

// isFD reports whether s is a file descriptor number (2>&1).
func isFD(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range strings.TrimSuffix(s, "-") {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isProcSubstWord reports whether a word is a process substitution <(…).
func isProcSubstWord(w *syntax.Word) bool {
	return len(w.Parts) == 1 && isProcSubst(w.Parts[0])
}

// isProcSubst reports whether a word part is a process substitution.
func isProcSubst(p syntax.WordPart) bool {
	_, ok := p.(*syntax.ProcSubst)
	return ok
}

// nodeText prints a syntax node as the shell would read it back.
func nodeText(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}

// clip shortens text for a resource field.
func clip(s string) string {
	s = OneLine(s)
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// funcNames returns the names a function declaration defines (none for an
// anonymous one).
func funcNames(fd *syntax.FuncDecl) []string {
	var out []string
	if fd.Name != nil {
		out = append(out, fd.Name.Value)
	}
	for _, n := range fd.Names {
		out = append(out, n.Value)
	}
	return out
}

// newState is the shell state at the start of a command line run in cwd.
func newState(cwd string) *shellState {
	return &shellState{cwd: cwd}
}

// subscriptName refuses a variable name with an array subscript that is not
// plain: bash evaluates subscripts (test -v 'a[$(cmd)]').
func (c *checker) subscriptName(w *syntax.Word, st *shellState) {
	v, ok := c.literal(w, st)
	if !ok || (strings.Contains(v, "[") && !safeArith(strings.TrimSuffix(v[strings.IndexByte(v, '[')+1:], "]"))) {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: clip(nodeText(w)),
			Message: "a variable name with an array subscript is evaluated by bash and can run commands"})
	}
}
