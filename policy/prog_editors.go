package policy

import (
	"slices"
	"strings"
)

// Pagers and editors.
//
// less: "!command" and "|" run shell commands from inside it, LESSOPEN runs
// an input preprocessor, and +cmd runs a command at start; -o writes a log
// file, -k loads key bindings that can set LESSOPEN (GTFOBins: less).
// vi/vim/nvim: -c, --cmd, -S and +cmd run editor commands, and :!cmd runs a
// shell (GTFOBins: vim). emacs: --eval, -l, -f and --script run Lisp code.
// man: -P runs its pager program, -H a web browser, -X an X11 previewer,
// and -C loads a configuration file that names the programs it runs
// (GTFOBins: man); -l makes the operands files, read like any operand.

// registerEditors adds the table rows of this file.
func registerEditors(add adder) {
	add(&spec{extra: lessExtra, opts: opts(wr("-o --log-file"), wr("-O --LOG-FILE"), conf("-k --lesskey-file", "loads key bindings that can set LESSOPEN"), conf("--lesskey-src --lesskey-content", "loads key bindings that can set LESSOPEN"),
		rd("-T --tag-file"), val("-p --pattern"), val("-t --tag"), val("-x --tabs"), val("-b --buffers"), val("-h --max-back-scroll"),
		val("-y --max-forw-scroll"), val("-z --window"), val("-j --jump-target"), val("-P --prompt"), val("-#"),
		flags("-R -r -S -N -n -i -I -F -X -K -E -e -s -c -C -q -Q -g -G -m -M -a -A -B -d -D -f -L -u -U -V -w -W"))}, "less", "more", "most")
	add(&spec{operands: opWrite, extra: editorExtra, opts: opts(code("-c --cmd", whyCode), code("-S", "runs a script"),
		code("-s", "replays keystrokes from a file"), rd("-u -U"), val("-t -q"), flags("-R -n -b -e -E -d -M -m -o -O -p -r -x -y -Z -N -V"))},
		"vi", "vim", "nvim", "view", "vimdiff", "ex", "gvim")
	add(&spec{extra: manExtra, opts: opts(val("-P --pager"), opt("-H --html", optValueOpt, effExec, "runs a web browser"),
		opt("-X --gxditview", optValueOpt, effDanger, "runs an X11 previewer"), conf("-C --config-file", "loads configuration that names the programs it runs"),
		rd("-M --manpath"), val("-L --locale"), val("-m --systems"), val("-S -s --sections"), val("-e --extension"), val("-R --recode"),
		val("-E --encoding"), val("-r --prompt"), val("-p --preprocessor"), oval("-T --troff-device"), oval("--warnings"),
		fl("-d --debug"), fl("-D --default"), fl("-f --whatis"), fl("-k --apropos"), fl("-K --global-apropos"), fl("-l --local-file"),
		fl("-w --where --path --location"), fl("-W --where-cat --location-cat"), fl("-c --catman"), fl("-i --ignore-case"),
		fl("-I --match-case"), fl("--regex"), fl("--wildcard"), fl("--names-only"), fl("-a --all"), fl("-u --update"),
		fl("--no-subpages"), fl("-7 --ascii"), fl("--no-hyphenation --nh"), fl("--no-justification --nj"), fl("-t --troff"),
		fl("-Z --ditroff"), fl("-? --help"), fl("--usage"), fl("-V --version"))}, "man")
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

// manExtra refuses a pager program other than the ones that run nothing
// else (man -P cat is the usual way to read a page without a terminal).
func manExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-P") {
		if !v.known || !slices.Contains(programVars["MANPAGER"], v.s) || v.s == "" {
			c.danger(p, allowed, "-P", "-P "+v.s, "runs its pager program")
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
