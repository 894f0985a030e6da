package policy

// Programs that read and filter files: cat, head, ls, tree, du, diff,
// sort, … Path-like operands are read; options that name files (sort -o,
// tree -o, --files0-from) are checked by the table. sort
// --compress-program runs a program. ls -d lists the names it is given and
// reads nothing below them.

// diffExtra: diff -r reads every file below the directories it compares.
func diffExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-r") {
		return
	}
	for _, a := range p.operands() {
		if a.known {
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: true})
		}
	}
}

// registerReaders adds the table rows of this file.
func registerReaders(add adder) {
	// kill's operands are process ids or job specs, not files.
	add(&spec{operands: opNone, opts: opts(val("-s --signal"), val("-n"), fl("-l --list"), fl("-L --table"))}, "kill")
	add(&spec{opts: opts(fl("-n --number"), fl("-A --show-all"), fl("-b"), fl("-e"), fl("-E"), fl("-s"), fl("-t"), fl("-T"), fl("-v"), fl("-u"))}, "cat", "tac")
	add(&spec{opts: opts(val("-n --lines"), val("-c --bytes"), oval("-f --follow"), fl("-F"), val("-s --sleep-interval"), val("--pid"))}, "head", "tail")
	add(&spec{opts: opts(rd("--files0-from"))}, "wc")
	add(&spec{opts: opts(val("-I --ignore"), val("--hide"), val("-w --width"), oval("--color"), val("--time-style"), val("-T --tabsize"),
		val("--format"), val("--sort"), val("--block-size"), val("--quoting-style"), val("--indicator-style"), val("--time"), fl("-d --directory")), namesOnly: "-d"}, "ls", "dir", "vdir")
	add(&spec{opts: opts(val("-I"), val("-P"), val("-L"), wr("-o"), val("--filelimit"), val("--charset"), val("--sort"), val("--timefmt"),
		val("-H"), val("-T"), dflag("-R", "writes an 00Tree.html file into every directory (with -H and -L)"))}, "tree")
	add(&spec{opts: opts(rd("--exclude-from -X"), val("-d --max-depth"), val("--exclude"), val("-B --block-size"), val("-t --threshold"), val("--time-style"))}, "du")
	add(&spec{opts: opts(val("-c --format"), val("--printf"))}, "stat")
	add(&spec{opts: opts(val("-d -f -c -b --delimiter --fields --characters --bytes"), oval("--output-delimiter"))}, "cut")
	add(&spec{operands: opNone}, "tr", "echo", "printf", "basename", "dirname", "seq", "yes", "sleep", "whoami", "id",
		"uname", "hostname", "date", "true", "false", "which", "nproc", "arch", "groups", "tty", "env-true")
	add(&spec{extra: diffExtra, opts: opts(rd("--from-file"), rd("--to-file"), oval("-U --unified"), oval("-C --context"), val("-x --exclude"), rd("-X --exclude-from"),
		val("-I --ignore-matching-lines"), val("--label"), oval("--color"), val("-W --width"), val("--line-format"), fl("-r --recursive"), fl("-N --new-file"))}, "diff")
	add(&spec{opts: opts(val("-t"), val("-1"), val("-2"), val("-j"), val("-o"), val("-e"))}, "join")
	add(&spec{opts: opts(val("-d --delimiters"))}, "paste")
	add(&spec{opts: opts(val("-s -t -c -o -N -l -R -W -H --separator --table-columns"))}, "column")
	add(&spec{opts: opts(val("-w --width"))}, "fold", "fmt", "base64", "base32")
	add(&spec{opts: opts(val("-n --bytes"), val("-t --radix"), val("-e --encoding"))}, "strings")
	add(&spec{opts: opts(rd("-m --magic-file"), rd("-f --files-from"), val("-F --separator"), val("-e --exclude"),
		dflag("-C --compile", "writes a compiled magic file (NAME.mgc) into the working directory"))}, "file")
	add(&spec{opts: opts(rd("-c --check"))}, "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum")
	add(&spec{opts: opts(val("-A -j -N -S -t -w --address-radix --skip-bytes --read-bytes --format --width"))}, "od", "hexdump")
	add(&spec{opts: opts(wr("-o --output"), exe("--compress-program", "runs a compression program"), wr("-T --temporary-directory"),
		rd("--files0-from"), rd("--random-source"), val("-k --key"), val("-t --field-separator"), val("-S --buffer-size"),
		val("--batch-size"), val("--parallel"), oval("--sort"), flags("-n -r -u -V -h -g -M -R -b -d -f -i -s -z -c -C -m"))}, "sort")
	add(&spec{opts: opts(wr("-o --output"), rd("--random-source"), val("-n --head-count"), val("-i --input-range"))}, "shuf")
}
