package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func newWatcher(t *testing.T) *Watcher {
	t.Helper()
	w, err := New()
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeInPlace overwrites the start of a file without truncating it, as an
// editor saving in place may.
func writeInPlace(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func replace(t *testing.T, path, text string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	write(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Every change to a file, or on the way to it, gives the path a new version
// once Sync has run; changes beside it do not.
func TestVersionChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup makes the files under root and returns the path to track
		// (default: root/a/scope.yml holding "aaaa").
		setup func(t *testing.T, root string) string
		// link tracks the path's last link itself (LinkVersion).
		link    bool
		change  func(t *testing.T, root string)
		changed bool
	}{
		{name: "in-place write of the same size", changed: true,
			change: func(t *testing.T, root string) { writeInPlace(t, root+"/a/scope.yml", "bbbb") }},
		{name: "append", changed: true,
			change: func(t *testing.T, root string) {
				f, err := os.OpenFile(root+"/a/scope.yml", os.O_WRONLY|os.O_APPEND, 0)
				must(t, err)
				f.WriteString("b")
				f.Close()
			}},
		{name: "truncate", changed: true,
			change: func(t *testing.T, root string) { must(t, os.Truncate(root+"/a/scope.yml", 0)) }},
		{name: "atomic replace by rename", changed: true,
			change: func(t *testing.T, root string) { replace(t, root+"/a/scope.yml", "b") }},
		{name: "remove", changed: true,
			change: func(t *testing.T, root string) { must(t, os.Remove(root+"/a/scope.yml")) }},
		{name: "create a missing file", changed: true,
			setup:  func(t *testing.T, root string) string { return root + "/a/scope.yml" },
			change: func(t *testing.T, root string) { write(t, root+"/a/scope.yml", "a") }},
		{name: "create a missing directory on the way", changed: true,
			setup:  func(t *testing.T, root string) string { return root + "/a/b/scope.yml" },
			change: func(t *testing.T, root string) { must(t, os.Mkdir(root+"/a/b", 0o700)) }},
		{name: "chmod", changed: true,
			change: func(t *testing.T, root string) { must(t, os.Chmod(root+"/a/scope.yml", 0o400)) }},
		{name: "parent replaced by another directory", changed: true,
			change: func(t *testing.T, root string) {
				must(t, os.Rename(root+"/a", root+"/old"))
				must(t, os.Mkdir(root+"/a", 0o700))
				write(t, root+"/a/scope.yml", "a")
			}},
		{name: "grandparent renamed", changed: true,
			setup: func(t *testing.T, root string) string {
				must(t, os.MkdirAll(root+"/a/b", 0o700))
				write(t, root+"/a/b/scope.yml", "a")
				return root + "/a/b/scope.yml"
			},
			change: func(t *testing.T, root string) { must(t, os.Rename(root+"/a", root+"/old")) }},
		{name: "a link on the way pointed elsewhere", changed: true,
			setup: func(t *testing.T, root string) string {
				must(t, os.MkdirAll(root+"/x", 0o700))
				must(t, os.MkdirAll(root+"/y", 0o700))
				write(t, root+"/x/scope.yml", "x")
				write(t, root+"/y/scope.yml", "y")
				must(t, os.Symlink("x", root+"/l"))
				return root + "/l/scope.yml"
			},
			change: func(t *testing.T, root string) {
				must(t, os.Symlink("y", root+"/l2"))
				must(t, os.Rename(root+"/l2", root+"/l"))
			}},
		{name: "the target of a followed link written", changed: true,
			setup: func(t *testing.T, root string) string {
				must(t, os.MkdirAll(root+"/x", 0o700))
				write(t, root+"/x/real.yml", "x")
				must(t, os.Symlink("../x/real.yml", root+"/a/scope.yml"))
				return root + "/a/scope.yml"
			},
			change: func(t *testing.T, root string) { writeInPlace(t, root+"/x/real.yml", "y") }},
		{name: "a link replaced, the link itself tracked", changed: true, link: true,
			setup: func(t *testing.T, root string) string {
				must(t, os.Symlink("branches/main", root+"/a/current"))
				return root + "/a/current"
			},
			change: func(t *testing.T, root string) {
				must(t, os.Symlink("branches/other", root+"/a/.tmp"))
				must(t, os.Rename(root+"/a/.tmp", root+"/a/current"))
			}},
		{name: "an entry added to a tracked directory", changed: true,
			setup:  func(t *testing.T, root string) string { return root + "/a" },
			change: func(t *testing.T, root string) { must(t, os.Mkdir(root+"/a/session", 0o700)) }},

		{name: "a file beside it written", changed: false,
			setup: func(t *testing.T, root string) string {
				write(t, root+"/a/scope.yml", "a")
				write(t, root+"/a/tools.org", "* entry\n")
				return root + "/a/scope.yml"
			},
			change: func(t *testing.T, root string) {
				f, err := os.OpenFile(root+"/a/tools.org", os.O_WRONLY|os.O_APPEND, 0)
				must(t, err)
				f.WriteString("* another\n")
				f.Close()
			}},
		{name: "a file created beside it", changed: false,
			change: func(t *testing.T, root string) { write(t, root+"/a/tools.org", "") }},
		{name: "a directory beside the parent renamed", changed: false,
			setup: func(t *testing.T, root string) string {
				must(t, os.Mkdir(root+"/b", 0o700))
				write(t, root+"/a/scope.yml", "a")
				return root + "/a/scope.yml"
			},
			change: func(t *testing.T, root string) { must(t, os.Rename(root+"/b", root+"/c")) }},
		{name: "the file read", changed: false,
			change: func(t *testing.T, root string) {
				if _, err := os.ReadFile(root + "/a/scope.yml"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the target of a link tracked itself written", changed: false, link: true,
			setup: func(t *testing.T, root string) string {
				write(t, root+"/a/target", "x")
				must(t, os.Symlink("target", root+"/a/current"))
				return root + "/a/current"
			},
			change: func(t *testing.T, root string) { writeInPlace(t, root+"/a/target", "y") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(t)
			root := t.TempDir()
			must(t, os.Mkdir(root+"/a", 0o700))
			path := root + "/a/scope.yml"
			if tc.setup != nil {
				path = tc.setup(t, root)
			} else {
				write(t, path, "aaaa")
			}
			version := w.Version
			if tc.link {
				version = w.LinkVersion
			}
			v1, ok := version(path)
			if !ok {
				t.Fatalf("%s is not watched", path)
			}
			w.Sync()
			if v, _ := version(path); v != v1 {
				t.Fatalf("version moved from %d to %d with no change", v1, v)
			}
			tc.change(t, root)
			w.Sync()
			v2, ok := version(path)
			if !ok {
				t.Fatalf("%s is no longer watched", path)
			}
			if changed := v2 != v1; changed != tc.changed {
				t.Fatalf("version %d then %d: changed = %v, want %v", v1, v2, changed, tc.changed)
			}
			// Once walked again, the path keeps its version until the
			// next change.
			w.Sync()
			if v3, _ := version(path); v3 != v2 {
				t.Fatalf("version moved from %d to %d with no change", v2, v3)
			}
		})
	}
}

// A cache keyed by version, as the gateway keeps one, never answers with a
// file older than the one in place when the question was asked. A writer
// puts versions 1, 2, 3… in place, alternately by rename and by writing in
// place at the same size; readers Sync, then reread the file only when its
// version moved.
func TestCacheNeverStale(t *testing.T) {
	w := newWatcher(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "scope.yml")
	format := func(n int) string { return fmt.Sprintf("%08d\n", n) }
	write(t, path, format(0))
	var inPlace atomic.Int64
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for n := 1; n <= 400; n++ {
			if n%2 == 0 {
				replace(t, path, format(n))
			} else {
				writeInPlace(t, path, format(n))
			}
			inPlace.Store(int64(n))
		}
	})
	var checks atomic.Int64
	for range 8 {
		wg.Go(func() {
			cached, cachedV := int64(-1), uint64(0)
			for !done.Load() {
				want := inPlace.Load()
				w.Sync()
				v, ok := w.Version(path)
				if !ok {
					t.Error("not watched")
					return
				}
				if cached < 0 || v != cachedV {
					data, err := os.ReadFile(path)
					if err != nil {
						t.Error(err)
						return
					}
					n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
					if err != nil {
						t.Errorf("read %q: %v", data, err)
						return
					}
					cached, cachedV = n, v
				}
				if cached < want {
					t.Errorf("answered with version %d; version %d was in place before the question", cached, want)
					return
				}
				checks.Add(1)
			}
		})
	}
	wg.Wait()
	if checks.Load() == 0 {
		t.Fatal("nothing was checked")
	}
	// Replacing the file again and again does not pile up watches.
	if n := len(w.watches); n > 20 {
		t.Fatalf("%d watches for one path", n)
	}
}

func TestNotWatched(t *testing.T) {
	w := newWatcher(t)
	for _, path := range []string{"relative/scope.yml", "/proc/self/status"} {
		if _, ok := w.Version(path); ok {
			t.Errorf("%s is watched", path)
		}
	}
	file := filepath.Join(t.TempDir(), "scope.yml")
	write(t, file, "a")
	if _, ok := w.Version(file); !ok {
		t.Fatalf("%s is not watched", file)
	}
	w.Close()
	w.Sync()
	if _, ok := w.Version(file); ok {
		t.Fatal("watched after Close")
	}
}

// Beyond maxPaths, the least recently asked about path is let go with its
// watches, and is followed again, under a new version, when asked again.
func TestPathsBounded(t *testing.T) {
	w := newWatcher(t)
	root := t.TempDir()
	path := func(i int) string { return filepath.Join(root, strconv.Itoa(i%16), strconv.Itoa(i)) }
	for i := range 16 {
		must(t, os.Mkdir(filepath.Join(root, strconv.Itoa(i)), 0o700))
	}
	first, _ := w.Version(path(0))
	for i := 1; i < maxPaths+100; i++ {
		write(t, path(i), "x")
		if _, ok := w.Version(path(i)); !ok {
			t.Fatalf("%s not watched", path(i))
		}
	}
	if n := len(w.paths); n > maxPaths {
		t.Fatalf("%d paths followed, want at most %d", n, maxPaths)
	}
	// The directories on the way, the 16 below root and the files still
	// followed: no watch is left behind by a path let go.
	if n, most := len(w.watches), strings.Count(root, "/")+1+16+maxPaths; n > most {
		t.Fatalf("%d watches, want at most %d", n, most)
	}
	again, ok := w.Version(path(0))
	if !ok || again == first {
		t.Fatalf("path 0 asked again: version %d (was %d), watched %v", again, first, ok)
	}
}
