package exec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// What a call's private view shows, and which trees the deny walk covers.
//
// One rule for every scope: what the deny globs match below every write
// root and every read root outside the system directories is masked, and
// the system directories keep the host-secret list (hostSecrets).
//
// A scope that reads the whole system (a read root "/", the coding and
// research profiles, observe mode) cannot have its read root walked. Its
// view is narrower than the decision instead: every top-level directory
// that is not a system directory (/home, /root, /srv, /mnt, /work…), the
// user's files below /var (userVarDirs) and the home directory wherever it
// is are each replaced by an empty read-only tmpfs, into which only these
// are bound back, each walked whole and masked like any root: the write
// roots, the read roots narrower than "/", the session's project root, the
// unix sockets the scope names, the configuration programs read in the
// home directory (homeConfig), the
// toolchain roots of the trusted PATH's directories in those places, the
// call's temporary directory; and for each program, its own toolchain
// root, its working directory and the existing paths its arguments name
// (programRules). Everything else there (other projects, browser
// profiles, keyrings, mail) is out of the view, whatever deny globs say.

// systemTops are the top-level directories a view leaves as the host has
// them (with the host's secrets masked): the system's programs, libraries
// and configuration, and the kernel's file systems. /tmp is the view's
// own; /run is the host's runtime state.
func systemTops() []string {
	return []string{"usr", "etc", "opt", "var", "boot", "efi", "nix", "snap", "gnu",
		"bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "sys", "dev", "run", "tmp"}
}

// userVarDirs are the directories below /var that hold users' files, not
// the system's: hidden like the home directories. The mailboxes are each
// user's own file.
func userVarDirs() []string {
	return []string{"/var/tmp", "/var/home", "/var/www", "/var/mail", "/var/spool/mail"}
}

// homeConfig are the files and directories of the home directory (globs)
// that programs read to behave as they do for the user: git's and Go's
// configuration, the global ignore files, Python's user site-packages. No
// credential store: those stay out of a view of a scope reading the whole
// system.
func homeConfig() []string {
	return []string{".gitconfig", ".config/git", ".gitignore", ".gitignore_global", ".config/go", ".local/lib/python3*"}
}

// systemDir reports whether p lies in a system directory (systemTops,
// /tmp aside) outside userVarDirs: what the walk leaves to the
// host-secret list.
func systemDir(p string) bool {
	if slices.ContainsFunc(userVarDirs(), func(d string) bool { return within(p, d) }) {
		return false
	}
	for _, t := range systemTops() {
		if t != "tmp" && within(p, "/"+t) {
			return true
		}
	}
	return false
}

// viewPlan is what a call's view shows and which trees its walk covers.
type viewPlan struct {
	// walk are the trees walked whole; shallow the toolchain roots,
	// walked toolchainDepth levels deep.
	walk, shallow []string
	// hide are the directories replaced by an empty read-only tmpfs,
	// bind what is bound back into them, links the symbolic links
	// recreated there on the way to them.
	hide, bind []string
	links      []viewLink
	// carry are trees below /tmp to carry into the private one, besides
	// the scope's roots.
	carry []string
	// linksToo: a program following links out of a walked tree meets
	// only masked denied files (or none it may read).
	linksToo bool
}

// broad reports whether the scope reads (or, in observe mode, may reach)
// the whole system.
func (r *Runner) broad() bool {
	return r.opts.Broad || slices.Contains(r.readRts, "/") || slices.Contains(r.writeRts, "/")
}

// plan returns the view plan of a call whose temporary directory is tmp.
func (r *Runner) plan(tmp string) viewPlan {
	if !r.broad() {
		p := viewPlan{linksToo: true}
		p.walk = append(p.walk, r.writeRts...)
		for _, root := range r.readRts {
			if !systemDir(root) {
				p.walk = append(p.walk, root)
				continue
			}
			// Landlock lets programs read it, masks do not cover it.
			p.linksToo = false
			for _, d := range userVarDirs() {
				if within(d, root) {
					p.walk = append(p.walk, d)
				}
			}
		}
		p.walk = outermost(p.walk)
		return p
	}
	hide := r.hiddenDirs()
	var cands []string
	for _, w := range r.writeRts {
		if w != "/" {
			cands = append(cands, w)
		}
	}
	for _, root := range r.readRts {
		if root != "/" && !systemDir(root) {
			cands = append(cands, root)
		}
	}
	// What the scope shows whole is not hidden below it.
	hide = slices.DeleteFunc(hide, func(h string) bool {
		return slices.ContainsFunc(cands, func(c string) bool { return within(h, c) })
	})
	if r.opts.ProjectRoot != "" {
		cands = append(cands, filepath.Clean(r.opts.ProjectRoot))
	}
	// The unix sockets the scope names (sockets.go), where they are.
	named, _ := r.namedSockets()
	for _, sock := range named {
		cands = append(cands, sock.path)
	}
	if home := r.home(); home != "" {
		for _, g := range homeConfig() {
			m, _ := filepath.Glob(filepath.Join(home, g))
			cands = append(cands, m...)
		}
	}
	inHide := func(p string) bool { return slices.ContainsFunc(hide, func(h string) bool { return within(p, h) }) }
	var tools []string
	for _, d := range r.opts.Checker.TrustedPath() {
		if filepath.IsAbs(d) && inHide(filepath.Clean(d)) {
			tools = append(tools, r.toolchainOf(filepath.Join(d, "_"), hide)...)
		}
	}
	p := viewPlan{hide: hide}
	p.add(cands, inHide, false)
	p.add(tools, inHide, true)
	if inHide(tmp) {
		// The call's own directory, made empty for it: nothing to walk.
		p.bind = outermost(append(p.bind, tmp))
	}
	return p
}

// add puts trees into the plan: walked (whole, or as toolchain roots
// when shallow), and bound back (with the links on the way) where hidden,
// carried where below /tmp. Trees that do not exist are left out, and so
// are toolchain roots inside a tree walked whole.
func (p *viewPlan) add(trees []string, inHide func(string) bool, shallow bool) {
	for _, c := range trees {
		final, links, ok := resolveBind(c, inHide)
		if !ok {
			continue
		}
		for _, l := range links {
			if !slices.Contains(p.links, l) {
				p.links = append(p.links, l)
			}
		}
		switch {
		case inHide(final):
			p.bind = append(p.bind, final)
		case within(final, privateTmp) && final != privateTmp:
			p.carry = append(p.carry, final)
		}
		if shallow {
			p.shallow = append(p.shallow, final)
		} else {
			p.walk = append(p.walk, final)
		}
	}
	p.walk, p.bind, p.carry = outermost(p.walk), outermost(p.bind), outermost(p.carry)
	p.shallow = slices.DeleteFunc(outermost(p.shallow), func(t string) bool {
		return slices.ContainsFunc(p.walk, func(w string) bool { return within(t, w) })
	})
}

// toolchainDepth is how deep a toolchain root is walked: toolchains are
// installed software, like the system directories, and keep what deny
// globs name (credentials: ~/.cargo/credentials.toml) near the top; deeper
// down they hold test keys and certificate bundles (a *.pem) and packages
// named like a denied directory (runtime) that their programs need.
const toolchainDepth = 2

// walk walks a plan's trees: whole, and the toolchain roots
// toolchainDepth levels deep.
func (r *Runner) walk(ctx context.Context, p viewPlan) ([]treeResult, func()) {
	ix := r.host.index(r.deny)
	now := time.Now()
	whole, save := ix.walkTrees(ctx, p.walk, 0, r.opts.IndexDir, now)
	if len(p.shallow) == 0 {
		return whole, save
	}
	tools, saveTools := ix.walkTrees(ctx, p.shallow, toolchainDepth, r.opts.IndexDir, now)
	return append(whole, tools...), func() { save(); saveTools() }
}

// home is the home directory with its links resolved ("" when unknown).
func (r *Runner) home() string {
	if r.opts.Home == "" {
		return ""
	}
	h, err := filepath.EvalSymlinks(r.opts.Home)
	if err != nil {
		return filepath.Clean(r.opts.Home)
	}
	return h
}

// hiddenDirs are the directories a view of a scope reading the whole
// system replaces by an empty tmpfs: the top-level directories that are
// not system directories, userVarDirs, and the home directory wherever it
// is (below /tmp it is the private /tmp's business).
func (r *Runner) hiddenDirs() []string {
	var out []string
	ents, _ := os.ReadDir("/")
	for _, e := range ents {
		if e.IsDir() && !slices.Contains(systemTops(), e.Name()) {
			out = append(out, "/"+e.Name())
		}
	}
	for _, d := range userVarDirs() {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if home := r.home(); home != "" && home != "/" && !within(home, privateTmp) {
		if fi, err := os.Lstat(home); err == nil && fi.IsDir() {
			out = append(out, home)
		}
	}
	return outermost(out)
}

// toolchainOf returns the toolchain roots of a program found in a hidden
// directory: below the home directory (or another user's, /root,
// /home/NAME), toolchainRoots; elsewhere the directory holding the
// program's bin directory. A program right in such a directory is its
// own root.
func (r *Runner) toolchainOf(program string, hide []string) []string {
	base := r.home()
	if base == "" || !within(program, base) {
		i := slices.IndexFunc(hide, func(h string) bool { return within(program, h) })
		if i < 0 {
			return nil
		}
		base = hide[i]
		if base == "/home" || base == "/var/home" || (base == filepath.Dir(r.home()) && base != "/") {
			// The directory of the homes: the home is one level down.
			rel, _ := filepath.Rel(base, program)
			first, _, _ := strings.Cut(rel, "/")
			base = filepath.Join(base, first)
		}
	}
	if roots := toolchainRoots(base, program); len(roots) > 0 {
		return roots
	}
	if filepath.Dir(program) == base {
		return []string{program}
	}
	return []string{filepath.Dir(program)}
}

// maxLinks bounds the links resolveBind follows.
const maxLinks = 40

// resolveBind resolves the links of p (absolute, clean) one by one as the
// kernel would, and returns where it leads, the links met in hidden
// directories (inHide), and whether it exists.
func resolveBind(p string, inHide func(string) bool) (string, []viewLink, bool) {
	var links []viewLink
	for range maxLinks {
		cur, rest, linked := "/", strings.TrimPrefix(p, "/"), false
		for rest != "" {
			var c string
			c, rest, _ = strings.Cut(rest, "/")
			next := filepath.Join(cur, c)
			fi, err := os.Lstat(next)
			if err != nil {
				return "", nil, false
			}
			if fi.Mode()&os.ModeSymlink == 0 {
				cur = next
				continue
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", nil, false
			}
			if inHide(next) {
				links = append(links, viewLink{Path: next, Target: target})
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			p, linked = filepath.Join(target, rest), true
			break
		}
		if !linked {
			return cur, links, true
		}
	}
	return "", nil, false
}

// inHide reports whether p lies in a directory the view hides.
func (v *view) inHide(p string) bool {
	return slices.ContainsFunc(v.Hide, func(h string) bool { return within(p, h) })
}

// shows reports whether a tree bound back into the hidden directories
// holds p.
func (v *view) shows(p string) bool {
	return slices.ContainsFunc(v.Bind, func(b string) bool { return within(p, b) })
}
