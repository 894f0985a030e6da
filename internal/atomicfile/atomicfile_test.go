package atomicfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	for name, o := range map[string]atomicfile.Options{"atomic": {}, "sync": {Sync: true}, "durable": {Durable: true}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "scope.yml")
			old := syscall.Umask(0o277) // the mode is 0600 whatever the umask
			defer syscall.Umask(old)
			for _, data := range []string{"first\n", "second, longer\n", ""} {
				if err := atomicfile.Write(path, []byte(data), o); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != data {
					t.Fatalf("read %q, %v; want %q", got, err, data)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("mode %v, %v", fi.Mode().Perm(), err)
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) != 1 {
				t.Fatalf("directory holds %v, %v: a temporary file was left", ents, err)
			}
		})
	}
}

// TestWriteFails: a write that cannot happen leaves the target as it was
// and no temporary file.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), []byte("x"), atomicfile.Options{}); err == nil {
		t.Fatal("wrote into a missing directory")
	}
	target := filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Write(target, []byte("x"), atomicfile.Options{Durable: true})
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("renamed over a directory that is not empty: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) {
			t.Fatalf("left %s", e.Name())
		}
	}
}

// TestWriteConcurrent: readers of a file many writers replace see one
// writer's data whole, never a mix.
func TestWriteConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := atomicfile.Write(path, bytes.Repeat([]byte{'a'}, 1<<16), atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			data := bytes.Repeat([]byte{byte('b' + w)}, 1<<16+w)
			for range 50 {
				if err := atomicfile.Write(path, data, atomicfile.Options{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 200 {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !bytes.Equal(got, bytes.Repeat(got[:1], len(got))) || len(got) != 1<<16+int(got[0]-'b') && got[0] != 'a' {
			t.Fatalf("read a torn file of %d bytes", len(got))
		}
	}
	wg.Wait()
}

func TestIsTemp(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, ".x") // not Write's: no mark
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, want := range map[string]bool{
		".scope.yml.tmp-123": true, ".01JD.json.tmp-9": true, ".tmp-5": true,
		"scope.yml": false, "01JD.json": false, "a.tmp-1": false, filepath.Base(f.Name()): false,
	} {
		if got := atomicfile.IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestWriteIn: the writer below an os.Root gives the file the caller's
// mode (exact, or less the umask) and reaches nothing outside the root,
// not even through a symbolic link.
func TestWriteIn(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tt := range []struct {
		o    atomicfile.Options
		want os.FileMode
	}{
		{atomicfile.Options{}, 0o600},
		{atomicfile.Options{Sync: true, ExactPerm: true}, 0o644},
		{atomicfile.Options{Durable: true, ExactPerm: true}, 0o644},
	} {
		if err := atomicfile.WriteIn(root, "note.org", []byte("text\n"), 0o644, tt.o); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "note.org"))
		if err != nil || string(got) != "text\n" {
			t.Fatalf("read %q, %v", got, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, "note.org")); err != nil || fi.Mode().Perm() != tt.want {
			t.Errorf("%+v: mode %v, %v; want %v", tt.o, fi.Mode().Perm(), err, tt.want)
		}
	}
	for _, name := range []string{"../escape", "out/escape", "missing/f"} {
		if err := atomicfile.WriteIn(root, name, []byte("x"), 0o600, atomicfile.Options{}); err == nil {
			t.Errorf("wrote %s", name)
		}
	}
	for _, d := range []string{dir, outside} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Name() != "note.org" && e.Name() != "out" {
				t.Errorf("%s holds %s", d, e.Name())
			}
		}
	}
}
