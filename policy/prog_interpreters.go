package policy

import "strings"

// Interpreters and shells: python, node, perl, ruby, php, sh, bash, zsh…
//
// Each runs code given inline (-c, -e, --eval, -p) or read from standard
// input, which cannot be checked (GTFOBins lists every one under "Shell").
// A script file operand is read; sh/bash -c's command string is checked like
// the command line itself. python -m MODULE runs a module: package managers
// (pip) are checked as the program they are, modules that run inline code
// or programs (code, pdb, timeit, cProfile) are dangerous.

// registerInterpreters adds the table rows of this file.
func registerInterpreters(add adder) {
	interp := func(codeOpts string, extraOpts ...any) *spec {
		return &spec{posixStop: true, scriptArgs: true, extra: interpExtra, opts: opts(append([]any{code(codeOpts, whyCode)}, extraOpts...)...)}
	}
	add(interp("-c", stopAt(val("-m")), val("-W"), val("-X"), val("--check-hash-based-pycs"),
		flags("-b -B -d -E -h -i -I -O -OO -P -q -s -S -u -v -V -x --version --help")), "python", "python3", "python2", "pypy", "pypy3")
	add(interp("-e --eval -p --print", rd("-r --require"), rd("--import"), rd("--loader --experimental-loader"), val("--input-type"),
		val("--conditions -C"), oval("--inspect --inspect-brk"), flags("-i --interactive --test --watch --check -v --version -h --help")),
		"node", "nodejs", "deno", "bun")
	add(interp("-e -E", inPlaceSuffix("-i"), oval("-M"), oval("-m"), opt("-I", optValueOpt, effRead, ""), oval("-C"), oval("-d"), oval("-D"), oval("-x"),
		flags("-n -p -a -l -0 -s -w -W -X -t -T -U -c -u -v -V -S -h")), "perl")
	add(interp("-e", inPlaceSuffix("-i"), val("-r"), val("-I"), chdir("-C"), oval("-E --encoding"), oval("-K"), oval("-T"), oval("-W"),
		flags("-n -p -a -l -w -c -d -v -y -s -S --version -h --help")), "ruby")
	// php -r runs code; -B, -R and -E run code before, for and after each
	// input line; -d sets an ini directive (phpExtra), -z loads a Zend
	// extension, a shared library.
	add(interp("-r --run -B --process-begin -R --process-code -E --process-end", rd("-F --process-file"), rd("-c --php-ini"),
		val("-d --define"), opt("-z --zend-extension", valueOpt, effDanger, "loads a shared library into php"), val("-S --server"),
		val("-t --docroot"), flags("-a --interactive -e -h --help -H --hide-args -i --info -l --syntax-check -m --modules -n --no-php-ini -q --no-header -s --syntax-highlight -v --version -w --strip")), "php")
	add(interp("-e", opt("-l", valueOpt, effDanger, "requires a module, whose code runs"), flags("-i -v -E -W")),
		"lua", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "luajit")
	// expect is a Tcl interpreter: -c runs commands (spawn, exec), a
	// script is read, no script means commands from standard input.
	add(interp("-c", rd("-b"), flags("-d -D -i -n -N -v")), "expect")
	// gdb runs debugger commands, and they run programs (shell, !, python,
	// run): given by -ex and -iex, read from a file by -x and -ix, or,
	// without -batch, read from standard input (gdbExtra).
	add(&spec{operands: opRead, extra: gdbExtra, opts: opts(code("-ex --ex -eval-command --eval-command -iex --iex -init-eval-command --init-eval-command", "runs debugger commands, which run programs (shell, !, python)"),
		rd("-x --x -command --command -ix --ix -init-command --init-command"), opt("-p --p -pid --pid", valueOpt, effDanger, "attaches to another process, whose memory it reads and changes"),
		chdir("-cd --cd"), rd("-se --se -s --s -symbols --symbols -e --e -exec --exec -c --c -core --core"), val("-d --d -directory --directory"),
		stopAt(fl("-args --args")), fl("-batch --batch"), fl("-version --version"), fl("-help --help -h"),
		flags("-nx --nx -n -nh --nh -q -quiet --quiet -silent --silent -tui --tui -readnow --readnow"))}, "gdb")
	add(&spec{posixStop: true, scriptArgs: true, extra: shellExtra, opts: opts(fl("-c"), fl("-s"), flags("-i -l --login"), val("-o +o"), val("-O +O"),
		rd("--rcfile --init-file"), flags("-e -u -x -v -n -f -h -B -H -P -T -p -r -a -b -m -t -k -E -C --norc --noprofile --posix --noediting --restricted"))},
		"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish")
}

// pythonWarningImport returns the dangerous module (pythonImportDanger) a
// warning filter action:message:category:module:lineno imports for its
// category, or "".
func pythonWarningImport(filter string) string {
	parts := strings.Split(filter, ":")
	if len(parts) < 3 || !strings.Contains(parts[2], ".") {
		return ""
	}
	mod := strings.TrimSpace(parts[2][:strings.LastIndexByte(parts[2], '.')])
	return pythonImportedModule(arg{s: mod, known: true})
}

// interpExtra: an interpreter runs a script file (read) or, with no script
// and no inline code option, code from standard input.
func interpExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-W") {
		// -W action:message:category:module:lineno imports the category's
		// module.
		if !v.known {
			c.danger(p, allowed, "-W", "-W", "is known only at run time (its warning category is imported)")
		} else if m := pythonWarningImport(v.s); m != "" {
			c.danger(p, allowed, "-W", "-W "+v.s, "imports "+m+", which "+pythonImportDanger[m])
		}
	}
	switch p.prog {
	case "perl":
		perlModules(c, p, allowed)
	case "php":
		phpDefines(c, p, allowed)
	}
	for _, v := range p.values("-X") {
		if dir, ok := strings.CutPrefix(v.s, "pycache_prefix="); ok && v.known {
			c.operand(dir, AccessWrite, st.cwd, "python3 -X pycache_prefix")
		}
	}
	for _, o := range p.occ {
		if o.opt != nil && o.opt.stop && o.has {
			c.pythonModule(p, allowed, o.value, st)
			return
		}
		if o.opt != nil && o.opt.eff == effCode {
			return // inline code (already refused)
		}
		if o.id == "--version" || o.id == "-V" || o.id == "-v" || o.id == "--help" || o.id == "-h" || o.id == "--test" || o.id == "--check" {
			return
		}
	}
	if p.has("-i") || p.has("--interactive") {
		c.danger(p, allowed, "-i", "-i", "reads code from standard input after the script")
	}
	ops := p.operands()
	if len(ops) == 0 || (ops[0].known && isStdinPath(ops[0].s)) {
		c.danger(p, allowed, "-", "without a script", whyStdin)
		return
	}
	if ops[0].known && !ops[0].procSubst {
		c.operand(ops[0].s, AccessRead, st.cwd, p.prog+" script")
	} else if ops[0].procSubst {
		c.danger(p, allowed, "<(…)", "script from a process substitution", whyStdin)
	}
}

// phpIniDanger are the ini directives php -d sets that run code: files
// included before and after every script, extensions loaded.
var phpIniDanger = map[string]bool{"auto_prepend_file": true, "auto_append_file": true, "extension": true, "zend_extension": true,
	"extension_dir": true, "include_path": true, "user_ini.filename": true, "error_log": true, "mail.log": true, "sendmail_path": true}

// phpDefines refuses php -d directives that include files, load
// extensions, run programs or write files.
func phpDefines(c *checker, p *parsed, allowed allowEntries) {
	for _, v := range p.values("-d") {
		name, _, _ := strings.Cut(strings.ToLower(v.s), "=")
		if !v.known || phpIniDanger[strings.TrimSpace(name)] {
			c.danger(p, allowed, "-d", "-d "+v.s, "sets an ini directive that includes files, loads code, runs programs or writes files")
		}
	}
}

// gdbExtra: gdb without -batch reads debugger commands from standard
// input once its options are done, unless it only prints its version or
// help.
func gdbExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, id := range []string{"-batch", "-version", "-help", "-h"} {
		if p.has(id) {
			return
		}
	}
	c.danger(p, allowed, "-batch", "without -batch", "reads debugger commands, which run programs, from standard input")
}

// perlModules refuses perl's -M, -m and -d: values that are not a module
// name: perl puts them in a "use NAME;" line, so -M'POSIX;system(…)' runs
// code like -e (what follows = is quoted by perl).
func perlModules(c *checker, p *parsed, allowed allowEntries) {
	for _, id := range []string{"-M", "-m", "-d"} {
		for _, v := range p.values(id) {
			name := v.s
			if id == "-d" {
				if name == "" {
					continue // perl -d: the debugger, reading commands from the terminal
				}
				name = strings.TrimPrefix(name, ":")
			}
			name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
			if !v.known || name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:") != "" {
				c.danger(p, allowed, id, id+v.s, "is not a module name: perl runs it as code")
			}
		}
	}
}

// shellExtra: sh -c STRING is checked as a program of its own; a script
// file is read; no script means commands from standard input.
func shellExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	ops := p.operands()
	if p.has("-c") {
		if len(ops) == 0 {
			return
		}
		if !ops[0].known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: p.prog + " -c",
				Message: p.prog + " -c with a command string known only at run time cannot be checked"})
			return
		}
		inner := &shellState{cwd: st.cwd, vars: map[string]*string{}, funcs: map[string]bool{}, posKnown: true}
		for _, a := range ops[1:] {
			if !a.known {
				inner.posKnown = false
				break
			}
			if len(inner.pos) > 0 || a.s != "" {
				inner.pos = append(inner.pos, a.s)
			}
		}
		if len(ops) > 1 {
			inner.pos = inner.pos[min(1, len(inner.pos)):] // $0 is the first
		}
		c.program(ops[0].s, inner)
		return
	}
	if p.has("-s") || len(ops) == 0 {
		c.danger(p, allowed, "-s", "without a script", "runs commands read from standard input, which cannot be checked")
		return
	}
	if ops[0].known {
		c.operand(ops[0].s, AccessRead, st.cwd, p.prog+" script")
	}
}

// pythonModules are modules that run code given on their command line or
// standard input, or start other programs.
var pythonModules = map[string]string{
	"timeit": "runs code given as arguments", "code": "runs code from standard input", "pdb": "runs debugger commands",
	"ensurepip": "installs packages outside the scope", "webbrowser": "starts a browser", "antigravity": "starts a browser",
	"idlelib": "runs an interactive shell", "runpy": "runs arbitrary modules", "cProfile": "", "profile": "",
	"venv": "", "pydoc": "", "turtledemo": "runs demo code", "asyncio": "runs code from standard input",
	"pickle": "unpickles data, which runs code", "idle": "runs an interactive shell",
}

// pythonImportDanger are standard modules whose import, or whose
// callables a test runner calls, run programs or code read from standard
// input.
var pythonImportDanger = map[string]string{
	"antigravity": "starts a browser", "webbrowser": "starts a browser", "code": "runs code from standard input",
	"pdb": "runs debugger commands", "pty": "runs programs", "os": "runs programs", "subprocess": "runs programs",
	"idlelib": "runs an interactive shell", "turtledemo": "runs demo code", "runpy": "runs modules",
	"importlib": "imports any module", "builtins": "runs code", "ctypes": "calls native code", "shutil": "changes files",
	"multiprocessing": "runs programs", "asyncio": "runs code from standard input", "this": "",
	"sys": "starts the debugger (sys.breakpointhook), which runs code from standard input", "breakpoint": "starts the debugger",
}

// pythonImportedModule returns the top-level module of a dotted name given
// to a module that imports it, when that module is one of
// pythonImportDanger.
func pythonImportedModule(a arg) string {
	if !a.known || strings.HasPrefix(a.s, "-") {
		return ""
	}
	top, _, _ := strings.Cut(a.s, ".")
	if why, ok := pythonImportDanger[top]; ok && why != "" {
		return top
	}
	return ""
}

// pythonModule checks python -m MODULE: package managers are checked as the
// program they are, modules that run inline code are dangerous.
func (c *checker) pythonModule(p *parsed, allowed allowEntries, mod arg, st *shellState) {
	if !mod.known {
		c.danger(p, allowed, "-m", "-m with a module known only at run time", "cannot be checked")
		return
	}
	c.pythonModuleArgs(p, allowed, mod.s, p.operands(), st)
}

// pythonModuleArgs checks the module a python invocation runs with its
// arguments: modules that run another module or script are followed.
func (c *checker) pythonModuleArgs(p *parsed, allowed allowEntries, name string, args []arg, st *shellState) {
	if name == "pip" || name == "pip3" {
		c.simple(append([]arg{{s: "pip", known: true}}, args...), st, false)
		return
	}
	if why := pythonModules[name]; why != "" {
		c.danger(p, allowed, "-m "+name, "-m "+name, why)
	}
	switch name {
	case "unittest", "pydoc", "inspect", "pickletools", "timeit":
		// The names they are given are imported (and, for unittest, a
		// callable is called): a module whose import or call runs other
		// programs or reads stdin as code is refused (python3 -m unittest
		// code.interact).
		for _, a := range args {
			if mod := pythonImportedModule(a); mod != "" {
				c.danger(p, allowed, "-m "+name, "-m "+name+" "+a.s, "imports "+mod+", which "+pythonImportDanger[mod])
			}
		}
	}
	switch name {
	case "cProfile", "profile", "trace", "doctest", "pdb", "unittest", "pytest":
		// They run a script, or another module after -m.
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.known {
				continue
			}
			if a.s == "-m" && i+1 < len(args) && args[i+1].known {
				c.pythonModuleArgs(p, allowed, args[i+1].s, args[i+2:], st)
				return
			}
			if isStdinPath(a.s) || a.procSubst {
				c.danger(p, allowed, "-m "+name, "-m "+name+" "+a.s, whyStdin)
			}
		}
	case "pydoc":
		if hasPrefixArg(args, "-b") || hasPrefixArg(args, "-p") {
			c.danger(p, allowed, "-m pydoc", "-m pydoc -b", "starts a web server and a browser")
		}
	case "zipfile", "tarfile":
		// The command option may follow others (-v -c).
		for len(args) > 0 && args[0].known && (args[0].s == "-v" || args[0].s == "--verbose" || args[0].s == "--filter" && len(args) > 1) {
			if args[0].s == "--filter" {
				args = args[1:]
			}
			args = args[1:]
		}
		if len(args) > 0 && !args[0].known {
			c.danger(p, allowed, "-m "+name, "-m "+name+" $…", "takes a command known only at run time")
		}
		if len(args) > 0 && args[0].known && (args[0].s == "-c" || args[0].s == "--create") && len(args) > 1 {
			if args[1].known {
				c.operand(args[1].s, AccessWrite, st.cwd, "python3 -m "+name+" archive")
			}
			for _, a := range args[2:] {
				if a.known {
					c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: true})
				}
			}
		}
		if len(args) > 2 && args[0].known && (args[0].s == "-e" || args[0].s == "--extract") && args[2].known {
			c.operand(args[2].s, AccessWrite, st.cwd, "python3 -m "+name+" target")
		}
	case "zipapp":
		// zipapp SOURCE packs every file below the source directory.
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case !a.known:
			case a.s == "-o" || a.s == "--output":
				if i+1 < len(args) && args[i+1].known {
					c.operand(args[i+1].s, AccessWrite, st.cwd, "python3 -m zipapp output")
				}
				i++
			case a.s == "-m" || a.s == "--main" || a.s == "-p" || a.s == "--python":
				i++
			case strings.HasPrefix(a.s, "-"):
			default:
				c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: true})
			}
		}
	case "http.server":
		// It serves every file below its directory (-d, else the working
		// directory) to whoever asks.
		dir := "."
		for i, a := range args {
			if a.known && (a.s == "-d" || a.s == "--directory") && i+1 < len(args) {
				if !args[i+1].known {
					c.danger(p, allowed, "-m http.server", "-m http.server -d $…", "serves a directory known only at run time")
					return
				}
				dir = args[i+1].s
			} else if v, ok := strings.CutPrefix(a.s, "--directory="); a.known && ok {
				dir = v
			}
		}
		c.recursiveRead(p, dir, st.cwd, walkOpts{hidden: true, follow: true, verb: "serves"})
	case "gzip", "bz2", "lzma":
		// python3 -m gzip FILE writes FILE.gz (or FILE without it, -d).
		for _, a := range args {
			if a.known && !strings.HasPrefix(a.s, "-") {
				c.operand(a.s, AccessWrite, st.cwd, "python3 -m "+name)
				c.operand(a.s+".gz", AccessWrite, st.cwd, "python3 -m "+name)
			}
		}
	case "venv", "virtualenv":
		for _, a := range args {
			if a.known && !strings.HasPrefix(a.s, "-") {
				c.operand(a.s, AccessWrite, st.cwd, "python3 -m venv")
			}
		}
	case "json.tool":
		var ops []arg
		for _, a := range args {
			if !a.known || !strings.HasPrefix(a.s, "-") {
				ops = append(ops, a)
			}
		}
		if len(ops) > 1 && ops[1].known {
			c.operand(ops[1].s, AccessWrite, st.cwd, "python3 -m json.tool output")
		}
	}
}
