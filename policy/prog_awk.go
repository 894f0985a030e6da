package policy

import "strings"

// awk, gawk, mawk, nawk: the program text is code.
//
// gawk's manual: system(command) "executes the operating system command";
// print > file, print | command and command | getline write files and run
// commands; getline < file reads one. GTFOBins: awk, "Shell", "File write",
// "File read". -f runs a program file, -i/--include and -l/--load load awk
// code or a shared library. --sandbox "disables the system() function, input
// redirections with getline, output redirections with print and printf, and
// dynamic extensions". The checker reads the program for those constructs.

// registerAwk adds the table rows of this file.
func registerAwk(add adder) {
	add(&spec{operands: opPatternFirst, opts: opts(patFile("-f --file"), pat("-e --source"), code("-i --include", "loads awk code from a file"),
		dflag("-l --load", "loads a shared library"), patFile("-E --exec"), val("-W"), val("-v --assign"), val("-F --field-separator"),
		owr("-o --pretty-print"), owr("-p --profile"), owr("-d --dump-variables"), oval("-D --debug"), oval("-L --lint"),
		fl("-S --sandbox"), flags("-b -c -C -g -h -M -n -N -O -P -r -s -t -V")), extra: awkExtra}, "awk", "gawk", "mawk", "nawk")
}

// awkExtra reads the awk program for system(), pipes, redirections and
// getline, unless --sandbox is given.
func awkExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("-S") {
		return // --sandbox: no system(), no redirections
	}
	for _, v := range p.values("-W") {
		// mawk -W exec FILE (and -W file) runs a program file, as -f does.
		if !v.known || strings.HasPrefix(v.s, "e") || strings.HasPrefix(v.s, "f") {
			c.danger(p, allowed, "-W", "-W "+v.s, "runs a program file (mawk -W exec), whose system() calls and redirections cannot be checked")
		}
	}
	texts, fromFile := scriptTexts(p)
	if fromFile {
		c.danger(p, allowed, "-f", "-f", "runs a program file whose system() calls and redirections cannot be checked")
	}
	for _, t := range texts {
		if !t.known {
			c.danger(p, allowed, "program", "program", "is known only at run time")
			continue
		}
		for _, e := range awkEffects(t.s) {
			switch e.kind {
			case "exec":
				c.danger(p, allowed, "system", "program", "runs commands (system(), pipes)")
			case "write":
				if e.file == "" {
					c.danger(p, allowed, "redirect", "program", "writes to a file named at run time")
				} else {
					c.operand(e.file, AccessWrite, st.cwd, "awk output")
				}
			case "read":
				if e.file == "" {
					c.danger(p, allowed, "getline", "program", "reads files named at run time (getline, ARGV)")
				} else {
					c.operand(e.file, AccessRead, st.cwd, "awk getline")
				}
			}
		}
	}
}

// awkEffects finds what an awk program does besides filtering: system(),
// command pipes, output redirections and getline from files.
func awkEffects(prog string) []fileEffect {
	var out []fileEffect
	// Blank out string literals and regex-looking literals, remembering strings.
	type tok struct {
		str   string
		isStr bool
		pos   int
	}
	var b strings.Builder
	var strs []tok
	for i := 0; i < len(prog); i++ {
		ch := prog[i]
		if ch == '"' {
			j := i + 1
			var lit strings.Builder
			for j < len(prog) && prog[j] != '"' {
				if prog[j] == '\\' && j+1 < len(prog) {
					j++
				}
				lit.WriteByte(prog[j])
				j++
			}
			strs = append(strs, tok{str: lit.String(), isStr: true, pos: b.Len()})
			b.WriteString(`"S"`)
			i = j
			continue
		}
		if ch == '#' {
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(ch)
	}
	code := blankRegexps(b.String())
	strAt := func(pos int) (string, bool) {
		for _, t := range strs {
			if t.pos == pos {
				return t.str, true
			}
		}
		return "", false
	}
	if strings.Contains(code, "system") || strings.Contains(code, "@") {
		// system(), and gawk's @include, @load and @name() indirect calls.
		out = append(out, fileEffect{kind: "exec"})
	}
	if strings.Contains(code, "ARGV") || strings.Contains(code, "ARGC") || strings.Contains(code, "ENVIRON[") && strings.Contains(code, "=") {
		// Changing ARGV/ARGC makes awk read other files.
		out = append(out, fileEffect{kind: "read"})
	}
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '|':
			if i+1 < len(code) && code[i+1] == '|' {
				i++
				continue
			}
			if i > 0 && code[i-1] == '|' {
				continue
			}
			out = append(out, fileEffect{kind: "exec"})
		case '>':
			if !inPrintStatement(code, i) {
				continue
			}
			j := i + 1
			if j < len(code) && code[j] == '>' {
				j++
			}
			for j < len(code) && code[j] == ' ' {
				j++
			}
			if s, ok := strAt(j); ok && !concatenated(code, j+3) {
				out = append(out, fileEffect{"write", s})
			} else {
				out = append(out, fileEffect{kind: "write"}) // a name built at run time
			}
			if j > i+1 && code[i+1] == '>' {
				i++
			}
		case '<':
			k := strings.LastIndex(code[:i], "getline")
			if k < 0 || strings.ContainsAny(code[k:i], ";{}\n") {
				continue
			}
			j := i + 1
			for j < len(code) && code[j] == ' ' {
				j++
			}
			if s, ok := strAt(j); ok {
				out = append(out, fileEffect{"read", s})
			} else {
				out = append(out, fileEffect{kind: "read"})
			}
		}
	}
	return out
}

// inPrintStatement reports whether position i of an awk program is inside a
// print/printf statement, outside parentheses: where > redirects output.
func inPrintStatement(code string, i int) bool {
	start := strings.LastIndexAny(code[:i], ";{}\n")
	stmt := code[start+1 : i]
	t := strings.TrimLeft(stmt, " \t")
	if !strings.HasPrefix(t, "print") {
		// Also "if (…) print … > f" and "… ; else print > f".
		k := strings.LastIndex(stmt, "print")
		if k < 0 {
			return false
		}
		t = stmt[k:]
	}
	depth := 0
	for _, r := range t {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return depth <= 0
}

// blankRegexps replaces the text of awk regular expression literals with x,
// so that parentheses, semicolons and > inside them are not read as code.
// A / starts a regexp where an operand is expected.
func blankRegexps(code string) string {
	b := []byte(code)
	prev := byte(0)
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch == '/' && (prev == 0 || strings.IndexByte("(,~!{;&|?:=\n", prev) >= 0 || endsWithWord(b[:i], "print", "printf", "return", "in")) {
			j := i + 1
			for j < len(b) && b[j] != '/' && b[j] != '\n' {
				if b[j] == '[' {
					// A bracket expression holds "/" as a member: /[/]/.
					if end := bracketEnd(string(b[j:])); end > 0 {
						for k := j; k <= j+end; k++ {
							b[k] = 'x'
						}
						j += end + 1
						continue
					}
				}
				if b[j] == '\\' && j+1 < len(b) {
					b[j] = 'x'
					j++
				}
				b[j] = 'x'
				j++
			}
			i = j
			prev = 'x'
			continue
		}
		if ch != ' ' && ch != '\t' {
			prev = ch
		}
	}
	return string(b)
}

// endsWithWord reports whether b ends with one of words as a whole word.
func endsWithWord(b []byte, words ...string) bool {
	t := strings.TrimRight(string(b), " \t")
	for _, w := range words {
		if strings.HasSuffix(t, w) {
			k := len(t) - len(w)
			if k == 0 || !(t[k-1] == '_' || t[k-1] >= 'a' && t[k-1] <= 'z' || t[k-1] >= 'A' && t[k-1] <= 'Z' || t[k-1] >= '0' && t[k-1] <= '9') {
				return true
			}
		}
	}
	return false
}

// concatenated reports whether an awk expression continues after position i
// (a string literal followed by more of the file name: "dir/" $1).
func concatenated(code string, i int) bool {
	for i < len(code) && (code[i] == ' ' || code[i] == '\t') {
		i++
	}
	if i >= len(code) {
		return false
	}
	return strings.IndexByte(";}\n)|&,", code[i]) < 0
}
