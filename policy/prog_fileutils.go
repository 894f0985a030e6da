package policy

import (
	"path/filepath"
	"strings"
)

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
		imply: rmImply, extra: rmExtra}, "rm")
	add(&spec{operands: opWrite, opts: opts(fl("-p --parents"), val("-m --mode"), fl("-v --verbose")), extra: mkdirExtra, makesDirs: true}, "mkdir")
	add(&spec{operands: opWrite, opts: opts(fl("-p --parents"), val("-m --mode"), fl("-v --verbose"))}, "rmdir")
	add(&spec{operands: opWrite, opts: opts(rd("-r --reference"), val("-d --date"), val("-t"), fl("-a"), fl("-m"), fl("-c --no-create"), fl("-h --no-dereference"))}, "touch")
	add(&spec{operands: opWrite, opts: opts(val("-s --size"), rd("-r --reference"), fl("-c --no-create"))}, "truncate")
	add(&spec{operands: opWrite, opts: opts(val("-n --iterations"), val("-s --size"), fl("-u"), oval("--remove"), fl("-z --zero"), fl("-f --force"))}, "shred")
	add(&spec{operands: opWrite}, "unlink")
	add(&spec{operands: opWrite, opts: opts(fl("-a --append"), fl("-i --ignore-interrupts"), oval("--output-error"))}, "tee")
	add(&spec{operands: opSkipFirst, ownOperands: "--reference", extra: chmodExtra, opts: opts(rd("--reference"), fl("-R --recursive"), fl("-v --verbose"),
		fl("-c --changes"), fl("-f --silent --quiet"), fl("-h --no-dereference"), fl("--dereference"))}, "chmod", "chown", "chgrp")
	add(&spec{operands: opWriteLast, extra: cpExtra, opts: opts(wr("-t --target-directory"), fl("-r -R --recursive"), fl("-f --force"),
		fl("-a --archive"), fl("-p"), oval("--preserve"), val("-S --suffix"), fl("-n --no-clobber"), fl("-u --update"), fl("-v --verbose"),
		fl("-l --link"), fl("-s --symbolic-link"), fl("-T --no-target-directory"), oval("--backup"), fl("-b"),
		fl("-L --dereference"), fl("-P --no-dereference"), fl("-H"))}, "cp")
	add(&spec{operands: opWrite, opts: opts(wr("-t --target-directory"), fl("-f --force"), fl("-n --no-clobber"), fl("-u --update"),
		fl("-v --verbose"), val("-S --suffix"), fl("-T --no-target-directory"), oval("--backup"), fl("-b"))}, "mv")
	add(&spec{operands: opWriteLast, opts: opts(wr("-t --target-directory"), fl("-s --symbolic"), fl("-f --force"), fl("-n --no-dereference"),
		fl("-r --relative"), fl("-v --verbose"), fl("-T --no-target-directory"), val("-S --suffix")), ownOperands: "-s", extra: lnExtra}, "ln")
	add(&spec{operands: opWriteLast, opts: opts(wr("-t --target-directory"), val("-m --mode"), val("-o --owner"), val("-g --group"),
		fl("-D"), fl("-d --directory"), fl("-c"), fl("-v --verbose"), fl("-s --strip"), exe("--strip-program", whyExec)), ownOperands: "-d", extra: installExtra}, "install")
	add(&spec{operands: opWriteSecond, opts: opts(val("-f --skip-fields"), val("-s --skip-chars"), val("-w --check-chars"))}, "uniq")
	add(&spec{operands: opWriteSecond, opts: opts(val("-c -cols"), val("-g -groupsize"), val("-l -len"), val("-s -seek"), val("-o -offset"), fl("-r -revert"),
		val("-n -name"), fl("-i -include"), fl("-p -ps -postscript -plain"), fl("-u"), fl("-e"), fl("-b -bits"), fl("-C -capitalize"), fl("-a -autoskip"), fl("-d"))}, "xxd")
	add(&spec{operands: opWriteSecond, opts: opts(val("-l --lines"), val("-b --bytes"), val("-n --number"), val("-a --suffix-length"),
		val("-C --line-bytes"), oval("--additional-suffix"), exe("--filter", "runs a shell command for every piece"), val("-t --separator"),
		fl("-d"), oval("--numeric-suffixes"), fl("-x"), oval("--hex-suffixes"), fl("-e --elide-empty-files"), fl("-u --unbuffered"))}, "split")
	add(&spec{operands: opWrite, extra: patchExtra, opts: opts(wr("-o --output"), rd("-i --input"), chdir("-d --directory"), wr("-r --reject-file"),
		wr("-B --prefix"), val("-p --strip"), val("-F --fuzz"), val("-D --ifdef"), val("-V --version-control"), val("-z --suffix"))}, "patch")
	add(&spec{operands: opWrite, opts: opts(fl("-c --stdout --to-stdout"), fl("-d --decompress"), fl("-k --keep"), fl("-f --force"), val("-S --suffix"))},
		"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "zstd", "unzstd")
	add(&spec{operands: opNone, extra: ddExtra}, "dd")
}

// lnExtra checks the operands of ln -s: the link is written, and a
// relative target is read from the directory the link is in (ln(1):
// "relative to the directory containing the link"), or from the working
// directory with -r. A link named by an existing directory goes inside it;
// both places are checked.
func lnExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-s") {
		return
	}
	ops := p.operands()
	targets := ops
	var bases []arg // the directories relative targets are read from
	if dirs := p.values("-t"); len(dirs) > 0 {
		bases = dirs[len(dirs)-1:]
	} else if len(ops) >= 2 {
		link := ops[len(ops)-1]
		targets = ops[:len(ops)-1]
		if !link.known {
			c.unknownOperand("ln link")
			return
		}
		c.operand(link.s, AccessWrite, st.cwd, "ln link")
		bases = append(bases, arg{s: filepath.Dir(link.s), known: true})
		if abs, err := absPath(link.s, st.cwd, c.env); err == nil && !p.has("-T") && st.cwd != "" {
			if fi, err := c.env.fs().Stat(abs); err == nil && fi.IsDir() {
				bases = append(bases, link)
			}
		}
	} else {
		bases = []arg{{s: ".", known: true}} // the link is made in the working directory
	}
	for _, t := range targets {
		if !t.known {
			if t.unbounded {
				c.unknownOperand("ln target")
			}
			continue
		}
		if filepath.IsAbs(t.s) || strings.HasPrefix(t.s, "~") || p.has("-r") {
			c.operand(t.s, AccessRead, st.cwd, "ln target")
			continue
		}
		for _, b := range bases {
			if !b.known {
				c.unknownOperand("ln target directory")
				continue
			}
			dir, err := absPath(b.s, st.cwd, c.env)
			if err != nil || st.cwd == "" && !filepath.IsAbs(b.s) {
				c.unknownCwd("ln target " + t.s)
				continue
			}
			// The kernel resolves the target from the link's directory as
			// it really is: through the symbolic links on its way.
			if real, err := canonicalize(dir, c.env.fs()); err == nil {
				dir = real
			}
			c.operand(filepath.Join(dir, t.s), AccessRead, st.cwd, "ln target "+t.s)
		}
	}
}

// patchExtra: a patch read from standard input names files that cannot be
// checked.
func patchExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.operands()) >= 1 {
		return // patch FILE [PATCH]: the file written is the operand
	}
	file := st.stdinFile
	for _, v := range p.values("-i") {
		file = v.s
		if !v.known {
			file = ""
		}
	}
	if file == "" || st.pipedIn || st.cwd == "" && !filepath.IsAbs(file) {
		c.danger(p, allowed, "patch", "patch (standard input)", "applies a patch read from standard input, whose files cannot be checked; give the patch file with -i")
		return
	}
	abs, err := absPath(file, st.cwd, c.env)
	if err != nil {
		return
	}
	data, err := c.env.fs().ReadFile(abs)
	if err != nil || c.written[filepath.Clean(abs)] {
		c.danger(p, allowed, "patch", "patch "+file, "applies a patch that cannot be read before it runs")
		return
	}
	targets, symlink := patchTargets(string(data))
	if symlink {
		c.danger(p, allowed, "patch", "patch "+file, "creates a symbolic link, whose target cannot be checked")
	}
	for _, t := range targets {
		// Which leading directories patch strips depends on -p: each
		// reading is checked.
		for _, cand := range []string{t, stripComponents(t, 1), filepath.Base(t)} {
			c.operand(cand, AccessWrite, st.cwd, "patch "+file+" writes")
		}
	}
}

// chmodExtra: with --reference the first operand is a file changed, not a
// mode; -R changes every file below the operands.
func chmodExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	ops := p.operands()
	if p.has("--reference") {
		c.writtenOperands(p, ops, st, p.prog+" operand")
	} else if len(ops) > 0 {
		ops = ops[1:]
	}
	if p.has("-R") {
		c.walkOperands(p, ops, st, "changes")
	}
}

// rmExtra: rm -r removes every file below its operands.
func rmExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("-r") {
		c.walkOperands(p, p.operands(), st, "removes")
	}
}

// installExtra: install -d makes every operand a directory.
func installExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("-d") {
		c.writtenOperands(p, p.operands(), st, "install -d operand")
	}
}

// writtenOperands checks operands as files written; one known only at run
// time and unbounded is refused.
func (c *checker) writtenOperands(p *parsed, ops []arg, st *shellState, what string) {
	for _, a := range ops {
		if a.known {
			c.operand(a.s, AccessWrite, st.cwd, what)
		} else if a.unbounded {
			c.unknownOperand(what)
		}
	}
}

// walkOperands checks what a program that changes every file below its
// operands (verb: "removes", "changes") reaches there.
func (c *checker) walkOperands(p *parsed, ops []arg, st *shellState, verb string) {
	for _, a := range ops {
		if a.known {
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, verb: verb})
		}
	}
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
		// rm accepts any unambiguous abbreviation of never, no and none
		// (all "never prompt"): --interactive=nev, =non.
		if v.known && v.s != "" && (strings.HasPrefix("never", v.s) || strings.HasPrefix("none", v.s) || strings.HasPrefix("no", v.s)) {
			p.occ = append(p.occ, occurrence{id: "-f", text: "--interactive=" + v.s})
		}
	}
}

// mkdirExtra records the directories mkdir makes (with -p, or whose
// parent exists), unconditionally, for a cd after it.
func mkdirExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if st.cwd == "" || st.cond != 0 || p.has("--help") || p.has("--version") {
		return
	}
	for _, a := range p.operands() {
		abs, err := absPath(a.s, st.cwd, c.env)
		if !a.known || err != nil {
			continue
		}
		if mkdirCan(c.env.fs(), abs, p.has("-p"), st.made) {
			setIn(&st.made, filepath.Clean(abs), true)
		}
	}
}

// mkdirCan reports whether mkdir can make dir: its nearest existing
// ancestor is a directory, and is its parent unless parents are made (-p).
func mkdirCan(fsys FS, dir string, parents bool, made map[string]bool) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if made[d] {
			return true
		}
		if fi, err := fsys.Stat(d); err == nil {
			return fi.IsDir() && (parents || d == filepath.Dir(dir))
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}
