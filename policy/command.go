package policy

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// callExpr checks a simple command: its assignments, then its words
// expanded, then the program they run.
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
	defer func(was bool) { st.editorSafe = was }(st.editorSafe)
	for _, a := range ce.Assigns {
		if a.Name != nil && editorVar(a.Name.Value) {
			v, ok := c.literal(a.Value, st)
			st.editorSafe = ok && editorRunsNothing(a.Name.Value, v)
		}
	}
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
			if body := st.funcBodies[name]; body != nil && !c.calling[name] {
				// The body, checked with this call's arguments as $1…
				inner := st.clone(forSubshell)
				inner.pos, inner.posKnown, inner.posChecked = nil, true, false
				for _, a := range args[1:] {
					if !a.known {
						inner.posKnown = false
						break
					}
					inner.pos = append(inner.pos, a.s)
				}
				setIn(&c.calling, name, true)
				c.stmt(body, inner)
				delete(c.calling, name)
			}
			if st.cwdFuncs[name] {
				st.cwd = "" // its body changes the directory, from where it is called
			}
			for _, v := range st.funcVars[name] {
				st.setVar(v, nil) // its body assigns them
				st.setUnbounded(v, true)
			}
			return // a function this shell certainly defined: its body is checked
		}
		if c.builtin(name, args, st) {
			return
		}
	}
	c.external(args, st)
}

// external checks a program run, step by step: resolve the program, match
// its arguments to its table row, match the allow and deny entries, then
// analyze what the arguments make it do.
func (c *checker) external(args []arg, st *shellState) {
	prog := c.resolveProgram(args[0].s, st.cwd)
	p := parseArgs(prog.base, c.s.programs.lookup(prog.base), args[1:])
	c.denyCheck(p, prog.path)
	allowed := c.matchAllow(p, prog)
	c.analyze(p, allowed, st)
}

// program is a command word resolved.
type program struct {
	word string // as written
	base string // the name the table and the entries know it by
	// path is the file it runs: for a word with a slash the file it names,
	// for a bare word the file found on the trusted PATH ("" when Env.Path
	// is not given or the name is not found).
	path string
	// byPath: the word has a slash. It then matches an allow entry that
	// names a bare program only when it is the very file that name finds
	// on the trusted PATH.
	byPath bool
}

// resolveProgram resolves a program word; a word with a slash must name a
// file readable in the scope.
func (c *checker) resolveProgram(word, cwd string) program {
	prog := program{word: word, base: word}
	if !strings.Contains(word, "/") {
		if c.env.Path != nil {
			prog.path, _ = c.s.LookPath(word, cwd, c.env)
		}
		return prog
	}
	prog.base, prog.byPath = path.Base(word), true
	if !filepath.IsAbs(word) && cwd == "" {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: word,
			Message: fmt.Sprintf("program %s is relative to a directory known only at run time", word)})
		return prog
	}
	abs, err := absPath(word, cwd, c.env)
	if err != nil {
		c.add(Violation{Reason: ReasonInvalidArguments, Resource: word, Message: "program " + word + ": " + err.Error()})
		return prog
	}
	prog.path = filepath.Clean(abs)
	if real, err := canonicalize(abs, c.env.fs()); err == nil {
		prog.path = real
	}
	c.addAll(c.s.checkAbs(abs, AccessRead, c.env, pathSource{what: "program " + word}))
	return prog
}

// matchAllow returns the allow entries that match the command, refusing
// it when there is none.
func (c *checker) matchAllow(p *parsed, prog program) allowEntries {
	var allowed allowEntries
	byName := false // an entry names the program, but not the file the word names
	for i := range c.s.allow {
		e := &c.s.allow[i]
		if !e.matches(p, prog.path) {
			continue
		}
		if prog.byPath && e.path == "" && !c.sameProgram(prog) {
			byName = true
			continue
		}
		allowed = append(allowed, e)
	}
	switch {
	case len(allowed) > 0:
	case byName:
		trusted, err := c.s.LookPath(prog.base, "", c.env)
		if err != nil {
			trusted = "none: " + err.Error()
		}
		w := Widening{Flag: WidenCommand, Value: prog.path}
		c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: prog.path, Rule: "shell_commands.allow", Widen: []Widening{w},
			Message: fmt.Sprintf("%s names a program by path; shell_commands.allow allows %s by name, which is the %s of the trusted PATH (%s), and this is another file; run %s by name, or the user can allow this file with: %s",
				prog.word, prog.base, prog.base, trusted, prog.base, ExpandHint(w))})
	default:
		w := Widening{Flag: WidenCommand, Value: allowHint(prog.base, p)}
		c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: prog.base, Rule: "shell_commands.allow", Widen: []Widening{w},
			Message: fmt.Sprintf("%s is not in shell_commands.allow of this session's scope; the user can allow it with: %s", prog.base, ExpandHint(w))})
	}
	return allowed
}

// sameProgram reports whether a program named by path is the file its base
// name finds on the trusted PATH.
func (c *checker) sameProgram(prog program) bool {
	if c.env.Path == nil || prog.path == "" {
		return false
	}
	trusted, err := c.s.LookPath(prog.base, "", c.env)
	return err == nil && trusted == prog.path
}

// allowHint is the allow entry a denial proposes: the program, and its
// subcommand when it has subcommands.
func allowHint(base string, p *parsed) string {
	if len(p.subPath) > 0 {
		return base + " " + p.subPath[0]
	}
	return base
}

// argvText shows a command's words, $… for those known only at run time.
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

// note records a condition an allowed decision holds under, said in its
// message (once however often it is met).
func (c *checker) note(msg string) {
	if c.env.notes == nil || slices.Contains(*c.env.notes, msg) {
		return
	}
	*c.env.notes = append(*c.env.notes, msg)
}

// unconfined records a dangerous argument, unless a matching allow entry
// names it, where the caller runs the command itself (check): what it
// makes the program do is bounded only by the private view of a confined
// run, which allows it.
func (c *checker) unconfined(p *parsed, allowed allowEntries, id, what, why string) {
	if c.env.execution() == ExecutionConfined {
		return
	}
	c.danger(p, allowed, id, what, why+", which nothing confines when the caller runs the command (scopegate call runs it in the private view)")
}

// analyze checks what a program's arguments make it do: its subcommands,
// its options, its operands, the command it wraps and its own checks.
func (c *checker) analyze(p *parsed, allowed allowEntries, st *shellState) {
	c.checkSubcommands(p, allowed)
	eff := c.checkOptions(p, allowed, st.cwd)
	c.unknownOptions(p, allowed)
	c.checkOperands(p, operandModeOf(p, eff), eff.cwd)
	c.programChecks(p, allowed, eff.cwd, st)
}

// unknownOptions refuses, where the caller runs the command, an argument
// whose value is data known only at run time (a file's content, a
// variable read at run time) to a program with options that run programs
// or write files: the value may be such an option (find $(cat f) with f
// holding -exec). Output of commands that print names or numbers (git
// rev-parse, git ls-files, go list, find, nproc…) is not data.
func (c *checker) unknownOptions(p *parsed, allowed allowEntries) {
	if c.env.execution() == ExecutionConfined || !p.unknownOpts {
		return
	}
	for _, a := range p.args {
		if a.known || a.number || !(a.unbounded || a.data) {
			continue
		}
		if strings.HasPrefix(a.lit, "--") && strings.Contains(a.lit, "=") && !strings.Contains(a.lit, "flags=") {
			continue // --format="$X": the option is literal, only its value is not (flags= values are split into options)
		}
		if specRunsOrWrites(p.sp) || p.leaf != p.sp && specRunsOrWrites(p.leaf) {
			c.danger(p, allowed, "$…", "argument known only at run time",
				"may be an option that runs a program or writes a file, since its value is data read at run time; write the argument literally")
			return
		}
	}
}

// specRunsOrWrites reports whether a table row has an option that runs a
// program or code, changes configuration, or writes a file.
func specRunsOrWrites(sp *spec) bool {
	if sp == nil {
		return false
	}
	if sp.runsOrWrites {
		return true
	}
	for _, o := range sp.opts {
		if o.eff.dangerous() || o.eff == effWrite {
			return true
		}
	}
	return false
}

// checkSubcommands refuses subcommands that are dangerous in themselves, and
// one known only at run time.
func (c *checker) checkSubcommands(p *parsed, allowed allowEntries) {
	if p.dynamicSub {
		c.danger(p, allowed, "$…", "subcommand known only at run time", "cannot be checked")
	}
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

// optionEffects is what a program's options change for its operands.
type optionEffects struct {
	cwd          string // the directory relative operands are in (-C dir); "" when unknown
	inPlace      bool   // operands are edited in place (sed -i)
	patternGiven bool   // the pattern or script came from an option, not the first operand
}

// checkOptions checks every option by its effect in the table: dangerous
// ones, files read and written, directories changed to.
func (c *checker) checkOptions(p *parsed, allowed allowEntries, cwd string) optionEffects {
	eff := optionEffects{cwd: cwd}
	for _, o := range p.occ {
		if o.has && o.value.known && c.fileURL(p, o.value.s, eff.cwd) {
			continue
		}
		if o.opt == nil {
			// An option the table does not know: a path given as its value
			// is still a path.
			if o.has && o.value.known && (looksLikePath(o.value.s) || strings.HasPrefix(o.value.s, ".") || c.exists(o.value.s, eff.cwd)) {
				c.operand(o.value.s, AccessRead, eff.cwd, p.prog+" "+o.id)
			}
			continue
		}
		switch e := o.opt.eff; {
		case e.dangerous():
			c.danger(p, allowed, o.id, o.text, o.opt.why)
		case e == effRead || e == effPatternFile:
			c.optionFile(p, o, AccessRead, eff.cwd)
			eff.patternGiven = eff.patternGiven || e == effPatternFile
		case e == effWrite:
			c.optionFile(p, o, AccessWrite, eff.cwd)
		case e == effChdir:
			eff.cwd = c.optionChdir(p, o, eff.cwd)
		case e == effInPlace:
			eff.inPlace = true
		case e == effPattern:
			eff.patternGiven = true
		}
	}
	return eff
}

// optionFile checks the file an option's value names.
func (c *checker) optionFile(p *parsed, o occurrence, access Access, cwd string) {
	switch {
	case o.has && !o.value.known && o.value.unbounded:
		c.unknownOperand(p.prog + " " + o.id)
	case o.has && !o.value.known:
		c.addAll(c.s.deniedTail(o.value.suffix, p.prog+" "+o.id))
	case o.has && o.value.known && isStdinPath(o.value.s) && strings.Contains(o.id, "files0-from"):
		c.danger(p, nil, o.id, o.text, "reads the names of the files to read from standard input, which cannot be checked")
	case o.has && o.value.known && o.value.s != "-":
		c.operand(o.value.s, access, cwd, p.prog+" "+o.id)
	}
}

// optionChdir checks the directory an option changes to and returns the new
// working directory of the operands ("" when it is not known).
func (c *checker) optionChdir(p *parsed, o occurrence, cwd string) string {
	if !o.has {
		return cwd
	}
	if !o.value.known {
		return ""
	}
	abs, err := absPath(o.value.s, cwd, c.env)
	if err != nil || (cwd == "" && !filepath.IsAbs(o.value.s)) {
		return ""
	}
	c.addAll(c.s.checkAbs(abs, AccessRead, c.env, pathSource{what: p.prog + " " + o.id}))
	return abs
}

// operandModeOf is what the program does with its operands, given its
// table row and what its options changed.
func operandModeOf(p *parsed, eff optionEffects) operandMode {
	leaf := p.leaf
	mode := opRead
	if leaf != nil {
		mode = leaf.operands
	}
	if eff.inPlace {
		mode = opWrite
		if leaf != nil && leaf.operands == opPatternFirst && !eff.patternGiven {
			mode = opSkipFirst
		}
	}
	if mode == opPatternFirst && eff.patternGiven {
		mode = opRead
	}
	if p.sp != nil && (p.sp.namesOnly != "" && p.has(p.sp.namesOnly) || p.sp.ownOperands != "" && p.has(p.sp.ownOperands)) {
		mode = opNone
	}
	return mode
}

// checkOperands checks each operand as a file read or written, as mode says.
func (c *checker) checkOperands(p *parsed, mode operandMode, cwd string) {
	pos := p.operands()
	for i, a := range pos {
		if a.procSubst {
			continue
		}
		if !a.known {
			switch {
			case !operandChecked(mode, i, len(pos)) || a.dash:
			case a.unbounded:
				c.unknownOperand(p.prog + " operand")
			default:
				c.addAll(c.s.deniedTail(a.suffix, p.prog+" operand"))
			}
			continue
		}
		if c.fileURL(p, a.s, cwd) {
			continue
		}
		if c.ownArgument(p, i, a.s) {
			continue
		}
		if strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			c.optionLikeOperand(p, a.s, cwd)
			continue
		}
		// From an unknown directory any word may name a file there.
		if access, check := operandAccess(mode, i, len(pos), looksLikePath(a.s) || cwd == "" || c.exists(a.s, cwd)); check {
			c.operand(a.s, access, cwd, p.prog+" operand")
		}
	}
}

// ownArgument reports whether, in confined execution, the operand s at
// index i is decided as no path: an argument starting with "/" (or an
// option, "--url=/x") that no table row makes a path, because it is an
// argument of the script an interpreter or a shell runs, or an operand of
// a program the tables do not know. What the program then opens with it
// is bounded by its private view and Landlock (/api/users given to
// python3 tool.py). Where the caller runs the command (check), such
// arguments stay checked as paths.
func (c *checker) ownArgument(p *parsed, i int, s string) bool {
	if c.env.execution() != ExecutionConfined || !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "-") {
		return false
	}
	if p.leaf == nil {
		return true
	}
	if !p.leaf.scriptArgs || i == 0 {
		return false
	}
	for _, o := range p.occ {
		if o.opt != nil && o.opt.stop && o.has {
			return false // python3 -m MODULE: the module's table row decides
		}
	}
	return true
}

// optionLikeOperand checks an option the table does not know, given where
// operands go (after python -m MODULE, after --): --dir=/x, -d/x.
func (c *checker) optionLikeOperand(p *parsed, s, cwd string) {
	if _, v, ok := strings.Cut(s, "="); ok && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~")) {
		c.operand(v, AccessRead, cwd, p.prog+" "+s)
	} else if i := strings.IndexAny(s, "/~"); i > 1 && !strings.Contains(s[:i], "=") {
		c.operand(s[i:], AccessRead, cwd, p.prog+" "+s)
	}
}

// operandAccess says whether the operand at index i of n is checked, and
// for what; pathLike is whether it is spelled as a path or names an
// existing file (what a read operand must be to be checked).
func operandAccess(mode operandMode, i, n int, pathLike bool) (Access, bool) {
	switch mode {
	case opNone:
		return AccessRead, false
	case opWrite:
		return AccessWrite, true
	case opWriteLast:
		if i == n-1 && n > 1 {
			return AccessWrite, true
		}
	case opPatternFirst:
		if i == 0 {
			return AccessRead, false
		}
	case opSkipFirst:
		if i == 0 {
			return AccessRead, false
		}
		return AccessWrite, true
	case opWriteSecond:
		if i == 1 {
			return AccessWrite, true
		}
	case opWriteFirst:
		if i == 0 {
			return AccessWrite, true
		}
	}
	return AccessRead, pathLike
}

// programChecks checks the command a wrapper runs and runs the program's
// own checks (its table row's check, and its subcommand's).
func (c *checker) programChecks(p *parsed, allowed allowEntries, cwd string, st *shellState) {
	c.hostArgs(p)
	c.socketArgs(p, cwd)
	leaf := p.leaf
	if leaf != nil && leaf.wrapper {
		c.wrapped(p, leaf, cwd, st)
	}
	if p.sp != nil && p.sp.makesDirs {
		makeMap(&st.made)
	}
	check := func(pc programCheck) {
		ps := st.clone(forProgram)
		ps.cwd = cwd // where the program's options put it
		pc(c, p, allowed, ps)
	}
	if p.sp != nil && p.sp.extra != nil {
		check(p.sp.extra)
	}
	if leaf != nil && leaf != p.sp && leaf.extra != nil {
		check(leaf.extra)
	}
}

// noteWrite records what a write means for later checks of the command.
func (c *checker) noteWrite(path, cwd string) {
	if abs, err := absPath(path, cwd, c.env); err == nil && (filepath.IsAbs(path) || cwd != "") {
		setIn(&c.written, filepath.Clean(abs), true)
	}
	switch filepath.Base(path) {
	case ".gitignore", ".ignore", ".rgignore":
		c.wroteIgnoreFile = true
	}
}

// dotDotAfterMissing refuses a path whose ".." follows a component that
// does not exist when the command is checked: the command may create it
// as a symbolic link first (ln -s . s && cat s/s/../../x), and ".."
// then climbs from where the link points, not from where its spelling
// says.
func (c *checker) dotDotAfterMissing(s, cwd, what string) bool {
	if !strings.Contains(s, "..") {
		return false
	}
	p := s
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return false
		}
		p = cwd + "/" + p
	}
	fsys := c.env.fs()
	dir, missing := "/", false
	for comp := range strings.SplitSeq(p, "/") {
		switch comp {
		case "", ".":
			continue
		case "..":
			if missing {
				c.add(Violation{Reason: ReasonPathNotInScope, Resource: s,
					Message: what + ": \"..\" follows a directory that does not exist yet, which the command may make a symbolic link; give the path without \"..\""})
				return true
			}
			dir = filepath.Dir(dir)
			continue
		}
		dir = filepath.Join(dir, comp)
		if !missing {
			if _, err := fsys.Lstat(dir); err != nil {
				missing = true
			}
		}
	}
	return false
}

// operand checks one file operand of a program.
func (c *checker) operand(s string, access Access, cwd, what string) {
	if access == AccessWrite {
		c.noteWrite(s, cwd)
	}
	if c.dotDotAfterMissing(s, cwd, what+" "+s) {
		return
	}
	if safeDevice(s, access) || s == "-" {
		return
	}
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~") && cwd == "" {
		c.unknownCwd(what + " " + s)
		return
	}
	c.addAll(c.s.checkPath(s, access, cwd, c.env, pathSource{what: what + " " + s}))
}

// unknownCwd refuses, where scopegate does not run the command itself, a
// path relative to a working directory known only at run time: after a cd
// that may fail or may not run, or to a directory named at run time. In
// confined execution the runner checks it as it runs.
func (c *checker) unknownCwd(what string) {
	if c.env.execution() == ExecutionConfined {
		return
	}
	c.add(Violation{Reason: ReasonDynamicCommand, Resource: "working directory",
		Message: what + " is relative to a working directory known only at run time (after a cd that may fail or not run, or to a directory named at run time); cd to an existing directory named literally, or give the path from /"})
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
			if strings.ContainsAny(v.s, "'\"\\$#") {
				// env -S removes quotes and expands ${VAR} its own way.
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: p.prog + " " + sp.split,
					Message: p.prog + " " + sp.split + " with quotes, escapes or variables is split differently from the shell; give the command's words directly"})
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
	if sp.appendsInput != nil {
		repl := sp.appendsInput(p)
		marked := make([]arg, 0, len(rest)+1)
		for i, a := range rest {
			if i > 0 && repl != "" && a.known && strings.Contains(a.s, repl) {
				// The input item replaces repl: what follows its last
				// occurrence stays (cat %/.env); a ".." after it climbs
				// out of wherever the item leads.
				tail := a.s[strings.LastIndex(a.s, repl)+len(repl):]
				a = arg{suffix: tail, unbounded: slices.Contains(strings.Split(tail, "/"), "..")}
			}
			marked = append(marked, a)
		}
		rest = append(marked, arg{}) // the input items
		if st.pipedText != nil && repl == "" {
			// echo .env | xargs cat: the input is known; its words are
			// the arguments xargs appends (checked as themselves too).
			for _, w := range strings.Fields(*st.pipedText) {
				rest = append(rest, arg{s: strings.Trim(w, `"'`), known: true})
			}
		}
	}
	inner := st
	if cwd != st.cwd {
		inner = st.clone(forSubshell)
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
	env.FS = withMemo(env.fs())
	c := newChecker(s, env)
	c.simple(knownArgs(argv), newState(cwd), true)
	return c.vs
}

// denyCheck applies the deny entries to a parsed command.
func (c *checker) denyCheck(p *parsed, resolvedProg string) {
	for i := range c.s.denyCmds {
		e := &c.s.denyCmds[i]
		// Arguments known only at run time may carry the options the entry
		// names: the entry then matches (fail closed).
		if e.matches(p, resolvedProg) || (p.unknownOpts && len(e.opts) > 0 && e.matchesProgram(p.prog, resolvedProg) && e.prefixOf(p)) {
			if e.managed {
				c.add(Violation{Reason: ReasonManaged, Resource: e.text, Rule: e.rule,
					Message: fmt.Sprintf("%s %s matches %s of the machine's managed policy; no scope change can allow it", p.prog, clip(argvText(p.args)), e.rule)})
				continue
			}
			c.add(Violation{Reason: ReasonCommandDenied, Resource: e.text, Rule: e.rule,
				Message: fmt.Sprintf("%s %s matches %s of this session's scope", p.prog, clip(argvText(p.args)), e.rule)})
		}
	}
}

// fileURL checks a local file named by a URL (file:///x, file:/x,
// git+file:///x); it reports whether s was one.
func (c *checker) fileURL(p *parsed, s, cwd string) bool {
	i := strings.Index(strings.ToLower(s), "file:")
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
