package policy

import (
	"fmt"

	"io/fs"
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
	// The program's own file filters, matched against base names: only
	// files matching one of include (when given) and none of exclude are
	// read; directories matching excludeDir are skipped.
	include, exclude, excludeDir []string
}

// reads reports whether a recursive reader reads a file named name.
func (o *walkOpts) reads(name string) bool {
	if len(o.include) > 0 && !matchAny(o.include, name) {
		return false
	}
	return !matchAny(o.exclude, name)
}

// matchAny reports whether name matches one of a program's file filters.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, name); ok {
			return true
		}
		// rg globs may carry a directory part: **/x.go, src/*.go.
		if i := strings.LastIndexByte(g, '/'); i >= 0 {
			if ok, _ := doublestar.Match(g[i+1:], name); ok {
				return true
			}
		}
	}
	return false
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
	if denied, rule := c.walkDenied(root, o, &n, 0); denied != "" {
		c.add(Violation{Reason: ReasonPathDenied, Resource: denied, Rule: rule,
			Message: fmt.Sprintf("%s reads every file below %s, including %s, which is denied by %s of this session's scope; name the files or directories to read", p.prog, dir, denied, rule)})
	}
}

// walkDenied returns the first denied path below dir that a recursive
// reader with options o reads, and the rule denying it.
func (c *checker) walkDenied(dir string, o walkOpts, n *int, depth int) (string, string) {
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
		if e.IsDir() {
			if e.Type()&fs.ModeSymlink == 0 && !matchAny(o.excludeDir, name) {
				if d, r := c.walkDenied(p, o, n, depth+1); d != "" {
					return d, r
				}
			}
			continue
		}
		if !o.reads(name) {
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
