package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// engineFiles are the files of the engine (see doc.go): they know the
// shell, paths and scopes, and name no program. The program knowledge
// lives in programs.go, envvars.go, builtins.go (the shell's own
// commands), rgtypes.go and the prog_*.go files.
var engineFiles = []string{
	"api.go", "arith.go", "call.go", "command.go", "compile.go", "decide.go", "decision.go", "denyroots.go",
	"entries.go", "env.go", "hosts.go", "lookpath.go", "memofs.go", "managed.go", "network.go", "network_loopback.go", "network_managed.go", "network_sockets.go", "options.go", "osfs_linux.go", "path.go",
	"recursive.go", "scope.go", "shell.go", "tools.go", "walked.go", "widen.go", "words.go",
}

// programFiles are the files that may name programs.
var programFiles = []string{"programs.go", "envvars.go", "builtins.go", "rgtypes.go", "doc.go"}

// tableNames are the names of every program of the table.
func tableNames() []string {
	var names []string
	for g := range numGroups {
		registerGroup(g, func(_ *spec, ns ...string) { names = append(names, ns...) })
	}
	return names
}

// programCommand reports whether s is a program and a subcommand ("git
// rev-parse"): two words, the second a lower-case word.
func programCommand(programs map[string]bool, s string) bool {
	first, second, ok := strings.Cut(s, " ")
	if !ok || !programs[first] || second == "" {
		return false
	}
	for _, r := range second {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return true
}

// optionWord matches a word that is one option of a program: -x, -name,
// --long-name, with or without =VALUE.
var optionWord = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9-]*(=.*)?$`)

// TestEngineNamesNoProgram fails when a string literal of an engine file
// is the name of a program of the table, or starts with one and a space
// ("git rev-parse"), or is a variable that names a program to run
// (EDITOR) or a builtin that assigns variables (read), or is an option
// (-I, --replace), which only a program's row gives a meaning: that
// knowledge belongs in the program's prog_*.go file or in builtins.go.
// scope expand's own flags (the WidenFlag constants) are scopegate's.
func TestEngineNamesNoProgram(t *testing.T) {
	programs := map[string]bool{"EDITOR": true, "VISUAL": true, "GIT_EDITOR": true, "PAGER": true}
	for _, n := range tableNames() {
		programs[n] = true
	}
	for _, n := range []string{"read", "mapfile", "readarray", "printf", "getopts", "declare", "typeset", "local", "export", "readonly"} {
		programs[n] = true // builtins, whose knowledge is builtins.go's
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "prog_") || slices.Contains(programFiles, f) {
			continue
		}
		if !slices.Contains(engineFiles, f) {
			t.Errorf("%s is neither an engine file nor a program file: add it to engineFiles or programFiles", f)
		}
	}
	fset := token.NewFileSet()
	for _, f := range engineFiles {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.ValueSpec:
				if len(n.Names) == 1 && strings.HasPrefix(n.Names[0].Name, "Tool") {
					return false // a tool's name (ToolGrep), not a program
				}
				if len(n.Names) == 1 && strings.HasPrefix(n.Names[0].Name, "Widen") {
					return false // a flag of scope expand (WidenRead), not a program's
				}
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if programs[s] || programCommand(programs, s) {
				t.Errorf("%s: engine file names program %q: move it to its prog_*.go file or builtins.go", fset.Position(lit.Pos()), s)
			}
			if optionWord.MatchString(s) {
				t.Errorf("%s: engine file names option %q, which only a program's row gives a meaning: move it to the row (a field of spec, a programCheck)", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
