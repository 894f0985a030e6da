package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// What commands print, where the engine expands a command substitution or
// judges its output before the command runs: the output of echo, printf,
// cat of one file, pwd and git rev-parse --show-toplevel/--git-dir is
// known (pureOutput checks it like a literal), nproc prints a number, and
// the name printers (git rev-parse, go list …) print names that are not
// options, even through line filters (grep, sort …).

// printsNumber reports whether a program prints only a number (nproc).
func printsNumber(name string) bool { return name == "nproc" }

// printsCount reports whether a command substitution prints one number:
// nproc, git rev-list --count, or a pipeline ending in wc reading its
// standard input (with a file operand wc also prints the file's name).
func printsCount(cs *syntax.CmdSubst, st *shellState) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	cmd := cs.Stmts[0].Cmd
	if b, ok := cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.Pipe {
		cmd = b.Y.Cmd
	}
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Assigns) > 0 {
		return false
	}
	var words []string
	for _, w := range call.Args {
		s, ok := plainLiteral(w)
		if !ok {
			return false
		}
		words = append(words, s)
	}
	if st.maybeFuncs[words[0]] {
		return false // a function of that name prints anything
	}
	switch {
	case printsNumber(words[0]) && len(words) == 1:
		return true
	case words[0] == "wc":
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") || w == "-" || strings.HasPrefix(w, "--files0-from") {
				return false
			}
		}
		return true
	case len(words) > 2 && words[0] == "git" && words[1] == "rev-list" && slices.Contains(words[2:], "--count"):
		return cs.Stmts[0].Cmd == cmd
	}
	return false
}

// namePrinters are programs (and git subcommands) whose output, whatever
// literal arguments they are given, is a number, an absolute path, a hash
// or a ref name, none of which starts with "-": a substitution of one is
// not data (see arg.data). Their options must be among the ones listed
// (git rev-parse echoes an unknown one back).
var namePrinters = map[string][]string{
	"nproc": {"--all"}, "pwd": {"-P", "-L"},
	"git rev-parse":    {"--short", "--verify", "--abbrev-ref", "--show-toplevel", "-q", "--quiet", "--symbolic-full-name"},
	"git merge-base":   {"--fork-point", "--is-ancestor"},
	"git describe":     {"--tags", "--always", "--abbrev", "--long", "--dirty", "--exact-match", "--first-parent"},
	"git rev-list":     {"--count", "--max-count", "--all", "--first-parent", "--no-merges", "--merges"},
	"git symbolic-ref": {"--short", "-q", "--quiet"},
	"go list":          {"-e", "-m", "-deps", "-test"},
}

// lineFilters print lines of their input (names stay names).
var lineFilters = map[string]bool{"grep": true, "sort": true, "uniq": true, "head": true, "tail": true, "cut": true}

// printsNames reports whether a command prints only names or numbers: a
// name printer, or a pipeline of one into line filters (first says cmd
// starts the pipeline).
func printsNames(cmd syntax.Command, first bool, st *shellState) bool {
	switch cmd := cmd.(type) {
	case *syntax.BinaryCmd:
		return cmd.Op == syntax.Pipe && printsNames(cmd.X.Cmd, first, st) && printsNames(cmd.Y.Cmd, false, st)
	case *syntax.CallExpr:
		if len(cmd.Args) == 0 || len(cmd.Assigns) > 0 {
			return false
		}
		var words []string
		for _, w := range cmd.Args {
			s, ok := plainLiteral(w)
			if lit, isLit := w.Parts[0].(*syntax.Lit); !ok && len(w.Parts) == 1 && isLit && !strings.ContainsAny(lit.Value, "*?[]{}\\") {
				s, ok = lit.Value, true // HEAD~1: a tilde inside a word is literal
			}
			if !ok {
				return false
			}
			words = append(words, s)
		}
		if st.maybeFuncs[words[0]] {
			return false // a function of that name prints anything
		}
		if !first {
			return lineFilters[words[0]]
		}
		opts, ok := namePrinters[words[0]]
		rest := words[1:]
		if !ok && len(words) > 1 {
			opts, ok = namePrinters[words[0]+" "+words[1]]
			rest = words[2:]
		}
		if !ok {
			return false
		}
		for _, w := range rest {
			name, _, _ := strings.Cut(w, "=")
			if strings.HasPrefix(w, "-") && !slices.Contains(opts, name) {
				return false
			}
		}
		return true
	}
	return false
}

// knownOutput is the output of a command that has no effect but its
// output, when it is known before it runs (trailing newlines dropped, as
// command substitution drops them): echo or printf of known words, cat of
// one readable file, pwd, git rev-parse --show-toplevel or --git-dir.
func (c *checker) knownOutput(fields []string, call *syntax.CallExpr, cfg *expand.Config, st *shellState) (string, bool) {
	var out string
	switch fields[0] {
	case "echo":
		args := fields[1:]
		newline, escapes := true, false
		for len(args) > 0 && echoOptions(args[0]) {
			if strings.Contains(args[0], "n") {
				newline = false
			}
			if strings.ContainsAny(args[0], "eE") {
				escapes = strings.LastIndexByte(args[0], 'e') > strings.LastIndexByte(args[0], 'E')
			}
			args = args[1:]
		}
		out = strings.Join(args, " ")
		if escapes {
			var stop bool
			if out, stop = echoEscapes(out); stop {
				newline = false // \c: no further output
			}
		}
		if newline {
			out += "\n"
		}
	case "printf":
		if len(fields) < 2 || strings.HasPrefix(fields[1], "-") {
			return "", false
		}
		s, _, err := expand.Format(cfg, fields[1], fields[2:])
		if err != nil {
			return "", false
		}
		out = s
	case "cat":
		if len(call.Args) != 2 {
			return "", false
		}
		return c.pureFile(call.Args[1], st)
	case "pwd":
		// $(pwd) is the working directory (logical, as the shell tracks
		// it); pwd -P resolves its links.
		if len(fields) > 2 || st.cwd == "" || st.maybeFuncs["pwd"] {
			return "", false
		}
		if len(fields) == 2 && fields[1] == "-P" {
			real, err := canonicalize(st.cwd, c.env.fs())
			return real, err == nil
		}
		if len(fields) == 2 && fields[1] != "-L" {
			return "", false
		}
		return st.cwd, true
	case "git":
		// git rev-parse --git-dir / --show-toplevel: where the repository
		// is, as git finds it from the working directory.
		if len(fields) != 3 || fields[1] != "rev-parse" || st.cwd == "" || st.maybeFuncs["git"] {
			return "", false
		}
		top := ""
		for d := st.cwd; ; d = filepath.Dir(d) {
			if fi, err := c.env.fs().Lstat(filepath.Join(d, ".git")); err == nil && fi.IsDir() {
				top = d
				break
			}
			if d == filepath.Dir(d) {
				return "", false
			}
		}
		switch fields[2] {
		case "--show-toplevel":
			return top, true
		case "--git-dir", "--absolute-git-dir", "--git-common-dir":
			return filepath.Join(top, ".git"), true
		}
		return "", false
	default:
		return "", false
	}
	// Command substitution drops trailing newlines.
	return strings.TrimRight(out, "\n"), true
}

// echoOptions reports whether a word is options of bash's echo: a dash
// and letters among n, e and E only (echo -x prints "-x").
func echoOptions(w string) bool {
	return len(w) > 1 && w[0] == '-' && strings.Trim(w[1:], "neE") == ""
}

// echoEscapes expands the escapes bash's echo -e understands: \a \b \e \E
// \f \n \r \t \v \\, \0NNN (octal), \xHH, \uHHHH and \UHHHHHHHH; \c ends
// the output (stop); a backslash before anything else stays.
func echoEscapes(s string) (out string, stop bool) {
	var b strings.Builder
	digits := func(i, max, base int) (int, int) {
		n, j := 0, i
		for ; j < len(s) && j-i < max; j++ {
			d := strings.IndexByte("0123456789abcdef", s[j]|0x20) // |0x20: lower case
			if d < 0 || d >= base || s[j] < '0' {
				break
			}
			n = n*base + d
		}
		return n, j
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a', 'b', 'e', 'E', 'f', 'n', 'r', 't', 'v', '\\':
			b.WriteByte(map[byte]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\'}[c])
		case 'c':
			return b.String(), true
		case '0':
			n, j := digits(i+1, 3, 8)
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, j := digits(i+1, max, 16)
			if j == i+1 {
				b.WriteByte('\\') // no digits: the text stays
				b.WriteByte(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), false
}
