package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func newDirs(t *testing.T, opts DirsOptions) *Dirs {
	t.Helper()
	d, err := NewDirs(opts)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no inotify here: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func openDir(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// watchDir watches the directory path, through a descriptor closed at
// once (one held open would keep a removed directory's inode, and its
// events, alive).
func watchDir(t *testing.T, d *Dirs, path string) *Dir {
	t.Helper()
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return d.Watch(fd)
}

// A change made after Watch is an event applied by the next Sync under a
// later epoch, on the directory and on the name it concerns; a change
// beside it is not.
func TestDirsEvents(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a", "b"} {
		must(t, os.Mkdir(filepath.Join(root, p), 0o755))
	}
	d := newDirs(t, DirsOptions{})
	a := watchDir(t, d, filepath.Join(root, "a"))
	b := watchDir(t, d, filepath.Join(root, "b"))
	if a == nil || b == nil {
		t.Fatal("not watched")
	}
	if again := watchDir(t, d, filepath.Join(root, "a")); again != a {
		t.Error("the same directory watched twice is two Dirs")
	}
	seen, _ := d.Sync()
	for _, tc := range []struct {
		name   string
		change func()
		entry  string
	}{
		{"a file made", func() { write(t, filepath.Join(root, "a", "new"), "x") }, "new"},
		{"a file's mode changed", func() { must(t, os.Chmod(filepath.Join(root, "a", "new"), 0o600)) }, "new"},
		{"a file renamed", func() { must(t, os.Rename(filepath.Join(root, "a", "new"), filepath.Join(root, "a", "other"))) }, "other"},
		{"a file removed", func() { must(t, os.Remove(filepath.Join(root, "a", "other"))) }, "other"},
		{"a directory made", func() { must(t, os.Mkdir(filepath.Join(root, "a", "sub"), 0o755)) }, "sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			now, _ := d.Sync()
			if a.Changed() <= seen || a.Changed() > now {
				t.Errorf("changed at %d, want after %d, by %d", a.Changed(), seen, now)
			}
			if a.NameChanged(tc.entry) <= seen || a.NameChanged("untouched") > seen {
				t.Errorf("%s changed at %d, untouched at %d (seen %d)", tc.entry, a.NameChanged(tc.entry), a.NameChanged("untouched"), seen)
			}
			if b.Changed() > seen {
				t.Error("a change beside b changed b")
			}
			seen = now
		})
	}
	t.Run("the directory itself moved", func(t *testing.T) {
		must(t, os.Rename(filepath.Join(root, "b"), filepath.Join(root, "c")))
		now, _ := d.Sync()
		if b.Changed() <= seen || b.Changed() > now {
			t.Errorf("changed at %d, want after %d", b.Changed(), seen)
		}
		seen = now
	})
	t.Run("the directory removed", func(t *testing.T) {
		n := d.Watched()
		must(t, os.Remove(filepath.Join(root, "c")))
		now, _ := d.Sync()
		if b.Changed() <= seen || b.Changed() > now || d.Watched() != n-1 {
			t.Errorf("changed at %d, want after %d; %d watched, was %d", b.Changed(), seen, d.Watched(), n)
		}
	})
}

// A mount made in this process's mount namespace, and an overflowed
// queue, are resets: Sync's reset moves past every epoch before them.
func TestDirsReset(t *testing.T) {
	root := t.TempDir()
	d := newDirs(t, DirsOptions{})
	a := watchDir(t, d, root)
	if a == nil {
		t.Fatal("not watched")
	}
	before, reset := d.Sync()
	if reset > before {
		t.Fatalf("reset %d after epoch %d with nothing changed", reset, before)
	}
	limit, err := readInt("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Fatal(err)
	}
	fd := openDir(t, root)
	for i := range limit + 1 {
		must(t, unix.Mknodat(fd, "f"+strconv.Itoa(i), unix.S_IFREG|0o600, 0))
	}
	if _, reset := d.Sync(); reset <= before {
		t.Errorf("an overflow: reset %d, want after %d", reset, before)
	}
}

// The budget bounds the watches taken; a directory already watched is
// given back past it.
func TestDirsBudget(t *testing.T) {
	root := t.TempDir()
	d := newDirs(t, DirsOptions{Budget: 2})
	var got []*Dir
	for _, name := range []string{"a", "b", "c"} {
		p := filepath.Join(root, name)
		must(t, os.Mkdir(p, 0o755))
		got = append(got, watchDir(t, d, p))
	}
	if got[0] == nil || got[1] == nil || got[2] != nil || d.Watched() != 2 {
		t.Errorf("watched %v (%d), want the first two", got, d.Watched())
	}
	if again := watchDir(t, d, filepath.Join(root, "a")); again != got[0] {
		t.Error("a watched directory not given back past the budget")
	}
	// A file system whose changes may not all go through this kernel.
	if x := watchDir(t, d, "/proc/self"); x != nil {
		t.Error("a directory of /proc was watched")
	}
}
