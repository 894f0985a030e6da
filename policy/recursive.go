package policy

import (
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxWalk bounds the entries a recursive-read check looks at; a larger tree
// is left to what the program and the confinement do.
const maxWalk = 20000

// walkOpts say which entries a recursive reader skips.
type walkOpts struct {
	hidden    bool            // reads dot-files and dot-directories
	gitignore map[string]bool // names ignored by the root .gitignore (rg)
	// The program's own file filters, matched against base names: only
	// files matching one of include (when given) and none of exclude are
	// read; directories matching excludeDir are skipped.
	include, exclude, excludeDir []string
}

func (o *walkOpts) reads(name string) bool {
	if len(o.include) > 0 && !matchAny(o.include, name) {
		return false
	}
	return !matchAny(o.exclude, name)
}

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
// name, too.
func (c *checker) recursiveRead(p *parsed, dir, cwd string, o walkOpts) {
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
	n := 0
	if denied, rule := c.walkDenied(root, o, &n, 0); denied != "" {
		c.add(Violation{Reason: ReasonPathDenied, Resource: denied, Rule: rule,
			Message: fmt.Sprintf("%s reads every file below %s, including %s, which is denied by %s of this session's scope; name the files or directories to read", p.prog, dir, denied, rule)})
	}
}

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

func grepExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	recurse := p.has("-r") || p.prog == "rgrep"
	for _, v := range p.values("-d") {
		recurse = recurse || !v.known || v.s == "recurse"
	}
	if !recurse {
		return
	}
	patternGiven := false
	for _, o := range p.occ {
		if o.opt != nil && (o.opt.eff == effPattern || o.opt.eff == effPatternFile) {
			patternGiven = true
		}
	}
	o := walkOpts{hidden: true}
	for _, v := range p.values("--include") {
		o.include = append(o.include, v.s)
	}
	for _, v := range p.values("--exclude") {
		o.exclude = append(o.exclude, v.s)
	}
	for _, v := range p.values("--exclude-dir") {
		o.excludeDir = append(o.excludeDir, v.s)
	}
	for _, d := range recursiveOperands(p, !patternGiven) {
		c.recursiveRead(p, d, st.cwd, o)
	}
}

// rgTypes are the file globs of ripgrep's common types (-t/-T); an unknown
// type filters nothing here.
var rgTypes = map[string][]string{
	"go": {"*.go"}, "py": {"*.py", "*.pyi"}, "python": {"*.py", "*.pyi"}, "js": {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"ts": {"*.ts", "*.tsx", "*.mts", "*.cts"}, "rust": {"*.rs"}, "md": {"*.md", "*.markdown", "*.mdx"},
	"markdown": {"*.md", "*.markdown", "*.mdx"}, "json": {"*.json"}, "yaml": {"*.yml", "*.yaml"}, "toml": {"*.toml"},
	"c": {"*.c", "*.h"}, "cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"}, "java": {"*.java"},
	"sh": {"*.sh", "*.bash"}, "txt": {"*.txt"}, "html": {"*.html", "*.htm"}, "css": {"*.css", "*.scss"},
	"rb": {"*.rb"}, "ruby": {"*.rb"}, "php": {"*.php"}, "sql": {"*.sql"}, "proto": {"*.proto"}, "lua": {"*.lua"},
}

func rgExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if p.has("--files") || p.has("--type-list") {
		return // names only
	}
	patternGiven := false
	for _, o := range p.occ {
		if o.opt != nil && (o.opt.eff == effPattern || o.opt.eff == effPatternFile) {
			patternGiven = true
		}
	}
	u := 0
	for _, o := range p.occ {
		if o.id == "-u" {
			u++
		}
		if o.id == "-uu" {
			u += 2
		}
		if o.id == "-uuu" {
			u += 3
		}
	}
	o := walkOpts{hidden: p.has("--hidden") || u >= 2}
	for _, v := range append(p.values("-g"), p.values("--iglob")...) {
		if g, ok := strings.CutPrefix(v.s, "!"); ok {
			o.exclude = append(o.exclude, g)
			o.excludeDir = append(o.excludeDir, strings.TrimSuffix(g, "/**"))
		} else {
			o.include = append(o.include, v.s)
		}
	}
	for _, v := range p.values("-t") {
		o.include = append(o.include, rgTypes[v.s]...)
	}
	for _, v := range p.values("-T") {
		o.exclude = append(o.exclude, rgTypes[v.s]...)
	}
	if !p.has("--no-ignore") && u == 0 && st.cwd != "" {
		o.gitignore = c.gitignoreNames(st.cwd)
	}
	for _, d := range recursiveOperands(p, !patternGiven) {
		c.recursiveRead(p, d, st.cwd, o)
	}
}

func zipExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.args {
		if a.known && a.s == "-@" {
			c.danger(p, allowed, "-@", "-@", "reads the list of files from standard input, which cannot be checked")
		}
	}
	if !p.has("-r") {
		return
	}
	ops := p.operands()
	for i, a := range ops {
		if i > 0 && a.known {
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true})
		}
	}
}

func cpExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-r") && !p.has("-a") {
		return
	}
	ops := p.operands()
	for i, a := range ops {
		if i < len(ops)-1 && a.known {
			c.recursiveRead(p, a.s, st.cwd, walkOpts{hidden: true})
		}
	}
}

// gitPathsExtra: git grep over the working tree reads untracked files too,
// and REV:PATH names a file's content in a revision or the index.
func gitPathsExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) == 0 {
		return
	}
	if p.subPath[0] == "grep" && (p.has("--no-index") || p.has("--untracked")) {
		// The pattern is the first operand unless -e gives it; pathspecs
		// follow (all of . when none).
		ops := p.operands()
		if !p.has("-e") && len(ops) > 0 {
			ops = ops[1:]
		}
		dirs := []string{"."}
		if len(ops) > 0 {
			dirs = nil
			for _, a := range ops {
				if a.known {
					dirs = append(dirs, a.s)
				}
			}
		}
		for _, d := range dirs {
			c.recursiveRead(p, d, st.cwd, walkOpts{hidden: true})
		}
	}
	for _, a := range p.operands() {
		if !a.known || strings.Contains(a.s, "://") {
			continue
		}
		if i := strings.IndexByte(a.s, ':'); i >= 0 && i+1 < len(a.s) {
			c.operand(a.s[i+1:], AccessRead, st.cwd, "git "+p.subPath[0]+" "+a.s)
		}
	}
}
