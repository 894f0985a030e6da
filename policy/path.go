package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxLinks bounds symlink resolution, as the kernel's ELOOP does.
const maxLinks = 40

// errLoop is returned for a path with too many symbolic links to follow.
var errLoop = errors.New("too many levels of symbolic links")

// canonicalize resolves symlinks in an absolute, cleaned path on the longest
// existing prefix; a non-existing tail is kept as written. It never follows
// more than maxLinks links.
func canonicalize(path string, fsys FS) (string, error) {
	p, _, err := canonicalizeInfo(path, fsys)
	return p, err
}

// canonicalizeInfo is canonicalize, also returning the information of the
// resolved path when it exists (nil otherwise).
func canonicalizeInfo(path string, fsys FS) (string, fs.FileInfo, error) {
	if !filepath.IsAbs(path) {
		return "", nil, fmt.Errorf("not absolute: %q", path)
	}
	if r, ok := fsys.(noSymlinkResolver); ok {
		clean, info, err := r.resolveNoSymlinks(path)
		if err == nil {
			return clean, info, nil
		}
		if clean, ok := missingLast(r, path, err); ok {
			return clean, nil, nil
		}
	}
	var last fs.FileInfo
	links := 0
	resolved := "/"
	rest := path[1:]
	// While every component so far was a plain name and no link was
	// followed, resolved is a prefix of path, and so is the next one.
	prefix := true
	for rest != "" {
		start := len(path) - len(rest)
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			prefix = false
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			last = nil
			prefix = false
			continue
		}
		var next string
		switch {
		case prefix:
			next = path[:start+len(comp)]
		case resolved == "/":
			next = "/" + comp
		default:
			next = resolved + "/" + comp
		}
		fi, err := fsys.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// The tail does not exist: keep it, cleaned.
				if prefix {
					return filepath.Clean(path), nil, nil
				}
				return filepath.Clean(next + "/" + rest), nil, nil
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			last = fi
			continue
		}
		last = nil
		prefix = false
		links++
		if links > maxLinks {
			return "", nil, errLoop
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = strings.TrimPrefix(target, "/") + "/" + rest
	}
	if last == nil && resolved != "/" {
		// The path ended in ".." or at a link target that was not looked at.
		fi, err := fsys.Lstat(resolved)
		if err == nil {
			last = fi
		}
	}
	return resolved, last, nil
}

// noSymlinkResolver is implemented by filesystems that can tell in one step
// that a path exists with no symbolic link on the way (OSFS on Linux). The
// error is one that wraps fs.ErrNotExist only when a component is missing;
// a link on the way is another error.
type noSymlinkResolver interface {
	resolveNoSymlinks(path string) (clean string, info fs.FileInfo, err error)
}

// missingLast answers, after the resolver found path missing, whether only
// its last component is: then the parent resolves with no link on the way
// and path cleaned is canonical (a file a redirection or a tool creates).
// Paths with a ".." component are left to the walk, where a link before
// the ".." would change what it names.
func missingLast(r noSymlinkResolver, path string, err error) (string, bool) {
	if !errors.Is(err, fs.ErrNotExist) || hasDotDot(path) {
		return "", false
	}
	clean := filepath.Clean(path)
	parent := filepath.Dir(clean)
	if parent == clean {
		return "", false
	}
	_, info, perr := r.resolveNoSymlinks(parent)
	if perr != nil || !info.IsDir() {
		return "", false
	}
	return clean, true
}

// hasDotDot reports whether a slash-separated path has a ".." component.
func hasDotDot(path string) bool {
	for rest := path; rest != ""; {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		if comp == ".." {
			return true
		}
	}
	return false
}

// pathSource says where a checked path came from, for rules and messages.
type pathSource struct {
	redirect bool   // a shell redirection target or source
	what     string // e.g. "argument of cat"; empty for file tools
}

// absPath turns a path of a call into an absolute one: ~ expanded,
// relative paths joined to cwd. It is not cleaned (see checkAbs).
func absPath(p, cwd string, env Env) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(p, 0):
		return "", errors.New("path contains a NUL byte")
	case !utf8.ValidString(p):
		return "", errors.New("path is not valid UTF-8")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if env.Home == "" {
			return "", errors.New("~ cannot be expanded: no home directory is known")
		}
		p = env.Home + p[1:]
	} else if strings.HasPrefix(p, "~") {
		name, tail, _ := strings.Cut(p[1:], "/")
		home, ok := "", false
		if env.HomeOf != nil {
			home, ok = env.HomeOf(name)
		}
		if !ok {
			return "", fmt.Errorf("~%s cannot be expanded", name)
		}
		p = home + "/" + tail
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return "", errors.New("relative path and no working directory")
		}
		p = cwd + "/" + p
	}
	// Not cleaned: "link/.." is the parent of the link's target for the
	// kernel, so ".." is resolved with the symlinks (canonicalize).
	return p, nil
}

// checkPath applies the path rules of docs/design.md to one access. cwd must already
// be absolute and checked.
func (s *Scope) checkPath(p string, access Access, cwd string, env Env, src pathSource) []Violation {
	abs, err := absPath(p, cwd, env)
	if err != nil {
		return []Violation{{Reason: ReasonInvalidArguments, Resource: p, Message: "path " + quoteArg(p) + ": " + err.Error()}}
	}
	return s.checkAbs(abs, access, env, src)
}

// checkAbs checks an absolute path: its cleaned spelling (the literal path)
// and where the kernel would really reach (symlinks and ".." resolved
// component by component) must both pass.
func (s *Scope) checkAbs(raw string, access Access, env Env, src pathSource) []Violation {
	_, vs := s.checkResolved(raw, access, env, src)
	return vs
}

// checkResolved is checkAbs, also returning where the path really leads.
func (s *Scope) checkResolved(raw string, access Access, env Env, src pathSource) (string, []Violation) {
	fsys := env.fs()
	abs := filepath.Clean(raw)
	resolved, info, err := canonicalizeInfo(raw, fsys)
	if err != nil {
		return abs, []Violation{{Reason: ReasonPathNotInScope, Resource: abs,
			Message: fmt.Sprintf("cannot resolve %s: %v", abs, err)}}
	}
	return resolved, s.checkCanonical(abs, resolved, info, access, env, src)
}

// checkCanonical applies the rules to a path's cleaned spelling and its
// resolution (info: the resolved file's, when it exists).
func (s *Scope) checkCanonical(abs, resolved string, info fs.FileInfo, access Access, env Env, src pathSource) []Violation {
	notInScope := ReasonPathNotInScope
	if src.redirect {
		notInScope = ReasonRedirectNotInScope
	}
	absLower, resolvedLower := strings.ToLower(abs), strings.ToLower(resolved)
	// Deny wins, on the literal and on the resolved path.
	for i := range s.deny {
		g := &s.deny[i]
		if g.match(abs, absLower) || g.match(resolved, resolvedLower) {
			if g.managed {
				return []Violation{{Reason: ReasonManaged, Resource: abs, Rule: g.rule,
					Message: fmt.Sprintf("%s%s is denied by %s of the machine's managed policy; no scope change can allow it", describe(src), shown(abs, resolved), g.rule)}}
			}
			return []Violation{{Reason: ReasonPathDenied, Resource: abs, Rule: g.rule,
				Message: fmt.Sprintf("%s%s is denied by %s of this session's scope", describe(src), shown(abs, resolved), g.rule)}}
		}
	}
	if vs := s.managed.ceilingViolation(abs, resolved, access, src); vs != nil {
		return vs
	}
	if access == AccessWrite {
		for _, root := range env.Protected {
			if within(abs, root) || within(resolved, root) {
				return []Violation{{Reason: notInScope, Resource: abs, Rule: "protected " + root,
					Message: fmt.Sprintf("%s%s is inside %s, which tool calls may never write (sessions and scopegate config)", describe(src), shown(abs, resolved), root)}}
			}
		}
		if f := cmp.Or(gitRunFile(abs), gitRunFile(resolved)); f != "" {
			return []Violation{{Reason: ReasonPathDenied, Resource: abs, Rule: "files git runs",
				Message: fmt.Sprintf("%s%s is a file whose content git runs (%s); tool calls may never write it, so that a later git command cannot run planted code", describe(src), shown(abs, resolved), f)}}
		}
		if !inAny(s.write, abs) || !inAny(s.write, resolved) {
			ws := widenPath(WidenWrite, abs, resolved, info, func(p string) bool { return inAny(s.write, p) })
			return []Violation{{Reason: notInScope, Resource: abs, Rule: "paths.write", Widen: ws,
				Message: fmt.Sprintf("%swriting %s is not in paths.write of this session's scope; the user can widen it with: %s", describe(src), shown(abs, resolved), ExpandHint(ws...))}}
		}
	} else {
		if !(inAny(s.read, abs) || inAny(s.write, abs)) || !(inAny(s.read, resolved) || inAny(s.write, resolved)) {
			ws := widenPath(WidenRead, abs, resolved, info, func(p string) bool { return inAny(s.read, p) || inAny(s.write, p) })
			return []Violation{{Reason: notInScope, Resource: abs, Rule: "paths.read", Widen: ws,
				Message: fmt.Sprintf("%sreading %s is not in paths.read of this session's scope; the user can widen it with: %s", describe(src), shown(abs, resolved), ExpandHint(ws...))}}
		}
	}
	// A regular file with more than one hard link may have a name outside
	// the scope: treat it as outside.
	if info != nil && info.Mode().IsRegular() {
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			return []Violation{{Reason: notInScope, Resource: abs, Rule: "hard link",
				Message: fmt.Sprintf("%s%s has %d hard links; its other names cannot be checked against the scope", describe(src), abs, st.Nlink)}}
		}
	}
	return nil
}

// globsAllowWrite reports whether the scope's path patterns let a call
// write abs (on its spelling and its resolution): what a program run by a
// call may write, whatever the invariants that hold for file tools.
func (s *Scope) globsAllowWrite(abs string, env Env) bool {
	resolved, err := canonicalize(abs, env.fs())
	if err != nil {
		return false
	}
	lower, resolvedLower := strings.ToLower(abs), strings.ToLower(resolved)
	for i := range s.deny {
		if s.deny[i].match(abs, lower) || s.deny[i].match(resolved, resolvedLower) {
			return false
		}
	}
	for _, root := range env.Protected {
		if within(abs, root) || within(resolved, root) {
			return false
		}
	}
	return s.managed.allowsWrite(abs, resolved) && inAny(s.write, abs) && inAny(s.write, resolved)
}

// gitRunFile says what p is when it is a file of a repository whose content
// git runs or follows (gitrepository-layout(5), githooks(5),
// git-config(1)): the configuration (config, config.worktree, a
// submodule's or linked worktree's), a hook, or a .git file that points a
// working tree at a repository; "" otherwise.
func gitRunFile(p string) string {
	if !hasComponent(p, ".git") {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if part != ".git" {
			continue
		}
		rest := parts[i+1:]
		if len(rest) == 0 {
			return "the repository pointer .git"
		}
		// Submodules' repositories (.git/modules/a/b) and linked worktrees
		// (.git/worktrees/x) nest: their own config and hooks count too.
		for len(rest) > 0 {
			switch rest[0] {
			case "config", "config.worktree", "commondir":
				if len(rest) == 1 {
					return "its configuration"
				}
				return ""
			case "hooks":
				return "a hook"
			case "modules", "worktrees":
				if len(rest) < 2 {
					return ""
				}
				rest = rest[2:]
				for len(rest) > 1 && rest[0] != "config" && rest[0] != "hooks" && rest[0] != "config.worktree" {
					rest = rest[1:] // nested submodule names (modules/a/b/config)
				}
			default:
				return ""
			}
		}
	}
	return ""
}

// deniedTail refuses a path known only at run time whose literal end
// (suffix, from its first "/") is denied whatever comes before it:
// "$(dirname x)/.env" is denied by **/.env wherever the substitution
// leads. It is tried after two made-up directories of different depths.
func (s *Scope) deniedTail(suffix, what string) []Violation {
	i := strings.IndexByte(suffix, '/')
	if i < 0 {
		return nil
	}
	tail := suffix[i:]
	for i := range s.deny {
		g := &s.deny[i]
		all := true
		for _, dir := range []string{"/unknown-a", "/unknown-a/unknown-b"} {
			p := filepath.Clean(dir + tail)
			all = all && g.match(p, strings.ToLower(p))
		}
		if all {
			reason := ReasonPathDenied
			if g.managed {
				reason = ReasonManaged
			}
			return []Violation{{Reason: reason, Resource: what, Rule: g.rule,
				Message: fmt.Sprintf("%s ends in %s, which %s of this session's scope denies whatever the part known only at run time before it is", what, tail, g.rule)}}
		}
	}
	return nil
}

// inAny reports whether p matches one of the (case-sensitive) globs.
func inAny(gs []glob, p string) bool {
	for i := range gs {
		if gs[i].match(p, p) {
			return true
		}
	}
	return false
}

// childPath joins a cleaned directory and a name that is one plain
// component: what filepath.Join gives, without cleaning again.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// within reports whether p is root or below it, by path segments.
func within(p, root string) bool {
	if root == "/" {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// describe says where a checked path came from (an operand, a redirection).
func describe(src pathSource) string {
	if src.what == "" {
		return ""
	}
	return src.what + ": "
}

// shown is a path as a message shows it: with what it resolves to, when
// that differs.
func shown(abs, resolved string) string {
	if abs == resolved {
		return abs
	}
	return abs + " (resolves to " + resolved + ")"
}

// ExpandCommand starts every fix hint of a denial message. Entry points that
// know the session branch of a decision insert its selector after it.
const ExpandCommand = "scopegate scope expand"

// widenPath is the widening a denial proposes: the narrowest patterns that
// let the call's path through, for each of its spelling and its resolution
// that the scope does not yet cover (info: the resolved file's, when it
// exists).
func widenPath(flag WidenFlag, abs, resolved string, info fs.FileInfo, covered func(string) bool) []Widening {
	var ws []Widening
	if !covered(abs) && abs != resolved {
		ws = append(ws, Widening{Flag: flag, Value: narrowest(abs, nil)})
	}
	if !covered(resolved) {
		ws = append(ws, Widening{Flag: flag, Value: narrowest(resolved, info)})
	}
	return ws
}

// narrowest is the narrowest pattern that covers p: a directory and what is
// below it (the tools that take a directory read below it), else the file
// itself.
func narrowest(p string, info fs.FileInfo) string {
	if info != nil && info.IsDir() {
		if p == "/" {
			return "/**"
		}
		return EscapeGlob(p) + "/**"
	}
	return EscapeGlob(p)
}

// ShellQuote quotes s for a POSIX shell if it holds anything but safe
// characters, as the fix hints of denial messages do.
func ShellQuote(s string) string { return quoteArg(s) }

// quoteArg quotes s for a message if it holds anything but safe characters.
func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
