// Package atomicfile is the one writer of scopegate's own files that are
// replaced whole: the sessions' YAML files and mode, the in-flight
// journal, the calls, asks and grants a branch stores, the private view's
// probe cache and deny index.
//
// The rule, for every one of them: the data goes to a temporary file in
// the target's directory (so that the rename never crosses a filesystem),
// created mode 0600; it is written whole and closed, then renamed over the
// target. A reader sees the old file or the new one, never a part of
// either, and two writers never tear a file: the last rename wins. What a
// crash of the host may undo is the caller's choice, by two fsyncs:
//
//   - Sync forces the file's data to the disk before the rename, so that
//     a name that survives a crash never holds a file whose data did not
//     (an empty one);
//   - Durable adds the directory after the rename, so that the name
//     itself survives.
//
// A file whose loss would lose what was promised (a session's files, a
// grant, an ask) is Durable. The in-flight journal is Sync: its records
// must outlive their process, and the fsync of the directory on every
// call's path is not paid for them. A file whose reader checks what it
// reads and copes with its loss (a stored call a crash loses is one exec
// refused; a cache that fails its check is rebuilt) gets neither, so that
// no fsync is on a hook's or a walk's path.
//
// WriteIn is the same writer for the files scopegate writes on behalf of
// the agent or the user (a write_file call, a roam note): every name is
// resolved below an os.Root, so that nothing outside it is reached, and
// the file's mode is the caller's (an existing file keeps its own).
package atomicfile

import (
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Options say what of a write survives a crash of the host (see the
// package documentation). The zero value writes the file atomically and
// forces nothing to the disk.
type Options struct {
	// Sync forces the file's data to the disk (fsync) before the rename.
	Sync bool
	// Durable forces the file's data before the rename and the directory
	// after it, before Write returns: the new file survives a crash.
	Durable bool
	// ExactPerm, for WriteIn, gives the file its mode whatever the umask
	// (the mode of the file it replaces); otherwise the umask applies, as
	// to any new file. Write's mode is always exact.
	ExactPerm bool
}

// fileMode is the mode of every file written.
const fileMode = 0o600

// tempMark is in the name of every temporary file, after the target's
// name: ".NAME.tmp-RANDOM".
const tempMark = ".tmp-"

// Write replaces path with data, as the package documentation says: mode
// 0600 whatever the umask. The directory must exist. On error the target
// is left as it was and the temporary file is removed.
func Write(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer root.Close()
	o.ExactPerm = true
	return write(root, filepath.Base(path), path, data, fileMode, o)
}

// WriteIn replaces name, a path below root, with data, as Write does, the
// file given mode perm (see Options.ExactPerm). The directory must exist.
// On error the target is left as it was and the temporary file is
// removed.
func WriteIn(root *os.Root, name string, data []byte, perm fs.FileMode, o Options) error {
	return write(root, name, name, data, perm, o)
}

// write is Write and WriteIn: name below root, which errors call label.
// Every name is resolved in root, and the temporary file is created anew,
// never through a symbolic link.
func write(root *os.Root, name, label string, data []byte, perm fs.FileMode, o Options) error {
	dir := filepath.Dir(name)
	tmp := filepath.Join(dir, "."+filepath.Base(name)+tempMark+strings.ToLower(rand.Text()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", label, err)
	}
	fail := func(err error) error {
		f.Close()
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", label, err)
	}
	if o.ExactPerm {
		if err := f.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if o.Sync || o.Durable {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", label, err)
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", label, err)
	}
	if !o.Durable {
		return nil
	}
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync the directory of %s: %w", label, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync the directory of %s: %w", label, err)
	}
	return nil
}

// SyncDir forces a directory's entries to the disk: what makes a rename or
// a new name in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// IsTemp reports whether name (a base name) is a temporary file of Write
// or WriteIn, which a writer that died left behind: a directory's reader skips it.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}
