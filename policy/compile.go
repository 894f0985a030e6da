package policy

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Scope is a compiled, immutable scope: globs validated, literal prefixes
// canonicalized, shell entries split into words. It is safe for concurrent
// use and meant to be shared. Scope.Within copies every field but the
// parsers: keep it in sync (TestWithinCopiesEveryField).
type Scope struct {
	doc        Document
	read       []glob
	write      []glob
	deny       []glob
	allow      []entry
	denyCmds   []entry
	roam       RoamRules
	readRoots  []string
	writeRoots []string
	programs   *programs
	net        Network
	// managed is the managed layer the scope was combined with
	// (Scope.Within), own the scope before; both nil for a scope of its
	// own.
	managed *Managed
	own     *Scope
	// parsers are reusable bash parsers (a parser is not safe for
	// concurrent use; the pool is).
	parsers sync.Pool
}

// glob is one path pattern: as written, and with its literal prefix resolved
// through symlinks. A path matches if it matches either form.
type glob struct {
	rule     string // e.g. "paths.read[0] /home/u/proj/**"
	patterns []string
	foldCase bool
	managed  bool   // an entry of the managed layer
	root     string // canonical literal prefix, for Roots
	// Necessary conditions for a match of each pattern, checked before the
	// matcher: a literal prefix, a literal run the path must contain.
	prefixes []string
	needs    []string
	// shapes says, per pattern, when it is one of the common shapes a
	// string comparison decides (see globShape).
	shapes []globShape
}

// globShape is a pattern shape matched without the glob matcher, with the
// same answers: shapeUnder is L/** (L and everything below it), shapeAnyDir
// **/N/** (a component N and everything below it), shapeAnyName **/N (a
// last component N), shapeExact a literal path. lit is L, N or the path.
type globShape struct {
	kind uint8
	lit  string
}

const (
	shapeGeneral uint8 = iota
	shapeUnder
	shapeAnyDir
	shapeAnyName
	shapeExact
)

// shapeOf classifies a pattern (see globShape).
func shapeOf(pat string) globShape {
	// The matcher compares runes, reading a byte that is not UTF-8 as
	// U+FFFD; bytes compare the same only for patterns without either.
	if !utf8.ValidString(pat) || strings.ContainsRune(pat, utf8.RuneError) {
		return globShape{}
	}
	literal := func(s string) bool { return !strings.ContainsAny(s, `*?[]{}\`) }
	switch {
	case strings.HasPrefix(pat, "**/") && strings.HasSuffix(pat, "/**") && len(pat) > len("**//**"):
		if n := pat[3 : len(pat)-3]; literal(n) && !strings.Contains(n, "/") {
			return globShape{shapeAnyDir, n}
		}
	case strings.HasPrefix(pat, "**/"):
		if n := pat[3:]; n != "" && literal(n) && !strings.Contains(n, "/") {
			return globShape{shapeAnyName, n}
		}
	case strings.HasPrefix(pat, "/") && strings.HasSuffix(pat, "/**"):
		if l := pat[:len(pat)-3]; literal(l) && !strings.Contains(l, "//") && !strings.HasSuffix(l, "/") {
			return globShape{shapeUnder, l}
		}
	case strings.HasPrefix(pat, "/") && literal(pat) && !strings.Contains(pat, "//"):
		return globShape{shapeExact, pat}
	}
	return globShape{}
}

// matches answers for an absolute path when the shape is not general.
func (sh globShape) matches(path string) (match, decided bool) {
	switch sh.kind {
	case shapeUnder:
		return sh.lit == "" || path == sh.lit || (strings.HasPrefix(path, sh.lit) && path[len(sh.lit)] == '/'), true
	case shapeAnyDir:
		return hasComponent(path, sh.lit), true
	case shapeAnyName:
		return path == sh.lit || (strings.HasSuffix(path, sh.lit) && len(path) > len(sh.lit) && path[len(path)-len(sh.lit)-1] == '/'), true
	case shapeExact:
		return path == sh.lit, true
	}
	return false, false
}

// hasComponent reports whether a slash-separated path has the component n.
func hasComponent(path, n string) bool {
	for i := 0; ; {
		j := strings.Index(path[i:], n)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(n)
		if (j == 0 || path[j-1] == '/') && (end == len(path) || path[end] == '/') {
			return true
		}
		i = j + 1
	}
}

// Document returns the document the scope was compiled from.
func (s *Scope) Document() Document { return s.doc }

// Compile validates doc and compiles it. Patterns starting with ~/ are
// expanded against env.Home; literal prefixes of absolute patterns are
// resolved through symlinks on env.FS. An invalid glob, an unresolved
// ${variable} or an unparsable shell entry is an error wrapping
// [ErrInvalidScope].
func Compile(doc Document, env Env) (*Scope, error) {
	s := &Scope{doc: doc, roam: doc.OrgRoam, programs: programTable()}
	var err error
	if s.read, err = compileGlobs("paths.read", doc.Paths.Read, false, env); err != nil {
		return nil, err
	}
	if s.write, err = compileGlobs("paths.write", doc.Paths.Write, false, env); err != nil {
		return nil, err
	}
	if s.deny, err = compileGlobs("paths.deny", doc.Paths.Deny, true, env); err != nil {
		return nil, err
	}
	if s.allow, err = compileEntries("shell_commands.allow", doc.Shell.Allow, s.programs, env.fs()); err != nil {
		return nil, err
	}
	if s.denyCmds, err = compileEntries("shell_commands.deny", doc.Shell.Deny, s.programs, env.fs()); err != nil {
		return nil, err
	}
	if s.net, err = compileNetwork(doc.Network); err != nil {
		return nil, err
	}
	for i, p := range doc.OrgRoam.Subdirectory {
		if err := validatePattern(p); err != nil {
			return nil, fmt.Errorf("%w: org_roam_patterns.subdirectory[%d] %q: %v", ErrInvalidScope, i, p, err)
		}
	}
	for _, g := range s.read {
		s.readRoots = appendRoot(s.readRoots, g.root)
	}
	for _, g := range s.write {
		s.readRoots = appendRoot(s.readRoots, g.root)
		s.writeRoots = appendRoot(s.writeRoots, g.root)
	}
	return s, nil
}

// appendRoot adds r to roots unless a root already holds it.
func appendRoot(roots []string, r string) []string {
	if r == "" {
		return roots
	}
	for _, x := range roots {
		if x == r {
			return roots
		}
	}
	return append(roots, r)
}

// validatePattern checks that a path pattern is a valid glob.
func validatePattern(p string) error {
	if p == "" {
		return fmt.Errorf("empty pattern")
	}
	if strings.Contains(p, "${") {
		return fmt.Errorf("unresolved variable")
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("NUL byte")
	}
	if !doublestar.ValidatePattern(p) {
		return fmt.Errorf("invalid glob")
	}
	return nil
}

// compileGlobs compiles one list of path patterns (paths.read, …):
// expands ~ and ${project_root}, anchors and cleans them.
func compileGlobs(list string, pats []string, foldCase bool, env Env) ([]glob, error) {
	out := make([]glob, 0, len(pats))
	for i, p := range pats {
		rule := fmt.Sprintf("%s[%d] %s", list, i, p)
		if err := validatePattern(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidScope, rule, err)
		}
		g := glob{rule: rule, foldCase: foldCase}
		pat := p
		if pat == "~" || strings.HasPrefix(pat, "~/") {
			if env.Home == "" {
				return nil, fmt.Errorf("%w: %s: ~ used but no home directory is known", ErrInvalidScope, rule)
			}
			pat = EscapeGlob(env.Home) + pat[1:]
		}
		switch {
		case strings.HasPrefix(pat, "/"):
			prefix, rest := splitLiteral(pat)
			lit := filepath.Clean("/" + unescapeGlob(prefix))
			g.patterns = append(g.patterns, pat)
			canon, err := canonicalize(lit, env.fs())
			if err == nil && canon != lit {
				g.patterns = append(g.patterns, joinGlob(EscapeGlob(canon), rest))
			}
			if err == nil {
				g.root = canon
			} else {
				g.root = lit
			}
		case strings.HasPrefix(pat, "**"):
			g.patterns = append(g.patterns, pat)
		default:
			// A relative pattern matches anywhere (docs/design.md, Paths).
			g.patterns = append(g.patterns, "**/"+pat)
		}
		if foldCase {
			for j := range g.patterns {
				g.patterns[j] = strings.ToLower(g.patterns[j])
			}
		}
		for _, pat := range g.patterns {
			prefix, need := prefilter(pat)
			g.prefixes = append(g.prefixes, prefix)
			g.needs = append(g.needs, need)
			g.shapes = append(g.shapes, shapeOf(pat))
		}
		out = append(out, g)
	}
	return out, nil
}

// match reports whether an absolute, cleaned path matches the glob; lower
// is the path in lower case (used by case-folding globs).
func (g *glob) match(path, lower string) bool {
	if g.foldCase {
		path = lower
	}
	for i, p := range g.patterns {
		if m, ok := g.shapes[i].matches(path); ok {
			if m {
				return true
			}
			continue
		}
		if !strings.HasPrefix(path, g.prefixes[i]) || !strings.Contains(path, g.needs[i]) {
			continue
		}
		if ok, _ := doublestar.Match(p, path); ok {
			return true
		}
	}
	return false
}

// prefilter returns necessary conditions for a path to match a pattern: the
// literal text before its first glob syntax (for absolute patterns), and the
// longest literal run without a separator it contains. Patterns with
// escapes or alternatives get no conditions.
func prefilter(pat string) (prefix, need string) {
	if strings.ContainsAny(pat, `\{}`) {
		return "", ""
	}
	if strings.HasPrefix(pat, "/") {
		if i := strings.IndexAny(pat, "*?["); i >= 0 {
			prefix = strings.TrimSuffix(pat[:i], "/")
		} else {
			prefix = pat
		}
	}
	for _, run := range strings.FieldsFunc(pat, func(r rune) bool { return strings.ContainsRune("*?[]/", r) }) {
		if len(run) > len(need) {
			need = run
		}
	}
	if strings.Contains(pat, "[") {
		need = "" // a run may sit inside a character class
	}
	return prefix, need
}

// splitLiteral splits an absolute pattern into the leading path segments that
// hold no glob syntax and the rest ("" when the whole pattern is literal).
func splitLiteral(pat string) (prefix, rest string) {
	segs := strings.Split(pat, "/")
	for i, seg := range segs {
		if strings.ContainsAny(seg, `*?[]{}\`) {
			return strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
		}
	}
	return pat, ""
}

// joinGlob joins a literal prefix and a glob.
func joinGlob(prefix, rest string) string {
	if rest == "" {
		return prefix
	}
	if strings.HasSuffix(prefix, "/") {
		return prefix + rest
	}
	return prefix + "/" + rest
}

// EscapeGlob makes a literal path safe to use in a glob: its glob
// metacharacters become one-character classes (`[[]`, `[*]`, `[?]`, `[{]`,
// `[}]`; a lone `]` is literal), which survive any YAML writer — a
// backslash escape turns invalid when another tool rewrites the scope
// double-quoted. Only a backslash itself is escaped with a backslash.
func EscapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[{}\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '[', '*', '?', '{', '}':
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unescapeGlob removes glob escapes from a literal pattern.
func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	esc := false
	for _, r := range s {
		if r == '\\' && !esc {
			esc = true
			continue
		}
		esc = false
		b.WriteRune(r)
	}
	return b.String()
}
