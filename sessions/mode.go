package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ModeFile is the file of a branch holding its mode (docs/learning.md). It lies
// beside scope.yml, in the branch directory no tool call can write, and
// not in scope.yml, whose gptel writer drops the keys it does not know.
// A missing file means enforce.
const ModeFile = "scope-mode"

// The modes of a branch.
const (
	// ModeEnforce refuses every call the scope does not allow.
	ModeEnforce = "enforce"
	// ModeObserve lets a call the scope would refuse for a scope reason run,
	// and records what enforce mode would have refused it for.
	ModeObserve = "observe"
)

// ErrInvalidMode reports a mode other than enforce and observe.
var ErrInvalidMode = errors.New("invalid mode")

// ValidMode reports whether m names a mode; "" is not one.
func ValidMode(m string) error {
	if m == ModeEnforce || m == ModeObserve {
		return nil
	}
	return fmt.Errorf("%w %q: it is enforce or observe", ErrInvalidMode, m)
}

// ReadMode returns the mode of a branch: ModeEnforce when it has no mode
// file. A mode file that cannot be read or holds anything but a mode is an
// error naming the file; callers deciding calls then enforce (fail closed).
func ReadMode(branchDir string) (string, error) {
	path := filepath.Join(branchDir, ModeFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ModeEnforce, nil
	}
	if err != nil {
		return ModeEnforce, fmt.Errorf("read mode: %w", err)
	}
	m := string(bytes.TrimSpace(data))
	if err := ValidMode(m); err != nil {
		return ModeEnforce, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// WriteMode sets the mode of a branch, atomically under the branch's lock,
// and returns the mode it had before.
func WriteMode(branchDir, mode string) (string, error) {
	if err := ValidMode(mode); err != nil {
		return "", err
	}
	if fi, err := os.Stat(branchDir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("set mode: branch directory %s %w", branchDir, ErrNotFound)
	}
	unlock, err := lockBranch(branchDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	old, err := ReadMode(branchDir)
	if err != nil {
		old = "invalid"
	}
	if err := writeFile(filepath.Join(branchDir, ModeFile), []byte(mode+"\n")); err != nil {
		return old, fmt.Errorf("set mode: %w", err)
	}
	return old, nil
}
