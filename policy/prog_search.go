package policy

import (
	"path/filepath"
	"strings"
)

// Searchers: grep, rg, fd.
//
// grep -r and -R, rgrep and rg read every file below their operands (the
// working directory when there is none), so a denied file below is read
// though the call does not name it; rg skips hidden and ignored files
// unless --hidden, -u or --no-ignore say otherwise. rg --pre "runs a
// preprocessor program on every file", --hostname-bin runs a program; fd
// -x and -X run a command for matches.

// registerSearch adds the table rows of this file.
func registerSearch(add adder) {
	add(&spec{operands: opPatternFirst, opts: opts(pat("-e --regexp"), patFile("-f --file"), val("-m --max-count"), val("-A --after-context"),
		val("-B --before-context"), val("-C --context"), val("-d --directories"), val("-D --devices"), val("--label"), val("--include"),
		val("--exclude"), val("--exclude-dir"), rd("--exclude-from"), oval("--color --colour"), val("--binary-files"), val("--group-separator"),
		fl("-r --recursive"), fl("-R --dereference-recursive"), flags("-i -v -n -l -L -c -o -q -s -w -x -E -F -G -P -H -h -a -I -z -Z -b -U")), extra: grepExtra},
		"grep", "egrep", "fgrep", "rgrep", "zgrep")
	add(&spec{operands: opPatternFirst, opts: opts(pat("-e --regexp"), patFile("-f --file"),
		exe("--pre", "runs a preprocessor program on every file"), exe("--hostname-bin", "runs a program to find the host name"),
		val("--pre-glob"), val("-g --glob"), val("--iglob"), val("-t --type"), val("-T --type-not"), val("--type-add"), val("--type-clear"),
		val("-r --replace"), val("-m --max-count"), val("-A --after-context"), val("-B --before-context"), val("-C --context"),
		val("-j --threads"), val("-M --max-columns"), val("-E --encoding"), val("--colors"), val("--color"), val("--sort"), val("--sortr"),
		val("--engine"), rd("--ignore-file"), val("--path-separator"), val("-d --max-depth"), val("--max-filesize"), val("--dfa-size-limit"),
		val("--regex-size-limit"), val("--context-separator"), val("--field-match-separator"), val("--field-context-separator"),
		val("--hyperlink-format"), fl("--glob-case-insensitive"), fl("-V --version"), fl("-h --help"), fl("--pcre2-version"), fl("-P --pcre2"), opt("--files", flagOpt, effPattern, ""), fl("--type-list"), fl("--hidden -."), fl("--no-ignore"), fl("--no-ignore-vcs"), fl("--no-ignore-parent"), fl("--no-ignore-dot"), fl("--no-ignore-files"),
		fl("--no-ignore-exclude"), fl("--no-require-git"),
		fl("-L --follow"), fl("--no-follow"),
		fl("-u"), fl("-uu"), fl("-uuu")), extra: rgExtra}, "rg")
	add(&spec{operands: opPatternFirst, opts: opts(exe("-x --exec", "runs a command for every match"), exe("-X --exec-batch", "runs a command on the matches"),
		val("-e --extension"), val("-t --type"), val("-E --exclude"), val("-d --max-depth"), val("--min-depth"), val("--exact-depth"),
		val("-S --size"), val("--changed-within"), val("--changed-before"), val("-o --owner"), chdir("--base-directory"), rd("--search-path"),
		rd("--ignore-file"), val("-j --threads"), val("--max-results"), val("-c --color"), val("--path-separator"), val("--format"))}, "fd", "fdfind")
}

// grepExtra checks what a recursive grep reads below its operands.
func grepExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	recurse := p.has("-r") || p.has("-R") || p.prog == "rgrep"
	for _, v := range p.values("-d") {
		// grep takes any abbreviation of recurse (-d rec).
		recurse = recurse || !v.known || v.s != "" && strings.HasPrefix("recurse", v.s)
	}
	if !recurse {
		return
	}
	patternGiven := false
	for _, o := range p.occ {
		if o.opt != nil && (o.opt.eff == effPattern || o.opt.eff == effPatternFile) {
			patternGiven = true
		}
	}
	o := walkOpts{hidden: true, follow: p.has("-R")}
	for _, occ := range p.occ {
		if !occ.has || occ.opt == nil {
			continue
		}
		switch occ.id {
		case "--include", "--exclude":
			o.filters = append(o.filters, walkFilter{glob: occ.value.s, include: occ.id == "--include", files: true})
		case "--exclude-dir":
			o.filters = append(o.filters, walkFilter{glob: occ.value.s, dirs: true})
		}
	}
	for _, d := range recursiveOperands(p, !patternGiven) {
		c.recursiveRead(p, d, st.cwd, o)
	}
}

// rgExtra checks what rg reads below its operands, with the hidden and
// ignored files it skips.
func rgExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("--files") || p.has("--type-list") {
		return // names only
	}
	if p.has("-V") || p.has("-h") || p.has("--pcre2-version") {
		return // prints its version or help and reads nothing
	}
	patternGiven := false
	for _, o := range p.occ {
		if o.opt != nil && (o.opt.eff == effPattern || o.opt.eff == effPatternFile) {
			patternGiven = true
		}
	}
	u := 0
	for _, o := range p.occ {
		if o.id == "-u" {
			u++
		}
		if o.id == "-uu" {
			u += 2
		}
		if o.id == "-uuu" {
			u += 3
		}
	}
	o := walkOpts{hidden: p.has("--hidden") || u >= 2, follow: p.has("-L"), rooted: true}
	typesKnown := !p.has("--type-add") && !p.has("--type-clear")
	for _, occ := range p.occ {
		if !occ.has || occ.opt == nil {
			continue
		}
		switch occ.id {
		case "-g":
			if g, ok := strings.CutPrefix(occ.value.s, "!"); ok {
				o.filters = append(o.filters, walkFilter{glob: g, files: true, dirs: true})
			} else {
				o.filters = append(o.filters, walkFilter{glob: occ.value.s, include: true, files: true, dirs: true})
			}
		case "--iglob":
			// Case-insensitive: an include may match more (everything is
			// taken to match); an exclusion is not relied on.
			if !strings.HasPrefix(occ.value.s, "!") {
				o.filters = append(o.filters, walkFilter{glob: "*", include: true, files: true})
			}
		case "-t":
			globs, ok := rgTypes[occ.value.s]
			if !typesKnown || !ok {
				globs = []string{"*"} // an unknown or redefined type may match anything
			}
			for _, g := range globs {
				o.filters = append(o.filters, walkFilter{glob: g, include: true, files: true, typ: true})
			}
		case "-T":
			if typesKnown {
				for _, g := range rgTypes[occ.value.s] {
					o.filters = append(o.filters, walkFilter{glob: g, files: true})
				}
			}
		}
	}
	if p.has("--glob-case-insensitive") {
		var kept []walkFilter
		for _, f := range o.filters {
			if f.include {
				f.glob = "*"
				kept = append(kept, f)
			}
		}
		o.filters = kept
	}
	noIgnore := p.has("--no-ignore") || p.has("--no-ignore-vcs") || p.has("--no-ignore-parent") || p.has("--no-ignore-dot") ||
		p.has("--no-ignore-files") || p.has("--no-ignore-exclude") || p.has("--no-require-git")
	for _, d := range recursiveOperands(p, !patternGiven) {
		o := o
		if !filepath.IsAbs(d) && filepath.Clean(d) != "." {
			o.base = strings.TrimPrefix(filepath.Clean(d), "./")
		}
		if !noIgnore && u == 0 && st.cwd != "" {
			o.gitignore = c.rgIgnoredNames(d, st.cwd)
		}
		c.recursiveRead(p, d, st.cwd, o)
	}
}
