package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A branch's tools.org carries :MANAGED: (Entry.Managed) on its first entry
// after the machine's managed policy changed. What the log last recorded
// is kept beside it, in the branch directory where no tool call can write:
// one line, the policy's SHA-256 or "none".

// ManagedMarkPath is the file that keeps the managed policy the tools.org
// at logPath last recorded.
func ManagedMarkPath(logPath string) string {
	return filepath.Join(filepath.Dir(logPath), "."+filepath.Base(logPath)+".managed")
}

// ReadManagedMark returns what the tools.org at logPath last recorded of
// the managed policy: its SHA-256, "none", or "" when it never recorded
// one.
func ReadManagedMark(logPath string) (string, error) {
	data, err := os.ReadFile(ManagedMarkPath(logPath))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read managed mark: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// WriteManagedMark records that the tools.org at logPath has recorded sum
// (written to a temporary file renamed over the mark).
func WriteManagedMark(logPath, sum string) error {
	path := ManagedMarkPath(logPath)
	f, err := os.CreateTemp(filepath.Dir(path), ".managed-*")
	if err != nil {
		return fmt.Errorf("write managed mark: %w", err)
	}
	_, err = f.WriteString(sum + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write managed mark: %w", err)
	}
	return nil
}
