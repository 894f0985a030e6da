package policy

// Wrappers: programs whose operands are another command (env, nice,
// timeout, xargs, sudo, flock, chroot, busybox…). The wrapped command is
// checked like any other. env -S splits a string into a command, env -P
// and sudo -s/-i start shells or search other paths, xargs appends input
// that cannot be checked to the command it runs, flock -c runs a shell
// command string.

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
	add(&spec{wrapper: true, appendsInput: true, opts: opts(fl("-0 --null"), fl("-r --no-run-if-empty"), fl("-t --verbose"),
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
	add(&spec{wrapper: true, opts: opts(val("-n --interval"), fl("-d --differences"), fl("-t --no-title"), fl("-b --beep"),
		fl("-e --errexit"), fl("-g --chgexit"), fl("-x --exec"), fl("-p --precise"), fl("-c --color"))}, "watch")
	add(&spec{wrapper: true, skip: 1, opts: opts(dflag("--userspec", "changes user"), val("--groups"))}, "chroot")
	add(&spec{wrapper: true}, "busybox", "toybox")
}
