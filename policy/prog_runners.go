package policy

import (
	"slices"
	"strings"
)

// Runners: programs that run another command elsewhere or later than the
// checked line, or through a shell of their own. tmux and screen run
// commands in a server that outlives the call (new-session, new-window,
// split-window, respawn-pane, run-shell, if-shell, send-keys, pipe-pane,
// source-file; a command given to screen); only their listing forms are
// allowed, and tmux formats, whose #(…) runs a shell command, are refused.
// at and batch queue a job that runs later, outside the call (their
// listing, printing and removal of jobs stay allowed); systemd-run starts
// a unit of the service manager and is always refused. hyperfine runs its
// operands and the values of --prepare, --setup, --cleanup and
// --conclude through a shell: each is checked as shell text, with the
// values of -L and -P put in place of {NAME}. entr runs its operands as a
// command, or with -s the first one through $SHELL; sg runs its command
// string through /bin/sh. rlwrap and cpulimit wrap a command (cpulimit
// reads its own options among the command's words unless -- ends them,
// and -p, -e and -P act on another process). uv run, poetry run, pipenv
// run, conda run, bundle exec and direnv exec DIR run a command in a
// project's environment, checked like a wrapper's; uvx and uv tool run
// fetch a package and run its program, which only an allow entry naming
// the package permits.

// newShellState is a fresh shell state for text a program runs through a
// shell of its own, in directory cwd.
func newShellState(cwd string) *shellState {
	return &shellState{cwd: cwd, vars: map[string]*string{}, funcs: map[string]bool{}}
}

// refuseUnknownOptions refuses an option the row does not know, where a
// value it takes would otherwise be read as the command that runs; it
// reports whether it refused one.
func refuseUnknownOptions(c *checker, p *parsed, allowed allowEntries) bool {
	for _, o := range p.occ {
		if o.opt == nil {
			c.danger(p, allowed, o.id, o.text, "is an option the checker does not know, so the command it runs cannot be told apart from the option's value")
			return true
		}
	}
	return false
}

// shellText checks one argument a program runs through a shell.
func shellText(c *checker, prog string, a arg, cwd string) {
	if !a.known {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: prog,
			Message: prog + " runs a shell command known only at run time"})
		return
	}
	c.program(a.s, newShellState(cwd))
}

// tmuxListing are the tmux commands that only print or test state.
var tmuxListing = map[string]bool{
	"list-sessions": true, "ls": true, "list-windows": true, "lsw": true, "list-panes": true, "lsp": true,
	"list-clients": true, "lsc": true, "list-buffers": true, "lsb": true, "list-commands": true, "lscm": true,
	"list-keys": true, "lsk": true, "has-session": true, "has": true, "show-options": true, "show": true,
	"show-window-options": true, "showw": true, "show-environment": true, "showenv": true,
	"show-buffer": true, "showb": true, "display-message": true, "display": true, "show-messages": true, "showmsgs": true,
}

// tmuxExtra allows only tmux's listing commands: the others (and no
// command, which is new-session) start, drive or configure the server,
// whose commands run outside the checked line.
func tmuxExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) {
		return
	}
	ops := p.operands()
	if len(ops) == 0 {
		if !p.has("-V") {
			c.danger(p, allowed, "new-session", "without a command", "starts a session (new-session) whose shell runs outside the checked line")
		}
		return
	}
	first := true
	for _, a := range ops {
		if !a.known {
			c.danger(p, allowed, "$…", "argument known only at run time", "may be a command that runs a shell command in the tmux server")
			return
		}
		if strings.Contains(a.s, "#(") {
			c.danger(p, allowed, a.s, a.s, "has a format whose #(…) runs a shell command")
			return
		}
		name := strings.TrimSuffix(a.s, ";")
		if first && name != "" && !tmuxListing[name] {
			c.danger(p, allowed, name, name, "runs, drives or configures commands in the tmux server, outside the checked line")
			return
		}
		first = a.s == ";" || strings.HasSuffix(a.s, ";") && !strings.HasSuffix(a.s, `\;`)
	}
}

// screenExtra allows only screen's listing forms (-ls, -list, -wipe,
// -v): any other form starts a session or sends commands to one.
func screenExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	listing, first := false, ""
	for i := 0; i < len(p.args); i++ {
		a := p.args[i]
		switch {
		case !a.known:
			c.danger(p, allowed, "$…", "argument known only at run time", "may start a session that runs a command")
			return
		case a.s == "-ls" || a.s == "-list" || a.s == "-wipe":
			listing = true
		case a.s == "-v" || a.s == "--version" || a.s == "-q":
		case a.s == "-S" && i+1 < len(p.args):
			i++
		case listing && !strings.HasPrefix(a.s, "-"):
			// the session name -ls matches
		case first == "":
			first = a.s
		}
	}
	if first == "" && (listing || slices.ContainsFunc(p.args, func(a arg) bool { return a.s == "-v" || a.s == "--version" })) {
		return
	}
	if first == "" {
		first = "without arguments"
	}
	c.danger(p, allowed, first, first, "starts a screen session or sends commands to one, which run outside the checked line")
}

// atExtra allows at's listing (-l), printing (-c) and removal (-r, -d)
// of jobs, and -V alone: any other form queues a job that runs later.
func atExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) {
		return
	}
	if p.prog != "batch" && (p.has("-l") || p.has("-c") || p.has("-r")) {
		return
	}
	if p.has("-V") && len(p.operands()) == 0 && !p.has("-f") && p.prog != "batch" {
		return
	}
	id := p.prog
	if ops := p.operands(); len(ops) > 0 && ops[0].known {
		id = ops[0].s
	}
	c.danger(p, allowed, id, id, "queues a job that runs later, outside the checked call")
}

// systemdRunExtra refuses systemd-run: its command runs in a unit of the
// service manager, outside the call and its confinement.
func systemdRunExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	c.add(Violation{Reason: ReasonDangerousArgument, Resource: "systemd-run", Rule: "dangerous arguments of systemd-run",
		Message: "systemd-run runs its command in a unit of the service manager, outside the checked call; it is always refused"})
}

// hyperfineRewrite joins the values of -P (VAR MIN MAX) and -L (VAR
// VALUES) into one, so that the row can read them as a single value.
func hyperfineRewrite(argv []arg) []arg {
	out := make([]arg, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		n := 0
		switch {
		case !a.known:
		case a.s == "-P" || a.s == "--parameter-scan":
			n = 3
		case a.s == "-L" || a.s == "--parameter-list":
			n = 2
		case a.s == "--":
			return append(out, argv[i:]...)
		}
		if n == 0 || i+n >= len(argv) {
			out = append(out, a)
			continue
		}
		vals := argv[i+1 : i+1+n]
		joined := arg{known: true}
		parts := make([]string, 0, n)
		for _, v := range vals {
			joined.known = joined.known && v.known
			parts = append(parts, v.s)
		}
		joined.s = strings.Join(parts, "\x00")
		if a.s == "-P" {
			a.s = "--parameter-scan"
		} else if a.s == "-L" {
			a.s = "--parameter-list"
		}
		out = append(out, a, joined)
		i += n
	}
	return out
}

// hyperfineExtra checks each command hyperfine runs as shell text, once
// for each value a parameter puts in place of {NAME}; --output and
// --input name files unless they are null, pipe or inherit; --shell runs
// another shell. An option the row does not know is refused: it may run
// a command of its own.
func hyperfineExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) {
		return
	}
	for _, v := range p.values("-S") {
		if !v.known || v.s != "none" {
			c.danger(p, allowed, "-S", "--shell "+v.s, "runs the commands with another shell")
		}
	}
	for _, v := range p.values("--output") {
		if !v.known || !slices.Contains([]string{"null", "pipe", "inherit"}, v.s) {
			c.optionFile(p, occurrence{id: "--output", value: v, has: true}, AccessWrite, st.cwd)
		}
	}
	for _, v := range p.values("--input") {
		if !v.known || v.s != "null" {
			c.optionFile(p, occurrence{id: "--input", value: v, has: true}, AccessRead, st.cwd)
		}
	}
	params := map[string][]string{}
	for _, id := range []string{"--parameter-scan", "--parameter-list"} {
		for _, v := range p.values(id) {
			if !v.known {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: "hyperfine " + id,
					Message: "hyperfine " + id + " with values known only at run time puts them into the commands it runs"})
				return
			}
			parts := strings.Split(v.s, "\x00")
			vals := parts[1:]
			if id == "--parameter-list" && len(parts) == 2 {
				vals = strings.Split(parts[1], ",")
			}
			params[parts[0]] = append(params[parts[0]], vals...)
		}
	}
	var cmds []arg
	for _, id := range []string{"-p", "-s", "-c", "--conclude", "--reference"} {
		cmds = append(cmds, p.values(id)...)
	}
	cmds = append(cmds, p.operands()...)
	for _, a := range cmds {
		if !a.known {
			shellText(c, "hyperfine", a, st.cwd)
			continue
		}
		texts := []string{a.s}
		for name, vals := range params {
			var next []string
			for _, t := range texts {
				if !strings.Contains(t, "{"+name+"}") {
					next = append(next, t)
					continue
				}
				for _, v := range vals {
					next = append(next, strings.ReplaceAll(t, "{"+name+"}", v))
				}
			}
			texts = next
		}
		for _, t := range texts {
			c.program(t, newShellState(st.cwd))
		}
	}
}

// entrExtra checks the command entr runs: its operands, or with -s the
// first operand as shell text run by $SHELL.
func entrExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) {
		return
	}
	ops := p.operands()
	if len(ops) == 0 {
		return
	}
	if p.has("-s") {
		shellText(c, "entr -s", ops[0], st.cwd)
		return
	}
	c.simple(ops, st, false)
}

// sgExtra checks the command string sg runs through /bin/sh (sg [-]
// GROUP [-c] COMMAND); without one sg starts a shell.
func sgExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	args := p.args
	if len(args) > 0 && args[0].known && args[0].s == "-" {
		args = args[1:]
	}
	if len(args) > 1 && args[1].known && args[1].s == "-c" {
		args = slices.Delete(slices.Clone(args), 1, 2)
	}
	if len(args) < 2 {
		c.danger(p, allowed, "sg", "without a command", "starts a shell with another group")
		return
	}
	shellText(c, "sg", args[1], st.cwd)
}

// wrapperChecks refuses a wrapper's unknown options.
func wrapperChecks(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	refuseUnknownOptions(c, p, allowed)
}

// cpulimitExtra: cpulimit reads its own options among the command's words
// (GNU getopt permutes them) unless -- ends its options, so a word that
// looks like an option after the command's name is refused there.
func cpulimitExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) || len(p.rest) == 0 {
		return
	}
	start := len(p.args) - len(p.rest)
	if start > 0 && p.args[start-1].known && p.args[start-1].s == "--" {
		return
	}
	for _, a := range p.rest[1:] {
		if !a.known || strings.HasPrefix(a.s, "-") {
			c.danger(p, allowed, "--", "without --", "reads its own options among the command's words; put -- before the command")
			return
		}
	}
}

// uvxExtra refuses uvx and uv tool run, which fetch a package and run its
// program, unless an allow entry names the package.
func uvxExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if refuseUnknownOptions(c, p, allowed) {
		return
	}
	pkg := arg{}
	if ops := p.operands(); len(ops) > 0 {
		pkg = ops[0]
	}
	for _, v := range p.values("--from") {
		pkg = v
	}
	name := pkg.s
	if !pkg.known || name == "" {
		name = "PACKAGE"
	}
	c.danger(p, allowed, name, name, "fetches a package and runs its program")
}

// uvGlobal are the options every uv command takes.
func uvGlobal() []option {
	return opts(flags("-q --quiet -v --verbose --offline --no-cache -n --native-tls --no-progress --no-config --no-python-downloads -V --version"),
		val("--color"), wr("--cache-dir"), val("--python-preference"), chdir("--directory"), chdir("--project"),
		conf("--config-file", "loads configuration that can name indexes and build settings"), val("--allow-insecure-host"))
}

// uvRunOpts are the options of uv run, uvx and uv tool run.
func uvRunOpts() []option {
	return opts(uvGlobal(), val("--with"), val("--with-editable"), rd("--with-requirements"), val("-p --python"),
		val("--extra"), val("--group"), val("--only-group"), val("--no-group"), val("--index"), val("--default-index"),
		val("--index-url -i"), val("--extra-index-url"), val("--index-strategy"), val("--package"), val("--from"),
		val("--resolution"), val("--prerelease"), val("-P --upgrade-package"), val("--exclude-newer"),
		flags("--all-extras --no-dev --dev --only-dev --no-default-groups --all-groups --no-project --isolated --frozen --locked --no-sync --exact --no-editable --all-packages -U --upgrade --reinstall --refresh --no-env-file --no-build-isolation --compile-bytecode --active --no-active"),
		conf("--env-file", "sets the command's environment from a file"),
		dflag("-m --module", "runs a Python module"), dflag("-s --script", "runs a Python script"),
		dflag("--gui-script", "runs a Python script"))
}

// poetryGlobal are the options every poetry command takes.
func poetryGlobal() []option {
	return opts(flags("-q --quiet -v -vv -vvv --verbose -n --no-interaction --no-plugins --no-cache --ansi --no-ansi -V --version"),
		chdir("-C --directory"), chdir("-P --project"))
}

// registerRunners adds the table rows of this file.
func registerRunners(add adder) {
	add(&spec{operands: opNone, posixStop: true, extra: tmuxExtra, opts: opts(flags("-2 -C -D -l -N -u -v -V"),
		code("-c", "runs a shell command string"), conf("-f", "loads a configuration file, whose commands run in the server"),
		val("-L"), val("-S"), val("-T"))}, "tmux")
	add(&spec{operands: opNone, extra: screenExtra}, "screen")
	add(&spec{operands: opNone, extra: atExtra, opts: opts(flags("-l -c -V -m -M -v -b"), fl("-r -d"), val("-q"), rd("-f"), val("-t"))}, "at", "batch")
	add(&spec{operands: opNone, extra: systemdRunExtra}, "systemd-run")
	add(&spec{operands: opNone, rewrite: hyperfineRewrite, extra: hyperfineExtra, opts: opts(val("-w --warmup"), val("-m --min-runs"),
		val("-M --max-runs"), val("-r --runs"), val("-s --setup"), val("-p --prepare"), val("-c --cleanup"), val("--conclude"),
		val("--reference"), val("--parameter-scan"), val("-D --parameter-step-size"), val("--parameter-list"), val("--style"),
		val("--sort"), val("-S --shell"), fl("-N"), oval("-i --ignore-failure"), val("-u --time-unit"), wr("--export-asciidoc"),
		wr("--export-csv"), wr("--export-json"), wr("--export-markdown"), wr("--export-orgmode"), fl("--show-output"),
		val("--output"), val("--input"), val("-n --command-name"), val("--min-benchmarking-time"), fl("-h --help"), fl("-V --version"))}, "hyperfine")
	add(&spec{operands: opNone, posixStop: true, extra: entrExtra, opts: flags("-a -c -d -n -p -r -s -x -z")}, "entr")
	add(&spec{operands: opNone, extra: sgExtra}, "sg")
	add(&spec{wrapper: true, extra: wrapperChecks, opts: opts(oval("-a --always-readline"), fl("-A --ansi-colour-aware"), val("-b --break-chars"),
		fl("-c --complete-filenames"), val("-C --command-name"), val("-D --history-no-dupes"), val("-e --extra-char-after-completion"),
		rd("-f --file"), val("-g --forget-matching"), fl("-h --help"), wr("-H --history-filename"), fl("-i --case-insensitive"),
		fl("-I --pass-sigint-as-sigterm"), wr("-l --logfile"), oval("-m --multi-line"), val("-M --multi-line-ext"), fl("-n --no-warnings"),
		fl("-N --no-children"), fl("-o --one-shot"), val("-O --only-cook"), oval("-p --prompt-colour"), val("-P --pre-given"),
		val("-q --quote-characters"), fl("-r --remember"), fl("-R --renice"), val("-s --histsize"), val("-S --substitute-prompt"),
		val("-t --set-term-name"), fl("-U --mirror-arguments"), fl("-v --version"), val("-w --wait-before-prompt"), fl("-W --polling"),
		fl("-X --skip-setctty"), exe("-z --filter", "runs a filter program"))}, "rlwrap")
	add(&spec{wrapper: true, extra: cpulimitExtra, opts: opts(val("-l --limit"), val("-c --cpu"), fl("-b --background"), fl("-f --foreground"),
		fl("-m --monitor-forks"), fl("-i --include-children"), fl("-q --quiet"), fl("-k --kill"), fl("-r --restore"), val("-s --signal"),
		fl("-v --verbose"), fl("-z --lazy"), fl("-h --help"),
		opt("-p --pid", valueOpt, effDanger, "limits another process"), opt("-e --exe", valueOpt, effDanger, "limits another program's processes"),
		opt("-P --path", valueOpt, effDanger, "limits another program's processes"))}, "cpulimit")
	uvx := &spec{operands: opNone, posixStop: true, extra: uvxExtra, opts: uvRunOpts()}
	add(&spec{opts: uvGlobal(), subs: map[string]*spec{
		"run":  {wrapper: true, extra: wrapperChecks, opts: uvRunOpts()},
		"tool": {subs: map[string]*spec{"run": uvx}},
	}}, "uv")
	add(uvx, "uvx")
	add(&spec{opts: poetryGlobal(), subs: map[string]*spec{"run": {wrapper: true, extra: wrapperChecks, opts: poetryGlobal()}}}, "poetry")
	pipenvOpts := opts(flags("-v --verbose -q --quiet --site-packages --no-site-packages --clear"), val("--python"))
	add(&spec{opts: pipenvOpts, subs: map[string]*spec{"run": {wrapper: true, extra: wrapperChecks, opts: pipenvOpts}}}, "pipenv")
	add(&spec{opts: flags("-V --version --no-plugins"), subs: map[string]*spec{"run": {wrapper: true, extra: wrapperChecks,
		opts: opts(val("-n --name"), val("-p --prefix"), chdir("--cwd"), flags("--no-capture-output --live-stream -v --verbose --dev --debug-wrapper-scripts"))}}},
		"conda", "mamba", "micromamba")
	add(&spec{opts: opts(flags("--no-color -V --verbose"), val("-r --retry")), subs: map[string]*spec{"exec": {wrapper: true, extra: wrapperChecks,
		opts: opts(fl("--keep-file-descriptors"), conf("--gemfile", "loads a Gemfile, which is Ruby code"))}}}, "bundle")
	add(&spec{subs: map[string]*spec{"exec": {wrapper: true, skip: 1, extra: wrapperChecks}}}, "direnv")
}
