package gateway

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scopegate/scopegate/sessions"
)

// protectedRoots returns roots and, when a root is reached through a
// link, its canonical spelling too.
func protectedRoots(roots ...string) []string {
	var out []string
	for _, p := range roots {
		if p == "" {
			continue
		}
		out = append(out, filepath.Clean(p))
		if real, err := filepath.EvalSymlinks(p); err == nil && real != filepath.Clean(p) {
			out = append(out, real)
		}
	}
	return out
}

// addProtected returns protected with the roots of extra added (a new
// slice when there are any).
func addProtected(protected []string, extra ...string) []string {
	if len(extra) == 0 {
		return protected
	}
	return append(slices.Clone(protected), protectedRoots(extra...)...)
}

// protectedNow is the gateway's protected roots as they are now (after
// syncFiles). A sessions root that also holds directories that are not
// sessions (an Emacs activity directory: session/ with worktrees/ beside
// it) is protected child by child instead, so that those directories are
// the scope's to grant: every session, every hidden entry and every file of
// the root stay protected. The root is read again only when it changes.
func (g *Gateway) protectedNow() []string {
	root := g.opts.SessionsDir
	if root == "" {
		return g.protected
	}
	st, err := g.rootStamp(root)
	if err != nil {
		return g.protected
	}
	if roots, ok := g.rootChildren.get(root, st); ok {
		return roots
	}
	roots := g.protected
	if ents, err := os.ReadDir(root); err == nil {
		var children []string
		carved := false
		for _, e := range ents {
			child := filepath.Join(root, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !sessions.IsSessionDir(child) {
				carved = true
				continue
			}
			children = append(children, child)
		}
		if carved {
			spellings := protectedRoots(root)
			roots = nil
			for _, p := range g.protected {
				if !slices.Contains(spellings, p) {
					roots = append(roots, p)
				}
			}
			roots = append(roots, protectedRoots(children...)...)
		}
	}
	g.rootChildren.put(root, st, roots)
	return roots
}

// rootStamp is the stamp of the sessions root: its watched version, which
// changes with its entries, else its identity, whose mtime does.
func (g *Gateway) rootStamp(root string) (stamp, error) {
	if g.opts.Watcher != nil {
		if v, ok := g.opts.Watcher.Version(root); ok {
			return stamp{watched: true, version: v}, nil
		}
	}
	id, err := statFile(root)
	return stamp{id: id}, err
}

// unprotectedSession returns the session directory around a branch (or the
// branch directory itself, outside the session layout) when it lies outside
// the protected roots — a branch selected with --branch-dir elsewhere, an
// Emacs activity session: no tool call may write the scope it is decided
// by, its audit or its metadata, wherever they are. protected are the
// protected roots of the moment.
func unprotectedSession(protected []string, branchDir string) []string {
	dir := filepath.Clean(branchDir)
	if parent := filepath.Dir(dir); filepath.Base(parent) == "branches" {
		dir = filepath.Dir(parent)
	}
	for _, p := range protected {
		if strings.HasPrefix(dir, p) && (len(dir) == len(p) || dir[len(p)] == filepath.Separator) {
			return nil
		}
	}
	return []string{dir}
}
