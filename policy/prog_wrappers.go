package policy

import "strings"

// Wrappers: programs whose operands are another command (env, nice,
// timeout, xargs, sudo, flock, chroot, busybox…). The wrapped command is
// checked like any other. env -S splits a string into a command, env -P
// and sudo -s/-i start shells or search other paths, xargs appends input
// that cannot be checked to the command it runs, flock -c runs a shell
// command string. unshare and nsenter run their command in new or other
// namespaces (nsenter -t enters another process's, -r its root); runuser
// -u runs its command as another user, and without -u, like su, starts
// the user's shell with the arguments; capsh gives the arguments after
// -- to bash.

// xargsReplace is the string xargs replaces with each input item in the
// command's arguments (-I STR, -i[STR], -i alone meaning {}), or "" when it
// appends the items.
func xargsReplace(p *parsed) string {
	repl := ""
	for _, id := range []string{"-I", "-i"} {
		for _, v := range p.values(id) {
			repl = v.s
		}
		if repl == "" && p.has(id) && id == "-i" {
			repl = "{}"
		}
	}
	return repl
}

// watchExtra: watch runs its words joined by spaces through sh -c, or
// with -x as a command of its own; either way they are checked as the
// shell command that runs.
func watchExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	var words []string
	for _, a := range p.operands() {
		if !a.known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: "watch",
				Message: "watch runs its words as a command, and one of them is known only at run time"})
			return
		}
		if p.has("-x") {
			a.s = "'" + strings.ReplaceAll(a.s, "'", `'\''`) + "'"
		}
		words = append(words, a.s)
	}
	if len(words) > 0 {
		c.program(strings.Join(words, " "), &shellState{cwd: st.cwd, vars: map[string]*string{}, funcs: map[string]bool{}})
	}
}

// parallelSeparators start parallel's input sources.
var parallelSeparators = map[string]bool{":::": true, "::::": true, ":::+": true, "::::+": true}

// parallelExtra: GNU parallel runs its command line through a shell once
// per input, the input quoted in place of {} or after the command. The
// command is checked as shell text with each literal input of ::: in
// turn; without a command the inputs themselves are the commands, and an
// input read at run time (::::, -a, standard input) is checked as an
// unknown argument.
func parallelExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.unknownOpts {
		c.danger(p, allowed, "parallel", "$…", "has an option known only at run time")
		return
	}
	for _, o := range p.occ {
		if o.opt == nil {
			c.danger(p, allowed, o.id, o.text, "is an option the checker does not know (it may run commands: --pipe, -S, --shebang…)")
			return
		}
	}
	var cmd []string
	ops := p.operands()
	i := 0
	for ; i < len(ops) && !(ops[i].known && parallelSeparators[ops[i].s]); i++ {
		if !ops[i].known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: "parallel",
				Message: "parallel runs its words as a shell command, and one of them is known only at run time"})
			return
		}
		cmd = append(cmd, ops[i].s)
	}
	if len(cmd) == 0 {
		c.danger(p, allowed, "parallel", "without a command", "runs its inputs as shell commands")
		return
	}
	inputs := []arg{{}} // -a, ::::, standard input: known only at run time
	if !p.has("-a") && i < len(ops) {
		inputs = nil
		for _, a := range ops[i:] {
			switch {
			case a.known && (a.s == "::::" || a.s == "::::+"):
				inputs = append(inputs, arg{})
			case a.known && parallelSeparators[a.s]:
			default:
				inputs = append(inputs, a)
			}
		}
	}
	text := strings.Join(cmd, " ")
	for _, in := range inputs {
		word := "\"$PARALLEL_INPUT\""
		if in.known {
			word = quoteArg(in.s)
		}
		line := text + " " + word
		if strings.Contains(text, "{") {
			line = strings.NewReplacer("{}", word, "{.}", word, "{/}", word, "{//}", word, "{/.}", word).Replace(text)
		}
		c.program(line, &shellState{cwd: st.cwd, vars: map[string]*string{}, funcs: map[string]bool{}})
	}
}

// scriptExtra: script without -c starts an interactive shell.
func scriptExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-c") {
		c.danger(p, allowed, "script", "script", "starts an interactive shell")
	}
}

// suExtra: su and runuser without -u start the user's shell, which runs
// the arguments after the user name (-c CMD, a script).
func suExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	switch {
	case p.sp.lookup("-u") == nil:
		c.danger(p, allowed, "-l", "always", "starts the user's shell, which runs its arguments")
	case !p.has("-u"):
		c.danger(p, allowed, "-u", "without -u", "starts the user's shell, which runs its arguments")
	}
}

// capshExtra: capsh gives the arguments after -- (or -+) to bash, checked
// as that bash command; == and =+ run capsh again with them.
func capshExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for i, a := range p.args {
		switch {
		case !a.known:
			c.danger(p, allowed, "capsh", "argument", "is known only at run time and may run a shell")
			return
		case a.s == "==" || a.s == "=+" || strings.HasPrefix(a.s, "--shell") || strings.HasPrefix(a.s, "--chroot"):
			c.danger(p, allowed, a.s, a.s, "runs another program")
			return
		case a.s == "--" || a.s == "-+":
			c.simple(append([]arg{{s: "bash", known: true}}, p.args[i+1:]...), st, false)
			return
		}
	}
}

// registerWrappers adds the table rows of this file.
func registerWrappers(add adder) {
	add(&spec{wrapper: true, assignsFirst: true, split: "-S", opts: opts(fl("-i --ignore-environment"), fl("-0 --null"),
		val("-u --unset"), chdir("-C --chdir"), val("-S --split-string"), fl("-v --debug"), oval("--block-signal"),
		oval("--default-signal"), oval("--ignore-signal"), fl("--list-signal-handling"), dflag("-P", "runs a program from another search path"))}, "env")
	add(&spec{wrapper: true, opts: opts(val("-n --adjustment"))}, "nice")
	add(&spec{wrapper: true}, "nohup", "chronic", "unbuffer", "setsid", "caffeinate")
	add(&spec{wrapper: true, skip: 1, opts: opts(val("-s --signal"), val("-k --kill-after"), fl("--preserve-status"),
		fl("--foreground"), fl("-v --verbose"))}, "timeout")
	add(&spec{wrapper: true, opts: opts(val("-i --input"), val("-o --output"), val("-e --error"))}, "stdbuf")
	add(&spec{wrapper: true, opts: opts(wr("-o --output"), val("-f --format"), fl("-a --append"), fl("-p --portability"),
		fl("-q --quiet"), fl("-v --verbose"))}, "time")
	add(&spec{wrapper: true, opts: opts(val("-c --class"), val("-n --classdata"), fl("-t --ignore"), val("-p --pid"))}, "ionice")
	add(&spec{wrapper: true, appendsInput: xargsReplace, opts: opts(fl("-0 --null"), fl("-r --no-run-if-empty"), fl("-t --verbose"),
		fl("-p --interactive"), fl("-x --exit"), fl("-o --open-tty"), rd("-a --arg-file"), val("-d --delimiter"), val("-E"),
		oval("-e --eof"), val("-I"), oval("-i --replace"), val("-L --max-lines"), oval("-l"), val("-n --max-args"),
		val("-P --max-procs"), val("-s --max-chars"), opt("--process-slot-var", valueOpt, effDanger, "sets a variable of its choosing in the command's environment"), fl("--show-limits"))}, "xargs")
	add(&spec{wrapper: true, opts: opts(val("-u --user"), val("-g --group"), val("-C --close-from"), val("-h --host"),
		val("-p --prompt"), val("-r --role"), val("-t --type"), val("-U --other-user"), val("-T --command-timeout"), chdir("-D --chdir"),
		dflag("-i --login", "starts a login shell"), dflag("-s --shell", "starts a shell"), dflag("-e --edit", "edits files as another user"),
		fl("-E --preserve-env"), fl("-H --set-home"), fl("-n --non-interactive"), fl("-S --stdin"), fl("-b --background"),
		fl("-k --reset-timestamp"), fl("-K --remove-timestamp"), fl("-l --list"), fl("-v --validate"))}, "sudo")
	add(&spec{wrapper: true, opts: opts(val("-u"), rd("-C"), fl("-n"), dflag("-s", "starts a shell"), fl("-L"))}, "doas")
	add(&spec{wrapper: true, opts: opts(wr("-o --output"), val("-e"), val("-p"), val("-s"), val("-E"), flags("-f -ff -c -C -q -t -tt -T -y -v"))}, "strace", "ltrace")
	add(&spec{wrapper: true, skip: 1, opts: opts(fl("-s --shared"), fl("-x --exclusive"), fl("-u --unlock"), fl("-n --nonblock"),
		val("-w --timeout"), val("-E --conflict-exit-code"), fl("-o --close"), code("-c --command", "runs a shell command string"))}, "flock")
	add(&spec{operands: opNone, posixStop: true, extra: watchExtra, opts: opts(val("-n --interval"), oval("-d --differences"), fl("-t --no-title"), fl("-b --beep"),
		fl("-e --errexit"), fl("-g --chgexit"), fl("-x --exec"), fl("-p --precise"), fl("-c --color"), fl("-w --no-wrap"), val("-q --equexit"))}, "watch")
	add(&spec{wrapper: true, skip: 1, opts: opts(fl("-a --all-tasks"), fl("-c --cpu-list"),
		dflag("-p --pid", "changes the CPU affinity of another process"))}, "taskset")
	add(&spec{wrapper: true, opts: opts(oval("-c --core"), oval("-d --data"), oval("-e --nice"), oval("-f --fsize"), oval("-i --sigpending"),
		oval("-l --memlock"), oval("-m --rss"), oval("-n --nofile"), oval("-q --msgqueue"), oval("-r --rtprio"), oval("-s --stack"),
		oval("-t --cpu"), oval("-u --nproc"), oval("-v --as"), oval("-x --locks"), oval("-y --rttime"), val("-o --output"),
		fl("--noheadings"), fl("--raw"), fl("--verbose"), opt("-p --pid", valueOpt, effDanger, "changes the limits of another process"))}, "prlimit")
	add(&spec{wrapper: true, opts: opts(val("--reuid --regid --ruid --rgid --euid --egid"), val("--groups"), val("--inh-caps"),
		val("--ambient-caps"), val("--bounding-set"), val("--securebits"), val("--pdeathsig"), val("--selinux-label"),
		val("--apparmor-profile"), val("--landlock-access"), val("--landlock-rule"), fl("--clear-groups"), fl("--keep-groups"),
		fl("--init-groups"), fl("--nnp --no-new-privs"), fl("--reset-env"), fl("-d --dump"))}, "setpriv")
	add(&spec{operands: opWrite, extra: scriptExtra, opts: opts(code("-c --command", "runs a shell command string"),
		wr("-O --log-out"), wr("-I --log-in"), wr("-B --log-io"), wr("-T --log-timing"), owr("-t --timing"), val("-m --logging-format"),
		val("-E --echo"), fl("-a --append"), fl("-e --return"), fl("-f --flush"), fl("-q --quiet"))}, "script")
	add(&spec{wrapper: true, skip: 1, opts: opts(dflag("--userspec", "changes user"), val("--groups"))}, "chroot")
	add(&spec{wrapper: true}, "busybox", "toybox")
	// Programs that run the rest of their arguments as a command, under a
	// fake root, without fsync, in a virtual X server, through a proxy,
	// on chosen NUMA nodes or in a session bus.
	add(&spec{wrapper: true, opts: opts(val("-l --lib"), exe("--faked", "runs another faked daemon program"), val("-s"), val("-i"),
		fl("-u --unknown-is-real"), val("-b"))}, "fakeroot")
	add(&spec{wrapper: true}, "eatmydata")
	add(&spec{wrapper: true, opts: opts(fl("-a --auto-servernum"), val("-n --server-num"), val("-s --server-args"), wr("-e --error-file"),
		val("-f --auth-file"), val("-p --xauth-protocol"), fl("-w --wait"), fl("-l --listen-tcp"))}, "xvfb-run")
	add(&spec{wrapper: true, opts: opts(val("-u --user"), val("-p --pass"), val("-a --address"), val("-P --port"), fl("-i --isolate"),
		fl("-q --quiet"), fl("-d --debug"))}, "torsocks")
	add(&spec{wrapper: true, opts: opts(rd("-f"), fl("-q"))}, "proxychains", "proxychains4")
	add(&spec{wrapper: true, opts: opts(val("--config-file"), exe("--dbus-daemon", "runs another bus daemon program"))}, "dbus-run-session")
	add(&spec{wrapper: true, opts: opts(val("-N --cpunodebind"), val("-m --membind"), val("-C --physcpubind"), val("-i --interleave"),
		val("-p --preferred"), val("-P --preferred-many"), fl("-l --localalloc"), fl("-a --all"), fl("-b --balancing"))}, "numactl")
	// chrt [options] PRIORITY COMMAND; with -p it changes another process.
	add(&spec{wrapper: true, skip: 1, opts: opts(fl("-a --all-tasks"), fl("-b --batch"), fl("-d --deadline"), fl("-e --ext"),
		fl("-f --fifo"), fl("-i --idle"), fl("-o --other"), fl("-r --rr"), fl("-R --reset-on-fork"), fl("-v --verbose"),
		val("-T --sched-runtime"), val("-P --sched-period"), val("-D --sched-deadline"), fl("-m --max"),
		dflag("-p --pid", "changes the scheduling of another process"))}, "chrt")
	add(&spec{operands: opNone, posixStop: true, extra: parallelExtra, opts: opts(val("-j --jobs -P --max-procs"),
		val("-n --max-args"), val("-N"), val("-L --max-lines"), val("-s --max-chars"), val("-d --delimiter"), val("--colsep -C"),
		val("-E"), val("--timeout"), val("--delay"), val("--retries"), val("--halt --halt-on-error"), val("--tagstring"),
		val("--memfree"), val("--load"), val("--nice"), rd("-a --arg-file"), wr("--joblog"), wr("--results --res"),
		wr("--tmpdir"), fl("-k --keep-order"), fl("-v"), fl("--tag"), fl("--bar"), fl("--progress"), fl("--eta"),
		fl("-u --ungroup"), fl("--line-buffer --lb"), fl("--group"), fl("--dry-run"), fl("-q --quote"), fl("-X"), fl("-m"),
		fl("-0 --null"), fl("--no-run-if-empty -r"), fl("--will-cite"), fl("--citation"))}, "parallel")
	nsOpts := opts(oval("-m --mount"), oval("-u --uts"), oval("-i --ipc"), oval("-n --net"), oval("-p --pid"), oval("-U --user"),
		oval("-C --cgroup"), oval("-T --time"), val("-S --setuid"), val("-G --setgid"))
	add(&spec{wrapper: true, opts: opts(nsOpts, fl("-f --fork"), fl("-r --map-root-user"), fl("-c --map-current-user"), fl("--map-auto"),
		val("--map-user"), val("--map-group"), val("--map-users"), val("--map-groups"), oval("--kill-child"), oval("--mount-proc"),
		val("--propagation"), val("--setgroups"), fl("--keep-caps"), val("--monotonic"), val("--boottime"), chdir("-w --wd"),
		opt("-R --root", valueOpt, effDanger, "runs the command under another root directory, where its name finds another program"))}, "unshare")
	add(&spec{wrapper: true, opts: opts(nsOpts, fl("-a --all"), fl("--preserve-credentials"), fl("-F --no-fork"), fl("-Z --follow-context"),
		opt("-t --target", valueOpt, effDanger, "enters the namespaces of another process"),
		opt("-r --root", optValueOpt, effDanger, "runs the command under another root directory"),
		opt("-w --wd", optValueOpt, effDanger, "runs the command in another process's working directory"),
		opt("-W --wdns", valueOpt, effDanger, "runs the command in a directory of another namespace"))}, "nsenter")
	add(&spec{wrapper: true, extra: suExtra, opts: opts(val("-u --user"), fl("-m -p --preserve-environment"), val("-w --whitelist-environment"),
		val("-g --group"), val("-G --supp-group"), fl("-l --login"), code("-c --command --session-command", "runs a shell command string"),
		fl("-f --fast"), exe("-s --shell", whyExec), fl("-P --pty"))}, "runuser")
	add(&spec{operands: opNone, extra: suExtra, opts: opts(fl("-m -p --preserve-environment"), val("-w --whitelist-environment"),
		val("-g --group"), val("-G --supp-group"), fl("-l --login"), code("-c --command --session-command", "runs a shell command string"),
		fl("-f --fast"), exe("-s --shell", whyExec), fl("-P --pty"))}, "su")
	add(&spec{operands: opNone, extra: capshExtra}, "capsh")
}
