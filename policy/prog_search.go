package policy

import "strings"

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
		val("--hyperlink-format"), fl("--glob-case-insensitive"), fl("-V --version"), fl("-h --help"), fl("--pcre2-version"), opt("--files", flagOpt, effPattern, ""), fl("--type-list"), fl("--hidden -."), fl("--no-ignore"),
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
		recurse = recurse || !v.known || v.s == "recurse"
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
	for _, v := range p.values("--include") {
		o.include = append(o.include, v.s)
	}
	for _, v := range p.values("--exclude") {
		o.exclude = append(o.exclude, v.s)
	}
	for _, v := range p.values("--exclude-dir") {
		o.excludeDir = append(o.excludeDir, v.s)
	}
	for _, d := range recursiveOperands(p, !patternGiven) {
		c.recursiveRead(p, d, st.cwd, o)
	}
}

// rgTypes are the file globs of ripgrep's common types (-t/-T); an unknown
// type filters nothing here.
var rgTypes = map[string][]string{
	"go": {"*.go"}, "py": {"*.py", "*.pyi"}, "python": {"*.py", "*.pyi"}, "js": {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"ts": {"*.ts", "*.tsx", "*.mts", "*.cts"}, "rust": {"*.rs"}, "md": {"*.md", "*.markdown", "*.mdx"},
	"markdown": {"*.md", "*.markdown", "*.mdx"}, "json": {"*.json"}, "yaml": {"*.yml", "*.yaml"}, "toml": {"*.toml"},
	"c": {"*.c", "*.h"}, "cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"}, "java": {"*.java"},
	"sh": {"*.sh", "*.bash"}, "txt": {"*.txt"}, "html": {"*.html", "*.htm"}, "css": {"*.css", "*.scss"},
	"rb": {"*.rb"}, "ruby": {"*.rb"}, "php": {"*.php"}, "sql": {"*.sql"}, "proto": {"*.proto"}, "lua": {"*.lua"},
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
	for _, v := range p.values("-g") {
		if g, ok := strings.CutPrefix(v.s, "!"); ok {
			if !p.has("--glob-case-insensitive") {
				o.exclude = append(o.exclude, g)
				o.excludeDir = append(o.excludeDir, g)
			}
		} else {
			o.include = append(o.include, v.s)
		}
	}
	for _, v := range p.values("--iglob") {
		// Case-insensitive: as an include it may match more files, so it
		// is kept; as an exclusion it is not relied on.
		if !strings.HasPrefix(v.s, "!") {
			o.include = append(o.include, "*")
		}
	}
	for _, v := range p.values("-t") {
		o.include = append(o.include, rgTypes[v.s]...)
	}
	for _, v := range p.values("-T") {
		o.exclude = append(o.exclude, rgTypes[v.s]...)
	}
	if !p.has("--no-ignore") && u == 0 && st.cwd != "" {
		o.gitignore = c.gitignoreNames(st.cwd)
	}
	for _, d := range recursiveOperands(p, !patternGiven) {
		c.recursiveRead(p, d, st.cwd, o)
	}
}
