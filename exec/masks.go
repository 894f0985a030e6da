package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"
)

// maxDenyWalk caps the directory entries the deny walk of one shell call
// may visit. Past it the call does not get the private view (masks would
// be missing): it runs under Landlock alone and reports "landlock".
const maxDenyWalk = 100_000

// ErrDenyWalkTooBig: the readable roots hold too many entries to find every
// file the deny globs match.
var ErrDenyWalkTooBig = errors.New("too many entries below the readable roots to mask denied files")

// hostSecrets are the host files masked in every private view whatever
// the scope says: password and group hashes, ssh host keys, sudo rules,
// TLS and Kerberos keys, stored network and VPN secrets. Globs are
// expanded when a call starts; a directory is masked whole.
func hostSecrets() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/security/opasswd",
		"/etc/ssh/*_key", "/etc/ssh/*_key-cert.pub",
		"/etc/sudoers", "/etc/sudoers.d",
		"/etc/ssl/private", "/etc/pki/tls/private",
		"/etc/krb5.keytab",
		"/etc/NetworkManager/system-connections", "/etc/wireguard",
		"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/ipsec.secrets",
		"/etc/letsencrypt/archive", "/etc/letsencrypt/keys",
		"/etc/docker/key.json",
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

// denyPattern is one deny glob, compiled for the walk. Patterns are lower
// case and matched against lower-case paths (deny ignores case).
type denyPattern struct {
	pat string
	// base is the literal directory an absolute pattern starts with;
	// empty for patterns that match anywhere.
	base string
	// tail, for "**/a/b" and "**/a/b/**" (no other "**"), are the
	// segments the last path components must match. The walk prunes at a
	// match, so the trailing "/**" needs no check below it.
	tail []string
}

func compileDeny(pats []string) []denyPattern {
	out := make([]denyPattern, 0, len(pats))
	for _, p := range pats {
		d := denyPattern{pat: p}
		if rest, ok := strings.CutPrefix(p, "**/"); ok {
			rest = strings.TrimSuffix(rest, "/**")
			if rest != "" && !strings.Contains(rest, "**") && !strings.ContainsAny(rest, `\{}`) {
				d.tail = strings.Split(rest, "/")
			}
		} else if strings.HasPrefix(p, "/") {
			base, _ := doublestar.SplitPattern(p)
			if !strings.ContainsAny(base, `\{}[*?`) {
				d.base = filepath.Clean(base)
			}
		}
		out = append(out, d)
	}
	return out
}

// full reports whether lower (a lower-case absolute path) matches.
func (d *denyPattern) full(lower string) bool {
	if d.base != "" && !within(lower, d.base) {
		return false
	}
	ok, _ := doublestar.Match(d.pat, lower)
	return ok
}

// entry reports whether lower matches, given that no ancestor of it below
// the walked root matched.
func (d *denyPattern) entry(lower string) bool {
	if d.tail == nil {
		return d.full(lower)
	}
	p := lower
	for i := len(d.tail) - 1; i >= 0; i-- {
		j := strings.LastIndexByte(p, '/')
		if j < 0 {
			return false
		}
		seg := d.tail[i]
		name := p[j+1:]
		if strings.ContainsAny(seg, "*?[") {
			if ok, _ := doublestar.Match(seg, name); !ok {
				return false
			}
		} else if seg != name {
			return false
		}
		p = p[:j]
	}
	return true
}

// canHold reports whether a match may lie below dir (lower case).
func (d *denyPattern) canHold(dir string) bool {
	if strings.HasPrefix(d.pat, "**") {
		return true
	}
	if d.base == "" {
		return true // an absolute pattern whose base could not be told
	}
	return within(dir, d.base) || within(d.base, dir)
}

// leadsTo reports whether a directory (lower case) ends with the first
// segments of the pattern's tail, so that a match may lie a few levels
// below it (~/.config for "**/.config/pip/pip.conf").
func (d *denyPattern) leadsTo(dir string) bool {
	for k := len(d.tail) - 1; k >= 1; k-- {
		p, ok := dir, true
		for i := k - 1; i >= 0 && ok; i-- {
			j := strings.LastIndexByte(p, '/')
			if j < 0 {
				ok = false
				break
			}
			seg := d.tail[i]
			if strings.ContainsAny(seg, "*?[") {
				ok, _ = doublestar.Match(seg, p[j+1:])
			} else {
				ok = seg == p[j+1:]
			}
			p = p[:j]
		}
		if ok {
			return true
		}
	}
	return false
}

// denyWalk finds what the deny patterns match below the roots: each match
// once, a matched directory whole (the walk does not descend into it),
// symlinks never (their target is decided by its own root). It visits
// only directories that may hold a match, every directory when links is
// set, and stops with [ErrDenyWalkTooBig] after max entries.
type denyWalk struct {
	pats []denyPattern
	host *Host
	now  time.Time
	max  int
	// links: a regular file with more than one hard link is a match too,
	// as it is for the file tools (policy's path check): its other names
	// may be denied or outside the scope. Its link count is read at each
	// walk, since another name made elsewhere changes no directory here.
	links bool
	n     int
	out   []string
	// skip are directories a shallow walk leaves alone, with what they hold.
	skip []string
	// sockets are the unix sockets the walk met (sockets.go).
	sockets []string
}

func (w *denyWalk) matchFull(lower string) bool {
	for i := range w.pats {
		if w.pats[i].full(lower) {
			return true
		}
	}
	return false
}

func (w *denyWalk) matchEntry(lower string) bool {
	for i := range w.pats {
		if w.pats[i].entry(lower) {
			return true
		}
	}
	return false
}

func (w *denyWalk) canHold(lower string) bool {
	for i := range w.pats {
		if w.pats[i].canHold(lower) {
			return true
		}
	}
	return false
}

// root walks one readable root.
func (w *denyWalk) root(root string) error {
	lower := strings.ToLower(root)
	if w.matchFull(lower) {
		w.out = append(w.out, root)
		return nil
	}
	if w.links {
		// A root that is a single file (granted by name).
		linked, err := hardLinked(unix.AT_FDCWD, root)
		if err != nil {
			return err
		}
		if linked {
			w.out = append(w.out, root)
			return nil
		}
	} else if !w.canHold(lower) {
		return nil
	}
	return w.dir(root)
}

// hardLinked reports whether name (relative to the directory dirfd) is a
// regular file with more than one hard link. A file that is gone, or that
// the gateway may not look at (nor its programs), is not.
func hardLinked(dirfd int, name string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOTDIR):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("find hard links: stat %s: %w", name, err)
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1, nil
}

func (w *denyWalk) dir(dir string) error {
	ents, err := w.host.listDir(dir, w.now)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
			// Gone, or unreadable to the gateway and so to its programs.
			return nil
		}
		return fmt.Errorf("find denied files: %w", err)
	}
	dirfd := -1
	if w.links {
		// The entries' link counts, relative to the directory listed.
		if dirfd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				return nil
			}
			return fmt.Errorf("find hard links: open %s: %w", dir, err)
		}
		defer unix.Close(dirfd)
	}
	for _, e := range ents {
		w.n++
		if w.n > w.max {
			return fmt.Errorf("%w: more than %d below the roots, stopped in %s; narrow paths.read and paths.write", ErrDenyWalkTooBig, w.max, dir)
		}
		if e.typ == fs.ModeSymlink {
			continue
		}
		p := dir + "/" + e.name
		if dir == "/" {
			p = "/" + e.name
			if notWalked(p) {
				continue
			}
		}
		lower := strings.ToLower(p)
		if w.matchEntry(lower) {
			w.out = append(w.out, p)
			continue
		}
		if e.typ == fs.ModeSocket {
			w.sockets = append(w.sockets, p)
			continue
		}
		if e.typ == fs.ModeDir {
			if w.links || w.canHold(lower) {
				if err := w.dir(p); err != nil {
					return err
				}
			}
			continue
		}
		if w.links {
			linked, err := hardLinked(dirfd, e.name)
			if err != nil {
				return err
			}
			if linked {
				w.out = append(w.out, p)
			}
		}
	}
	return nil
}

// notWalked are top-level directories the walk of a root "/" skips: the
// view replaces /tmp and /proc with its own, /sys and /dev hold kernel
// objects, not files a deny glob is about.
func notWalked(p string) bool {
	switch p {
	case privateTmp, "/proc", "/sys", "/dev":
		return true
	}
	return false
}

// denyMasks fills in the masks of v for this runner's scope: what its deny
// globs match below its read and write roots and the regular files there
// with more than one hard link, then the host's secrets. It also records
// which roots were walked whole (v.complete).
func (r *Runner) denyMasks(v *view) error {
	roots := outermost(append(slices.Clone(r.readRts), r.writeRts...))
	if r.opts.Broad {
		roots = []string{"/"}
	}
	w := &denyWalk{pats: compileDeny(r.deny), host: r.host, now: time.Now(), max: r.walkMax}
	if !slices.ContainsFunc(roots, holdsSystem) {
		w.links = true
		for _, root := range roots {
			if err := w.root(root); err != nil {
				return err
			}
		}
		v.Masks, v.complete, v.linksToo = append(w.out, hostSecretPaths()...), roots, true
		v.SocketMasks = w.sockets
		return nil
	}
	// A scope that reads the system (/**) is never walked whole in time.
	// Its view masks the host's secrets and what the patterns match in the
	// home directory, two levels deep, where credential stores live, and
	// deeper on the way to a pattern's named directories (~/.config/pip);
	// the
	// project (the write roots) is left as it is, so that git and npm find
	// .git and node_modules there. No root is complete: the decision
	// refuses recursive readers of trees that hold denied files.
	if r.opts.Home != "" && !slices.ContainsFunc(r.writeRts, func(w string) bool { return within(r.opts.Home, w) }) {
		w.skip = r.writeRts
		if err := w.shallow(filepath.Clean(r.opts.Home), 2); err != nil {
			return err
		}
	}
	v.Masks = append(w.out, hostSecretPaths()...)
	v.SocketMasks = w.sockets
	return nil
}

// holdsSystem reports whether a root holds the system directories.
func holdsSystem(root string) bool { return within("/usr", root) }

// shallow walks dir depth levels deep: what the patterns match there is
// masked, and nothing below that depth is looked at.
func (w *denyWalk) shallow(dir string, depth int) error {
	if w.matchFull(strings.ToLower(dir)) {
		w.out = append(w.out, dir)
		return nil
	}
	if depth == 0 {
		return nil
	}
	ents, err := w.host.listDir(dir, w.now)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("find denied files: %w", err)
	}
	for _, e := range ents {
		w.n++
		if w.n > w.max {
			return fmt.Errorf("%w: more than %d entries in %s", ErrDenyWalkTooBig, w.max, dir)
		}
		if e.typ == fs.ModeSymlink {
			continue
		}
		p := dir + "/" + e.name
		if slices.ContainsFunc(w.skip, func(s string) bool { return within(s, p) }) {
			continue
		}
		lower := strings.ToLower(p)
		if w.matchEntry(lower) {
			w.out = append(w.out, p)
			continue
		}
		switch {
		case e.typ == fs.ModeSocket:
			w.sockets = append(w.sockets, p)
		case e.typ != fs.ModeDir:
		case depth > 1 && w.canHold(lower):
			if err := w.shallow(p, depth-1); err != nil {
				return err
			}
		case slices.ContainsFunc(w.pats, func(d denyPattern) bool { return d.leadsTo(lower) }):
			// Deeper than the walk goes, but on the way to a match:
			// ~/.config/pip for **/.config/pip/pip.conf.
			if err := w.shallow(p, 1); err != nil {
				return err
			}
		}
	}
	return nil
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

// dirEnt is one directory entry as the deny walk needs it.
type dirEnt struct {
	name string
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, fs.ModeSocket or 0
}

// dirListing is a cached directory listing and the identity of the
// directory it was read from.
type dirListing struct {
	dev, ino     uint64
	mtime, ctime syscall.Timespec
	ents         []dirEnt
}

// maxCachedDirs bounds the listing cache; past it the cache starts over.
const maxCachedDirs = 50_000

// racyWindow: a listing is cached only when the directory did not change
// for this long, since a change within the timestamp granularity of the
// file system would leave its mtime as it was.
const racyWindow = 2 * time.Second

// Host is what Runners learn about this host and share: whether the
// helper can enter namespaces (probed once) and the listings of the
// directories the deny walk reads, kept while their mtime holds. The zero
// value is ready; it is safe for concurrent use. A process makes one and
// hands it to every Runner.
type Host struct {
	// ProbeCache, when set, is a file that remembers a successful probe
	// across processes (see namespacesOK); set it before first use.
	ProbeCache string

	probeOnce sync.Once
	probeErr  error
	probeDone atomic.Bool
	// probeCached says that the probe's answer came from ProbeCache.
	probeCached atomic.Bool

	mu   sync.Mutex
	dirs map[string]dirListing
}

// listDir returns dir's entries, from the cache when dir has not changed.
func (h *Host) listDir(dir string, now time.Time) ([]dirEnt, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: dir, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: syscall.ENOTDIR}
	}
	h.mu.Lock()
	c, ok := h.dirs[dir]
	h.mu.Unlock()
	if ok && c.dev == st.Dev && c.ino == st.Ino && c.mtime == st.Mtim && c.ctime == st.Ctim {
		return c.ents, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	ents := make([]dirEnt, len(des))
	for i, d := range des {
		ents[i] = dirEnt{name: d.Name(), typ: d.Type() & (fs.ModeDir | fs.ModeSymlink | fs.ModeSocket)}
	}
	changed := time.Unix(st.Ctim.Unix())
	if m := time.Unix(st.Mtim.Unix()); m.After(changed) {
		changed = m
	}
	if now.Sub(changed) > racyWindow {
		h.mu.Lock()
		if h.dirs == nil || len(h.dirs) >= maxCachedDirs {
			h.dirs = map[string]dirListing{}
		}
		h.dirs[dir] = dirListing{dev: st.Dev, ino: st.Ino, mtime: st.Mtim, ctime: st.Ctim, ents: ents}
		h.mu.Unlock()
	}
	return ents, nil
}

// view returns the private view of a shell call whose TMPDIR is tmp: the
// roots below /tmp to carry into the private /tmp, the paths to mask.
func (r *Runner) view(tmp string) (*view, error) {
	v := &view{UID: os.Getuid(), GID: os.Getgid()}
	if err := r.denyMasks(v); err != nil {
		return nil, err
	}
	r.protectRepos(v)
	// The roots below /tmp are carried into the private /tmp; a root that
	// holds /tmp (a scope reading /**) sees the private one instead.
	v.Carry = outermost(belowTmp(append(append(slices.Clone(r.readRts), r.writeRts...), tmp)))
	if err := r.socketView(v); err != nil {
		return nil, err
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
	if n := viewSize(v); n > maxViewJSON {
		return nil, fmt.Errorf("%w: %d denied paths to mask (%d bytes of rules, at most %d)", ErrDenyWalkTooBig, len(v.Masks), n, maxViewJSON)
	}
	return v, nil
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

// viewSize is about the JSON size of v.
func viewSize(v *view) int {
	n := 0
	for _, l := range [][]string{v.Carry, v.Masks, v.ReadOnly, v.Writable, v.Pins, v.Repos, v.Fresh, v.Keep, v.SocketMasks} {
		for _, p := range l {
			n += len(p) + 3
		}
	}
	return n
}
