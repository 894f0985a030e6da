package learn

import (
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scopegate/scopegate/policy"
)

// pathItem is one path a flag needs: its literal (unescaped) form, whether
// it is a directory glob (DIR/**) and the calls that need it.
type pathItem struct {
	lit   string
	dir   bool
	calls []string
}

// paths proposes the --read or --write patterns of flag: files as named,
// directory globs where enough calls name files below one; reads already
// covered by the proposed writes (prev) are dropped.
func (s *suggester) paths(flag policy.WidenFlag, prev []Suggestion) []Suggestion {
	m := s.byFlag[flag]
	var items []pathItem
	for _, v := range sortedKeys(m) {
		calls := m[v]
		lit, dir, ok := literal(v)
		if !ok {
			s.skip(flag, v, "not a literal path", calls)
			continue
		}
		if why := s.forbidden(lit, dir); why != "" {
			s.skip(flag, v, why, calls)
			continue
		}
		items = append(items, pathItem{lit: lit, dir: dir, calls: slices.Clone(calls)})
	}
	// Directory globs: deepest first, a directory below which calls name
	// at least MinFiles distinct files not yet covered.
	var globs []pathItem
	for _, it := range items {
		if it.dir {
			globs = append(globs, it)
		}
	}
	for _, d := range s.candidates(items) {
		if coveredBy(globs, d) {
			continue
		}
		files := 0
		for _, it := range items {
			if !it.dir && within(it.lit, d) && it.lit != d && !coveredBy(globs, it.lit) && s.inProject(it.lit, d) {
				files++
			}
		}
		if files >= s.o.MinFiles {
			globs = append(globs, pathItem{lit: d, dir: true})
		}
	}
	// Every item goes to the narrowest glob covering it, or stands alone.
	type out struct {
		pattern string
		calls   []string
	}
	res := map[string]*out{}
	var order []string
	put := func(pattern string, calls []string) {
		o := res[pattern]
		if o == nil {
			o = &out{pattern: pattern}
			res[pattern] = o
			order = append(order, pattern)
		}
		o.calls = append(o.calls, calls...)
	}
	for _, it := range items {
		if flag == policy.WidenRead && coveredByWrite(prev, it.lit) {
			// A write implies a read: the proposed write allows it.
			for i := range prev {
				if prev[i].Flag == policy.WidenWrite && covers(prev[i].Value, it.lit) {
					prev[i].Calls = append(prev[i].Calls, it.calls...)
					break
				}
			}
			continue
		}
		best := ""
		for _, g := range globs {
			if within(it.lit, g.lit) && len(g.lit) > len(best) {
				best = g.lit
			}
		}
		if best != "" {
			put(policy.EscapeGlob(best)+"/**", it.calls)
			continue
		}
		put(policy.EscapeGlob(it.lit), it.calls)
	}
	slices.Sort(order)
	var sugs []Suggestion
	for _, p := range order {
		sugs = append(sugs, Suggestion{Flag: flag, Value: p, Calls: res[p].calls})
	}
	return sugs
}

// candidates are the directories above the named files that a directory
// glob may be: deepest first.
func (s *suggester) candidates(items []pathItem) []string {
	seen := map[string]bool{}
	var ds []string
	for _, it := range items {
		if it.dir {
			continue
		}
		for d := path.Dir(it.lit); d != "/" && d != "."; d = path.Dir(d) {
			if seen[d] {
				continue
			}
			seen[d] = true
			if s.globForbidden(d) == "" {
				ds = append(ds, d)
			}
		}
	}
	slices.SortFunc(ds, func(a, b string) int {
		if n, m := strings.Count(a, "/"), strings.Count(b, "/"); n != m {
			return m - n
		}
		return strings.Compare(a, b)
	})
	return ds
}

// inProject reports whether d may hold file p as far as project roots go:
// for a file inside a project root, d is that root or below it.
func (s *suggester) inProject(p, d string) bool {
	for _, r := range s.o.ProjectRoots {
		r = path.Clean(r)
		if within(p, r) && !within(d, r) {
			return false
		}
	}
	return true
}

// forbidden says why a named path (a directory glob when dir) is never
// proposed: what a hard denial covers, the filesystem root, the home
// directory whole or above it.
func (s *suggester) forbidden(p string, dir bool) string {
	if p == "/" {
		return "the whole filesystem is never proposed"
	}
	if s.o.Home != "" && (p == path.Clean(s.o.Home) || dir && within(path.Clean(s.o.Home), p)) {
		return "a home directory whole is never proposed"
	}
	for _, r := range s.o.Protected {
		r = path.Clean(r)
		if within(p, r) || dir && within(r, p) {
			return "inside or holding " + r + ", which tool calls may never touch (sessions, scopegate config)"
		}
	}
	for _, sec := range s.o.Secrets {
		if within(p, sec) || dir && within(sec, p) {
			return "inside or holding the host secret " + sec
		}
	}
	if g := s.denied(p); g != "" {
		return "denied by " + g
	}
	return ""
}

// globForbidden says why d may not become a directory glob made from
// files below it: as forbidden, and never a directory directly below /.
func (s *suggester) globForbidden(d string) string {
	if strings.Count(d, "/") < 2 {
		return "a directory directly below / is never proposed"
	}
	return s.forbidden(d, true)
}

// denied returns the hard deny glob p (or a path below it, for a glob)
// matches, "" when none.
func (s *suggester) denied(p string) string {
	lower := strings.ToLower(p)
	for _, g := range s.o.Deny {
		pat := g
		if !strings.HasPrefix(pat, "/") && !strings.HasPrefix(pat, "**") {
			pat = "**/" + pat
		}
		pat = strings.ToLower(pat)
		if ok, _ := doublestar.Match(pat, lower); ok {
			return g
		}
	}
	return ""
}

// literal reads a pattern as scope expand takes it: a path with glob
// escapes ([*], \\), optionally followed by /** (dir). ok is false for an
// absolute path pattern with other glob syntax, or a relative one.
func literal(v string) (lit string, dir, ok bool) {
	if rest, cut := strings.CutSuffix(v, "/**"); cut {
		v, dir = rest, true
		if v == "" {
			v = "/"
		}
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case c == '[' && i+2 < len(v) && v[i+2] == ']' && strings.IndexByte("[*?{}", v[i+1]) >= 0:
			b.WriteByte(v[i+1])
			i += 2
		case strings.IndexByte(`*?[]{}\`, c) >= 0:
			return "", false, false
		default:
			b.WriteByte(c)
		}
	}
	lit = b.String()
	if !strings.HasPrefix(lit, "/") || path.Clean(lit) != lit || strings.ContainsRune(lit, 0) {
		return "", false, false
	}
	return lit, dir, true
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// coveredBy reports whether one of globs covers p.
func coveredBy(globs []pathItem, p string) bool {
	for _, g := range globs {
		if within(p, g.lit) {
			return true
		}
	}
	return false
}

// covers reports whether a proposed pattern covers p.
func covers(pattern, p string) bool {
	lit, dir, ok := literal(pattern)
	if !ok {
		return false
	}
	if dir {
		return within(p, lit)
	}
	return p == lit
}

// coveredByWrite reports whether a proposed --write covers p.
func coveredByWrite(prev []Suggestion, p string) bool {
	for _, s := range prev {
		if s.Flag == policy.WidenWrite && covers(s.Value, p) {
			return true
		}
	}
	return false
}
