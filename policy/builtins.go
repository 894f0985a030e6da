package policy

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// This file holds the shell's own commands: builtins change the shell's
// state (variables, functions, options, the working directory) or run
// another command (exec, command, builtin, trap), and some run code that
// cannot be checked (eval, source, alias).

// shellName is $0 of a command line: the shell's name.
const shellName = "sh"

// builtin checks a shell builtin; it reports false for names that are not
// builtins handled here (they are then checked as programs).
func (c *checker) builtin(name string, args []arg, st *shellState) bool {
	switch name {
	case "true", "false", ":", "echo", "pwd", "exit", "return",
		"break", "continue", "type", "umask", "ulimit",
		"times", "jobs", "fg", "bg", "disown", "dirs", "caller",
		"help", "logout", "suspend":
	case "unset":
		c.unset(args, st)
	case "test", "[":
		c.test(name, args)
	case "shopt":
		c.shopt(args, st)
	case "set":
		c.set(args, st)
	case "shift":
		shift(args, st)
	case "read", "printf", "mapfile", "readarray", "getopts", "wait":
		c.assigningBuiltin(name, args, st)
	case "cd", "pushd":
		c.cd(name, args, st)
	case "popd":
		// popd goes back to a directory of the stack (or fails): which one
		// is not followed.
		st.cwd = ""
	case "eval", "source", ".", "alias", "enable", "fc", "bind":
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
			Message: fmt.Sprintf("%s runs or defines code that cannot be checked before it runs; run the commands themselves", name)})
	case "hash":
		for _, a := range args[1:] {
			if !a.known || strings.HasPrefix(a.s, "-p") {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: "hash -p",
					Message: "hash -p makes a name run another program"})
			}
		}
	case "trap":
		c.trap(args, st)
	case "exec":
		c.execBuiltin(args, st)
	case "command":
		c.commandBuiltin(args, st)
	case "builtin":
		if len(args) > 1 && args[1].known && c.builtin(args[1].s, args[1:], st) {
			return true
		}
		if len(args) > 1 {
			c.add(Violation{Reason: ReasonCommandNotAllowed, Resource: "builtin",
				Message: "builtin names a command that is not a checked shell builtin"})
		}
	case "export", "declare", "typeset", "local", "readonly":
		c.declareWords(name, args, st)
	case "let":
		// Reached through builtin or command, its words are plain words
		// that let evaluates as arithmetic.
		for _, a := range args[1:] {
			if !a.known {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
					Message: "let with an argument known only at run time cannot be checked"})
				continue
			}
			c.arithString(a.s, st, false)
		}
	default:
		return false
	}
	return true
}

// unset removes variables and functions from what the checker knows.
func (c *checker) unset(args []arg, st *shellState) {
	fn := false
	for _, a := range args[1:] {
		if !a.known || !plainSubscript(a.s) {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: "unset",
				Message: "unset of a name with an array subscript (or known only at run time) makes bash evaluate the subscript, which can run commands; unset plain names"})
		}
		switch {
		case !a.known:
			st.funcs = map[string]bool{} // which function goes is unknown
		case a.s == "-f":
			fn = true
		case a.s == "-v" || strings.HasPrefix(a.s, "-"):
		default:
			delete(st.funcs, a.s) // unset NAME removes a function when no variable has the name
			if !fn && a.s == "PATH" {
				// Without PATH, bash looks programs up in the working
				// directory.
				c.addAll(c.s.envAssign(a.s, ptr(""), st.cwd, c.env))
			}
			if !fn {
				st.setVar(a.s, ptr("")) // an unset variable expands to nothing
				delete(st.unbounded, a.s)
			}
		}
	}
}

// plainSubscript reports whether a variable name's array subscript, if
// any, is a number: bash evaluates any other subscript as arithmetic.
func plainSubscript(name string) bool {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return true
	}
	sub, ok := strings.CutSuffix(name[i+1:], "]")
	return ok && sub != "" && strings.Trim(sub, "0123456789") == ""
}

// test refuses test -v with a subscripted name, which bash evaluates.
func (c *checker) test(name string, args []arg) {
	for i := 1; i+1 < len(args); i++ {
		if args[i].known && args[i].s == "-v" && (!args[i+1].known || strings.ContainsAny(args[i+1].s, "[]")) {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: name + " -v",
				Message: "a variable name with an array subscript is evaluated by bash and can run commands"})
		}
	}
}

// shopt records the shell options that change expansions (globs).
func (c *checker) shopt(args []arg, st *shellState) {
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
			setIn(&st.shopt, a.s, set)
			st.cfg = nil // expansions follow the new options
		}
	}
}

// set records set -- ARGS, which sets the positional parameters.
func (c *checker) set(args []arg, st *shellState) {
	for i, a := range args[1:] {
		if a.known && a.s == "--" {
			st.pos, st.posKnown = nil, true
			for _, b := range args[i+2:] {
				if !b.known {
					st.posKnown = false
				}
				st.pos = append(st.pos, b.s)
			}
			return
		}
	}
}

// shift drops positional parameters: shift [N] drops N (1 without one);
// a count known only at run time leaves them unknown.
func shift(args []arg, st *shellState) {
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1].s)
		if !args[1].known || err != nil || v < 0 {
			st.posKnown = false
			return
		}
		n = v
	}
	if n > len(st.pos) {
		return // bash leaves them as they are when N is too large
	}
	st.pos = st.pos[n:]
}

// assigningBuiltin checks read, printf -v, mapfile and getopts: the names
// they assign must not be dangerous ones, and mapfile -C runs a callback.
func (c *checker) assigningBuiltin(name string, args []arg, st *shellState) {
	if name == "mapfile" || name == "readarray" {
		for _, a := range args[1:] {
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
		v, ok := c.printfValue(name, args)
		if !ok {
			v, ok = readValue(name, args, st)
		}
		if ok {
			// printf -v NAME FORMAT ARGS… of known words: a known value.
			c.addAll(c.s.envAssign(n.s, &v, st.cwd, c.env))
			st.setVar(n.s, &v)
			delete(st.unbounded, n.s)
			continue
		}
		c.addAll(c.s.envAssign(n.s, nil, st.cwd, c.env))
		st.setVar(n.s, nil)
		// A line read from a pipe is a checked command's output; read
		// from anywhere else, or made by printf or getopts, it is data,
		// and so is the known text echo, printf or cat put in the pipe
		// (but for one line read into one name: readValue).
		fromCommand := st.pipedIn && st.pipedText == nil
		st.setUnbounded(n.s, !(fromCommand && (name == "read" || name == "mapfile" || name == "readarray")))
	}
}

// readValue is the value read NAME assigns from the known text echo,
// printf or cat put in the pipe, when that text is one line, read splits
// it with the default IFS into one name (only -r among the options) and
// it holds no backslash: the line without the spaces and tabs around it.
// Text of several lines gives a loop's body several values, and stays data.
func readValue(name string, args []arg, st *shellState) (string, bool) {
	if name != "read" || !st.pipedIn || st.pipedText == nil || st.customIFS {
		return "", false
	}
	var names int
	for _, a := range args[1:] {
		switch {
		case !a.known:
			return "", false
		case a.s == "-r" || a.s == "--":
		case strings.HasPrefix(a.s, "-"):
			return "", false
		default:
			names++
		}
	}
	line, rest, _ := strings.Cut(*st.pipedText, "\n")
	if names != 1 || rest != "" || strings.ContainsRune(line, '\\') {
		return "", false
	}
	return strings.Trim(line, " \t"), true
}

// printfValue is the value printf -v NAME FORMAT ARGS… assigns, when the
// format and its arguments are known words.
func (c *checker) printfValue(name string, args []arg) (string, bool) {
	if name != "printf" || len(args) < 4 || !args[1].known || args[1].s != "-v" {
		return "", false
	}
	rest := args[3:]
	if len(rest) > 0 && rest[0].known && rest[0].s == "--" {
		rest = rest[1:]
	}
	var words []string
	for _, a := range rest {
		if !a.known {
			return "", false
		}
		words = append(words, a.s)
	}
	if len(words) == 0 || strings.HasPrefix(words[0], "-") {
		return "", false
	}
	s, _, err := expand.Format(&expand.Config{}, words[0], words[1:])
	return s, err == nil
}

// execBuiltin checks the command exec replaces the shell with.
func (c *checker) execBuiltin(args []arg, st *shellState) {
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
}

// commandBuiltin checks the command "command" runs, skipping functions;
// command -v and -V only look a name up.
func (c *checker) commandBuiltin(args []arg, st *shellState) {
	rest := args[1:]
	for len(rest) > 0 && rest[0].known && strings.HasPrefix(rest[0].s, "-") {
		if rest[0].s == "-v" || rest[0].s == "-V" {
			return
		}
		if rest[0].s == "--" {
			rest = rest[1:]
			break
		}
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0].known && !strings.Contains(rest[0].s, "/") && c.builtin(rest[0].s, rest, st) {
		return
	}
	c.simple(rest, st, false)
}

// declareWords checks export, declare and the like reached through command
// or builtin, where their assignments are plain words.
func (c *checker) declareWords(name string, args []arg, st *shellState) {
	for _, a := range args[1:] {
		if !a.known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: name,
				Message: name + " with an argument known only at run time cannot be checked"})
			continue
		}
		c.caseAttribute(name, a.s)
		if n, v, ok := strings.Cut(a.s, "="); ok {
			c.addAll(c.s.envAssign(n, &v, st.cwd, c.env))
		}
	}
}

// cd follows the working directory, checking that it is readable: relative
// paths after it are resolved from there.
func (c *checker) cd(name string, args []arg, st *shellState) {
	var target *arg
	physical, extra := false, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.known && a.s == "--" {
			if i+1 < len(args) {
				target = &args[i+1]
			}
			break
		}
		if a.known && len(a.s) > 1 && a.s[0] == '-' && strings.Trim(a.s[1:], "LPe@n") == "" {
			// Options (-L -P -e -@, bundled: -LP), pushd's -n.
			if name == "pushd" && strings.Contains(a.s, "n") {
				return // pushd -n adds to the stack without changing directory
			}
			if strings.Contains(a.s, "n") {
				st.cwd = "" // cd -n: an invalid option, cd fails
				return
			}
			physical = strings.LastIndexByte(a.s, 'P') > strings.LastIndexByte(a.s, 'L')
			continue
		}
		target = &args[i]
		extra = i+1 < len(args) // cd a b: "too many arguments" in bash
		break
	}
	if name == "pushd" && (target == nil || target.known && len(target.s) > 1 && (target.s[0] == '+' || target.s[0] == '-')) {
		st.cwd = "" // pushd with no directory swaps, +N/-N rotate the stack
		return
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
	st.setVar("OLDPWD", ptr(st.cwd))
	if physical {
		real, err := canonicalize(abs, c.env.fs())
		if err != nil {
			st.cwd = ""
			return
		}
		st.cwd = real
	} else {
		st.cwd = filepath.Clean(abs) // bash's cd is logical by default
	}
	if fi, err := c.env.fs().Stat(st.cwd); (err != nil || !fi.IsDir()) && !st.made[st.cwd] || extra {
		// cd fails when the directory does not exist (or bash is given
		// more than one): what runs only if it succeeded (the rest of an
		// && list) is there, the rest of the script may not be.
		st.cwdDeferred = true
	}
}

// ptr returns a pointer to s.
func ptr(s string) *string { return &s }

// trap checks the command a trap action runs.
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
	inner := st.clone(forSubshell)
	c.program(action.s, inner)
	if inner.cwd != st.cwd || inner.cwdDeferred || len(changedVars(st, inner)) > 0 {
		// A DEBUG or ERR trap runs before or after other commands: what
		// it changes cannot be placed.
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "trap",
			Message: "a trap action that changes the directory or variables cannot be followed; run its commands directly"})
	}
}

// changedVars are the variables after assigns that differ from before.
func changedVars(before, after *shellState) []string {
	var out []string
	for name, v := range after.vars {
		if old, ok := before.vars[name]; !ok || !sameValue(old, v) {
			out = append(out, name)
		}
	}
	return out
}

// assignedNames returns the variable names a builtin assigns.
func assignedNames(builtin string, args []arg) []arg {
	var names []arg
	if builtin == "wait" {
		// wait -p NAME assigns the id of the job that ended; the other
		// operands are jobs.
		for i := 0; i < len(args); i++ {
			if a := args[i]; a.known && strings.HasPrefix(a.s, "-") && strings.HasSuffix(a.s, "p") && a.s != "--" && i+1 < len(args) {
				names = append(names, args[i+1])
				i++
			}
		}
		return names
	}
	// The options that take a value, per builtin: the value is the rest of
	// the word or the next word (read -aNAME, read -a NAME, read -rsa NAME).
	valued := map[string]string{"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "printf": "v"}[builtin]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.known && a.s == "--" {
			names = append(names, operandNames(builtin, args[i+1:])...)
			break
		}
		if a.known && strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			for j := 1; j < len(a.s); j++ {
				if !strings.ContainsRune(valued, rune(a.s[j])) {
					continue
				}
				var v arg
				if j+1 < len(a.s) {
					v = arg{s: a.s[j+1:], known: true}
				} else if i+1 < len(args) {
					i++
					v = args[i]
				}
				if a.s[j] == 'a' || a.s[j] == 'v' {
					names = append(names, v) // read -a NAME, printf -v NAME
				}
				break
			}
			continue
		}
		names = append(names, operandNames(builtin, args[i:])...)
		break
	}
	return names
}

// operandNames returns the names among a builtin's operands: every one of
// read and mapfile, the second of getopts, none of printf (its format and
// arguments).
func operandNames(builtin string, args []arg) []arg {
	switch builtin {
	case "read", "mapfile", "readarray":
		return args
	case "getopts":
		if len(args) > 1 {
			return args[1:2]
		}
	}
	return nil
}
