package policy

import "strings"

// Pagers and editors.
//
// less: "!command" and "|" run shell commands from inside it, LESSOPEN runs
// an input preprocessor, and +cmd runs a command at start; -o writes a log
// file, -k loads key bindings that can set LESSOPEN (GTFOBins: less).
// vi/vim/nvim: -c, --cmd, -S and +cmd run editor commands, and :!cmd runs a
// shell (GTFOBins: vim). emacs: --eval, -l, -f and --script run Lisp code.

// registerEditors adds the table rows of this file.
func registerEditors(add adder) {
	add(&spec{extra: lessExtra, opts: opts(wr("-o --log-file"), wr("-O --LOG-FILE"), conf("-k --lesskey-file", "loads key bindings that can set LESSOPEN"), conf("--lesskey-src --lesskey-content", "loads key bindings that can set LESSOPEN"),
		rd("-T --tag-file"), val("-p --pattern"), val("-t --tag"), val("-x --tabs"), val("-b --buffers"), val("-h --max-back-scroll"),
		val("-y --max-forw-scroll"), val("-z --window"), val("-j --jump-target"), val("-P --prompt"), val("-#"),
		flags("-R -r -S -N -n -i -I -F -X -K -E -e -s -c -C -q -Q -g -G -m -M -a -A -B -d -D -f -L -u -U -V -w -W"))}, "less", "more", "most")
	add(&spec{operands: opWrite, extra: editorExtra, opts: opts(code("-c --cmd", whyCode), code("-S", "runs a script"),
		code("-s", "replays keystrokes from a file"), rd("-u -U"), val("-t -q"), flags("-R -n -b -e -E -d -M -m -o -O -p -r -x -y -Z -N -V"))},
		"vi", "vim", "nvim", "view", "vimdiff", "ex", "gvim")
	add(&spec{operands: opWrite, opts: opts(code("--eval -eval --execute", whyCode), code("-l --load -load", "loads lisp code"),
		code("-f --funcall -funcall", whyCode), code("--script -script", whyCode), flags("--batch -batch -Q -nw --no-init-file -q"))}, "emacs", "emacsclient")
}

// lessExtra refuses +cmd arguments that run a shell command.
func lessExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && strings.HasPrefix(a.s, "+") && strings.ContainsAny(a.s, "!|") {
			c.danger(p, allowed, "+", a.s, "runs a shell command")
		}
	}
}

// editorExtra refuses +cmd arguments, which run editor commands.
func editorExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && strings.HasPrefix(a.s, "+") {
			c.danger(p, allowed, "+", a.s, "runs an editor command")
		}
	}
}
