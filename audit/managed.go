package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scopegate/scopegate/internal/atomicfile"
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
// (atomicfile, nothing forced to the disk: a mark a crash loses makes the
// next entry record the policy again).
func WriteManagedMark(logPath, sum string) error {
	if err := atomicfile.Write(ManagedMarkPath(logPath), []byte(sum+"\n"), atomicfile.Options{}); err != nil {
		return fmt.Errorf("write managed mark: %w", err)
	}
	return nil
}
