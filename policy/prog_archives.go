package policy

import "strings"

// Archivers: tar, zip and unzip.
//
// GNU tar's manual: --to-command "extracts files and pipes their contents to
// the standard input of command"; --checkpoint-action=exec=CMD "executes the
// given command"; -I/--use-compress-program, --rsh-command and the volume
// scripts run programs (GTFOBins: tar, "Shell"). An archive name with a colon
// ("host:file") is remote and runs rsh or ssh. Extraction writes below -C (or
// the working directory), -P keeps absolute names and "..", and -T reads the
// list of files to archive from a file, which may be standard input. zip -TT
// runs a command to test the archive (GTFOBins: zip), zip -r reads every
// file below its operands, and unzip writes below -d.

// registerArchives adds the table rows of this file.
func registerArchives(add adder) {
	add(&spec{operands: opNone, rewrite: tarOldStyle, extra: tarExtra, opts: opts(
		exe("-I --use-compress-program", "runs a compression program"), exe("--to-command", "pipes every file to a command"),
		exe("--checkpoint-action", "runs actions (exec=…) at checkpoints"), exe("-F --info-script --new-volume-script", "runs a script between volumes"),
		exe("--rsh-command", "runs a remote shell program"), exe("--rmt-command", "runs a remote tape program"),
		chdir("-C --directory"), val("-f --file"), rd("-T --files-from"), rd("-X --exclude-from"), wr("-g --listed-incremental"),
		wr("--index-file"), rd("--add-file"), wr("--one-top-level"), wr("--volno-file"), dflag("-P --absolute-names", "writes or reads outside the target directory"),
		fl("-x --extract --get"), fl("-c --create"), fl("-r --append"), fl("-u --update"), fl("-A --catenate --concatenate"),
		fl("-t --list"), fl("-d --diff --compare"), fl("--delete"), val("-b --blocking-factor"), val("-K --starting-file"),
		val("-N --newer --after-date"), val("-L --tape-length"), val("-V --label"), val("-H --format"), val("--exclude"),
		dflag("--transform --xform", "renames members, so where they are extracted cannot be checked"), val("--strip-components"), val("--owner"), val("--group"), val("--mode"), val("--mtime"),
		val("--checkpoint"), fl("-h --dereference"), flags("-z -j -J -v -O -k -m -p -S -W -B -M -R -G -l -o -s -w -a --zstd --gzip --bzip2 --xz"), fl("--exclude-vcs"), fl("--anchored"),
		fl("--no-anchored"), fl("--wildcards"), fl("--no-wildcards"), fl("--wildcards-match-slash"), fl("--no-wildcards-match-slash"))}, "tar", "gtar", "bsdtar")
	add(&spec{operands: opWriteFirst, opts: opts(exe("-TT --unzip-command", "runs a command to test the archive"), wr("-b --temp-path"),
		wr("-O --output-file"), val("-n --suffixes"), val("-t --from-date"), val("-tt --before-date"), val("-x --exclude"),
		val("-i --include"), val("-P --password"), val("-s --split-size"), val("-Z --compression-method"),
		fl("-r -R --recurse-paths"), flags("-j -q -v -T -u -f -d -m -0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -y -D -X -e -A -F -g -l -o -z"), fl("-nw"), fl("-ws")), extra: zipExtra}, "zip")
	add(&spec{operands: opNone, extra: unzipExtra, opts: opts(wr("-d"), val("-x"), val("-P"), flags("-o -n -q -l -t -v -j -a -C -L -u -f -p -c -Z"))}, "unzip")
}

// tarOldStyle rewrites "tar xzf archive.tar -C dir" into dashed options:
// in the old style each letter that takes a value takes the next argument.
func tarOldStyle(argv []arg) []arg {
	if len(argv) == 0 || !argv[0].known || strings.HasPrefix(argv[0].s, "-") || argv[0].s == "" {
		return argv
	}
	letters := argv[0].s
	for _, r := range letters {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return argv
		}
	}
	withValue := "fbCTXgFKNLVHI"
	out := make([]arg, 0, len(argv)+len(letters))
	next := 1
	for _, r := range letters {
		out = append(out, arg{s: "-" + string(r), known: true})
		if strings.ContainsRune(withValue, r) && next < len(argv) {
			out = append(out, argv[next])
			next++
		}
	}
	return append(out, argv[next:]...)
}

// tarExtra checks what tar's flags decide together: the archive is read or
// written, a remote archive runs a remote shell, -T - reads names from
// standard input, extraction writes below -C.
func tarExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	extract := p.has("-x")
	for _, v := range p.values("-T") {
		if !v.known || isStdinPath(v.s) {
			c.danger(p, allowed, "-T", "-T "+v.s, "reads the list of files from standard input, which cannot be checked")
		}
	}
	create := p.has("-c") || p.has("-r") || p.has("-u") || p.has("-A")
	for _, f := range p.values("-f") {
		if !f.known || f.s == "-" {
			continue
		}
		if i := strings.IndexByte(f.s, ':'); i > 0 && !strings.Contains(f.s[:i], "/") && !p.has("--force-local") {
			c.danger(p, allowed, "-f", "-f "+f.s, "names a remote archive, which runs a remote shell program")
			continue
		}
		if create {
			c.operand(f.s, AccessWrite, st.cwd, "tar archive")
		} else {
			c.operand(f.s, AccessRead, st.cwd, "tar archive")
		}
	}
	if extract && !p.has("-O") && !p.has("-t") {
		// Extraction writes below the target directory (cwd after -C).
		if st.cwd != "" {
			c.addAll(c.s.checkAbs(st.cwd, AccessWrite, c.env, pathSource{what: "tar extraction into " + st.cwd}))
		}
	}
	if create {
		// GNU tar's exclusions, as it matches them by default; options
		// that make it match fewer names leave them unused.
		var filters []walkFilter
		if !p.has("--anchored") && !p.has("--no-wildcards") && !p.has("--no-wildcards-match-slash") {
			for _, v := range p.values("--exclude") {
				if v.known {
					filters = append(filters, walkFilter{glob: v.s, files: true, dirs: true})
				}
			}
			if p.has("--exclude-vcs") {
				for _, d := range []string{".git", ".svn", ".hg", ".bzr", "CVS", "_darcs", ".gitignore", ".gitmodules", ".gitattributes"} {
					filters = append(filters, walkFilter{glob: d, files: true, dirs: true})
				}
			}
		}
		for _, a := range p.operands() {
			if a.known {
				c.operand(a.s, AccessRead, st.cwd, "tar input")
				c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: p.has("-h"), filters: filters, matcher: tarMatcher(a.s)})
			}
		}
	}
}

// unzipExtra checks the archive read and, when extracting, the directory
// written (-d, else the working directory).
func unzipExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	ops := p.operands()
	if len(ops) > 0 && ops[0].known {
		c.operand(ops[0].s, AccessRead, st.cwd, "unzip archive")
	}
	if p.has("-l") || p.has("-t") || p.has("-p") || p.has("-c") || p.has("-Z") || p.has("-v") {
		return
	}
	if len(p.values("-d")) == 0 && st.cwd != "" {
		c.addAll(c.s.checkAbs(st.cwd, AccessWrite, c.env, pathSource{what: "unzip into " + st.cwd}))
	}
}

// zipExtra refuses -@ (names from standard input) and checks what -r reads.
func zipExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && a.s == "-@" {
			c.danger(p, allowed, "-@", "-@", "reads the list of files from standard input, which cannot be checked")
		}
	}
	if !p.has("-r") {
		return
	}
	// zip's -i and -x patterns, matched as it matches them (files only:
	// it still walks every directory).
	var filters []walkFilter
	if !p.has("-nw") && !p.has("-ws") {
		for _, o := range p.occ {
			if o.has && o.value.known && (o.id == "-x" || o.id == "-i") {
				filters = append(filters, walkFilter{glob: o.value.s, include: o.id == "-i", files: true})
			}
		}
	}
	ops := p.operands()
	for i, a := range ops {
		if i > 0 && a.known {
			// zip stores what a link points to unless -y.
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true, follow: !p.has("-y"), filters: filters, matcher: zipMatcher(a.s)})
		}
	}
}
