package policy

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func (c *checker) callExpr(ce *syntax.CallExpr, st *shellState) {
	if len(ce.Args) > 0 {
		c.calls++
	}
	persist := len(ce.Args) == 0
	for _, a := range ce.Assigns {
		c.assign(a, st, persist)
	}
	if len(ce.Args) == 0 {
		return
	}
	args := c.words(ce.Args, st)
	if !literalWord(ce.Args[0]) {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: clip(nodeText(ce.Args[0])),
			Message: "the program to run comes from an expansion (variable, substitution); name the program literally"})
		return
	}
	c.simple(args, st, true)
}

// literalWord reports whether a word is literal text after quote removal
// (quotes, escapes, $'…' and brace lists allowed; no expansions).
func literalWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// simple checks one simple command. Functions and builtins are looked up
// only when lookup is true (not for commands run by exec, env, xargs…).
func (c *checker) simple(args []arg, st *shellState, lookup bool) {
	if len(args) == 0 {
		return
	}
	if !args[0].known {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "$…",
			Message: "the program to run is known only at run time (a variable or substitution in command position); name the program literally"})
		return
	}
	name := args[0].s
	if name == "" {
		c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: `""`, Message: "empty program name"})
		return
	}
	if lookup && !strings.Contains(name, "/") {
		if st.funcs[name] {
			return // a function this shell certainly defined: its body is checked
		}
		if c.builtin(name, args, st) {
			return
		}
	}
	c.external(args, st)
}

// builtin checks a shell builtin; it reports false for names that are not
// builtins handled here (they are then checked as programs).
func (c *checker) builtin(name string, args []arg, st *shellState) bool {
	switch name {
	case "unset":
		fn := false
		for _, a := range args[1:] {
			switch {
			case !a.known:
				st.funcs = map[string]bool{} // which function goes is unknown
			case a.s == "-f":
				fn = true
			case a.s == "-v" || strings.HasPrefix(a.s, "-"):
			default:
				delete(st.funcs, a.s) // unset NAME removes a function when no variable has the name
				if !fn {
					st.vars[a.s] = ptr("") // an unset variable expands to nothing
					delete(st.unbounded, a.s)
				}
			}
		}
		return true
	case "test", "[":
		for i := 1; i+1 < len(args); i++ {
			if args[i].known && args[i].s == "-v" && (!args[i+1].known || strings.ContainsAny(args[i+1].s, "[]")) {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: name + " -v",
					Message: "a variable name with an array subscript is evaluated by bash and can run commands"})
			}
		}
		return true
	case "shopt":
		set := true
		for _, a := range args[1:] {
			switch {
			case !a.known:
			case a.s == "-s":
				set = true
			case a.s == "-u":
				set = false
			case strings.HasPrefix(a.s, "-"):
			default:
				if st.shopt == nil {
					st.shopt = map[string]bool{}
				}
				st.shopt[a.s] = set
				st.cfg = nil // expansions follow the new options
			}
		}
		return true
	case "set":
		for i, a := range args[1:] {
			if a.known && a.s == "--" {
				// set -- ARGS sets the positional parameters.
				st.pos, st.posKnown = nil, true
				for _, b := range args[i+2:] {
					if !b.known {
						st.posKnown = false
					}
					st.pos = append(st.pos, b.s)
				}
				break
			}
		}
		return true
	case "true", "false", ":", "echo", "pwd", "shift", "exit", "return",
		"break", "continue", "wait", "type", "umask", "ulimit",
		"times", "jobs", "fg", "bg", "disown", "dirs", "popd", "caller",
		"help", "logout", "suspend":
		return true
	case "read", "printf", "mapfile", "readarray", "getopts":
		// They assign variables: the names must not be dangerous ones.
		for _, a := range args[1:] {
			if name == "mapfile" || name == "readarray" {
				if a.known && strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "C") {
					c.add(Violation{Reason: ReasonDynamicCommand, Resource: name + " -C",
						Message: name + " -C runs a callback command string, which cannot be checked"})
				}
			}
		}
		for _, n := range assignedNames(name, args[1:]) {
			if n.known && strings.ContainsAny(n.s, "[]") {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: name + " " + n.s,
					Message: "a variable name with an array subscript is evaluated by bash and can run commands"})
				continue
			}
			if !n.known {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
					Message: name + " assigns a variable whose name is known only at run time"})
				continue
			}
			c.addAll(c.s.envAssign(n.s, nil, st.cwd, c.env))
			st.vars[n.s] = nil
			// A line read from a pipe is a checked command's output; read
			// from anywhere else, or made by printf or getopts, it is data.
			st.setUnbounded(n.s, !(st.pipedIn && (name == "read" || name == "mapfile" || name == "readarray")))
		}
		return true
	case "cd", "pushd":
		c.cd(args, st)
		return true
	case "eval", "source", ".", "alias", "enable", "fc", "bind":
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
			Message: fmt.Sprintf("%s runs or defines code that cannot be checked before it runs; run the commands themselves", name)})
		return true
	case "hash":
		for _, a := range args[1:] {
			if !a.known || strings.HasPrefix(a.s, "-p") {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: "hash -p",
					Message: "hash -p makes a name run another program"})
			}
		}
		return true
	case "trap":
		c.trap(args, st)
		return true
	case "exec":
		rest := args[1:]
		for len(rest) > 0 && rest[0].known && strings.HasPrefix(rest[0].s, "-") {
			if rest[0].s == "--" {
				rest = rest[1:]
				break
			}
			if rest[0].s == "-a" && len(rest) > 1 {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		c.simple(rest, st, false)
		return true
	case "command":
		rest := args[1:]
		for len(rest) > 0 && rest[0].known && strings.HasPrefix(rest[0].s, "-") {
			if rest[0].s == "-v" || rest[0].s == "-V" {
				return true // only looks the name up
			}
			if rest[0].s == "--" {
				rest = rest[1:]
				break
			}
			rest = rest[1:]
		}
		if len(rest) > 0 && rest[0].known && !strings.Contains(rest[0].s, "/") && c.builtin(rest[0].s, rest, st) {
			return true
		}
		c.simple(rest, st, false)
		return true
	case "builtin":
		if len(args) > 1 && args[1].known && c.builtin(args[1].s, args[1:], st) {
			return true
		}
		if len(args) > 1 {
			c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: "builtin",
				Message: "builtin names a command that is not a checked shell builtin"})
		}
		return true
	case "export", "declare", "typeset", "local", "readonly", "let":
		// Reached only through command/builtin: assignments as words.
		for _, a := range args[1:] {
			if !a.known {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
					Message: name + " with an argument known only at run time cannot be checked"})
				continue
			}
			if n, v, ok := strings.Cut(a.s, "="); ok {
				c.addAll(c.s.envAssign(n, &v, st.cwd, c.env))
			}
		}
		return true
	}
	return false
}

func (c *checker) cd(args []arg, st *shellState) {
	var target *arg
	physical := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.known && (a.s == "-L" || a.s == "-P" || a.s == "-e" || a.s == "-@" || a.s == "--" || a.s == "-Pe" || a.s == "-eP") {
			physical = physical || strings.Contains(a.s, "P")
			continue
		}
		target = &args[i]
		break
	}
	if target == nil {
		if c.env.Home == "" {
			st.cwd = ""
			return
		}
		target = &arg{s: c.env.Home, known: true}
	}
	if target.known && target.s == "-" {
		// cd - goes to $OLDPWD.
		if v, ok := st.vars["OLDPWD"]; ok && v != nil && *v != "" {
			target = &arg{s: *v, known: true}
		} else {
			st.cwd = ""
			return
		}
	}
	if !target.known && target.unbounded {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "cd",
			Message: "cd to a directory known only at run time (a variable or parameter expansion) cannot be checked, nor can the relative paths after it; cd to a literal directory"})
		st.cwd = ""
		return
	}
	if !target.known || (st.cwd == "" && !filepath.IsAbs(target.s)) {
		st.cwd = "" // a command's output: relative paths after it are checked at run time
		return
	}
	abs, err := absPath(target.s, st.cwd, c.env)
	if err != nil {
		c.add(Violation{Reason: ReasonInvalidArguments, Resource: target.s, Message: "cd: " + err.Error()})
		st.cwd = ""
		return
	}
	c.addAll(c.s.checkAbs(abs, AccessRead, c.env, pathSource{what: "cd " + target.s}))
	st.vars["OLDPWD"] = ptr(st.cwd)
	if physical {
		real, err := canonicalize(abs, c.env.fs())
		if err != nil {
			st.cwd = ""
			return
		}
		st.cwd = real
		return
	}
	st.cwd = filepath.Clean(abs) // bash's cd is logical by default
}

func ptr(s string) *string { return &s }

func (c *checker) trap(args []arg, st *shellState) {
	rest := args[1:]
	for len(rest) > 0 && rest[0].known && (rest[0].s == "-p" || rest[0].s == "-l" || rest[0].s == "-P") {
		return // lists traps
	}
	if len(rest) > 0 && rest[0].known && rest[0].s == "--" {
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return
	}
	action := rest[0]
	if action.known && (action.s == "-" || action.s == "") {
		return
	}
	if !action.known {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "trap", Message: "a trap action known only at run time cannot be checked"})
		return
	}
	c.program(action.s, st.clone())
}

// external checks a program run: allow and deny entries, its arguments, the
// commands it wraps.
func (c *checker) external(args []arg, st *shellState) {
	prog := args[0].s
	base := prog
	resolvedProg := ""
	if strings.Contains(prog, "/") {
		base = path.Base(prog)
		if !filepath.IsAbs(prog) && st.cwd == "" {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: prog,
				Message: fmt.Sprintf("program %s is relative to a directory known only at run time", prog)})
		} else {
			abs, err := absPath(prog, st.cwd, c.env)
			if err == nil {
				resolvedProg = abs
				c.addAll(c.s.checkAbs(abs, AccessRead, c.env, pathSource{what: "program " + prog}))
			} else {
				c.add(Violation{Reason: ReasonInvalidArguments, Resource: prog, Message: "program " + prog + ": " + err.Error()})
			}
		}
	}
	sp := c.s.programs.lookup(base)
	p := parseArgs(base, sp, args[1:])
	c.denyCheck(p, resolvedProg)
	var allowed []*entry
	for i := range c.s.allow {
		e := &c.s.allow[i]
		if e.matches(p, resolvedProg) {
			allowed = append(allowed, e)
		}
	}
	if len(allowed) == 0 {
		c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: base, Rule: "shell_commands.allow",
			Message: fmt.Sprintf("%s is not in shell_commands.allow of this session's scope; the user can allow it with: %s --allow-command %s", base, ExpandCommand, quoteArg(allowHint(base, p)))})
	}
	c.analyze(p, allowed, st)
}

// allowHint is the allow entry a denial proposes: the program, and its
// subcommand when it has subcommands.
func allowHint(base string, p *parsed) string {
	if len(p.subPath) > 0 {
		return base + " " + p.subPath[0]
	}
	return base
}

func argvText(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.known {
			parts[i] = a.s
		} else {
			parts[i] = "$…"
		}
	}
	return strings.Join(parts, " ")
}

// allowEntries are the allow entries that match a command.
type allowEntries []*entry

// names reports whether one of the entries names an option or subcommand.
func (es allowEntries) names(id string) bool {
	for _, e := range es {
		if e.names(id) {
			return true
		}
	}
	return false
}

// danger records a dangerous argument unless a matching allow entry names it.
func (c *checker) danger(p *parsed, allowed allowEntries, id, what, why string) {
	if allowed.names(id) {
		return
	}
	c.add(Violation{Reason: ReasonDangerousArgument, Resource: p.prog + " " + what, Rule: "dangerous arguments of " + p.prog,
		Message: fmt.Sprintf("%s %s %s; only an allow entry that names it (e.g. %q) permits that", p.prog, what, why, p.prog+" "+id)})
}

// analyze checks what a program's arguments make it do.
func (c *checker) analyze(p *parsed, allowed allowEntries, st *shellState) {
	if p.dynamicSub {
		c.danger(p, allowed, "$…", "subcommand known only at run time", "cannot be checked")
	}
	if len(p.subPath) > 0 {
		sp := p.sp
		for _, sub := range p.subPath {
			if sp == nil {
				break
			}
			if why, ok := sp.subDanger[sub]; ok {
				c.danger(p, allowed, sub, sub, why)
			}
			next := sp.subs[sub]
			if next == nil {
				next = sp.defSub
			}
			sp = next
		}
	}
	cwd := st.cwd
	inPlace := false
	patternGiven := false
	for _, o := range p.occ {
		if o.has && o.value.known && c.fileURL(p, o.value.s, cwd) {
			continue
		}
		if o.opt == nil {
			// An option the table does not know: a path given as its value
			// is still a path.
			if o.has && o.value.known && looksLikePath(o.value.s) {
				c.operand(o.value.s, AccessRead, cwd, p.prog+" "+o.id)
			}
			continue
		}
		switch eff := o.opt.eff; {
		case eff.dangerous():
			c.danger(p, allowed, o.id, o.text, o.opt.why)
		case eff == effRead || eff == effPatternFile:
			if o.has && !o.value.known && o.value.unbounded {
				c.unknownOperand(p.prog + " " + o.id)
			} else if o.has && o.value.known && o.value.s != "-" {
				c.operand(o.value.s, AccessRead, cwd, p.prog+" "+o.id)
			}
			patternGiven = patternGiven || eff == effPatternFile
		case eff == effWrite:
			if o.has && !o.value.known && o.value.unbounded {
				c.unknownOperand(p.prog + " " + o.id)
			} else if o.has && o.value.known && o.value.s != "-" {
				c.operand(o.value.s, AccessWrite, cwd, p.prog+" "+o.id)
			}
		case eff == effChdir:
			if o.has && o.value.known {
				if abs, err := absPath(o.value.s, cwd, c.env); err == nil && (cwd != "" || filepath.IsAbs(o.value.s)) {
					c.addAll(c.s.checkAbs(abs, AccessRead, c.env, pathSource{what: p.prog + " " + o.id}))
					cwd = abs
				} else {
					cwd = ""
				}
			} else if o.has {
				cwd = ""
			}
		case eff == effInPlace:
			inPlace = true
		case eff == effPattern:
			patternGiven = true
		}
	}
	leaf := p.leaf
	mode := opRead
	if leaf != nil {
		mode = leaf.operands
	}
	if inPlace {
		mode = opWrite
		if leaf != nil && leaf.operands == opPatternFirst && !patternGiven {
			mode = opSkipFirst
		}
	}
	if mode == opPatternFirst && patternGiven {
		mode = opRead
	}
	if p.prog == "ls" && p.has("-d") {
		mode = opNone // ls -d prints the names it is given, nothing below them
	}
	pos := p.pos
	// Subcommand words are not files.
	if len(p.subPath) > 0 && len(pos) >= len(p.subPath) {
		pos = pos[len(p.subPath):]
	}
	for i, a := range pos {
		if a.procSubst {
			continue
		}
		if !a.known {
			if a.unbounded && !a.dash && operandChecked(mode, i, len(pos)) {
				c.unknownOperand(p.prog + " operand")
			}
			continue
		}
		if c.fileURL(p, a.s, cwd) {
			continue
		}
		if strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			// An option the table does not know, given where operands go
			// (after python -m MODULE, after --): --dir=/x, -d/x.
			if _, v, ok := strings.Cut(a.s, "="); ok && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~")) {
				c.operand(v, AccessRead, cwd, p.prog+" "+a.s)
			} else if i := strings.IndexAny(a.s, "/~"); i > 1 && !strings.Contains(a.s[:i], "=") {
				c.operand(a.s[i:], AccessRead, cwd, p.prog+" "+a.s)
			}
			continue
		}
		access, check := AccessRead, looksLikePath(a.s) || c.exists(a.s, cwd)
		switch mode {
		case opNone:
			check = false
		case opWrite:
			access, check = AccessWrite, true
		case opWriteLast:
			if i == len(pos)-1 && len(pos) > 1 {
				access, check = AccessWrite, true
			}
		case opPatternFirst:
			if i == 0 {
				check = false
			}
		case opSkipFirst:
			if i == 0 {
				check = false
			} else {
				access, check = AccessWrite, true
			}
		case opWriteSecond:
			if i == 1 {
				access, check = AccessWrite, true
			}
		case opWriteFirst:
			if i == 0 {
				access, check = AccessWrite, true
			}
		}
		if check {
			c.operand(a.s, access, cwd, p.prog+" operand")
		}
	}
	if leaf != nil && leaf.wrapper {
		c.wrapped(p, leaf, cwd, st)
	}
	if p.sp != nil && p.sp.extra != nil {
		p.sp.extra(c, p, allowed, &shellState{cwd: cwd, vars: st.vars, pos: st.pos, posKnown: st.posKnown, funcs: st.funcs, cond: st.cond})
	}
	if leaf != nil && leaf != p.sp && leaf.extra != nil {
		leaf.extra(c, p, allowed, &shellState{cwd: cwd, vars: st.vars, pos: st.pos, posKnown: st.posKnown, funcs: st.funcs, cond: st.cond})
	}
}

// operand checks one file operand of a program.
func (c *checker) operand(s string, access Access, cwd, what string) {
	if safeDevice(s, access) || s == "-" {
		return
	}
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~") && cwd == "" {
		return // relative to a directory known only at run time
	}
	c.addAll(c.s.checkPath(s, access, cwd, c.env, pathSource{what: what + " " + s}))
}

// unknownOperand refuses a file operand whose value is known only at run
// time and is not bounded by a checked command (see arg.unbounded): it may
// name any file, "../" included, so the scope cannot vouch for it.
func (c *checker) unknownOperand(what string) {
	c.add(Violation{Reason: ReasonDynamicCommand, Resource: what,
		Message: what + " is known only at run time (a variable or command substitution), so it cannot be checked against the scope; write the path literally"})
}

// operandChecked reports whether the operand at index i of n is checked as
// a file in mode whatever its value: an operand known only at run time in
// such a position is refused.
func operandChecked(mode operandMode, i, n int) bool {
	switch mode {
	case opNone:
		return false
	case opPatternFirst, opSkipFirst:
		return i > 0
	}
	return true
}

// looksLikePath reports whether an operand is spelled as a path.
func looksLikePath(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") ||
		strings.Contains(s, "/")
}

// exists reports whether a relative operand names an existing file.
func (c *checker) exists(s, cwd string) bool {
	if cwd == "" || s == "" || strings.ContainsRune(s, 0) {
		return false
	}
	_, err := c.env.fs().Lstat(filepath.Join(cwd, s))
	return err == nil
}

// wrapped checks the command a wrapper (env, timeout, xargs…) runs.
func (c *checker) wrapped(p *parsed, sp *spec, cwd string, st *shellState) {
	rest := p.rest
	if sp.split != "" {
		for _, v := range p.values(sp.split) {
			if !v.known {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: p.prog + " " + sp.split,
					Message: p.prog + " " + sp.split + " with a string known only at run time cannot be checked"})
				continue
			}
			rest = append(knownArgs(strings.Fields(v.s)), rest...)
		}
	}
	if sp.assignsFirst {
		for len(rest) > 0 && rest[0].known && isAssignment(rest[0].s) {
			name, val, _ := strings.Cut(rest[0].s, "=")
			c.addAll(c.s.envAssign(name, &val, cwd, c.env))
			rest = rest[1:]
		}
		for len(rest) > 0 && !rest[0].known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: p.prog,
				Message: p.prog + " runs a program known only at run time"})
			return
		}
	}
	if len(rest) == 0 {
		return
	}
	if sp.appendsInput {
		repl := ""
		for _, id := range []string{"-I", "-i"} {
			for _, v := range p.values(id) {
				repl = v.s
			}
			if repl == "" && p.has(id) && id == "-i" {
				repl = "{}"
			}
		}
		marked := make([]arg, 0, len(rest)+1)
		for i, a := range rest {
			if i > 0 && repl != "" && a.known && strings.Contains(a.s, repl) {
				a = arg{}
			}
			marked = append(marked, a)
		}
		rest = append(marked, arg{}) // the input items
	}
	inner := st
	if cwd != st.cwd {
		inner = st.clone()
		inner.cwd = cwd
	}
	c.simple(rest, inner, false)
}

// isAssignment reports whether a word is NAME=VALUE.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// checkArgv checks one fully expanded simple command at run time.
func (s *Scope) checkArgv(argv []string, cwd string, env Env) []Violation {
	c := &checker{s: s, env: env, seen: map[string]bool{}}
	c.simple(knownArgs(argv), newState(cwd), true)
	return c.vs
}

// assignedNames returns the variable names a builtin assigns.
func assignedNames(builtin string, args []arg) []arg {
	var names []arg
	valued := map[string]bool{"read": true, "mapfile": true, "readarray": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.known && builtin == "printf" && strings.HasPrefix(a.s, "-v") && len(a.s) > 2 {
			names = append(names, arg{s: a.s[2:], known: true}) // -vNAME
			continue
		}
		if a.known && strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			flag := a.s[len(a.s)-1:]
			takesValue := strings.ContainsAny(flag, "adDnNptiuOsCcv") && valued[builtin] || (builtin == "printf" && flag == "v")
			if takesValue && i+1 < len(args) {
				i++
				if flag == "a" || flag == "v" {
					names = append(names, args[i])
				}
			}
			continue
		}
		switch builtin {
		case "read":
			names = append(names, a)
		case "mapfile", "readarray":
			names = append(names, a)
		case "getopts":
			if i == 1 {
				names = append(names, a)
			}
		}
		if builtin == "printf" {
			break
		}
	}
	return names
}

// denyCheck applies the deny entries to a parsed command.
func (c *checker) denyCheck(p *parsed, resolvedProg string) {
	for i := range c.s.denyCmds {
		e := &c.s.denyCmds[i]
		// Arguments known only at run time may carry the options the entry
		// names: the entry then matches (fail closed).
		if e.matches(p, resolvedProg) || (p.unknownOpts && len(e.opts) > 0 && e.matchesProgram(p.prog, resolvedProg) && e.prefixOf(p)) {
			c.add(Violation{Reason: ReasonCommandDenied, Resource: e.text, Rule: e.rule,
				Message: fmt.Sprintf("%s %s matches %s of this session's scope", p.prog, clip(argvText(p.args)), e.rule)})
		}
	}
}

// fileURL checks a local file named by a URL (file:///x, file:/x,
// git+file:///x); it reports whether s was one.
func (c *checker) fileURL(p *parsed, s, cwd string) bool {
	i := strings.Index(s, "file:")
	if i < 0 || (i > 0 && s[i-1] != '+' && s[i-1] != '=' && s[i-1] != '@' && s[i-1] != ' ') {
		return false
	}
	rest := s[i+len("file:"):]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if !strings.HasPrefix(rest, "/") {
			if host, path, ok := strings.Cut(rest, "/"); ok && (host == "" || host == "localhost") {
				rest = "/" + path
			} else {
				c.add(Violation{Reason: ReasonPathNotInScope, Resource: s, Message: p.prog + ": a file URL with a host cannot be checked: " + s})
				return true
			}
		}
	}
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	c.operand(rest, AccessRead, cwd, p.prog+" file URL")
	return true
}
