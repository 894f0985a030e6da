package policy

import (
	"cmp"
	"fmt"

	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

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
	// filters are the program's own include and exclude globs, in the
	// order given: the last one matching an entry decides (grep's
	// --include/--exclude/--exclude-dir, rg's -g, -t and -T).
	filters []walkFilter
	// rooted says how the filters match, and what they override. false:
	// as grep's, fnmatch(3) against base names (a filter with a slash
	// matches nothing); a file no filter matches is read unless the first
	// file filter is an include. true: as rg's gitignore-style globs, a
	// glob with a slash (other than a trailing one) against the path
	// relative to the walk's root, others against base names, a trailing
	// slash for directories only; a match overrides hidden and ignored
	// names, and a file no filter matches is skipped when any include
	// filter exists.
	rooted bool
	// verb says what the program does to the files ("reads" when empty).
	verb string
	// matcher, when set, is how the filters match instead (tar, zip).
	matcher func(glob, rel string) bool
	// base is the walk's root as given, relative to the working directory
	// ("" for "." or an absolute one): rooted globs may match from there.
	base string
}

// walkFilter is one include or exclude glob of a recursive reader.
type walkFilter struct {
	glob        string
	include     bool
	files, dirs bool // the entries it applies to
	// typ marks rg's file types: an include of one does not override
	// hidden or ignored names, as -g does.
	typ bool
}

// verdict is what a program's filters say of an entry: +2 included over
// hidden and ignored names, +1 included, -1 excluded, 0 no filter
// matched. A glob the checker may not match as the
// program does (POSIX classes, [=c=], [.c.]) is taken to include
// everything and exclude nothing.
func (o *walkOpts) verdict(rel, name string, dir bool) int {
	for i := len(o.filters) - 1; i >= 0; i-- {
		f := o.filters[i]
		if dir && !f.dirs || !dir && !f.files {
			continue
		}
		if strings.Contains(f.glob, "[:") || strings.Contains(f.glob, "[=") || strings.Contains(f.glob, "[.") {
			if f.include {
				return includeVerdict(f)
			}
			continue
		}
		if !o.match(f, rel, name, dir) {
			continue
		}
		if f.include {
			return includeVerdict(f)
		}
		return -1
	}
	return 0
}

// includeVerdict is the verdict of an include filter that matched.
func includeVerdict(f walkFilter) int {
	if f.typ {
		return 1
	}
	return 2
}

// unmatchedFileSkipped reports whether a file no filter matched is skipped.
func (o *walkOpts) unmatchedFileSkipped() bool {
	for _, f := range o.filters {
		if f.files {
			if !o.rooted {
				return f.include // grep: the first file filter decides
			}
			if f.include {
				return true
			}
		}
	}
	return false
}

// match reports whether an entry matches a filter (see rooted). A rooted
// glob with a slash is tried against the path below the walk's root and
// below the working directory (rg's own choice depends on the search
// path): an include matches if either does, an exclusion only if both.
func (o *walkOpts) match(f walkFilter, rel, name string, dir bool) bool {
	if o.matcher != nil {
		return o.matcher(f.glob, rel)
	}
	if !o.rooted {
		return fnmatchName(f.glob, name)
	}
	g, dirOnly := strings.CutSuffix(f.glob, "/")
	if dirOnly && !dir {
		return false
	}
	if !strings.Contains(g, "/") {
		ok, _ := doublestar.Match(g, name)
		return ok
	}
	g = strings.TrimPrefix(g, "/")
	targets := []string{rel}
	if o.base != "" {
		targets = append(targets, o.base+"/"+rel)
	}
	any, all := false, true
	for _, t := range targets {
		ok, _ := doublestar.Match(g, t)
		any, all = any || ok, all && ok
	}
	if f.include {
		return any
	}
	return all
}

// wildMatch reports whether s matches a shell wildcard pattern in which *
// and ? match "/" too (GNU tar's exclusions, zip's -x and -i): * ? [class]
// [!class] [^class] and backslash escapes; a "[" without its "]" is
// literal.
func wildMatch(p, s string) bool {
	// The classic matcher with one backtrack point: since * matches any
	// run, only the last * seen needs retrying, so it takes O(len(p) *
	// len(s)) steps whatever the pattern.
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi, si = pi+1, si+1
				continue
			case '[':
				if end := classEnd(p[pi:]); end >= 0 {
					if classMatch(p[pi+1:pi+end], s[si]) {
						pi, si = pi+end+1, si+1
						continue
					}
				} else if s[si] == '[' {
					pi, si = pi+1, si+1
					continue
				}
			default:
				lit, n := c, 1
				if c == '\\' && pi+1 < len(p) {
					lit, n = p[pi+1], 2
				}
				if lit == s[si] {
					pi, si = pi+n, si+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last * take one more byte and retry from there.
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// classEnd is the index of the "]" closing the class p starts, or -1.
func classEnd(p string) int {
	i := 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++ // a leading ] is a member
	}
	for ; i < len(p); i++ {
		if p[i] == ']' {
			return i
		}
	}
	return -1
}

// classMatch reports whether byte b is in a class body ("!a-z").
func classMatch(class string, b byte) bool {
	negate := len(class) > 0 && (class[0] == '!' || class[0] == '^')
	if negate {
		class = class[1:]
	}
	in := false
	for i := 0; i < len(class); i++ {
		lo := class[i]
		if i+2 < len(class) && class[i+1] == '-' {
			if lo <= b && b <= class[i+2] {
				in = true
			}
			i += 2
			continue
		}
		if lo == b {
			in = true
		}
	}
	return in != negate
}

// tarMatcher matches GNU tar's --exclude patterns as it does by default
// (--no-anchored --wildcards --wildcards-match-slash): against the member
// name (the operand, then the path below it) or any part of it after a
// slash.
func tarMatcher(operand string) func(glob, rel string) bool {
	prefix := strings.TrimPrefix(filepath.Clean(operand), "/")
	if operand == "." || strings.HasPrefix(operand, "./") {
		prefix = "./" + strings.TrimPrefix(prefix, ".")
	}
	return func(glob, rel string) bool {
		name := strings.TrimSuffix(prefix, "/") + "/" + rel
		for {
			if wildMatch(glob, name) {
				return true
			}
			i := strings.IndexByte(name, '/')
			if i < 0 {
				return false
			}
			name = name[i+1:]
		}
	}
}

// zipMatcher matches zip's -x and -i patterns as it does: against the
// whole stored name (the operand without "./", then the path below it).
func zipMatcher(operand string) func(glob, rel string) bool {
	prefix := strings.TrimPrefix(filepath.Clean(operand), "/")
	if prefix == "." {
		prefix = ""
	}
	return func(glob, rel string) bool {
		if prefix != "" {
			rel = prefix + "/" + rel
		}
		return wildMatch(glob, rel)
	}
}

// fnmatchName reports whether a base name (no slash) matches an fnmatch(3)
// pattern: * ? [class] [!class] and backslash escapes. A malformed pattern
// matches nothing.
func fnmatchName(pattern, name string) bool {
	return !strings.Contains(pattern, "/") && wildMatch(pattern, name)
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
	if denied, rule, why := c.walkDenied(root, "", o, &n, 0); denied != "" {
		c.add(Violation{Reason: denyReason(rule, ReasonPathDenied), Resource: denied, Rule: rule,
			Message: fmt.Sprintf("%s %s every file below %s, including %s; name the files or directories to read", p.prog, cmp.Or(o.verb, "reads"), dir, why)})
	}
}

// walkDenied returns the first path below dir that a recursive reader
// with options o reads and the scope denies, and why: a denied file, a
// hard link (its other names cannot be checked), a symbolic link the
// reader follows out of the scope, or (where the caller runs the command)
// a tree too big to check.
func (c *checker) walkDenied(dir, rel string, o walkOpts, n *int, depth int) (path, rule, why string) {
	if depth > 64 {
		return "", "", ""
	}
	ents, err := c.env.fs().ReadDir(dir)
	if err != nil {
		return "", "", ""
	}
	confined := c.env.execution() == ExecutionConfined
	if o.rooted && !o.hidden && ignoreFileNegates(c.env.fs(), dir) {
		// A "!name" in an ignore file re-includes hidden files too: rg
		// then reads the hidden ones below here.
		o.hidden = true
	}
	for _, e := range ents {
		*n++
		if *n > maxWalk {
			if confined {
				return "", "", "" // left to the confinement
			}
			return dir, "recursive read", fmt.Sprintf("more than %d entries, too many to check one by one", maxWalk)
		}
		name := e.Name()
		p := dir + "/" + name
		if dir == "/" {
			p = "/" + name
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		isDir := e.IsDir()
		link := e.Type()&fs.ModeSymlink != 0
		if link {
			if !o.follow {
				continue // not followed: neither read nor descended
			}
			target, err := canonicalize(p, c.env.fs())
			if err != nil {
				continue
			}
			if vs := c.s.checkAbs(target, AccessRead, c.env, pathSource{what: p}); len(vs) > 0 {
				return p, vs[0].Rule, fmt.Sprintf("%s, which links to %s: %s", p, target, vs[0].Message)
			}
			fi, err := c.env.fs().Stat(target)
			if err != nil {
				continue
			}
			isDir = fi.IsDir()
		}
		v := o.verdict(r, name, isDir)
		if v < 0 {
			continue
		}
		if v < 2 {
			if !o.hidden && strings.HasPrefix(name, ".") {
				continue
			}
			if depth == 0 && (o.gitignore[name] || isDir && o.gitignore[name+"/"]) {
				continue
			}
			if v == 0 && !isDir && o.unmatchedFileSkipped() {
				continue
			}
		}
		if isDir {
			if d, rule, why := c.walkDenied(p, r, o, n, depth+1); d != "" {
				return d, rule, why
			}
			continue
		}
		lower := strings.ToLower(p)
		for i := range c.s.deny {
			if c.s.deny[i].match(p, lower) {
				return p, c.s.deny[i].rule, fmt.Sprintf("%s, which is denied by %s of %s", p, c.s.deny[i].rule, owner(c.s.deny[i].rule))
			}
		}
		if !link && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
					return p, "hard link", fmt.Sprintf("%s, which has %d hard links whose other names cannot be checked against the scope", p, st.Nlink)
				}
			}
		}
	}
	return "", "", ""
}

// gitignoreNames reads the plain names of a directory's .gitignore (no
// globs): enough for rg's and git's skipping of build output and secrets
// files. Anchored names (/name) are kept only when anchored says the walk
// starts in dir; names ending in "/" (directories only) are kept as
// "name/". A file that re-includes anything (!name) is not relied on.
func (c *checker) gitignoreNames(dir string, anchored bool) map[string]bool {
	file := filepath.Join(dir, ".gitignore")
	if fi, err := c.env.fs().Lstat(file); err != nil || !fi.Mode().IsRegular() {
		return nil // git does not follow a symbolic link to .gitignore
	}
	data, err := c.env.fs().ReadFile(file)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		// Trailing spaces are dropped (unless escaped); leading ones are
		// part of the name.
		line = strings.TrimRight(line, " \t\r")
		if strings.HasPrefix(line, "!") || strings.HasPrefix(line, "\ufeff") {
			return nil
		}
		if strings.HasPrefix(line, "/") && !anchored {
			continue
		}
		line = strings.TrimPrefix(line, "/")
		key := line
		if name, ok := strings.CutSuffix(line, "/"); ok {
			line, key = name, name+"/" // directories only: kept as "name/"
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.ContainsAny(line, "*?[/\\ ") {
			continue
		}
		out[key] = true
	}
	return out
}

// ignoreFileNegates reports whether one of dir's ignore files (.gitignore,
// .ignore, .rgignore) has a "!" line.
func ignoreFileNegates(fsys FS, dir string) bool {
	for _, f := range []string{".gitignore", ".ignore", ".rgignore"} {
		if data, err := fsys.ReadFile(filepath.Join(dir, f)); err == nil && (strings.HasPrefix(string(data), "!") || strings.Contains(string(data), "\n!")) {
			return true
		}
	}
	return false
}

// rgIgnoredNames is what rg skips by .gitignore at the top of a walk of
// dir: the plain names of the .gitignore of the repository dir is in (rg
// applies .gitignore only inside one). Not relied on when an ignore file
// on the way from the repository's top to dir (.gitignore, .ignore,
// .rgignore) re-includes anything.
func (c *checker) rgIgnoredNames(dir, cwd string) map[string]bool {
	if c.wroteIgnoreFile {
		return nil // the command writes an ignore file before or after
	}
	abs, err := absPath(dir, cwd, c.env)
	if err != nil {
		return nil
	}
	fsys := c.env.fs()
	root := filepath.Clean(abs)
	for d := root; ; {
		for _, f := range []string{".gitignore", ".ignore", ".rgignore"} {
			if data, err := fsys.ReadFile(filepath.Join(d, f)); err == nil && (f != ".gitignore" || strings.Contains("\n"+string(data), "\n!")) {
				return nil // .ignore and .rgignore are not read; a negation re-includes
			}
		}
		if _, err := fsys.Lstat(filepath.Join(d, ".git")); err == nil {
			return c.gitignoreNames(d, d == root)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
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
