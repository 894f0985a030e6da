package policy

import "strings"

// Programs that create, change and remove files: rm, mkdir, touch, cp,
// mv, ln, install, tee, chmod, patch, the compressors, dd.
//
// Their operands are written (the last one for cp, ln and install; the
// second for uniq, xxd and split). install --strip-program and split
// --filter run programs. dd reads if= and writes of=. cp -r and -a read
// every file below their sources.

// registerFileUtils adds the table rows of this file.
func registerFileUtils(add adder) {
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
		fl("-l --link"), fl("-s --symbolic-link"), fl("-T --no-target-directory"), oval("--backup"), fl("-b"),
		fl("-L --dereference"), fl("-P --no-dereference"), fl("-H"))}, "cp")
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
	add(&spec{operands: opNone, extra: ddExtra}, "dd")
}

// ddExtra: dd's operands are if=FILE (read) and of=FILE (written).
func ddExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if !a.known {
			continue
		}
		switch k, v, _ := strings.Cut(a.s, "="); k {
		case "if":
			c.operand(v, AccessRead, st.cwd, "dd if=")
		case "of":
			c.operand(v, AccessWrite, st.cwd, "dd of=")
		}
	}
}

// cpExtra checks what cp -r and -a read below their sources.
func cpExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-r") && !p.has("-a") {
		return
	}
	ops := p.operands()
	for i, a := range ops {
		if i < len(ops)-1 && a.known {
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: p.has("-L")})
		}
	}
}

// rmImply: --interactive=never (no, none, n) removes without asking, as -f.
func rmImply(p *parsed) {
	for _, v := range p.values("--interactive") {
		if v.known && (v.s == "never" || v.s == "no" || v.s == "none" || v.s == "n") {
			p.occ = append(p.occ, occurrence{id: "-f", text: "--interactive=" + v.s})
		}
	}
}
