package policy

import (
	"strings"
	"sync"
)

// This file is the table of programs the checker knows: their options (with
// synonyms, so deny entries match by meaning), which option values are files
// read or written, which options or subcommands run other programs or inline
// code (dangerous unless an allow entry names them), and which programs wrap
// another command. Programs not listed are checked generically: path-like
// operands are read. Extend the table here.

func opt(names string, a arity, eff effect, why string) option {
	return option{names: strings.Fields(names), arity: a, eff: eff, why: why}
}

// Constructors for the table, by what the option does.
func fl(names string) option            { return opt(names, flagOpt, effNone, "") }
func val(names string) option           { return opt(names, valueOpt, effNone, "") }
func oval(names string) option          { return opt(names, optValueOpt, effNone, "") }
func rd(names string) option            { return opt(names, valueOpt, effRead, "") }
func wr(names string) option            { return opt(names, valueOpt, effWrite, "") }
func owr(names string) option           { return opt(names, optValueOpt, effWrite, "") }
func chdir(names string) option         { return opt(names, valueOpt, effChdir, "") }
func exe(names, why string) option      { return opt(names, valueOpt, effExec, why) }
func code(names, why string) option     { return opt(names, valueOpt, effCode, why) }
func conf(names, why string) option     { return opt(names, valueOpt, effConfig, why) }
func dflag(names, why string) option    { return opt(names, flagOpt, effDanger, why) }
func pat(names string) option           { return opt(names, valueOpt, effPattern, "") }
func patFile(names string) option       { return opt(names, valueOpt, effPatternFile, "") }
func inPlaceSuffix(names string) option { return opt(names, optValueOpt, effInPlace, "") }
func stopAt(o option) option            { o.stop = true; return o }

// opts gathers options and lists of options.
func opts(items ...any) []option {
	var out []option
	for _, it := range items {
		switch it := it.(type) {
		case option:
			out = append(out, it)
		case []option:
			out = append(out, it...)
		}
	}
	return out
}

// flags are independent flags without values (not synonyms).
func flags(names string) []option {
	var out []option
	for _, n := range strings.Fields(names) {
		out = append(out, fl(n))
	}
	return out
}
func dangerSubs(m map[string]string) map[string]string { return m }

const (
	whyExec   = "runs another program"
	whyCode   = "runs inline code"
	whyConfig = "changes configuration that can make it run programs"
	whyStdin  = "runs code read from standard input, which cannot be checked"
)

// programs is the table of known programs, by base name. It is built once
// per process and never modified; compiled scopes share it.
type programs map[string]*spec

// programTable returns the shared table.
var programTable = sync.OnceValue(buildPrograms)

// lookup returns the spec of a program by base name, or nil.
func (t programs) lookup(name string) *spec {
	if sp, ok := t[name]; ok {
		return sp
	}
	// python3.12, pip3.11 …
	if i := strings.IndexByte(name, '.'); i > 0 {
		if sp, ok := t[name[:i]]; ok && isVersion(name[i+1:]) {
			return sp
		}
	}
	return nil
}

func isVersion(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func buildPrograms() programs {
	t := programs{}
	add := func(sp *spec, names ...string) {
		sp.build()
		for _, n := range names {
			t[n] = sp
		}
	}

	// Removing, creating and changing files: every operand is written.
	add(&spec{operands: opWrite, opts: opts(fl("-r -R --recursive"), fl("-f --force"), fl("-i"), fl("-I"),
		fl("-d --dir"), fl("-v --verbose"), oval("--interactive"), fl("--one-file-system"), fl("--no-preserve-root"), fl("--preserve-root")),
		imply: rmImply}, "rm")
	add(&spec{operands: opWrite, opts: opts(fl("-p --parents"), val("-m --mode"), fl("-v --verbose"))}, "mkdir", "rmdir")
	add(&spec{operands: opWrite, opts: opts(rd("-r --reference"), val("-d --date"), val("-t"), fl("-a"), fl("-m"), fl("-c --no-create"), fl("-h --no-dereference"))}, "touch")
	add(&spec{operands: opWrite, opts: opts(val("-s --size"), rd("-r --reference"), fl("-c --no-create"))}, "truncate")
	add(&spec{operands: opWrite, opts: opts(val("-n --iterations"), val("-s --size"), fl("-u"), oval("--remove"), fl("-z --zero"), fl("-f --force"))}, "shred")
	add(&spec{operands: opWrite}, "unlink")
	add(&spec{operands: opWrite, opts: opts(fl("-a --append"), fl("-i --ignore-interrupts"), oval("--output-error"))}, "tee")
	add(&spec{operands: opSkipFirst, opts: opts(rd("--reference"), fl("-R --recursive"), fl("-v --verbose"), fl("-c --changes"), fl("-f --silent --quiet"))}, "chmod", "chown", "chgrp")
	add(&spec{operands: opWriteLast, extra: cpExtra, opts: opts(wr("-t --target-directory"), fl("-r -R --recursive"), fl("-f --force"),
		fl("-a --archive"), fl("-p"), oval("--preserve"), val("-S --suffix"), fl("-n --no-clobber"), fl("-u --update"), fl("-v --verbose"),
		fl("-l --link"), fl("-s --symbolic-link"), fl("-T --no-target-directory"), oval("--backup"), fl("-b"))}, "cp")
	add(&spec{operands: opWrite, opts: opts(wr("-t --target-directory"), fl("-f --force"), fl("-n --no-clobber"), fl("-u --update"),
		fl("-v --verbose"), val("-S --suffix"), fl("-T --no-target-directory"), oval("--backup"), fl("-b"))}, "mv")
	add(&spec{operands: opWriteLast, opts: opts(wr("-t --target-directory"), fl("-s --symbolic"), fl("-f --force"), fl("-n --no-dereference"),
		fl("-r --relative"), fl("-v --verbose"), fl("-T --no-target-directory"), val("-S --suffix"))}, "ln")
	add(&spec{operands: opWriteLast, opts: opts(wr("-t --target-directory"), val("-m --mode"), val("-o --owner"), val("-g --group"),
		fl("-D"), fl("-d --directory"), fl("-c"), fl("-v --verbose"), fl("-s --strip"), exe("--strip-program", whyExec))}, "install")
	add(&spec{operands: opWriteSecond, opts: opts(val("-f --skip-fields"), val("-s --skip-chars"), val("-w --check-chars"))}, "uniq")
	add(&spec{operands: opWriteSecond, opts: opts(val("-c -cols"), val("-g -groupsize"), val("-l -len"), val("-s -seek"), val("-o -offset"), fl("-r -revert"))}, "xxd")
	add(&spec{operands: opWriteSecond, opts: opts(val("-l --lines"), val("-b --bytes"), val("-n --number"), val("-a --suffix-length"),
		val("-C --line-bytes"), oval("--additional-suffix"), exe("--filter", "runs a shell command for every piece"))}, "split")
	add(&spec{operands: opWrite, opts: opts(wr("-o --output"), rd("-i --input"), chdir("-d --directory"), wr("-r --reject-file"),
		wr("-B --prefix"), val("-p --strip"), val("-F --fuzz"), val("-D --ifdef"), val("-V --version-control"), val("-z --suffix"))}, "patch")
	add(&spec{operands: opWrite, opts: opts(fl("-c --stdout --to-stdout"), fl("-d --decompress"), fl("-k --keep"), fl("-f --force"), val("-S --suffix"))},
		"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "zstd", "unzstd")

	// Reading and filtering: operands are read.
	add(&spec{opts: opts(fl("-n --number"), fl("-A --show-all"), fl("-b"), fl("-e"), fl("-E"), fl("-s"), fl("-t"), fl("-T"), fl("-v"), fl("-u"))}, "cat", "tac")
	add(&spec{opts: opts(val("-n --lines"), val("-c --bytes"), oval("-f --follow"), fl("-F"), val("-s --sleep-interval"), val("--pid"))}, "head", "tail")
	add(&spec{opts: opts(rd("--files0-from"))}, "wc")
	add(&spec{opts: opts(val("-I --ignore"), val("--hide"), val("-w --width"), oval("--color"), val("--time-style"), val("-T --tabsize"),
		val("--format"), val("--sort"), val("--block-size"), val("--quoting-style"), val("--indicator-style"), val("--time"), fl("-d --directory"))}, "ls", "dir", "vdir")
	add(&spec{opts: opts(val("-I"), val("-P"), val("-L"), wr("-o"), val("--filelimit"), val("--charset"), val("--sort"), val("--timefmt"))}, "tree")
	add(&spec{opts: opts(rd("--exclude-from -X"), val("-d --max-depth"), val("--exclude"), val("-B --block-size"), val("-t --threshold"), val("--time-style"))}, "du")
	add(&spec{opts: opts(val("-c --format"), val("--printf"))}, "stat")
	add(&spec{opts: opts(val("-d -f -c -b --delimiter --fields --characters --bytes"), oval("--output-delimiter"))}, "cut")
	add(&spec{operands: opNone}, "tr", "echo", "printf", "basename", "dirname", "seq", "yes", "sleep", "whoami", "id",
		"uname", "hostname", "date", "true", "false", "which", "nproc", "arch", "groups", "tty", "env-true")
	add(&spec{opts: opts(rd("--from-file"), rd("--to-file"), val("-U --unified"), val("-C --context"), val("-x --exclude"), rd("-X --exclude-from"),
		val("-I --ignore-matching-lines"), val("--label"), oval("--color"), val("-W --width"), val("--line-format"))}, "diff")
	add(&spec{opts: opts(val("-t"), val("-1"), val("-2"), val("-j"), val("-o"), val("-e"))}, "join")
	add(&spec{opts: opts(val("-d --delimiters"))}, "paste")
	add(&spec{opts: opts(val("-s -t -c -o -N -l -R -W -H --separator --table-columns"))}, "column")
	add(&spec{opts: opts(val("-w --width"))}, "fold", "fmt", "base64", "base32")
	add(&spec{opts: opts(val("-n --bytes"), val("-t --radix"), val("-e --encoding"))}, "strings")
	add(&spec{opts: opts(rd("-m --magic-file"), rd("-f --files-from"), val("-F --separator"), val("-e --exclude"))}, "file")
	add(&spec{opts: opts(rd("-c --check"))}, "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum")
	add(&spec{opts: opts(val("-A -j -N -S -t -w --address-radix --skip-bytes --read-bytes --format --width"))}, "od", "hexdump")
	add(&spec{opts: opts(wr("-o --output"), exe("--compress-program", "runs a compression program"), wr("-T --temporary-directory"),
		rd("--files0-from"), rd("--random-source"), val("-k --key"), val("-t --field-separator"), val("-S --buffer-size"),
		val("--batch-size"), val("--parallel"), oval("--sort"), flags("-n -r -u -V -h -g -M -R -b -d -f -i -s -z -c -C -m"))}, "sort")
	add(&spec{opts: opts(wr("-o --output"), rd("--random-source"), val("-n --head-count"), val("-i --input-range"))}, "shuf")
	add(&spec{operands: opPatternFirst, opts: opts(pat("-e --regexp"), patFile("-f --file"), val("-m --max-count"), val("-A --after-context"),
		val("-B --before-context"), val("-C --context"), val("-d --directories"), val("-D --devices"), val("--label"), val("--include"),
		val("--exclude"), val("--exclude-dir"), rd("--exclude-from"), oval("--color --colour"), val("--binary-files"), val("--group-separator"),
		fl("-r -R --recursive --dereference-recursive"), flags("-i -v -n -l -L -c -o -q -s -w -x -E -F -G -P -H -h -a -I -z -Z -b -U")), extra: grepExtra},
		"grep", "egrep", "fgrep", "rgrep", "zgrep")
	add(&spec{operands: opPatternFirst, opts: opts(pat("-e --regexp"), patFile("-f --file"),
		exe("--pre", "runs a preprocessor program on every file"), exe("--hostname-bin", "runs a program to find the host name"),
		val("--pre-glob"), val("-g --glob"), val("--iglob"), val("-t --type"), val("-T --type-not"), val("--type-add"), val("--type-clear"),
		val("-r --replace"), val("-m --max-count"), val("-A --after-context"), val("-B --before-context"), val("-C --context"),
		val("-j --threads"), val("-M --max-columns"), val("-E --encoding"), val("--colors"), val("--color"), val("--sort"), val("--sortr"),
		val("--engine"), rd("--ignore-file"), val("--path-separator"), val("-d --max-depth"), val("--max-filesize"), val("--dfa-size-limit"),
		val("--regex-size-limit"), val("--context-separator"), val("--field-match-separator"), val("--field-context-separator"),
		val("--hyperlink-format"), val("-V --version"), opt("--files", flagOpt, effPattern, ""), fl("--type-list"), fl("--hidden -."), fl("--no-ignore"),
		fl("-u"), fl("-uu"), fl("-uuu")), extra: rgExtra}, "rg")
	add(&spec{operands: opPatternFirst, opts: opts(exe("-x --exec", "runs a command for every match"), exe("-X --exec-batch", "runs a command on the matches"),
		val("-e --extension"), val("-t --type"), val("-E --exclude"), val("-d --max-depth"), val("--min-depth"), val("--exact-depth"),
		val("-S --size"), val("--changed-within"), val("--changed-before"), val("-o --owner"), chdir("--base-directory"), rd("--search-path"),
		rd("--ignore-file"), val("-j --threads"), val("--max-results"), val("-c --color"), val("--path-separator"), val("--format"))}, "fd", "fdfind")
	add(&spec{operands: opPatternFirst, opts: opts(patFile("-f --from-file"), val("--arg"), val("--argjson"), val("--slurpfile"),
		val("--rawfile"), rd("-L"), val("--indent"))}, "jq", "yq", "gojq")

	// Editing in place and scripting text.
	add(&spec{operands: opPatternFirst, opts: opts(inPlaceSuffix("-i --in-place"), pat("-e --expression"), patFile("-f --file"),
		val("-l --line-length"), fl("-n --quiet --silent"), fl("-E -r --regexp-extended"), fl("-s --separate"), fl("-u --unbuffered"),
		fl("-z --null-data"), fl("--posix"), fl("--debug"), fl("--sandbox")), extra: sedExtra}, "sed", "gsed")
	add(&spec{operands: opPatternFirst, opts: opts(patFile("-f --file"), pat("-e --source"), code("-i --include", "loads awk code from a file"),
		dflag("-l --load", "loads a shared library"), patFile("-E --exec"), val("-v --assign"), val("-F --field-separator"),
		owr("-o --pretty-print"), owr("-p --profile"), owr("-d --dump-variables"), oval("-D --debug"), oval("-L --lint"),
		fl("-S --sandbox"), flags("-b -c -C -g -h -M -n -N -O -P -r -s -t -V")), extra: awkExtra}, "awk", "gawk", "mawk", "nawk")
	add(&spec{operands: opNone, singleDash: true, extra: findExtra}, "find")

	add(&spec{operands: opNone, extra: ddExtra}, "dd")

	// Archives.
	add(&spec{operands: opNone, rewrite: tarOldStyle, extra: tarExtra, opts: opts(
		exe("-I --use-compress-program", "runs a compression program"), exe("--to-command", "pipes every file to a command"),
		exe("--checkpoint-action", "runs actions (exec=…) at checkpoints"), exe("-F --info-script --new-volume-script", "runs a script between volumes"),
		exe("--rsh-command", "runs a remote shell program"), exe("--rmt-command", "runs a remote tape program"),
		chdir("-C --directory"), val("-f --file"), rd("-T --files-from"), rd("-X --exclude-from"), wr("-g --listed-incremental"),
		wr("--index-file"), rd("--add-file"), wr("--one-top-level"), wr("--volno-file"), dflag("-P --absolute-names", "writes or reads outside the target directory"),
		fl("-x --extract --get"), fl("-c --create"), fl("-r --append"), fl("-u --update"), fl("-A --catenate --concatenate"),
		fl("-t --list"), fl("-d --diff --compare"), fl("--delete"), val("-b --blocking-factor"), val("-K --starting-file"),
		val("-N --newer --after-date"), val("-L --tape-length"), val("-V --label"), val("-H --format"), val("--exclude"),
		val("--transform --xform"), val("--strip-components"), val("--owner"), val("--group"), val("--mode"), val("--mtime"),
		val("--checkpoint"), flags("-z -j -J -v -O -k -m -p -h -S -W -B -M -R -G -l -o -s -w -a --zstd --gzip --bzip2 --xz"))}, "tar", "gtar", "bsdtar")
	add(&spec{operands: opWriteFirst, opts: opts(exe("-TT --unzip-command", "runs a command to test the archive"), wr("-b --temp-path"),
		wr("-O --output-file"), val("-n --suffixes"), val("-t --from-date"), val("-tt --before-date"), val("-x --exclude"),
		val("-i --include"), val("-P --password"), val("-s --split-size"), val("-Z --compression-method"),
		fl("-r -R --recurse-paths"), flags("-j -q -v -T -u -f -d -m -0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -y -D -X -e -A -F -g -l -o -z")), extra: zipExtra}, "zip")
	add(&spec{operands: opNone, extra: unzipExtra, opts: opts(wr("-d"), val("-x"), val("-P"), flags("-o -n -q -l -t -v -j -a -C -L -u -f -p -c -Z"))}, "unzip")

	// Interpreters.
	interp := func(codeOpts string, extraOpts ...any) *spec {
		return &spec{posixStop: true, extra: interpExtra, opts: opts(append([]any{code(codeOpts, whyCode)}, extraOpts...)...)}
	}
	add(interp("-c", stopAt(val("-m")), val("-W"), val("-X"), val("--check-hash-based-pycs"),
		flags("-b -B -d -E -h -i -I -O -OO -P -q -s -S -u -v -V -x --version --help")), "python", "python3", "python2", "pypy", "pypy3")
	add(interp("-e --eval -p --print", rd("-r --require"), rd("--import"), rd("--loader --experimental-loader"), val("--input-type"),
		val("--conditions -C"), oval("--inspect --inspect-brk"), flags("-i --interactive --test --watch --check -v --version -h --help")),
		"node", "nodejs", "deno", "bun")
	add(interp("-e -E", inPlaceSuffix("-i"), oval("-M -m"), oval("-I"), oval("-C"), oval("-d"), oval("-D"), oval("-x"),
		flags("-n -p -a -l -0 -s -w -W -X -t -T -U -c -u -v -V -S -h")), "perl")
	add(interp("-e", inPlaceSuffix("-i"), val("-r"), val("-I"), chdir("-C"), oval("-E --encoding"), oval("-K"), oval("-T"), oval("-W"),
		flags("-n -p -a -l -w -c -d -v -y -s -S --version -h --help")), "ruby")
	add(interp("-e", flags("-q -v --version")), "php")
	add(&spec{posixStop: true, extra: shellExtra, opts: opts(fl("-c"), fl("-s"), flags("-i -l --login"), val("-o +o"), val("-O +O"),
		rd("--rcfile --init-file"), flags("-e -u -x -v -n -f -h -B -H -P -T -p -r -a -b -m -t -k -E -C --norc --noprofile --posix --noediting --restricted"))},
		"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish")

	// Build tools and package managers.
	add(goSpec(), "go")
	add(&spec{opts: opts(rd("-f --file --makefile"), chdir("-C --directory"), code("-E --eval", "evaluates makefile text, which can define commands"),
		rd("-I --include-dir"), val("-o --old-file --assume-old"), val("-W --what-if --new-file --assume-new"), oval("-j --jobs"),
		oval("-l --load-average --max-load"), oval("-O --output-sync"), oval("--shuffle"), oval("--debug"),
		flags("-B -d -e -i -k -n -p -q -r -R -s -S -t -v -w --always-make --dry-run --just-print --keep-going --silent --quiet")),
		operands: opNone, extra: makeExtra}, "make", "gmake")
	add(npmSpec(), "npm")
	add(pipSpec(), "pip", "pip3")
	add(&spec{subs: map[string]*spec{"install": {}},
		subDanger: dangerSubs(map[string]string{"install": "builds and installs binaries outside the scope"}),
		defSub:    &spec{opts: opts(conf("--config", whyConfig), rd("--manifest-path"), wr("--target-dir"))},
		opts:      opts(conf("--config", whyConfig), rd("--manifest-path"), chdir("-C"), val("-Z"))}, "cargo")
	add(gitSpec(), "git")

	// Network clients: files they read and write.
	add(&spec{operands: opNone, extra: curlExtra, opts: opts(wr("-o --output"), wr("--output-dir"), rd("-K --config"), rd("-T --upload-file"),
		val("-d --data --data-binary --data-raw --data-ascii --data-urlencode --json -F --form --form-string"),
		wr("-c --cookie-jar"), wr("-D --dump-header"), wr("--trace --trace-ascii --stderr --libcurl --etag-save"), val("-b --cookie"),
		rd("-E --cert"), rd("--key"), rd("--cacert"), rd("--netrc-file"), val("-u --user"), val("-H --header"), val("-X --request"),
		val("-A --user-agent"), val("-e --referer"), val("--url"), val("-m --max-time"), val("--connect-timeout"), val("-w --write-out"),
		val("-x --proxy"), val("-r --range"), val("--retry"), val("-z --time-cond"), val("--resolve"), val("--connect-to"))}, "curl")
	add(&spec{operands: opNone, opts: opts(wr("-O --output-document"), wr("-o --output-file"), wr("-a --append-output"),
		chdir("-P --directory-prefix"), rd("-i --input-file"), rd("--post-file"), conf("-e --execute", "runs wgetrc commands"),
		exe("--use-askpass", whyExec), rd("--config"), val("-t --tries"), val("-T --timeout"), val("-U --user-agent"),
		val("--header"), val("--post-data"), val("-l --level"), val("-A --accept"), val("-R --reject"))}, "wget")
	add(&spec{posixStop: true, operands: opNone, extra: sshExtra, opts: opts(val("-o"), rd("-F"), wr("-E"), rd("-i"), val("-S"),
		val("-p"), val("-l"), val("-L"), val("-R"), val("-D"), val("-J"), val("-W"), val("-b"), val("-c"), val("-m"), val("-O"), val("-Q"),
		val("-w"), val("-e"), val("-B"), val("-I"), flags("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y"))}, "ssh")
	add(&spec{operands: opWriteLast, extra: sshExtra, opts: opts(exe("-S", whyExec), rd("-F"), val("-o"), rd("-i"), val("-P"),
		val("-l"), val("-c"), val("-J"), val("-D"), val("-X"), flags("-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v"))}, "scp")
	add(&spec{operands: opWriteLast, opts: opts(exe("-e --rsh", "runs a remote shell program"), exe("--rsync-path", whyExec),
		wr("--log-file"), rd("--files-from"), rd("--exclude-from"), rd("--include-from"), rd("--password-file"), wr("--backup-dir"),
		wr("--temp-dir -T"), wr("--partial-dir"), val("--exclude"), val("--include"), val("-f --filter"), val("--chmod"),
		val("--chown"), val("--timeout"), val("--bwlimit"), val("--max-size"), val("--min-size"), val("-B --block-size"),
		flags("-a -r -v -z -P -n -u -l -L -p -t -g -o -D -H -A -X -c -h -q -i -W -x -R -S --delete --dry-run --archive --progress"))}, "rsync")

	// Pagers and editors.
	add(&spec{extra: lessExtra, opts: opts(wr("-o --log-file"), wr("-O --LOG-FILE"), conf("-k --lesskey-file", "loads key bindings that can set LESSOPEN"), conf("--lesskey-src --lesskey-content", "loads key bindings that can set LESSOPEN"),
		rd("-T --tag-file"), val("-p --pattern"), val("-t --tag"), val("-x --tabs"), val("-b --buffers"), val("-h --max-back-scroll"),
		val("-y --max-forw-scroll"), val("-z --window"), val("-j --jump-target"), val("-P --prompt"), val("-#"),
		flags("-R -r -S -N -n -i -I -F -X -K -E -e -s -c -C -q -Q -g -G -m -M -a -A -B -d -D -f -L -u -U -V -w -W"))}, "less", "more", "most")
	add(&spec{operands: opWrite, extra: editorExtra, opts: opts(code("-c --cmd", whyCode), code("-S", "runs a script"),
		code("-s", "replays keystrokes from a file"), rd("-u -U"), val("-t -q"), flags("-R -n -b -e -E -d -M -m -o -O -p -r -x -y -Z -N -V"))},
		"vi", "vim", "nvim", "view", "vimdiff", "ex", "gvim")
	add(&spec{operands: opWrite, opts: opts(code("--eval -eval --execute", whyCode), code("-l --load -load", "loads lisp code"),
		code("-f --funcall -funcall", whyCode), code("--script -script", whyCode), flags("--batch -batch -Q -nw --no-init-file -q"))}, "emacs", "emacsclient")

	// Wrappers: the command they run is checked like any other.
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
	return t
}

func gitSpec() *spec {
	// Options shared by many subcommands: any of them on any subcommand.
	common := []option{
		exe("--upload-pack", "runs a program as the remote upload-pack"), exe("--receive-pack", "runs a program as the remote receive-pack"),
		exe("--exec", whyExec), wr("--output"), exe("--open-files-in-pager", "runs a pager program on the matches"),
		exe("--extcmd", "runs a diff program"), conf("--template", "copies hooks from a template directory"),
		conf("--config", whyConfig), wr("--separate-git-dir"), rd("--git-dir"), rd("--work-tree"),
		rd("--file"), rd("-F"),
		val("-m --message"), val("--grep"), val("--author"), val("--committer"), val("-L"), val("-S"), val("-G"),
		val("--format --pretty"), val("--since --after"), val("--until --before"), val("--date"), val("-n --max-count"),
		val("--skip"), val("--decorate-refs"), val("--exclude"), val("--branches"), val("--tags"), val("--remotes"),
		val("--glob"), val("--abbrev"), val("-U --unified"), val("--word-diff-regex"), val("--diff-filter"),
	}
	sub := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, common...), extra...)} }
	subs := map[string]*spec{
		"clone":          {operands: opWriteLast, opts: append(append([]option{}, common...), exe("-u", "runs a program as the remote upload-pack"), val("-c"), fl("--recursive --recurse-submodules"))},
		"fetch":          sub(),
		"pull":           sub(),
		"ls-remote":      sub(exe("-u", "runs a program as the remote upload-pack")),
		"push":           sub(fl("-f --force --force-with-lease --force-if-includes --mirror"), fl("-d --delete"), fl("-u --set-upstream")),
		"archive":        sub(wr("-o")),
		"rebase":         sub(exe("-x", "runs a command after every commit")),
		"grep":           sub(exe("-O", "runs a pager program on the matches"), fl("--no-index"), fl("--untracked")),
		"add":            sub(dflag("-f --force", "stages ignored files, which may be denied ones")),
		"difftool":       sub(exe("-x", "runs a diff program"), fl("-y --no-prompt")),
		"mergetool":      sub(),
		"format-patch":   sub(wr("-o --output-directory")),
		"commit":         sub(rd("-t --template"), fl("-a --all"), val("-m --message"), val("-c -C --reuse-message --reedit-message"), oval("--fixup"), oval("--squash")),
		"send-email":     sub(exe("--smtp-server", "can run a local sendmail program"), exe("--to-cmd --cc-cmd --header-cmd --sendmail-cmd", whyExec)),
		"config":         {extra: gitConfigExtra},
		"reset":          sub(fl("--hard"), fl("--soft"), fl("--mixed"), fl("--merge"), fl("--keep")),
		"clean":          sub(fl("-f --force"), fl("-d"), fl("-x"), fl("-X"), fl("-n --dry-run"), fl("-i --interactive")),
		"help":           sub(dflag("-w --web", "starts a browser"), dflag("-m --man", "runs man with its pager"), fl("-a --all")),
		"checkout-index": sub(wr("--prefix")),
		"fast-export":    sub(wr("--export-marks"), rd("--import-marks")),
		"fast-import":    sub(wr("--export-marks"), rd("--import-marks")),
		"submodule":      {subDanger: map[string]string{"foreach": "runs a shell command in every submodule"}},
		"bisect":         {subDanger: map[string]string{"run": "runs a script for every step"}},
		"worktree":       {operands: opRead, subs: map[string]*spec{"add": {operands: opWriteFirst, opts: append(append([]option{}, common...), val("-b -B"))}, "move": {operands: opWrite}}},
		"bundle":         {subs: map[string]*spec{"create": {operands: opWriteFirst}}},
		"init":           {operands: opWrite, opts: append(append([]option{}, common...), conf("--template", "copies hooks from a template directory"))},
		"update-index":   sub(),
		"apply":          sub(dflag("--unsafe-paths", "writes outside the working tree")),
		"am":             sub(),
	}
	return &spec{
		extra: gitExtra,
		opts: opts(val("-c"),
			conf("--config-env", "sets configuration from the environment"), chdir("-C"), rd("--git-dir"), wr("--work-tree"),
			oval("--exec-path"), val("--namespace"), val("--super-prefix"), val("--list-cmds"), fl("-p --paginate"),
			fl("-P --no-pager"), fl("--bare"), fl("--no-replace-objects"), fl("--literal-pathspecs"), fl("--glob-pathspecs"),
			fl("--noglob-pathspecs"), fl("--icase-pathspecs"), fl("--no-optional-locks"), fl("--version"), fl("--help")),
		subs: subs,
		subDanger: map[string]string{
			"filter-branch": "runs shell filters", "filter-repo": "runs code callbacks", "instaweb": "starts a web server and a browser",
			"daemon": "starts a server", "web--browse": "runs a browser program", "remote-ext": "runs a command as a remote",
			"maintenance": "installs scheduled jobs outside the scope", "difftool": "runs a diff tool program", "mergetool": "runs a merge tool program",
			"credential": "talks to credential helper programs",
		},
		defSub: sub(),
	}
}

func goSpec() *spec {
	build := opts(
		exe("-exec", "runs the built binary through another program"), exe("-toolexec", "runs every build tool through another program"),
		wr("-o"), rd("-overlay"), rd("-modfile"), rd("-pgo"), val("-ldflags"), val("-gcflags"), val("-asmflags"), val("-gccgoflags"),
		val("-tags"), val("-mod"), val("-p"), val("-count"), val("-run"), val("-bench"), val("-benchtime"), val("-timeout"),
		val("-cpu"), val("-parallel"), val("-coverpkg"), val("-covermode"), val("-shuffle"), val("-skip"), val("-fuzz"),
		val("-fuzztime"), val("-fuzzminimizetime"), val("-list"), val("-buildmode"), val("-compiler"), val("-installsuffix"),
		val("-trimpath"), val("-buildvcs"), val("-debug-actiongraph"), wr("-pkgdir"), wr("-coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir -json-file"),
		exe("-vettool", "runs another vet program"), val("-vet"), val("-f"), val("-failfast"),
		flags("-race -msan -asan -cover -v -x -n -a -work -json -short -benchmem -c -i -u -t -d -m -e -deps -find -test -export -compiled"))
	b := func() *spec { return &spec{singleDash: true, opts: append([]option{}, build...)} }
	return &spec{singleDash: true, extra: goExtra,
		opts: opts(chdir("-C")),
		subs: map[string]*spec{
			"build": b(), "run": {singleDash: true, posixStop: true, opts: append([]option{}, build...)}, "test": b(), "vet": b(), "install": b(), "list": b(), "get": b(),
			"env": {singleDash: true, opts: opts(conf("-w", "writes the go configuration file"), conf("-u", "writes the go configuration file"), fl("-json -changed"))},
			"mod": {singleDash: true}, "tool": {singleDash: true}, "clean": b(), "fmt": b(), "doc": {singleDash: true}, "work": {singleDash: true},
			"version": {singleDash: true}, "generate": b(), "fix": b(),
		},
		subDanger: map[string]string{"generate": "runs the commands named in //go:generate comments",
			"install": "writes binaries outside the scope (GOBIN)", "bug": "opens a browser", "telemetry": "changes the go configuration"},
	}
}

func npmSpec() *spec {
	global := opts(exe("--script-shell", "runs scripts with another shell"), chdir("-C --prefix"), exe("--browser", "runs a browser program"),
		conf("--userconfig --globalconfig", "loads configuration that can set the script shell"),
		code("--node-options", "passes options (such as --require) to node"), exe("-c --call", whyExec), exe("--shell", whyExec),
		exe("--editor", whyExec), val("-w --workspace"), fl("-ws --workspaces"), fl("-y --yes"), val("--registry"), val("--tag"),
		val("--loglevel"), flags("-s --silent -q --quiet -d --verbose --if-present --ignore-scripts -D --save-dev -E --save-exact -P --save-prod"))
	s := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, global...), extra...)} }
	gl := dflag("-g --global", "installs or changes packages outside the scope")
	loc := opt("--location", valueOpt, effNone, "")
	return &spec{opts: global, defSub: s(),
		subs: map[string]*spec{
			"install": s(gl, loc), "i": s(gl, loc), "add": s(gl), "uninstall": s(gl), "rm": s(gl), "remove": s(gl), "link": s(gl),
			"update": s(gl), "up": s(gl),
			"config": {opts: global, subs: map[string]*spec{}, subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "delete": whyConfig, "fix": whyConfig}},
			"c":      {opts: global, subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "delete": whyConfig}},
			"init":   s(), "create": s(), "exec": s(), "x": s(),
		},
		abbrev: true,
		subDanger: map[string]string{"exec": "runs a package's program, fetched if needed", "x": "runs a package's program, fetched if needed",
			"explore": "runs a shell in a package", "set": whyConfig, "edit": "runs an editor", "create": "runs a remote initializer package",
			"init": "runs a remote initializer package when given one", "link": "links packages into the global prefix",
			"docs": "starts a browser", "bugs": "starts a browser", "repo": "starts a browser", "home": "starts a browser",
			"ln": "links packages into the global prefix"},
		extra: npmExtra,
	}
}

func pipSpec() *spec {
	global := opts(wr("--log"), wr("--cache-dir"), exe("--python", "runs another Python interpreter"), dflag("--user", "installs into the user's directory, outside the scope"), val("--proxy"), val("--retries"), val("--timeout"), flags("-v -q --isolated --no-cache-dir -U --upgrade --no-deps -e --editable --pre"))
	inst := func(extra ...option) *spec {
		return &spec{opts: append(append([]option{}, global...), append([]option{wr("-t --target"), wr("--prefix"), wr("--root"),
			wr("--src"), rd("-r --requirement"), rd("-c --constraint"), val("-i --index-url"), val("--extra-index-url"),
			rd("-f --find-links")}, extra...)...)}
	}
	return &spec{opts: global, defSub: &spec{opts: global},
		subs: map[string]*spec{
			"install": inst(), "download": inst(wr("-d --dest")), "wheel": inst(wr("-w --wheel-dir")),
			"config": {subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "unset": whyConfig}},
		}}
}

// rmImply: --interactive=never (no, none, n) removes without asking, as -f.
func rmImply(p *parsed) {
	for _, v := range p.values("--interactive") {
		if v.known && (v.s == "never" || v.s == "no" || v.s == "none" || v.s == "n") {
			p.occ = append(p.occ, occurrence{id: "-f", text: "--interactive=" + v.s})
		}
	}
}
