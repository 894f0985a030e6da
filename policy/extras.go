package policy

import (
	"fmt"
	"path/filepath"
	"strings"
)

// firstOperand returns the first operand after the subcommand words.
func (p *parsed) operands() []arg {
	pos := p.pos
	if len(p.subPath) > 0 && len(pos) >= len(p.subPath) {
		pos = pos[len(p.subPath):]
	}
	return pos
}

// scriptTexts returns the scripts of sed/awk: from -e style options, else
// the first operand.
func scriptTexts(p *parsed, patternIDs ...string) (texts []arg, fromFile bool) {
	for _, o := range p.occ {
		if o.opt == nil || !o.has {
			continue
		}
		switch o.opt.eff {
		case effPattern:
			texts = append(texts, o.value)
		case effPatternFile:
			fromFile = true
		}
	}
	if len(texts) == 0 && !fromFile {
		if ops := p.operands(); len(ops) > 0 {
			texts = append(texts, ops[0])
		}
	}
	return texts, fromFile
}

func sedExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, o := range p.occ {
		if o.id == "-i" && o.has && o.value.known && strings.Contains(o.value.s, "/") {
			// A backup suffix with a / names where the backups are written.
			c.operand(strings.ReplaceAll(o.value.s, "*", "backup"), AccessWrite, st.cwd, "sed -i backup")
		}
	}
	if p.has("--sandbox") {
		return
	}
	texts, fromFile := scriptTexts(p)
	if fromFile {
		c.danger(p, allowed, "-f", "-f", "runs a script file whose commands (e, w, r) cannot be checked")
	}
	for _, t := range texts {
		if !t.known {
			c.danger(p, allowed, "script", "script", "is known only at run time")
			continue
		}
		effs, err := sedEffects(t.s)
		if err != nil {
			c.danger(p, allowed, "script", "script", "cannot be analysed: "+err.Error())
			continue
		}
		for _, e := range effs {
			switch e.kind {
			case "exec":
				c.danger(p, allowed, "e", "script command e", "runs shell commands")
			case "write":
				c.operand(e.file, AccessWrite, st.cwd, "sed w")
			case "read":
				c.operand(e.file, AccessRead, st.cwd, "sed r")
			}
		}
	}
}

type fileEffect struct {
	kind string // exec, write, read
	file string
}

// sedEffects finds the commands of a sed script that run programs or touch
// files: e, s///e, w, s///w, W, r, R. It errs on what it cannot follow.
func sedEffects(script string) ([]fileEffect, error) {
	var out []fileEffect
	s := script
	i := 0
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
	}
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		var r string
		if j < 0 {
			r, i = s[i:], len(s)
		} else {
			r, i = s[i:i+j], i+j
		}
		return strings.TrimLeft(r, " \t")
	}
	readDelimited := func(delim byte) error {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return nil
			}
			if s[i] == '\n' && delim != '\n' {
				return fmt.Errorf("unterminated s command")
			}
			i++
		}
		return fmt.Errorf("unterminated expression")
	}
	for {
		skipBlank()
		if i >= len(s) {
			return out, nil
		}
		// Address: line numbers, $, /re/, \cREc, ranges, steps.
		for i < len(s) {
			ch := s[i]
			switch {
			case ch >= '0' && ch <= '9' || ch == '$' || ch == ',' || ch == '~' || ch == '+' || ch == ' ':
				i++
				continue
			case ch == '/':
				i++
				if err := readDelimited('/'); err != nil {
					return nil, err
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case ch == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if err := readDelimited(d); err != nil {
					return nil, err
				}
				continue
			}
			break
		}
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'q', 'Q', 'L':
			if cmd == 'q' || cmd == 'Q' || cmd == 'l' || cmd == 'L' {
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
			}
		case ':', 'b', 't', 'T':
			restToSep(s, &i)
		case 'a', 'i', 'c':
			restOfLine()
		case 'r', 'R':
			out = append(out, fileEffect{"read", restOfLine()})
		case 'w', 'W':
			out = append(out, fileEffect{"write", restOfLine()})
		case 'e':
			out = append(out, fileEffect{kind: "exec"})
			restOfLine()
		case 'v':
			restToSep(s, &i)
		case 's', 'y':
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated %c command", cmd)
			}
			d := s[i]
			if d == '\n' || d == '\\' {
				return nil, fmt.Errorf("unsupported delimiter")
			}
			i++
			if err := readDelimited(d); err != nil {
				return nil, err
			}
			if err := readDelimited(d); err != nil {
				return nil, err
			}
			if cmd == 'y' {
				continue
			}
			// Flags: g p i I m M e NUMBER w FILE.
		flags:
			for i < len(s) {
				switch f := s[i]; {
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
					i++
				case f == 'e':
					out = append(out, fileEffect{kind: "exec"})
					i++
				case f == 'w':
					i++
					out = append(out, fileEffect{"write", restOfLine()})
					break flags
				default:
					break flags
				}
			}
		case '#':
			restOfLine()
		default:
			return nil, fmt.Errorf("unknown command %q", cmd)
		}
	}
}

func restToSep(s string, i *int) {
	for *i < len(s) && s[*i] != ';' && s[*i] != '\n' && s[*i] != '}' {
		*i++
	}
}

func awkExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("-S") {
		return // --sandbox: no system(), no redirections
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

// findExtra walks a find command line: starting points, then the expression.
func findExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	args := p.args
	i := 0
	// Options before the starting points.
	for i < len(args) && args[i].known && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P" || strings.HasPrefix(args[i].s, "-O") || args[i].s == "-D" || args[i].s == "--") {
		if args[i].s == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a.known && (strings.HasPrefix(a.s, "-") || a.s == "(" || a.s == "!" || a.s == ")" || a.s == ",") {
			break
		}
		if a.known {
			c.operand(a.s, AccessRead, st.cwd, "find starting point")
		}
	}
	oneArg := map[string]effect{
		"-name": effNone, "-iname": effNone, "-path": effNone, "-ipath": effNone, "-wholename": effNone, "-iwholename": effNone,
		"-regex": effNone, "-iregex": effNone, "-regextype": effNone, "-type": effNone, "-xtype": effNone, "-size": effNone,
		"-mtime": effNone, "-mmin": effNone, "-atime": effNone, "-amin": effNone, "-ctime": effNone, "-cmin": effNone,
		"-user": effNone, "-group": effNone, "-uid": effNone, "-gid": effNone, "-perm": effNone, "-maxdepth": effNone,
		"-mindepth": effNone, "-links": effNone, "-inum": effNone, "-lname": effNone, "-ilname": effNone, "-used": effNone,
		"-fstype": effNone, "-context": effNone, "-printf": effNone, "-newer": effRead, "-anewer": effRead, "-cnewer": effRead,
		"-samefile": effRead, "-files0-from": effRead, "-fprint": effWrite, "-fprint0": effWrite, "-fls": effWrite,
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch {
		case a.s == "-exec" || a.s == "-execdir" || a.s == "-ok" || a.s == "-okdir":
			c.danger(p, allowed, a.s, a.s, "runs a command for every file found")
			j := i + 1
			for j < len(args) && !(args[j].known && (args[j].s == ";" || args[j].s == "+")) {
				j++
			}
			inner := make([]arg, 0, j-i-1)
			for _, x := range args[i+1 : j] {
				if x.known && strings.Contains(x.s, "{}") {
					x = arg{}
				}
				inner = append(inner, x)
			}
			c.simple(inner, st.clone(), false)
			i = j
		case a.s == "-delete":
			c.danger(p, allowed, "-delete", "-delete", "deletes every file found")
		case a.s == "-fprintf":
			if i+1 < len(args) && args[i+1].known {
				c.operand(args[i+1].s, AccessWrite, st.cwd, "find -fprintf")
			}
			i += 2
		case strings.HasPrefix(a.s, "-newer") && len(a.s) == 8:
			if i+1 < len(args) && args[i+1].known {
				c.operand(args[i+1].s, AccessRead, st.cwd, "find "+a.s)
			}
			i++
		default:
			if eff, ok := oneArg[a.s]; ok {
				if i+1 < len(args) && args[i+1].known {
					switch eff {
					case effRead:
						c.operand(args[i+1].s, AccessRead, st.cwd, "find "+a.s)
					case effWrite:
						c.operand(args[i+1].s, AccessWrite, st.cwd, "find "+a.s)
					}
				}
				i++
			}
		}
	}
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
		for _, a := range p.operands() {
			if a.known {
				c.operand(a.s, AccessRead, st.cwd, "tar input")
				c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true})
			}
		}
	}
}

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

// interpExtra: an interpreter runs a script file (read) or, with no script
// and no inline code option, code from standard input.
func interpExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-X") {
		if dir, ok := strings.CutPrefix(v.s, "pycache_prefix="); ok && v.known {
			c.operand(dir, AccessWrite, st.cwd, "python3 -X pycache_prefix")
		}
	}
	for _, o := range p.occ {
		if o.opt != nil && o.opt.stop && o.has {
			c.pythonModule(p, allowed, o.value, st)
			return
		}
		if o.opt != nil && o.opt.eff == effCode {
			return // inline code (already refused)
		}
		if o.id == "--version" || o.id == "-V" || o.id == "-v" || o.id == "--help" || o.id == "-h" || o.id == "--test" || o.id == "--check" {
			return
		}
	}
	if p.has("-i") || p.has("--interactive") {
		c.danger(p, allowed, "-i", "-i", "reads code from standard input after the script")
	}
	ops := p.operands()
	if len(ops) == 0 || (ops[0].known && isStdinPath(ops[0].s)) {
		c.danger(p, allowed, "-", "without a script", whyStdin)
		return
	}
	if ops[0].known && !ops[0].procSubst {
		c.operand(ops[0].s, AccessRead, st.cwd, p.prog+" script")
	} else if ops[0].procSubst {
		c.danger(p, allowed, "<(…)", "script from a process substitution", whyStdin)
	}
}

// shellExtra: sh -c STRING is checked as a program of its own; a script
// file is read; no script means commands from standard input.
func shellExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	ops := p.operands()
	if p.has("-c") {
		if len(ops) == 0 {
			return
		}
		if !ops[0].known {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: p.prog + " -c",
				Message: p.prog + " -c with a command string known only at run time cannot be checked"})
			return
		}
		inner := &shellState{cwd: st.cwd, vars: map[string]*string{}, funcs: map[string]bool{}, posKnown: true}
		for _, a := range ops[1:] {
			if !a.known {
				inner.posKnown = false
				break
			}
			if len(inner.pos) > 0 || a.s != "" {
				inner.pos = append(inner.pos, a.s)
			}
		}
		if len(ops) > 1 {
			inner.pos = inner.pos[min(1, len(inner.pos)):] // $0 is the first
		}
		c.program(ops[0].s, inner)
		return
	}
	if p.has("-s") || len(ops) == 0 {
		c.danger(p, allowed, "-s", "without a script", "runs commands read from standard input, which cannot be checked")
		return
	}
	if ops[0].known {
		c.operand(ops[0].s, AccessRead, st.cwd, p.prog+" script")
	}
}

func goExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	sub := ""
	if len(p.subPath) > 0 {
		sub = p.subPath[0]
	}
	ops := p.operands()
	switch sub {
	case "run", "install", "get", "test", "build", "vet":
		for _, a := range ops {
			if a.known && strings.Contains(a.s, "@") && !strings.HasPrefix(a.s, "-") && sub == "run" {
				c.danger(p, allowed, "run pkg@version", "run "+a.s, "downloads and runs code from outside the scope")
			}
		}
	case "tool":
		if len(ops) > 0 && ops[0].known {
			switch t := ops[0].s; {
			case t == "trace" || (t == "pprof" && hasPrefixArg(p.args, "-http")):
				c.danger(p, allowed, "tool "+t, "tool "+t, "starts a web server and a browser")
			case t == "test2json" || t == "cgo" || t == "dist":
				c.danger(p, allowed, "tool "+t, "tool "+t, "runs other programs")
			case t == "link" && (hasPrefixArg(p.args, "-extld") || hasPrefixArg(p.args, "-extar")):
				c.danger(p, allowed, "tool link", "tool link -extld", "runs an external linker program")
			}
		}
	}
	for _, a := range p.args {
		if !a.known {
			continue
		}
		if v, ok := strings.CutPrefix(a.s, "-replace="); ok {
			if _, to, ok := strings.Cut(v, "="); ok && looksLikePath(to) {
				c.operand(to, AccessRead, st.cwd, "go mod edit -replace")
			}
		}
		if sub == "tool" && strings.HasPrefix(a.s, "-http") {
			c.danger(p, allowed, "tool -http", "tool "+a.s, "starts a web server and a browser")
		}
		if !strings.HasPrefix(a.s, "-test.") {
			continue
		}
		name, v, ok := strings.Cut(a.s, "=")
		switch strings.TrimPrefix(name, "-test.") {
		case "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "testlogfile", "gocoverdir", "fuzzcachedir":
			if ok {
				c.operand(v, AccessWrite, st.cwd, "go test "+name)
			}
		}
	}
	for _, v := range p.values("-ldflags") {
		// A value known only at run time is checked then.
		if v.known && strings.Contains(v.s, "extld") {
			c.danger(p, allowed, "-ldflags", "-ldflags", "can name an external linker program (-extld)")
		}
	}
	for _, v := range p.values("-gcflags") {
		if !v.known {
			c.danger(p, allowed, "-gcflags", "-gcflags", "is known only at run time")
		}
	}
}

func makeExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, f := range p.values("-f") {
		if f.known && isStdinPath(f.s) {
			c.danger(p, allowed, "-f", "-f "+f.s, "reads a makefile from standard input, which cannot be checked")
		}
	}
	for _, a := range p.operands() {
		if !a.known {
			c.danger(p, allowed, "VAR=", "argument known only at run time", "may set a variable that recipes run")
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
		if strings.ContainsAny(val, "$`;|&<>()\n\\'\" \t") {
			c.danger(p, allowed, name+"=", name+"="+clip(val), "overrides a variable that recipes may run with shell syntax")
			continue
		}
		if filepath.IsAbs(val) || strings.HasPrefix(val, "~") {
			c.operand(val, AccessRead, st.cwd, "make variable "+name)
		}
	}
}

func npmExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("--location") {
		if !v.known || v.s == "global" || v.s == "user" {
			c.danger(p, allowed, "--location", "--location="+v.s, "installs or changes packages outside the scope")
		}
	}
	for _, v := range p.values("-C") {
		if v.known {
			c.operand(v.s, AccessWrite, st.cwd, "npm --prefix")
		}
	}
	if len(p.subPath) > 0 && (p.subPath[0] == "init") && len(p.operands()) > 0 {
		c.danger(p, allowed, "init", "init "+argvText(p.operands()[:1]), "runs a remote initializer package")
	}
}

func curlExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, o := range p.occ {
		switch o.id {
		case "-d", "-F":
			if !o.has || !o.value.known {
				continue
			}
			v := o.value.s
			if k := strings.IndexByte(v, '@'); k >= 0 && (k == 0 || o.id == "-F") {
				f := v[k+1:]
				if i := strings.IndexByte(f, ';'); i >= 0 {
					f = f[:i]
				}
				if f != "-" && f != "" {
					c.operand(f, AccessRead, st.cwd, "curl upload")
				}
			}
		case "-b":
			if o.has && o.value.known && !strings.Contains(o.value.s, "=") {
				c.operand(o.value.s, AccessRead, st.cwd, "curl cookie file")
			}
		}
	}
}

func sshExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-o") {
		if !v.known {
			c.danger(p, allowed, "-o", "-o", "sets an option known only at run time")
			continue
		}
		key := strings.ToLower(strings.TrimSpace(strings.FieldsFunc(v.s, func(r rune) bool { return r == '=' || r == ' ' })[0]))
		switch key {
		case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include", "controlpath", "controlmaster", "proxyuseeconnect", "remotecommand", "securitykeyprovider", "pkcs11provider", "sshaskpass":
			c.danger(p, allowed, "-o", "-o "+key, "runs programs or loads code")
		}
	}
}

func lessExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && strings.HasPrefix(a.s, "+") && strings.ContainsAny(a.s, "!|") {
			c.danger(p, allowed, "+", a.s, "runs a shell command")
		}
	}
}

func editorExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && strings.HasPrefix(a.s, "+") {
			c.danger(p, allowed, "+", a.s, "runs an editor command")
		}
	}
}

// gitConfigExtra: git config that writes (rather than reads) configuration.
func gitConfigExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	reads := map[string]bool{"--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true,
		"--list": true, "-l": true, "get": true, "list": true, "--show-origin": true, "--show-scope": true,
		"--name-only": true, "-z": true, "--null": true, "--type": true, "--bool": true, "--int": true, "--path": true,
		"--default": true, "--includes": true, "--no-includes": true, "--local": true, "--global": true, "--system": true,
		"--worktree": true, "--file": true, "-f": true, "--blob": true, "--fixed-value": true}
	var ops []arg
	for _, a := range p.args[1:] { // after "config"
		if !a.known {
			ops = append(ops, a)
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			name, _, _ := strings.Cut(a.s, "=")
			if !reads[name] {
				c.danger(p, allowed, "config", "config "+a.s, whyConfig)
				return
			}
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) > 0 && ops[0].known && (ops[0].s == "get" || ops[0].s == "list") {
		return
	}
	if p.has("--get") || p.has("--get-all") || p.has("--get-regexp") || p.has("--list") || p.has("-l") || p.has("--get-urlmatch") {
		return
	}
	if len(ops) >= 2 && ops[0].known && ops[1].known && safeGitKey(ops[0].s) {
		return // setting a key that cannot run programs (user.email…)
	}
	if len(ops) >= 3 && ops[0].known && ops[0].s == "set" && ops[1].known && safeGitKey(ops[1].s) {
		return
	}
	if len(ops) >= 2 || (len(ops) >= 1 && ops[0].known && (ops[0].s == "set" || ops[0].s == "unset" || ops[0].s == "edit" ||
		ops[0].s == "rename-section" || ops[0].s == "remove-section")) {
		c.danger(p, allowed, "config", "config (writing)", whyConfig)
	}
}

// gitExtra refuses git runs whose repository configuration tool calls can
// write: a planted repository (a bare one, or a .git file pointing
// elsewhere) can set core.fsmonitor, core.pager… and run programs on any
// git command.
// safeGitKeys are configuration keys (or key prefixes ending in .) that
// cannot make git run a program: git -c may set these.
var safeGitKeys = []string{"color.", "user.name", "user.email", "core.quotepath", "core.autocrlf", "core.safecrlf",
	"core.abbrev", "core.precomposeunicode", "core.ignorecase", "advice.", "log.", "format.pretty", "init.defaultbranch",
	"pull.rebase", "pull.ff", "merge.ff", "merge.conflictstyle", "commit.gpgsign", "tag.gpgsign", "gc.auto",
	"status.", "column.", "i18n.", "push.default", "rebase.autosquash", "rebase.autostash", "diff.renames",
	"diff.algorithm", "diff.noprefix", "diff.mnemonicprefix", "protocol.version", "fetch.prune", "maintenance.auto",
	"safe.bareRepository", "core.fsync", "feature.manyfiles", "index.threads", "pack.threads", "blame.coloring"}

// safeGitKey reports whether a configuration key cannot make git run a
// program (see safeGitKeys).
func safeGitKey(key string) bool {
	key = strings.ToLower(key)
	for _, k := range safeGitKeys {
		if k = strings.ToLower(k); key == k || (strings.HasSuffix(k, ".") && strings.HasPrefix(key, k)) {
			return true
		}
	}
	return false
}

func gitExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-c") {
		key, val, _ := strings.Cut(v.s, "=")
		key = strings.ToLower(key)
		safe := v.known && ((key == "core.pager" || strings.HasPrefix(key, "pager.")) && (val == "cat" || val == "less" || val == "more" || val == "false") || safeGitKey(key))
		if !safe {
			c.danger(p, allowed, "-c", "-c "+v.s, "sets configuration (core.pager, core.sshCommand, alias.*…) that can run programs")
		}
	}
	gitPathsExtra(c, p, allowed, st)
	if len(p.values("--exec-path")) > 0 {
		c.danger(p, allowed, "--exec-path", "--exec-path=…", "runs git's subcommands from another directory")
	}
	for _, o := range p.occ {
		if o.has && o.value.known && (strings.Contains(o.value.s, "ext::") || strings.HasPrefix(o.value.s, "fd::")) {
			c.danger(p, allowed, "ext::", o.text, "runs a command as the remote")
		}
	}
	if len(p.subPath) > 0 && p.subPath[0] == "push" {
		if ops := p.operands(); len(ops) > 0 && ops[0].known && looksLikePath(ops[0].s) && !strings.Contains(ops[0].s, ":") {
			c.operand(ops[0].s, AccessWrite, st.cwd, "git push to")
		}
	}
	for _, a := range p.operands() {
		if !a.known {
			continue
		}
		if strings.HasPrefix(a.s, "ext::") || strings.HasPrefix(a.s, "fd::") {
			c.danger(p, allowed, "ext::", a.s, "runs a command as the remote")
		}
		if len(p.subPath) > 0 && p.subPath[0] == "push" && strings.HasPrefix(a.s, "+") {
			if len(c.s.denyCmds) > 0 {
				p.occ = append(p.occ, occurrence{id: "-f", text: a.s})
				c.denyCheck(p, "")
			}
		}
	}
	var gitDir string
	for _, v := range p.values("--git-dir") {
		if v.known {
			gitDir = v.s
		} else {
			c.danger(p, allowed, "--git-dir", "--git-dir", "names a repository known only at run time")
			return
		}
	}
	if st.cwd == "" {
		return // working directory known only at run time
	}
	if gitDir != "" {
		abs, err := absPath(gitDir, st.cwd, c.env)
		if err != nil {
			return
		}
		c.gitConfigWritable(p, allowed, abs)
		return
	}
	if len(p.subPath) > 0 && (p.subPath[0] == "clone" || p.subPath[0] == "init" || p.subPath[0] == "version" || p.subPath[0] == "help") {
		return
	}
	fsys := c.env.fs()
	dir := st.cwd
	for {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := fsys.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				c.gitConfigWritable(p, allowed, dotgit)
			default:
				data, err := fsys.ReadFile(dotgit)
				if err != nil {
					c.danger(p, allowed, ".git", ".git file", "cannot be read to find the repository")
					return
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return
				}
				target = strings.TrimSpace(target)
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				c.gitConfigWritable(p, allowed, filepath.Clean(target))
			}
			return
		}
		if isGitDir(fsys, dir) {
			c.gitConfigWritable(p, allowed, dir)
			return
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}

// isGitDir reports whether dir looks like a repository directory to git:
// HEAD, objects/ and refs/.
func isGitDir(fsys FS, dir string) bool {
	fi, err := fsys.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || fi.IsDir() {
		return false
	}
	if fi, err := fsys.Stat(filepath.Join(dir, "objects")); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := fsys.Stat(filepath.Join(dir, "refs")); err != nil || !fi.IsDir() {
		return false
	}
	return true
}

func (c *checker) gitConfigWritable(p *parsed, allowed allowEntries, gitDir string) {
	for _, f := range []string{"config", "hooks/pre-commit", "commondir"} {
		target := filepath.Join(gitDir, f)
		if c.s.checkAbs(target, AccessWrite, c.env, pathSource{}) == nil {
			c.danger(p, allowed, "repository", "in repository "+gitDir,
				fmt.Sprintf("would load %s, which tool calls can write (core.fsmonitor, core.pager and hooks run programs); deny **/.git/** or run git in the project's own repository", target))
			return
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

// isStdinPath reports whether a script path is standard input in disguise.
func isStdinPath(s string) bool {
	return s == "-" || s == "/dev/stdin" || s == "/dev/tty" || strings.HasPrefix(s, "/dev/fd/") ||
		strings.HasPrefix(s, "/proc/self/fd/") || strings.HasPrefix(s, "/dev/pts/")
}

// pythonModules are modules that run code given on their command line or
// standard input, or start other programs.
var pythonModules = map[string]string{
	"timeit": "runs code given as arguments", "code": "runs code from standard input", "pdb": "runs debugger commands",
	"ensurepip": "installs packages outside the scope", "webbrowser": "starts a browser", "antigravity": "starts a browser",
	"idlelib": "runs an interactive shell", "runpy": "runs arbitrary modules", "cProfile": "", "profile": "",
	"venv": "", "pydoc": "", "turtledemo": "runs demo code", "asyncio": "runs code from standard input",
	"pickle": "unpickles data, which runs code", "idle": "runs an interactive shell",
}

// pythonModule checks python -m MODULE: package managers are checked as the
// program they are, modules that run inline code are dangerous.
func (c *checker) pythonModule(p *parsed, allowed allowEntries, mod arg, st *shellState) {
	if !mod.known {
		c.danger(p, allowed, "-m", "-m with a module known only at run time", "cannot be checked")
		return
	}
	c.pythonModuleArgs(p, allowed, mod.s, p.operands(), st)
}

// pythonModuleArgs checks the module a python invocation runs with its
// arguments: modules that run another module or script are followed.
func (c *checker) pythonModuleArgs(p *parsed, allowed allowEntries, name string, args []arg, st *shellState) {
	if name == "pip" || name == "pip3" {
		c.simple(append([]arg{{s: "pip", known: true}}, args...), st, false)
		return
	}
	if why := pythonModules[name]; why != "" {
		c.danger(p, allowed, "-m "+name, "-m "+name, why)
	}
	switch name {
	case "cProfile", "profile", "trace", "doctest", "pdb", "unittest", "pytest":
		// They run a script, or another module after -m.
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.known {
				continue
			}
			if a.s == "-m" && i+1 < len(args) && args[i+1].known {
				c.pythonModuleArgs(p, allowed, args[i+1].s, args[i+2:], st)
				return
			}
			if isStdinPath(a.s) || a.procSubst {
				c.danger(p, allowed, "-m "+name, "-m "+name+" "+a.s, whyStdin)
			}
		}
	case "pydoc":
		if hasPrefixArg(args, "-b") || hasPrefixArg(args, "-p") {
			c.danger(p, allowed, "-m pydoc", "-m pydoc -b", "starts a web server and a browser")
		}
	case "zipfile", "tarfile":
		if len(args) > 0 && args[0].known && (args[0].s == "-c" || args[0].s == "--create") && len(args) > 1 {
			if args[1].known {
				c.operand(args[1].s, AccessWrite, st.cwd, "python3 -m "+name+" archive")
			}
			for _, a := range args[2:] {
				if a.known {
					c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true})
				}
			}
		}
		if len(args) > 2 && args[0].known && (args[0].s == "-e" || args[0].s == "--extract") && args[2].known {
			c.operand(args[2].s, AccessWrite, st.cwd, "python3 -m "+name+" target")
		}
	case "venv", "virtualenv":
		for _, a := range args {
			if a.known && !strings.HasPrefix(a.s, "-") {
				c.operand(a.s, AccessWrite, st.cwd, "python3 -m venv")
			}
		}
	case "json.tool":
		var ops []arg
		for _, a := range args {
			if !a.known || !strings.HasPrefix(a.s, "-") {
				ops = append(ops, a)
			}
		}
		if len(ops) > 1 && ops[1].known {
			c.operand(ops[1].s, AccessWrite, st.cwd, "python3 -m json.tool output")
		}
	}
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

func hasPrefixArg(args []arg, prefix string) bool {
	for _, a := range args {
		if a.known && strings.HasPrefix(a.s, prefix) {
			return true
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
