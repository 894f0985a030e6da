package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scopegate/scopegate/internal/watch"
)

// hostSecrets are the host files masked in every private view whatever
// the scope says: password and group hashes, ssh host keys, sudo rules,
// TLS and Kerberos keys, stored network and VPN secrets, the terminals. Globs are
// expanded when a call starts; a directory is masked whole.
func hostSecrets() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/var/backups/*shadow*", // Debian's daily copies: shadow.bak, gshadow.bak
		"/etc/security/opasswd",
		"/etc/ssh/*_key", "/etc/ssh/*_key-cert.pub",
		"/etc/sudoers", "/etc/sudoers.d",
		"/etc/ssl/private", "/etc/pki/tls/private",
		"/etc/krb5.keytab",
		"/etc/NetworkManager/system-connections", "/etc/wireguard",
		"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/ipsec.secrets",
		"/etc/letsencrypt/archive", "/etc/letsencrypt/keys",
		"/etc/docker/key.json",
		// The user's other terminals and the console: what is typed
		// there (a password) is read by any program that may read them,
		// which a scope reading /** may. No program of a view can
		// open /dev/ptmx anyway (Landlock).
		"/dev/pts", "/dev/console",
	}
}

// HostSecretPaths are the host's secret files and directories that exist:
// masked in every private view whatever the scope says.
func HostSecretPaths() []string { return hostSecretPaths() }

// hostSecretPaths expands [hostSecrets] to the paths that exist.
func hostSecretPaths() []string {
	var out []string
	for _, p := range hostSecrets() {
		if !strings.ContainsAny(p, "*?[") {
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
			continue
		}
		m, _ := filepath.Glob(p)
		out = append(out, m...)
	}
	return out
}

// denyMatcher matches paths against the deny globs as the walk needs it.
// Patterns are lower case and matched against lower-case paths (deny
// ignores case).
type denyMatcher struct {
	pats []denyPattern
}

// denyPattern is one deny glob, compiled for the walk.
type denyPattern struct {
	pat string
	// base is the literal directory an absolute pattern starts with;
	// empty for patterns that match anywhere.
	base string
	// tail, for "**/a/b" and "**/a/b/**" (no other "**", no braces), are
	// the segments the last path components must match. The walk prunes
	// at a match, so the trailing "/**" needs no check below it.
	tail []segment
}

// segment is one path segment of a pattern: a literal, a literal prefix
// or suffix with one "*", or another glob.
type segment struct {
	kind segmentKind
	s    string
}

type segmentKind uint8

const (
	segLiteral segmentKind = iota
	segPrefix              // "abc*"
	segSuffix              // "*abc"
	segGlob
)

func compileSegment(seg string) segment {
	if !strings.ContainsAny(seg, `*?[\{`) {
		return segment{segLiteral, seg}
	}
	if strings.Count(seg, "*") == 1 && !strings.ContainsAny(seg, `?[\{`) {
		if rest, ok := strings.CutSuffix(seg, "*"); ok {
			return segment{segPrefix, rest}
		}
		if rest, ok := strings.CutPrefix(seg, "*"); ok {
			return segment{segSuffix, rest}
		}
	}
	return segment{segGlob, seg}
}

// match reports whether a name (one path component) matches.
func (g segment) match(name string) bool {
	switch g.kind {
	case segLiteral:
		return name == g.s
	case segPrefix:
		return strings.HasPrefix(name, g.s)
	case segSuffix:
		return strings.HasSuffix(name, g.s)
	}
	ok, _ := doublestar.Match(g.s, name)
	return ok
}

func compileDeny(pats []string) *denyMatcher {
	m := &denyMatcher{pats: make([]denyPattern, 0, len(pats))}
	for _, p := range pats {
		d := denyPattern{pat: p}
		if rest, ok := strings.CutPrefix(p, "**/"); ok {
			rest = strings.TrimSuffix(rest, "/**")
			if rest != "" && !strings.Contains(rest, "**") && !strings.ContainsAny(rest, `\{}`) {
				for _, seg := range strings.Split(rest, "/") {
					d.tail = append(d.tail, compileSegment(seg))
				}
			}
		} else if strings.HasPrefix(p, "/") {
			base, _ := doublestar.SplitPattern(p)
			if !strings.ContainsAny(base, `\{}[*?`) {
				d.base = filepath.Clean(base)
			}
		}
		m.pats = append(m.pats, d)
	}
	return m
}

// full reports whether lower (a lower-case absolute path) matches a glob.
func (m *denyMatcher) full(lower string) bool {
	for i := range m.pats {
		d := &m.pats[i]
		if d.base != "" && !within(lower, d.base) {
			continue
		}
		if ok, _ := doublestar.Match(d.pat, lower); ok {
			return true
		}
	}
	return false
}

// fullFor returns the globs without a tail that may match an entry of the
// directory lowerDir: entry matches those against the whole path.
func (m *denyMatcher) fullFor(lowerDir string) []*denyPattern {
	var out []*denyPattern
	for i := range m.pats {
		d := &m.pats[i]
		if d.tail == nil && (d.base == "" || within(lowerDir, d.base) || within(d.base, lowerDir)) {
			out = append(out, d)
		}
	}
	return out
}

// entry reports whether the entry lowerName of the directory lowerDir
// matches, given that no directory between the walked tree's root and it
// matched; fulls is fullFor(lowerDir).
func (m *denyMatcher) entry(lowerDir, lowerName string, fulls []*denyPattern) bool {
	for i := range m.pats {
		if d := &m.pats[i]; d.tail != nil && d.tailMatch(lowerDir, lowerName) {
			return true
		}
	}
	if len(fulls) == 0 {
		return false
	}
	path := lowerDir + "/" + lowerName
	if lowerDir == "/" {
		path = "/" + lowerName
	}
	for _, d := range fulls {
		if d.base != "" && !within(path, d.base) {
			continue
		}
		if ok, _ := doublestar.Match(d.pat, path); ok {
			return true
		}
	}
	return false
}

// tailMatch reports whether dir/name ends with the pattern's tail.
func (d *denyPattern) tailMatch(dir, name string) bool {
	last := len(d.tail) - 1
	if !d.tail[last].match(name) {
		return false
	}
	p := dir
	for i := last - 1; i >= 0; i-- {
		j := strings.LastIndexByte(p, '/')
		if j < 0 || !d.tail[i].match(p[j+1:]) {
			return false
		}
		p = p[:j]
	}
	return true
}

// outermost returns the roots that are not below another, sorted.
func outermost(roots []string) []string {
	roots = slices.Compact(slices.Sorted(slices.Values(roots)))
	var out []string
	for _, r := range roots {
		if len(out) > 0 && within(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Host is what Runners learn about this host and share: whether the
// helper can enter namespaces (probed once) and the deny walk's index
// (denyindex.go). The zero value is ready; it is safe for concurrent use.
// A process makes one and hands it to every Runner.
type Host struct {
	// ProbeCache, when set, is a file that remembers a successful probe
	// across processes (see namespacesOK); set it before first use.
	ProbeCache string
	// Dirs, when set, watches the directories the deny walk looks at, so
	// that an unchanged one costs no system call (denyindex.go); a
	// long-running process sets it before first use.
	Dirs *watch.Dirs

	probeOnce sync.Once
	probeErr  error
	probeDone atomic.Bool
	// probeCached says that the probe's answer came from ProbeCache.
	probeCached atomic.Bool

	mu      sync.Mutex
	indexes map[string]*denyIndex
}

// maskError says which tree's masks could not be found, and why.
type maskError struct {
	tree string
	err  error
}

func (e *maskError) Error() string {
	what := "run it with --confine best-effort to let programs run with these files unmasked, or narrow the scope's roots"
	if errors.Is(e.err, context.DeadlineExceeded) || errors.Is(e.err, context.Canceled) {
		what = "what the walk found is kept: run the call again, or give it a longer timeout_ms"
	}
	return fmt.Sprintf("cannot tell which files below %s to mask (%v): programs do not run with denied files readable; %s", e.tree, e.err, what)
}

func (e *maskError) Unwrap() error { return e.err }

// ErrMasks: the private view's masks could not all be found (see
// maskError); programs do not run.
var ErrMasks = errors.New("masks not found")

// Is makes errors.Is(err, ErrMasks) hold.
func (e *maskError) Is(target error) bool { return target == ErrMasks }

// view returns the private view of a shell call whose TMPDIR is tmp: what
// it hides and binds back, the roots below /tmp to carry into the private
// /tmp, the paths to mask. Where the masks of a tree cannot all be found
// it fails with a *maskError, unless bestEffort: the tree is then shown
// with what was found masked, and listed in v.unmasked.
func (r *Runner) view(ctx context.Context, tmp string, bestEffort bool) (*view, func(), error) {
	v := &view{UID: os.Getuid(), GID: os.Getgid()}
	p := r.plan(tmp)
	results, save := r.walk(ctx, p)
	var gits []string
	failed := false
	for _, res := range results {
		if res.err != nil {
			if !bestEffort {
				return nil, save, &maskError{tree: res.root, err: res.err}
			}
			failed = true
			v.unmasked = append(v.unmasked, fmt.Sprintf("%s: %v", res.root, res.err))
		} else {
			v.complete = append(v.complete, res.root)
		}
		v.Masks = append(v.Masks, res.masks...)
		v.SocketMasks = append(v.SocketMasks, res.sockets...)
		gits = append(gits, res.gits...)
	}
	v.Masks = append(v.Masks, hostSecretPaths()...)
	v.Hide, v.Bind, v.Links, v.partial = p.hide, p.bind, p.links, p.shallow
	if !failed {
		v.complete = append(v.complete, p.hide...)
	}
	v.linksToo = p.linksToo && !failed
	r.protectRepos(v, gits)
	r.pinMasks(v)
	v.Carry = outermost(append(belowTmp(append(append(slices.Clone(r.readRts), r.writeRts...), tmp)), p.carry...))
	if err := r.socketView(v); err != nil {
		return nil, save, err
	}
	writable := append(slices.Clone(r.writeRts), tmp)
	for _, root := range outermost(r.readRts) {
		if r.opts.Broad || root == "/" || slices.ContainsFunc(writable, func(w string) bool { return within(root, w) }) {
			continue
		}
		v.ReadOnly = append(v.ReadOnly, root)
		for _, w := range outermost(writable) {
			if within(w, root) {
				v.Writable = append(v.Writable, w)
			}
		}
	}
	return v, save, nil
}

// belowTmp returns the roots strictly below the private /tmp: those the
// view carries into it.
func belowTmp(roots []string) []string {
	var below []string
	for _, root := range roots {
		if within(root, privateTmp) && root != privateTmp {
			below = append(below, root)
		}
	}
	return below
}

// pinMasks adds to v.Pins the directories between each write root and
// the masks below it. The masks are found once per call, before its first
// program: a directory moved by one program (mv sub moved) would take its
// denied files out from under the masks of the programs after it. A mount
// point cannot be renamed, so no program of the call can move them.
func (r *Runner) pinMasks(v *view) {
	if r.opts.Broad {
		return
	}
	roots := outermost(r.writeRts)
	seen := map[string]bool{}
	for _, p := range v.Pins {
		seen[p] = true
	}
	for _, ms := range [][]string{v.Masks, v.SocketMasks} {
		for _, m := range ms {
			root := slices.IndexFunc(roots, func(w string) bool { return within(m, w) })
			if root < 0 {
				continue // outside the write roots: no program can move it
			}
			for d := filepath.Dir(m); d != roots[root] && within(d, roots[root]) && !seen[d]; d = filepath.Dir(d) {
				seen[d] = true
				v.Pins = append(v.Pins, d)
			}
		}
	}
	// Outer pins first: each binds the tree as the previous left it.
	slices.SortStableFunc(v.Pins, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
}
