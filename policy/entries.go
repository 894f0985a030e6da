package policy

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/mattn/go-shellwords"
)

// entry is one shell_commands allow or deny entry, split into words.
type entry struct {
	rule  string   // e.g. "shell_commands.deny[0] rm -rf"
	text  string   // as written
	prog  string   // program base name
	path  string   // the program as a path, when the entry names one
	words []arg    // the words after the program
	pos   []string // operands (subcommand words) the entry requires, in order
	opts  []entryOpt
	// managed marks an entry of the managed layer.
	managed bool
}

// entryOpt is an option an entry names: its identity, and its value when the
// entry gives one.
type entryOpt struct {
	id    string
	value string
	has   bool
}

// compileEntries compiles shell_commands.allow or .deny entries against
// the program table; a program given as a path is kept in canonical form.
func compileEntries(list string, es []string, table *programs, fsys FS) ([]entry, error) {
	out := make([]entry, 0, len(es))
	for i, e := range es {
		rule := fmt.Sprintf("%s[%d] %s", list, i, e)
		p := shellwords.NewParser()
		p.ParseEnv = false
		p.ParseBacktick = false
		words, err := p.Parse(e)
		if err != nil || len(words) == 0 || p.Position >= 0 && p.Position < len(e) {
			return nil, fmt.Errorf("%w: %s: not a command and its words", ErrInvalidScope, rule)
		}
		en := entry{rule: rule, text: e, prog: words[0], words: knownArgs(words[1:])}
		if strings.Contains(words[0], "/") {
			// Compared with the program a command word resolves to, in
			// canonical form.
			en.path = filepath.Clean(words[0])
			if real, err := canonicalize(en.path, fsys); err == nil {
				en.path = real
			}
			en.prog = path.Base(words[0])
		}
		if len(en.words) == 0 {
			// A bare program name: nothing to parse, and no row to build.
			out = append(out, en)
			continue
		}
		pp := parseArgs(en.prog, table.lookup(en.prog), en.words)
		for _, a := range pp.pos {
			en.pos = append(en.pos, a.s)
		}
		for _, o := range pp.occ {
			en.opts = append(en.opts, entryOpt{id: o.id, value: o.value.s, has: o.has})
		}
		out = append(out, en)
	}
	return out, nil
}

// matchesProgram reports whether the entry names this program: by base name,
// or by path when the entry gives one (then the resolved paths must agree).
func (e *entry) matchesProgram(base, resolvedProg string) bool {
	if e.prog != base {
		return false
	}
	if e.path == "" {
		return true
	}
	return resolvedProg != "" && (e.path == resolvedProg)
}

// prefixOf reports whether the entry's operands start the command's operands.
func (e *entry) prefixOf(p *parsed) bool {
	if len(e.pos) > len(p.pos) {
		return false
	}
	for i, w := range e.pos {
		if !p.pos[i].known || p.pos[i].s != w {
			return false
		}
	}
	return true
}

// matches reports whether an entry matches a command by meaning: same
// program, its operands starting the command's, and every option it names
// present (in any spelling, order or cluster), with the same value when the
// entry gives one.
func (e *entry) matches(p *parsed, resolvedProg string) bool {
	if !e.matchesProgram(p.prog, resolvedProg) || !e.prefixOf(p) {
		return false
	}
	for _, eo := range e.opts {
		found := false
		for _, o := range p.occ {
			if o.id == eo.id && (!eo.has || (o.has && o.value.known && o.value.s == eo.value)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// names reports whether an allow entry names an option or subcommand
// explicitly, which waives the danger it carries.
func (e *entry) names(id string) bool {
	for _, o := range e.opts {
		if o.id == id {
			return true
		}
	}
	for _, w := range e.pos {
		if w == id {
			return true
		}
	}
	return false
}
