package exec

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/internal/watch"
)

// walkOne walks one tree whole with a fresh view of the index, as a call
// does, and fails the test on an error.
func walkOne(t testing.TB, ix *denyIndex, root, store string, now time.Time) treeResult {
	t.Helper()
	res, save := ix.walkTrees(context.Background(), []string{root}, 0, store, now)
	save()
	if res[0].err != nil {
		t.Fatal(res[0].err)
	}
	return res[0]
}

func relPaths(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, strings.TrimPrefix(p, root+"/"))
	}
	slices.Sort(out)
	return out
}

func TestDenyIndexWalk(t *testing.T) {
	root := realDir(t)
	for _, f := range []string{".env", "a/.env", "a/b/c/.Env", "a/ok", "node_modules/p/q/r", "a/node_modules/x",
		"home/.cargo/credentials.toml", "home/.cargo/registry/x", "keep/.ssh/id", "repo/.git/HEAD", "repo/sub/.git"} {
		writeFile(t, filepath.Join(root, f), "x", 0o644)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(root, "a", "envlink.env")); err != nil {
		t.Fatal(err)
	}
	// A regular file with a second name: masked under both.
	if err := os.Link(filepath.Join(root, "a", "ok"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	pats := []string{"**/.env", "**/node_modules/**", "**/.cargo/credentials*", "**/.ssh/**", "/proc/[0-9]*/**", "**/*link.env"}
	later := time.Now().Add(time.Hour) // every directory counts as settled
	ix := new(Host).index(pats)
	got := walkOne(t, ix, root, "", later)
	want := []string{".env", "a/.env", "a/b/c/.Env", "a/node_modules", "a/ok", "home/.cargo/credentials.toml", "keep/.ssh", "linked", "node_modules"}
	if g := relPaths(root, got.masks); !slices.Equal(g, want) {
		t.Errorf("masks %q, want %q", g, want)
	}
	if g := relPaths(root, got.gits); !slices.Equal(g, []string{"repo/.git", "repo/sub/.git"}) {
		t.Errorf(".git entries %q", g)
	}
	// Matched directories are not entered: node_modules/p, keep/.ssh.
	if got.listed != 11 {
		t.Errorf("listed %d directories, want 11", got.listed)
	}

	t.Run("unchanged directories are not listed again", func(t *testing.T) {
		again := walkOne(t, ix, root, "", later)
		if again.listed != 0 || !slices.Equal(again.masks, got.masks) {
			t.Errorf("second walk listed %d, masks %q", again.listed, again.masks)
		}
	})
	t.Run("a root inside a denied directory", func(t *testing.T) {
		r := walkOne(t, new(Host).index(pats), filepath.Join(root, "node_modules", "p"), "", later)
		if len(r.masks) != 1 {
			t.Errorf("masks %q", r.masks)
		}
	})
	t.Run("a file root", func(t *testing.T) {
		for f, want := range map[string]int{"a/.env": 1, "linked": 1, "home/.cargo/registry/x": 0} {
			if r := walkOne(t, new(Host).index(pats), filepath.Join(root, f), "", later); len(r.masks) != want {
				t.Errorf("%s: masks %q", f, r.masks)
			}
		}
	})
	t.Run("a shallow walk", func(t *testing.T) {
		res, _ := new(Host).index(pats).walkTrees(context.Background(), []string{root}, 2, "", later)
		if g := relPaths(root, res[0].masks); !slices.Equal(g, []string{".env", "a/.env", "a/node_modules", "a/ok", "keep/.ssh", "linked", "node_modules"}) {
			t.Errorf("masks %q", g)
		}
	})
	t.Run("changes are seen", func(t *testing.T) {
		dir := filepath.Join(root, "a", "b")
		before, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		// A new denied file, in a directory whose mtime is then set back:
		// its ctime still moves.
		writeFile(t, filepath.Join(dir, ".env"), "x", 0o644)
		if err := os.Chtimes(dir, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		// A new name for a file: the new name's directory changes. (The
		// older name, in a directory that did not change, is read again
		// only when that directory changes: it names what the tree held.)
		if err := os.Link(filepath.Join(root, "home", ".cargo", "registry", "x"), filepath.Join(root, "a", "b", "c", "y")); err != nil {
			t.Fatal(err)
		}
		r := walkOne(t, ix, root, "", time.Now().Add(time.Hour))
		for _, want := range []string{"a/b/.env", "a/b/c/y"} {
			if !slices.Contains(relPaths(root, r.masks), want) {
				t.Errorf("%s not masked: %q", want, relPaths(root, r.masks))
			}
		}
		if r.listed == 0 || r.listed > 3 {
			t.Errorf("listed %d directories, want the changed ones", r.listed)
		}
	})
	t.Run("a directory that just changed is listed again", func(t *testing.T) {
		ix := new(Host).index(pats)
		walkOne(t, ix, root, "", time.Now()) // everything changed within racyWindow
		if r := walkOne(t, ix, root, "", time.Now()); r.listed == 0 {
			t.Error("a directory changed within the racy window was trusted")
		}
	})
	t.Run("a cancelled walk fails", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, _ := new(Host).index(pats).walkTrees(ctx, []string{root}, 0, "", later)
		if res[0].err == nil {
			t.Error("no error")
		}
	})
}

// The index a walk leaves in its store is what a later process starts
// from, only while the file is the user's own, private and whole.
func TestDenyIndexStore(t *testing.T) {
	root := realDir(t)
	sourceFiles(t, root, 20, 5)
	writeFile(t, filepath.Join(root, "d3", ".env"), "x", 0o644)
	store := filepath.Join(realDir(t), "index")
	pats := []string{"**/.env"}
	later := time.Now().Add(time.Hour)
	first := walkOne(t, new(Host).index(pats), root, store, later)
	files, _ := filepath.Glob(filepath.Join(store, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("index files %q", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index file %v, %v", fi, err)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("index directory %v, %v", fi, err)
	}
	second := walkOne(t, new(Host).index(pats), root, store, later)
	if second.listed != 0 || !slices.Equal(second.masks, first.masks) {
		t.Fatalf("from the store: listed %d, masks %q (want %q)", second.listed, second.masks, first.masks)
	}
	// A changed directory is listed again, and the store follows.
	writeFile(t, filepath.Join(root, "d7", ".env"), "x", 0o644)
	third := walkOne(t, new(Host).index(pats), root, store, time.Now().Add(time.Hour))
	if third.listed != 1 || len(third.masks) != 2 {
		t.Fatalf("after a change: listed %d, masks %q", third.listed, third.masks)
	}
	if r := walkOne(t, new(Host).index(pats), root, store, time.Now().Add(time.Hour)); r.listed != 0 || len(r.masks) != 2 {
		t.Fatalf("the store did not follow: listed %d, masks %q", r.listed, r.masks)
	}

	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T)
	}{
		{"readable by others", func(t *testing.T) { chmod(t, files[0], 0o644) }},
		{"directory writable by others", func(t *testing.T) { chmod(t, store, 0o777) }},
		{"not whole", func(t *testing.T) { rewrite(t, files[0], data[:len(data)-1]) }},
		{"a byte changed", func(t *testing.T) {
			b := slices.Clone(data)
			b[len(b)/2] ^= 1
			rewrite(t, files[0], b)
		}},
		{"a link", func(t *testing.T) {
			other := filepath.Join(store, "elsewhere")
			rewrite(t, other, data)
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, files[0]); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewrite(t, files[0], data)
			chmod(t, files[0], 0o600)
			chmod(t, store, 0o700)
			tc.spoil(t)
			if r := walkOne(t, new(Host).index(pats), root, "", later); r.listed == 0 {
				t.Fatal("a fresh index listed nothing")
			}
			ix := new(Host).index(pats)
			ix.load(store, root)
			if n := len(ix.dirs) + len(ix.files); n != 0 {
				t.Errorf("%d records trusted", n)
			}
		})
	}
}

func chmod(t *testing.T, p string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, p string, data []byte) {
	t.Helper()
	_ = os.Remove(p)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sourceFiles makes dirs directories of files empty files below root:
// d0…, each holding f0….
func sourceFiles(t testing.TB, root string, dirs, files int) {
	t.Helper()
	for d := range dirs {
		sub := filepath.Join(root, "d"+strconv.Itoa(d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(f)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The parallel walk finds what a plain walk of the tree, matching every
// path against every glob, finds: on a random tree, fresh and after
// random changes; stat'ing each directory, and in a process that watches
// them.
func TestDenyIndexMatchesPlainWalk(t *testing.T) {
	t.Run("stat", func(t *testing.T) { matchesPlainWalk(t, new(Host)) })
	t.Run("watched", func(t *testing.T) { matchesPlainWalk(t, &Host{Dirs: newDirs(t, watch.DirsOptions{})}) })
}

func matchesPlainWalk(t *testing.T, host *Host) {
	root := realDir(t)
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "src", ".env", ".env.local", "x.pem", "runtime", "node_modules", "id_rsa", "README", ".Git", "key.PEM"}
	var dirs []string
	dirs = append(dirs, root)
	for range 400 {
		parent := dirs[rng.IntN(len(dirs))]
		p := filepath.Join(parent, names[rng.IntN(len(names))]+strconv.Itoa(rng.IntN(3)))
		if rng.IntN(3) == 0 {
			if err := os.MkdirAll(p, 0o755); err == nil {
				dirs = append(dirs, p)
			}
			continue
		}
		_ = os.WriteFile(p, nil, 0o644)
	}
	pats := []string{"**/.env*", "**/*.pem", "**/runtime*/**", "**/node_modules*/**", "**/id_rsa*", "**/.git*/**", "**/src1/a?/**", "/nothere/**"}
	plain := func() []string {
		var out []string
		m := compileDeny(pats)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if m.full(strings.ToLower(p)) {
				out = append(out, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	ix := host.index(pats)
	for round := range 6 {
		got := walkOne(t, ix, root, "", time.Now().Add(time.Hour))
		if want := plain(); !slices.Equal(got.masks, want) {
			t.Fatalf("round %d: masks\n%q\nwant\n%q", round, got.masks, want)
		}
		for i := range 20 {
			d := dirs[rng.IntN(len(dirs))]
			name := filepath.Join(d, names[rng.IntN(len(names))]+"n"+strconv.Itoa(round)+"-"+strconv.Itoa(i))
			switch rng.IntN(4) {
			case 0: // a new directory, with a file in it
				if os.Mkdir(name, 0o755) == nil {
					dirs = append(dirs, name)
					_ = os.WriteFile(filepath.Join(name, names[rng.IntN(len(names))]), nil, 0o644)
				}
			case 1: // a directory moved elsewhere, under a new name
				from := dirs[rng.IntN(len(dirs))]
				if from != root && !within(name, from) && os.Rename(from, name) == nil {
					dirs = slices.DeleteFunc(dirs, func(x string) bool { return within(x, from) })
					dirs = append(dirs, name)
				}
			default:
				_ = os.WriteFile(name, nil, 0o644)
			}
		}
	}
}

// IndexFiles names each cache file's tree and when it was last used: a
// walk that reads an index file unused for long marks it used, on a file
// system mounted noatime too.
func TestDenyIndexFilesUsed(t *testing.T) {
	if !inMountNS(t) {
		return
	}
	root := realDir(t)
	sourceFiles(t, root, 3, 2)
	store := filepath.Join(realDir(t), "index")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", store, "tmpfs", unix.MS_NOATIME, "mode=0700"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(store, unix.MNT_DETACH)
	later := time.Now().Add(time.Hour)
	walkOne(t, new(Host).index([]string{"**/.env"}), root, store, later)
	if err := os.WriteFile(filepath.Join(store, ".tmp-1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := IndexFiles(store)
	if err != nil || len(files) != 2 {
		t.Fatalf("IndexFiles: %+v, %v", files, err)
	}
	slices.SortFunc(files, func(a, b IndexFile) int { return strings.Compare(a.Tree, b.Tree) })
	if files[0].Tree != "" || files[1].Tree != root {
		t.Fatalf("trees %q, %q; want none and %q", files[0].Tree, files[1].Tree, root)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(files[1].Path, old, old); err != nil {
		t.Fatal(err)
	}
	// Listing does not use it; a walk that reads it does.
	if again, _ := IndexFiles(store); !slices.ContainsFunc(again, func(f IndexFile) bool { return f.Tree == root && f.Used.Equal(old) }) {
		t.Errorf("listing marked the file used: %+v", again)
	}
	walkOne(t, new(Host).index([]string{"**/.env"}), root, store, later)
	after, _ := IndexFiles(store)
	for _, f := range after {
		if f.Tree == root && time.Since(f.Used) > time.Hour {
			t.Errorf("a walk read the file and left it unused since %v", f.Used)
		}
	}
}
