package agents

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// unknownRune stands, in a word, for text known only at run time (a
// variable, a substitution). A pattern may match it with anything.
const unknownRune = '\uFFFF'

// maxFormDepth bounds the nesting of shell strings (sh -c, eval, find
// -exec) followed into; deeper is an error, never skipped.
const maxFormDepth = 8

// maxForms bounds the forms of one command line; more is an error.
const maxForms = 4096

// wrappers run the command their operands name. Each operand that does not
// look like an option starts a form of its own, so that a rule naming the
// wrapped program matches whatever the wrapper's options are (measured on
// Claude Code: timeout, nice, env, xargs, command, builtin and exec are seen
// through).
var wrappers = map[string]bool{
	"command": true, "builtin": true, "exec": true, "nohup": true, "time": true, "nice": true,
	"timeout": true, "stdbuf": true, "env": true, "xargs": true, "sudo": true, "doas": true,
	"setsid": true, "ionice": true, "chrt": true, "taskset": true, "flock": true, "unbuffer": true,
	"watch": true, "runuser": true, "chroot": true, "unshare": true, "nsenter": true, "capsh": true,
	"strace": true, "ltrace": true, "parallel": true, "busybox": true,
}

// shells run the string of their -c option.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": true}

// commandForms returns every simple command of a shell command line, in
// each form an agent's rule may name it by: its words after quote removal,
// without the assignments before it; the same with the program's base name
// when it is given as a path; what each wrapper runs; the strings of sh -c,
// su -c and eval, and the commands of find -exec, parsed in turn. A word or
// part of one known only at run time holds unknownRune. The forms are a
// superset of what the agents themselves match, so a rule they would apply
// is never missed; a line that does not parse is an error.
func commandForms(command string) ([][]string, error) {
	var out [][]string
	if err := formsOf(command, 0, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func formsOf(src string, depth int, out *[][]string) error {
	if depth > maxFormDepth {
		return fmt.Errorf("shell strings nested deeper than %d", maxFormDepth)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("parse the command: %w", err)
	}
	var walkErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if walkErr != nil {
			return false
		}
		var words []string
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, w := range n.Args {
				words = append(words, wordText(w))
			}
		case *syntax.DeclClause:
			words = append(words, n.Variant.Value)
			for _, a := range n.Args {
				words = append(words, assignText(a))
			}
		default:
			return true
		}
		if len(words) > 0 {
			walkErr = addForms(words, depth, out)
		}
		return true
	})
	return walkErr
}

// addForms adds the forms of one simple command's words.
func addForms(words []string, depth int, out *[][]string) error {
	if len(*out) >= maxForms {
		return fmt.Errorf("more than %d simple commands", maxForms)
	}
	*out = append(*out, words)
	base := path.Base(words[0])
	if strings.Contains(words[0], "/") && !strings.ContainsRune(words[0], unknownRune) {
		*out = append(*out, append([]string{base}, words[1:]...))
	}
	switch {
	case wrappers[base]:
		for i := 1; i < len(words); i++ {
			w := words[i]
			if strings.HasPrefix(w, "-") || base == "env" && isAssignment(w) {
				continue
			}
			if err := addForms(words[i:], depth, out); err != nil {
				return err
			}
		}
	case shells[base] || base == "su":
		for i := 1; i+1 < len(words); i++ {
			if w := words[i]; strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") || w == "--command" {
				if err := nested(words[i+1], depth, out); err != nil {
					return err
				}
			}
		}
	case base == "eval" && len(words) > 1:
		return nested(strings.Join(words[1:], " "), depth, out)
	case base == "trap":
		// trap [--] ACTION SIGNAL…: the shell runs ACTION as eval would.
		args := words[1:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
			return nested(args[0], depth, out)
		}
	case base == "find":
		for i := 1; i < len(words); i++ {
			switch words[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(words) && words[j] != ";" && words[j] != "+" {
					j++
				}
				if j > i+1 {
					if err := addForms(words[i+1:j], depth, out); err != nil {
						return err
					}
				}
				i = j
			}
		}
	}
	return nil
}

// nested adds the forms of a shell string; one known only at run time is a
// form of its own that any rule may match.
func nested(src string, depth int, out *[][]string) error {
	if strings.ContainsRune(src, unknownRune) {
		*out = append(*out, []string{string(unknownRune)})
		return nil
	}
	return formsOf(src, depth+1, out)
}

// isAssignment reports whether an env operand is NAME=VALUE.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && name != "" && !strings.ContainsAny(name, " /-")
}

// wordText is a word after quote removal, with unknownRune for each part
// known only at run time.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		partText(&b, p, false)
	}
	return b.String()
}

func partText(b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		if p.Dollar && strings.ContainsRune(p.Value, '\\') {
			b.WriteRune(unknownRune) // $'…' escapes are not followed
			return
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			partText(b, q, true)
		}
	default:
		b.WriteRune(unknownRune)
	}
}

// unescape removes the shell's backslashes from literal text: every one
// outside quotes, and before $, `, ", \ and a newline inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// assignText is an argument of export, declare, local…: NAME=VALUE, or
// the word.
func assignText(a *syntax.Assign) string {
	var b strings.Builder
	if a.Name != nil {
		b.WriteString(a.Name.Value)
	}
	if a.Value != nil {
		if a.Name != nil {
			b.WriteByte('=')
		}
		b.WriteString(wordText(a.Value))
	} else if a.Array != nil || a.Index != nil {
		b.WriteRune(unknownRune)
	}
	return b.String()
}
