package policy

import (
	"path/filepath"
	"strings"
)

// make: runs the recipes of a makefile.
//
// GNU make's manual: -f reads a makefile (standard input with -f -), --eval
// "evaluate string as makefile syntax", and a VAR=value operand overrides a
// variable that recipes run (SHELL=, MAKE=, any $(VAR) in a recipe). So a
// makefile the call names is read, and variables set on the command line
// that a recipe could run are dangerous (GTFOBins: make, "Shell").

// registerMake adds the table rows of this file.
func registerMake(add adder) {
	add(&spec{opts: opts(rd("-f --file --makefile"), chdir("-C --directory"), code("-E --eval", "evaluates makefile text, which can define commands"),
		rd("-I --include-dir"), val("-o --old-file --assume-old"), val("-W --what-if --new-file --assume-new"), oval("-j --jobs"),
		oval("-l --load-average --max-load"), oval("-O --output-sync"), oval("--shuffle"), oval("--debug"),
		flags("-B -d -e -i -k -n -p -q -r -R -s -S -t -v -w --always-make --dry-run --just-print --keep-going --silent --quiet")),
		operands: opNone, extra: makeExtra}, "make", "gmake")
}

// makeProgramVar reports whether a make variable by convention names a
// program a recipe runs (CC, GO, *_CMD…): its value may not carry
// arguments (CC='sh -c id'). Other variables (CFLAGS, ARGS) may hold
// spaces.
func makeProgramVar(name string) bool {
	switch name {
	case "CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "RM", "INSTALL", "GO", "PYTHON", "PYTHON3", "NODE", "NPM", "CARGO",
		"RUSTC", "DOCKER", "JAVA", "JAVAC", "PERL", "RUBY", "BASH", "SH", "CMAKE", "NINJA", "STRIP", "OBJCOPY", "NM", "RANLIB",
		"LEX", "YACC", "M4", "PKG_CONFIG", "MKDIR", "CP", "MV", "LN", "SED", "AWK", "GREP", "FIND", "TAR", "CURL", "WGET", "GIT":
		return true
	}
	for _, suffix := range []string{"CMD", "PROG", "BIN", "EXE", "TOOL", "WRAPPER", "LAUNCHER", "RUNNER", "COMPILER", "LINKER", "EMULATOR", "INTERPRETER", "SHELL"} {
		if strings.HasSuffix(strings.ToUpper(name), suffix) {
			return true
		}
	}
	return false
}

// makeExtra refuses makefiles from standard input and command-line
// variables that recipes could run.
func makeExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, f := range p.values("-f") {
		if f.known && isStdinPath(f.s) {
			c.danger(p, allowed, "-f", "-f "+f.s, "reads a makefile from standard input, which cannot be checked")
		}
	}
	for _, a := range p.operands() {
		if !a.known {
			switch {
			case a.number && (a.prefix == "" || a.prefix == "-j" || a.prefix == "-l" || a.prefix == "--jobs=" || a.prefix == "--load-average=" || a.prefix == "--max-load="):
				// make -j$(nproc), make -j "$(nproc)": a number.
			default:
				c.danger(p, allowed, "VAR=", "argument known only at run time", "may set a variable that recipes run")
			}
			continue
		}
		name, val, ok := strings.Cut(a.s, "=")
		if !ok {
			continue
		}
		name = strings.TrimRight(name, ":+?!")
		switch name {
		case "SHELL", ".SHELLFLAGS", "MAKEFLAGS", "MAKEFILES", "MFLAGS", "MAKE", "MAKESHELL":
			c.danger(p, allowed, name+"=", name+"=", "changes how make runs recipes")
			continue
		}
		if strings.ContainsAny(val, "$`;|&<>()\n\\'\"") || makeProgramVar(name) && strings.ContainsAny(val, " \t") {
			c.danger(p, allowed, name+"=", name+"="+clip(val), "overrides a variable that recipes may run with shell syntax")
			continue
		}
		if filepath.IsAbs(val) || strings.HasPrefix(val, "~") {
			c.operand(val, AccessRead, st.cwd, "make variable "+name)
		}
	}
}
