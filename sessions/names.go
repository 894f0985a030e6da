// Package sessions keeps gptel-compatible session and branch directories on
// disk: the layout, metadata.yml, branch-metadata.yml, the current symlink,
// atomic rewrites of scope.yml (comment-preserving expansion under a
// per-branch lock) and the fallbacks for sessions written by older versions.
package sessions

import (
	"errors"
	"fmt"
	"github.com/scopegate/scopegate/profiles"
	"strings"
	"unicode"
)

// Errors callers branch on.
var (
	// ErrInvalidName marks a session id or branch name that is rejected
	// before anything touches the disk.
	ErrInvalidName = errors.New("invalid name")
	// ErrNotFound marks a session or branch that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists marks a session or branch that already exists.
	ErrExists = errors.New("already exists")
	// ErrInvalidExpansion marks a scope expansion that would leave an
	// invalid scope.yml, or that cannot apply to the current one.
	ErrInvalidExpansion = errors.New("invalid scope expansion")
)

// MainBranch is the branch a new session starts on.
const MainBranch = "main"

// ValidateID checks a session id: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ and no "..".
func ValidateID(id string) error {
	if err := validName(id); err != nil {
		return fmt.Errorf("session id %q: %w", id, err)
	}
	return nil
}

// ValidateBranch checks a branch name with the rules of [ValidateID].
func ValidateBranch(name string) error {
	if err := validName(name); err != nil {
		return fmt.Errorf("branch name %q: %w", name, err)
	}
	return nil
}

func validName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(s) > 128:
		return fmt.Errorf("%w: longer than 128 characters", ErrInvalidName)
	case strings.Contains(s, ".."):
		return fmt.Errorf("%w: contains \"..\"", ErrInvalidName)
	case !profiles.ValidName(s):
		return fmt.Errorf("%w: use letters, digits, '.', '_' and '-', starting with a letter or digit", ErrInvalidName)
	}
	return nil
}

// Slug turns a human session name into the first part of a generated id:
// lower case ASCII letters and digits joined by single dashes, at most 100
// characters; "session" when nothing is left.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if !ok {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		return "session"
	}
	return s
}
