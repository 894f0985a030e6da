package policy

import (
	"cmp"
	"fmt"

	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// maxWalk bounds the entries a recursive-read check looks at; a larger tree
// is left to what the program and the confinement do.
const maxWalk = 20000

// walkOpts say which entries a recursive reader skips.
type walkOpts struct {
	hidden    bool            // reads dot-files and dot-directories
	follow    bool            // follows the symbolic links it meets
	gitignore map[string]bool // names ignored by the root .gitignore (rg)
	// The program's own file filters: only files matching one of include
	// (when given) and none of exclude are read; directories matching
	// excludeDir are skipped.
	include, exclude, excludeDir []string
	// rooted says how the filters match. false: as grep's, fnmatch(3)
	// against base names, so a filter with a slash matches nothing. true:
	// as rg's gitignore-style globs, a glob with a slash (other than a
	// trailing one) against the path relative to the walk's root, others
	// against base names; a trailing slash matches directories only.
	rooted bool
	// verb says what the program does to the files ("reads" when empty).
	verb string
}

// reads reports whether a recursive reader reads a file; rel is its path
// relative to the walk's root.
func (o *walkOpts) reads(rel, name string) bool {
	if len(o.include) > 0 && !o.matchAny(o.include, rel, name, false) {
		return false
	}
	return !o.matchAny(o.exclude, rel, name, false)
}

// skipsDir reports whether a recursive reader skips a directory.
func (o *walkOpts) skipsDir(rel, name string) bool {
	return o.matchAny(o.excludeDir, rel, name, true)
}

// matchAny reports whether a file or directory matches one of a
// program's filters (see walkOpts.rooted).
func (o *walkOpts) matchAny(globs []string, rel, name string, dir bool) bool {
	for _, g := range globs {
		if !o.rooted {
			if fnmatchName(g, name) {
				return true
			}
			continue
		}
		g, dirOnly := strings.CutSuffix(g, "/")
		if dirOnly && !dir {
			continue
		}
		target := name
		if strings.Contains(g, "/") {
			g, target = strings.TrimPrefix(g, "/"), rel
		}
		if ok, _ := doublestar.Match(g, target); ok {
			return true
		}
	}
	return false
}

// fnmatchName reports whether a base name (no slash) matches an fnmatch(3)
// pattern: * ? [class] [!class] and backslash escapes. A malformed pattern
// matches nothing.
func fnmatchName(pattern, name string) bool {
	if strings.Contains(pattern, "/") {
		return false
	}
	ok, err := path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
	return ok && err == nil
}

// recursiveRead refuses a program that reads every file below dir when a
// denied path exists there: deny rules hold for files the call does not
// name, too. In confined execution the program reads below dir in a
// private view: when that view masks every denied path below dir, there
// is nothing to refuse. Before the call runs the view is not known yet,
// and the runner's check of the program decides.
func (c *checker) recursiveRead(p *parsed, dir, cwd string, o walkOpts) {
	confined := c.env.execution() == ExecutionConfined
	if confined && c.env.Masked == nil {
		return
	}
	if dir == "" {
		dir = "."
	}
	if !filepath.IsAbs(dir) && cwd == "" {
		c.unknownCwd(p.prog + " reading below " + dir)
		return
	}
	abs, err := absPath(dir, cwd, c.env)
	if err != nil {
		return
	}
	root, err := canonicalize(abs, c.env.fs())
	if err != nil {
		return
	}
	if confined && c.env.Masked(root, o.follow) {
		return
	}
	n := 0
	if denied, rule := c.walkDenied(root, "", o, &n, 0); denied != "" {
		c.add(Violation{Reason: ReasonPathDenied, Resource: denied, Rule: rule,
			Message: fmt.Sprintf("%s %s every file below %s, including %s, which is denied by %s of this session's scope; name the files or directories to read", p.prog, cmp.Or(o.verb, "reads"), dir, denied, rule)})
	}
}

// walkDenied returns the first denied path below dir that a recursive
// reader with options o reads, and the rule denying it.
func (c *checker) walkDenied(dir, rel string, o walkOpts, n *int, depth int) (string, string) {
	if depth > 64 {
		return "", ""
	}
	ents, err := c.env.fs().ReadDir(dir)
	if err != nil {
		return "", ""
	}
	for _, e := range ents {
		*n++
		if *n > maxWalk {
			return "", ""
		}
		name := e.Name()
		if !o.hidden && strings.HasPrefix(name, ".") {
			continue
		}
		if depth == 0 && o.gitignore[name] {
			continue
		}
		p := dir + "/" + name
		if dir == "/" {
			p = "/" + name
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		if e.IsDir() {
			if e.Type()&fs.ModeSymlink == 0 && !o.skipsDir(r, name) {
				if d, rule := c.walkDenied(p, r, o, n, depth+1); d != "" {
					return d, rule
				}
			}
			continue
		}
		if !o.reads(r, name) {
			continue
		}
		lower := strings.ToLower(p)
		for i := range c.s.deny {
			if c.s.deny[i].match(p, lower) {
				return p, c.s.deny[i].rule
			}
		}
	}
	return "", ""
}

// gitignoreNames reads the plain names of a directory's .gitignore (no
// globs): enough for rg's skipping of build output and secrets files.
func (c *checker) gitignoreNames(dir string) map[string]bool {
	data, err := c.env.fs().ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(strings.TrimSuffix(line, "/"), "/")
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") || strings.ContainsAny(line, "*?[/\\") {
			continue
		}
		out[line] = true
	}
	return out
}

// recursiveOperands returns the directories a recursive reader reads: its
// path operands, or "." when it has none.
func recursiveOperands(p *parsed, skipFirst bool) []string {
	ops := p.operands()
	if skipFirst && len(ops) > 0 {
		ops = ops[1:]
	}
	var out []string
	for _, a := range ops {
		if a.known && !a.procSubst {
			out = append(out, a.s)
		}
	}
	if len(out) == 0 && len(ops) == 0 {
		out = append(out, ".")
	}
	return out
}
