package exec

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/internal/watch"
)

// newDirs returns a directory watcher, closed after the test; without
// inotify the test is skipped, except under CI=true.
func newDirs(t testing.TB, opts watch.DirsOptions) *watch.Dirs {
	t.Helper()
	d, err := watch.NewDirs(opts)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// watchedTree makes a tree of 20 directories of 3 files below gen, a
// .env at the top, and returns its root (two levels below a temporary
// directory).
func watchedTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(realDir(t), "top", "proj")
	sourceFiles(t, filepath.Join(root, "gen"), 20, 3)
	writeFile(t, filepath.Join(root, ".env"), "x", 0o644)
	writeFile(t, filepath.Join(root, "x", "plain"), "x", 0o644)
	return root
}

// plainMasks is what a walk with no index finds below root: the masks
// every other walk must find.
func plainMasks(t *testing.T, pats []string, root string) []string {
	t.Helper()
	return walkOne(t, new(Host).index(pats), root, "", time.Now().Add(time.Hour)).masks
}

// In a process that watches directories (serve), a walk of an unchanged
// tree looks at no directory, and a change made between two walks, of
// any kind that makes a new name, is in the second: a new file, a new
// directory holding one, a hard link, a file or a directory renamed into
// place (from inside the tree or outside it), a directory replaced by
// another of the same name, the root replaced.
func TestDenyIndexWatchedChanges(t *testing.T) {
	pats := []string{"**/.env", "**/*.pem"}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	for _, tc := range treeChanges() {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := watchedTree(t), realDir(t)
			if tc.before != nil {
				tc.before(t, root, outside)
			}
			ix := (&Host{Dirs: newDirs(t, watch.DirsOptions{})}).index(pats)
			first := walkOne(t, ix, root, "", later())
			if again := walkOne(t, ix, root, "", later()); again.looked != 0 {
				t.Fatalf("an unchanged tree: looked at %d directories", again.looked)
			}
			if tc.change != nil {
				tc.change(t, root, outside)
			}
			got := walkOne(t, ix, root, "", later())
			tc.check(t, pats, root, got)
			if tc.maxLooked > 0 && got.looked > tc.maxLooked || tc.change == nil && got.looked != 0 {
				t.Errorf("looked at %d directories, want at most %d (of %d)", got.looked, tc.maxLooked, first.looked)
			}
			// And the walk after that looks at nothing.
			if again := walkOne(t, ix, root, "", later()); again.looked != 0 || !slices.Equal(again.masks, got.masks) {
				t.Errorf("the walk after: looked at %d, masks %q", again.looked, relPaths(root, again.masks))
			}
		})
	}
}

// treeChange is a change made to watchedTree between two walks.
type treeChange struct {
	name string
	// before runs ahead of the first walk, change between the two.
	before, change func(t *testing.T, root, outside string)
	masked         []string
	// older are masks of a fresh walk that an incremental one need
	// not find: the older name of a file given a second one.
	older []string
	// maxLooked bounds the directories the second walk looks at, in a
	// process that watches them.
	maxLooked int
}

// check fails the test unless the masks a walk after the change found are
// a fresh walk's (but older) and hold the change's.
func (tc treeChange) check(t *testing.T, pats []string, root string, got treeResult) {
	t.Helper()
	want := slices.DeleteFunc(plainMasks(t, pats, root), func(m string) bool {
		return slices.Contains(tc.older, strings.TrimPrefix(m, root+"/"))
	})
	if !slices.Equal(got.masks, want) {
		t.Fatalf("masks\n%q\nwant\n%q", relPaths(root, got.masks), relPaths(root, want))
	}
	for _, m := range tc.masked {
		if !slices.Contains(relPaths(root, got.masks), m) {
			t.Errorf("%s not masked: %q", m, relPaths(root, got.masks))
		}
	}
}

// treeChanges are the changes of every kind that makes a new name: a new
// file, a new directory holding one, a hard link, a file or a directory
// renamed into place (from inside the tree or outside it), a directory
// replaced by another of the same name, the root replaced.
func treeChanges() []treeChange {
	return []treeChange{
		{name: "nothing", maxLooked: 0},
		{name: "a new file", change: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "gen", "d7", ".env"), "x", 0o644)
		}, masked: []string{"gen/d7/.env"}, maxLooked: 1},
		{name: "a new directory holding one", change: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "gen", "d7", "new", "deeper", "key.pem"), "x", 0o644)
		}, masked: []string{"gen/d7/new/deeper/key.pem"}, maxLooked: 3},
		{name: "a hard link", change: func(t *testing.T, root, _ string) {
			if err := os.Link(filepath.Join(root, "x", "plain"), filepath.Join(root, "gen", "d3", "linked")); err != nil {
				t.Fatal(err)
			}
		}, masked: []string{"gen/d3/linked"}, older: []string{"x/plain"}, maxLooked: 1},
		{name: "a file renamed into place", change: func(t *testing.T, root, outside string) {
			writeFile(t, filepath.Join(outside, "staged"), "x", 0o644)
			rename(t, filepath.Join(outside, "staged"), filepath.Join(root, "gen", "d5", ".env"))
		}, masked: []string{"gen/d5/.env"}, maxLooked: 1},
		{name: "a directory renamed within the tree", before: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "m", "holder", "sub", ".env"), "x", 0o644)
		}, change: func(t *testing.T, root, _ string) {
			rename(t, filepath.Join(root, "m", "holder"), filepath.Join(root, "gen", "d9", "holder"))
		}, masked: []string{"gen/d9/holder/sub/.env"}, maxLooked: 4},
		{name: "a directory swapped into place", before: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "p", "clean", "sub", "file"), "x", 0o644)
			writeFile(t, filepath.Join(root, "q", "dirty", "sub", ".env"), "x", 0o644)
		}, change: func(t *testing.T, root, _ string) {
			rename(t, filepath.Join(root, "p", "clean"), filepath.Join(root, "r"))
			rename(t, filepath.Join(root, "q", "dirty"), filepath.Join(root, "p", "clean"))
		}, masked: []string{"p/clean/sub/.env"}},
		{name: "a directory moved in from outside", change: func(t *testing.T, root, outside string) {
			writeFile(t, filepath.Join(outside, "pkg", "a", ".env"), "x", 0o644)
			rename(t, filepath.Join(outside, "pkg"), filepath.Join(root, "gen", "d2", "pkg"))
		}, masked: []string{"gen/d2/pkg/a/.env"}, maxLooked: 3},
		{name: "a directory replaced below a replaced one", before: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "s", "t", "u", "file"), "x", 0o644)
		}, change: func(t *testing.T, root, _ string) {
			if err := os.RemoveAll(filepath.Join(root, "s", "t")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "s", "t", "u", ".env"), "x", 0o644)
		}, masked: []string{"s/t/u/.env"}},
		{name: "a directory removed while open, and made again", before: func(t *testing.T, root, _ string) {
			if err := os.MkdirAll(filepath.Join(root, "o", "held"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, change: func(t *testing.T, root, _ string) {
			// While a descriptor holds it, the removed (empty) directory's
			// own watch hears nothing: its parent's names it.
			held := filepath.Join(root, "o", "held")
			fd, err := unix.Open(held, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(fd) })
			if err := os.Remove(held); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(held, ".env"), "x", 0o644)
		}, masked: []string{"o/held/.env"}, maxLooked: 2},
		{name: "a directory above the root replaced", change: func(t *testing.T, root, outside string) {
			rename(t, filepath.Dir(root), filepath.Join(outside, "old-top"))
			sourceFiles(t, filepath.Join(root, "gen"), 20, 3)
			writeFile(t, filepath.Join(root, "gen", "d1", ".env"), "x", 0o644)
		}, masked: []string{"gen/d1/.env"}},
		{name: "the root replaced", change: func(t *testing.T, root, outside string) {
			rename(t, root, filepath.Join(outside, "old-root"))
			sourceFiles(t, filepath.Join(root, "gen"), 20, 3)
			writeFile(t, filepath.Join(root, "gen", "d1", ".env"), "x", 0o644)
		}, masked: []string{"gen/d1/.env"}},
	}
}

// A process of its own (a per-call build) starts from the tree's cache
// file and sees every change of treeChanges on its first walk, also
// below a directory with statBatch subdirectories or more, whose visit
// stats them relative to it; and a file system mounted over one of them.
func TestDenyIndexChangesFromFile(t *testing.T) {
	pats := []string{"**/.env", "**/*.pem"}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	walk := func(t *testing.T, root, store string) treeResult {
		return walkOne(t, new(Host).index(pats), root, store, later())
	}
	if !inMountNS(t) {
		return
	}
	for _, tc := range treeChanges() {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := watchedTree(t), realDir(t)
			if n, _ := os.ReadDir(filepath.Join(root, "gen")); len(n) < statBatch {
				t.Fatalf("gen holds %d directories, fewer than statBatch", len(n))
			}
			store := filepath.Join(realDir(t), "index")
			if tc.before != nil {
				tc.before(t, root, outside)
			}
			walk(t, root, store)
			if again := walk(t, root, store); again.listed != 0 {
				t.Fatalf("an unchanged tree: listed %d directories", again.listed)
			}
			if tc.change != nil {
				tc.change(t, root, outside)
			}
			tc.check(t, pats, root, walk(t, root, store))
		})
	}
	t.Run("a mount", func(t *testing.T) {
		root := watchedTree(t)
		store := filepath.Join(realDir(t), "index")
		walk(t, root, store)
		mounted := filepath.Join(root, "gen", "d3")
		if err := unix.Mount("tmpfs", mounted, "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatal(err)
		}
		defer unix.Unmount(mounted, unix.MNT_DETACH)
		writeFile(t, filepath.Join(mounted, ".env"), "x", 0o644)
		got := walk(t, root, store)
		treeChange{masked: []string{"gen/d3/.env"}}.check(t, pats, root, got)
		if got.listed != 1 {
			t.Errorf("after a mount: listed %d directories, want 1", got.listed)
		}
	})
	// A directory listed anew keeps the file's records of its
	// subdirectories, which are then stat'ed, not listed.
	t.Run("a new file beside subdirectories", func(t *testing.T) {
		root := watchedTree(t)
		store := filepath.Join(realDir(t), "index")
		walk(t, root, store)
		writeFile(t, filepath.Join(root, "gen", "new.pem"), "x", 0o644)
		got := walk(t, root, store)
		treeChange{masked: []string{"gen/new.pem"}}.check(t, pats, root, got)
		if got.listed != 1 {
			t.Errorf("listed %d directories, want 1", got.listed)
		}
		if again := walk(t, root, store); again.listed != 0 {
			t.Errorf("the file written after the change: listed %d directories, want 0", again.listed)
		}
	})
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// Events dropped by an overflowed queue are not needed: the overflow
// makes every directory count as changed.
func TestDenyIndexWatchedOverflow(t *testing.T) {
	pats := []string{"**/.env"}
	root := watchedTree(t)
	d := newDirs(t, watch.DirsOptions{})
	ix := (&Host{Dirs: d}).index(pats)
	later := time.Now().Add(time.Hour)
	walkOne(t, ix, root, "", later)
	_, before := d.Sync()
	// More events than the queue holds, in a watched directory: the
	// queue overflows, and the event of the .env made next is dropped.
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Fatal(err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	flood := filepath.Join(root, "gen", "d0")
	fd, err := unix.Open(flood, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for i := range limit + 10 {
		if err := unix.Mknodat(fd, "flood"+strconv.Itoa(i), unix.S_IFREG|0o644, 0); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "gen", "d11", ".env"), "x", 0o644)
	got := walkOne(t, ix, root, "", later)
	if _, reset := d.Sync(); reset <= before {
		t.Errorf("the queue did not overflow (reset %d, was %d)", reset, before)
	}
	if !slices.Contains(relPaths(root, got.masks), "gen/d11/.env") {
		t.Errorf("gen/d11/.env not masked after an overflow: %q", relPaths(root, got.masks))
	}
}

// A walk that could not watch every directory (the budget spent) looks at
// those it could not watch, and finds what changed in them.
func TestDenyIndexWatchedBudget(t *testing.T) {
	pats := []string{"**/.env"}
	root := watchedTree(t)
	d := newDirs(t, watch.DirsOptions{Budget: 5})
	ix := (&Host{Dirs: d}).index(pats)
	later := time.Now().Add(time.Hour)
	walkOne(t, ix, root, "", later)
	if n := d.Watched(); n != 5 {
		t.Errorf("%d directories watched, want the budget's 5", n)
	}
	writeFile(t, filepath.Join(root, "gen", "d17", ".env"), "x", 0o644)
	got := walkOne(t, ix, root, "", later)
	if !slices.Contains(relPaths(root, got.masks), "gen/d17/.env") {
		t.Errorf("gen/d17/.env not masked: %q", relPaths(root, got.masks))
	}
	// root, gen, x and gen/d0…d19, of which 5 watched; and d17, if it
	// is one of them.
	if got.looked != 23-5 && got.looked != 23-5+1 {
		t.Errorf("looked at %d directories, want the 18 unwatched (and d17)", got.looked)
	}
}

// mountNSEnv marks the run of a test in user and mount namespaces of its
// own, where it may mount.
const mountNSEnv = "SCOPEGATE_TEST_MOUNT_NS"

// inMountNS runs the calling test again in new user and mount namespaces
// and reports whether this is that run. Without them the test is skipped,
// except under CI=true.
func inMountNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(mountNSEnv) != "" {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			t.Fatal(err)
		}
		return true
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), mountNSEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	var exit *osexec.ExitError
	switch {
	case err == nil:
		t.Logf("in new namespaces:\n%s", out)
	case errors.As(err, &exit):
		t.Fatalf("in new namespaces: %v\n%s", err, out)
	case os.Getenv("CI") == "true":
		t.Fatalf("new user and mount namespaces: %v", err)
	default:
		t.Skipf("new user and mount namespaces: %v", err)
	}
	return false
}

// A file system mounted over a directory of the tree raises no event on
// its watch: the walk after it looks again, and masks what the mount
// shows (a tmpfs, a bind of a directory from outside the tree).
func TestDenyIndexWatchedMount(t *testing.T) {
	if !inMountNS(t) {
		return
	}
	pats := []string{"**/.env"}
	root, outside := watchedTree(t), realDir(t)
	writeFile(t, filepath.Join(outside, "bound", ".env"), "x", 0o644)
	ix := (&Host{Dirs: newDirs(t, watch.DirsOptions{})}).index(pats)
	later := time.Now().Add(time.Hour)
	walkOne(t, ix, root, "", later)
	if again := walkOne(t, ix, root, "", later); again.looked != 0 {
		t.Fatalf("an unchanged tree: looked at %d directories", again.looked)
	}
	mounted := filepath.Join(root, "gen", "d3")
	if err := unix.Mount("tmpfs", mounted, "tmpfs", 0, "mode=0755"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(mounted, unix.MNT_DETACH)
	writeFile(t, filepath.Join(mounted, "sub", ".env"), "x", 0o644)
	if got := walkOne(t, ix, root, "", later); !slices.Contains(relPaths(root, got.masks), "gen/d3/sub/.env") {
		t.Errorf("a tmpfs mounted below the tree: masks %q", relPaths(root, got.masks))
	} else if got.listed != 2 {
		// Every directory stat'ed; listed, only the two the tmpfs shows.
		t.Errorf("after a mount: listed %d directories, want 2", got.listed)
	}
	bound := filepath.Join(root, "gen", "d4")
	if err := unix.Mount(filepath.Join(outside, "bound"), bound, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(bound, unix.MNT_DETACH)
	if got := walkOne(t, ix, root, "", later); !slices.Contains(relPaths(root, got.masks), "gen/d4/.env") {
		t.Errorf("a directory bound below the tree: masks %q", relPaths(root, got.masks))
	}
	if err := unix.Unmount(mounted, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	if got, want := walkOne(t, ix, root, "", later), plainMasks(t, pats, root); !slices.Equal(got.masks, want) {
		t.Errorf("after an unmount: masks %q, want %q", relPaths(root, got.masks), relPaths(root, want))
	}
}

// A process that watches directories keeps its index in memory and writes
// a tree's cache file at most every saveEvery, not on every change.
func TestDenyIndexWatchedSavesBehind(t *testing.T) {
	pats := []string{"**/.env"}
	root := watchedTree(t)
	store := filepath.Join(realDir(t), "index")
	ix := (&Host{Dirs: newDirs(t, watch.DirsOptions{})}).index(pats)
	later := time.Now().Add(time.Hour)
	walkOne(t, ix, root, store, later)
	files, _ := IndexFiles(store)
	if len(files) != 1 {
		t.Fatalf("index files %+v", files)
	}
	first, err := os.ReadFile(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "gen", "d4", ".env"), "x", 0o644)
	if got := walkOne(t, ix, root, store, later); got.listed != 1 {
		t.Fatalf("listed %d directories, want the changed one", got.listed)
	}
	if again, _ := os.ReadFile(files[0].Path); !slices.Equal(again, first) {
		t.Error("the cache file was written again within saveEvery")
	}
}
