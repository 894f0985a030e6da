// Package atomicfile is the one writer of scopegate's own files that are
// replaced whole: the sessions' YAML files and mode, the in-flight
// journal, the calls, asks and grants a branch stores, the private view's
// probe cache and deny index.
//
// The rule, for every one of them: the data goes to a temporary file in
// the target's directory (so that the rename never crosses a filesystem),
// created mode 0600; it is written whole, forced to the disk (fsync) and
// closed, then renamed over the target. A reader sees the old file or the
// new one, never a part of either, two writers never tear a file (the last
// rename wins), and after a crash the target is never a file whose data
// did not reach the disk (the rename cannot overtake the data).
//
// Durable adds a fsync of the directory after the rename, without which
// the rename itself may be lost in a crash: a file whose loss would lose
// something (a session's files, a grant, an ask) is Durable; one whose
// loss costs a refused call or a walk (a stored call, a cache) or that
// only has to outlive its process (the in-flight journal) is not, which
// keeps a fsync off the calls' path.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Options say how a file is written. The zero value writes it atomically,
// its data on the disk before its name.
type Options struct {
	// Durable also forces the directory to the disk (fsync) after the
	// rename, before Write returns: the new name survives a crash.
	Durable bool
}

// fileMode is the mode of every file written.
const fileMode = 0o600

// tempMark is in the name of every temporary file, after the target's
// name: ".NAME.tmp-RANDOM".
const tempMark = ".tmp-"

// Write replaces path with data, as the package documentation says. The
// directory must exist. On error the target is left as it was and the
// temporary file is removed.
func Write(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempMark+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(fileMode); err != nil { // whatever the umask
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if o.Durable {
		return SyncDir(dir)
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

// IsTemp reports whether name (a base name) is a temporary file of Write,
// which a writer that died left behind: a directory's reader skips it.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}
