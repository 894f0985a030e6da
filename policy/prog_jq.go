package policy

import (
	"regexp"
	"sync"
)

// jq, gojq and yq: JSON (and YAML) processors.
//
// jq's manual: "--rawfile variable-name filename: This option reads in the
// named file and binds its contents to the given global variable", and
// "--slurpfile variable-name filename" reads the JSON texts of a file; both
// take two arguments, a name and then the file. "-f filename / --from-file
// filename: Read filter from the file rather than from a command line". "-L
// directory / --library-path directory" adds to the module search path
// (default ~/.jq, $ORIGIN/../lib/jq, $ORIGIN/../lib), from which the
// filter's import and include directives read modules and data files; the
// directive's metadata can even name its own search path
// (import "x" as $x {search: "/etc"}). So the files a filter reads through
// imports are not on the command line: a filter with import or include, or
// one read from a file, is refused unless an allow entry names it. --arg and
// --argjson take a name and a value. After --args and --jsonargs the
// remaining operands are values, not files (they are still checked as
// files, which can only refuse more).
//
// yq (mikefarah/yq) reads the same way and more: "-i, --inplace update the
// file in place", its load, load_str, load_xml, load_props and load_base64
// operators read any file an expression names (unless
// --security-disable-file-ops), and "-s, --split-exp" writes one file per
// document, named by an expression.

// registerJQ adds the table rows of this file.
func registerJQ(add adder) {
	add(&spec{operands: opPatternFirst, extra: jqExtra, opts: opts(
		patFile("-f --from-file"), rd("-L --library-path"), rdPair("--rawfile"), rdPair("--slurpfile"),
		pair("--arg"), pair("--argjson"), val("--indent"), fl("--args"), fl("--jsonargs"),
		flags("-n --null-input -r --raw-output -j --join-output -a --ascii-output -c --compact-output -s --slurp -R --raw-input "+
			"-e --exit-status -S --sort-keys -C --color-output -M --monochrome-output --tab --stream --stream-errors --seq "+
			"--raw-output0 --unbuffered -h --help -V --version --build-configuration"))}, "jq", "gojq")
	add(&spec{operands: opPatternFirst, rewrite: yqCommand, extra: yqExtra, opts: opts(
		inPlace("-i --inplace"), patFile("--from-file"), dflag("-s --split-exp", "writes one file per document, named by an expression"),
		val("-o --output-format"), val("-p --input-format"), val("-I --indent"), val("-f --front-matter"),
		val("--expression"), val("--csv-separator"), val("--xml-attribute-prefix"), val("--xml-content-name"),
		val("--properties-separator"), val("--lua-prefix"),
		flags("-n --null-input -e --exit-status -P --prettyPrint -r --unwrapScalar -C --colors -M --no-colors -N --no-doc "+
			"-0 --nul-output -j --tojson --header-preprocess --security-disable-env-ops --security-disable-file-ops -v --verbose -h --help -V --version"))}, "yq")
}

// jqImport finds the import and include directives of a jq filter (compiled
// on first use: a process that checks no jq command never pays for it).
var jqImport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_$.])(import|include)\s*[@"]`)
})

// jqCode is a jq filter with the text of its string literals blanked
// (the quotes and interpolations \(…) kept) and its comments removed, so
// that a string "import" is not taken for a directive. An unterminated
// string or interpolation is blanked to the end; a comment ends no later
// than jq's does.
func jqCode(f string) string {
	b := []byte(f)
	// depth counts the interpolations open in the string being scanned;
	// stack holds, per open interpolation, its parentheses still open.
	var stack []int
	inString := false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case inString && ch == '\\' && i+1 < len(b) && b[i+1] == '(':
			b[i] = ' '
			i++
			stack = append(stack, 0)
			inString = false
		case inString && ch == '\\':
			b[i] = ' '
			if i+1 < len(b) {
				i++
				b[i] = ' '
			}
		case inString && ch == '"':
			inString = false
		case inString:
			b[i] = ' '
		case ch == '"':
			inString = true
		case ch == '#':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case ch == '(' && len(stack) > 0:
			stack[len(stack)-1]++
		case ch == ')' && len(stack) > 0:
			if stack[len(stack)-1] == 0 {
				stack = stack[:len(stack)-1]
				inString = true // back in the string the interpolation is in
			} else {
				stack[len(stack)-1]--
			}
		}
	}
	return string(b)
}

// jqExtra refuses a filter that imports modules or data files, and one read
// from a file (whose directives cannot be checked).
func jqExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	texts, fromFile := scriptTexts(p)
	if fromFile {
		c.danger(p, allowed, "-f", "-f", "runs a filter file whose import and include directives, which read files from the library search path, cannot be checked")
	}
	for _, t := range texts {
		if !t.known {
			c.danger(p, allowed, "filter", "filter known only at run time", "may import modules or data files, which cannot be checked")
			continue
		}
		if jqImport().MatchString(jqCode(t.s)) {
			c.danger(p, allowed, "import", "import/include", "reads modules or data files from its library search path, which the call does not name")
		}
	}
}

// yqCommand drops yq's eval and eval-all subcommand word: the expression
// and files follow it as they would without it.
func yqCommand(argv []arg) []arg {
	if len(argv) > 0 && argv[0].known {
		switch argv[0].s {
		case "eval", "e", "eval-all", "ea":
			return argv[1:]
		}
	}
	return argv
}

// yqLoad finds yq's file-loading operators (compiled on first use).
var yqLoad = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])load[a-z_0-9]*\s*\(`)
})

// yqExtra refuses expressions that load files, unless file operations are
// disabled.
func yqExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	// Another yq (kislyuk's, a jq wrapper) passes jq's import and include
	// through: they are refused whichever yq runs.
	for _, t := range p.args {
		if t.known && jqImport().MatchString(jqCode(t.s)) {
			c.danger(p, allowed, "import", "import/include", "reads modules or data files from jq's library search path (a yq that wraps jq)")
		}
	}
	if p.has("--security-disable-file-ops") {
		return
	}
	texts, fromFile := scriptTexts(p)
	if fromFile {
		c.danger(p, allowed, "--from-file", "--from-file", "runs an expression file whose load operators, which read any file, cannot be checked")
	}
	for _, t := range texts {
		if t.known && yqLoad().MatchString(t.s) {
			c.danger(p, allowed, "load", "load", "reads the file an expression names, which the call does not name")
		}
	}
}
