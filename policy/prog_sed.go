package policy

import (
	"fmt"
	"strings"
)

// sed: the script is code.
//
// GNU sed's manual: the e command "executes command and sends its output to
// the output stream"; s///e executes the pattern space; w and s///w write
// files; r and R read them. -i edits files in place (with a backup suffix
// that may name a directory). --sandbox "rejects programs with r/w/e
// commands". GTFOBins: sed, "Shell", "File write", "File read".

// registerSed adds the table rows of this file.
func registerSed(add adder) {
	add(&spec{operands: opPatternFirst, opts: opts(inPlaceSuffix("-i --in-place"), pat("-e --expression"), patFile("-f --file"),
		val("-l --line-length"), fl("-n --quiet --silent"), fl("-E -r --regexp-extended"), fl("-s --separate"), fl("-u --unbuffered"),
		fl("-z --null-data"), fl("--posix"), fl("--debug"), fl("--sandbox")), extra: sedExtra}, "sed", "gsed")
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

// sedExtra checks sed's in-place backup suffix and reads the script for
// commands that run programs or touch files, unless --sandbox is given.
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

// fileEffect is one thing a sed or awk program does besides filtering:
// kind is "read", "write" or "exec"; path is the file, when known.
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
	// readDelimited reads up to the closing delimiter; in a regex (re) a
	// bracket expression holds the delimiter as an ordinary character
	// (s/[/]/x/ is one s command to GNU sed).
	readDelimited := func(delim byte, re bool) error {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return nil
			case '[':
				if re {
					if end := bracketEnd(s[i:]); end > 0 {
						i += end + 1
						continue
					}
				}
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
				if err := readDelimited('/', true); err != nil {
					return nil, err
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case ch == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if err := readDelimited(d, true); err != nil {
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
			if err := readDelimited(d, cmd == 's'); err != nil {
				return nil, err
			}
			if err := readDelimited(d, false); err != nil {
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

// restToSep moves *i past the rest of a sed command, up to ; or a newline.
func restToSep(s string, i *int) {
	for *i < len(s) && s[*i] != ';' && s[*i] != '\n' && s[*i] != '}' {
		*i++
	}
}

// bracketEnd is the index of the "]" that closes the bracket expression s
// starts ("[" first), or 0 when there is none on the line: a "]" right
// after "[" or "[^" is a member, and [:class:], [=c=] and [.c.] are
// skipped whole.
func bracketEnd(s string) int {
	i := 1
	if i < len(s) && s[i] == '^' {
		i++
	}
	if i < len(s) && s[i] == ']' {
		i++
	}
	for i < len(s) && s[i] != '\n' {
		switch {
		case s[i] == '[' && i+1 < len(s) && strings.IndexByte(":=.", s[i+1]) >= 0:
			close := "]"
			close = string(s[i+1]) + close
			end := strings.Index(s[i+2:], close)
			if end < 0 {
				return 0
			}
			i += 2 + end + 2
		case s[i] == ']':
			return i
		default:
			i++
		}
	}
	return 0
}
