package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// BranchOptions describe a new branch.
type BranchOptions struct {
	// From is the parent branch; empty means where current points.
	From string
	// At is the branch point position in the parent's session.md.
	At *int64
	// Switch points current at the new branch.
	Switch bool
}

// CreateBranch makes branch name in session id: scope.yml, metadata.yml
// and the mode copied from the parent branch (byte for byte: comments stay, a corrupt
// metadata.yml is carried, not rewritten), an empty session.md and a new
// branch-metadata.yml. Like sessions, it is assembled aside and renamed
// into place.
func (s *Store) CreateBranch(ctx context.Context, id, name string, opts BranchOptions) (Created, error) {
	if err := ValidateID(id); err != nil {
		return Created{}, err
	}
	if err := ValidateBranch(name); err != nil {
		return Created{}, err
	}
	if opts.At != nil && *opts.At < 1 {
		return Created{}, fmt.Errorf("branch point position %d: %w: must be 1 or more", *opts.At, ErrInvalidName)
	}
	parent, err := s.Open(id, opts.From)
	if err != nil {
		return Created{}, err
	}
	if err := ctx.Err(); err != nil {
		return Created{}, fmt.Errorf("create branch: %w", err)
	}
	branches := filepath.Join(s.SessionDir(id), branchesDir)
	tmp, err := os.MkdirTemp(branches, ".create-*")
	if err != nil {
		return Created{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, dirMode); err != nil {
		return Created{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	for _, f := range []string{ScopeFile, MetadataFile, legacyPlanFile, ModeFile} {
		data, err := os.ReadFile(filepath.Join(parent.Dir, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Created{}, fmt.Errorf("create branch %q: %w", name, err)
		}
		if err := writeFile(filepath.Join(tmp, f), data); err != nil {
			return Created{}, err
		}
	}
	if err := writeFile(filepath.Join(tmp, SessionFile), nil); err != nil {
		return Created{}, err
	}
	bm := BranchMetadata{ParentBranch: parent.Name, Created: s.now(), BranchPointPosition: opts.At}
	if err := writeYAML(filepath.Join(tmp, BranchMetadataFile), bm); err != nil {
		return Created{}, err
	}
	dst := filepath.Join(branches, name)
	if err := os.Rename(tmp, dst); err != nil {
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			return Created{}, fmt.Errorf("branch %q of session %q %w", name, id, ErrExists)
		}
		return Created{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	if err := atomicfile.SyncDir(branches); err != nil {
		return Created{}, err
	}
	c := Created{SessionID: id, SessionDir: s.SessionDir(id), Branch: name, BranchDir: dst}
	if opts.Switch {
		if err := s.Switch(id, name); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Switch points session id's current link at branch name, atomically: a
// new link renamed over the old one.
func (s *Store) Switch(id, name string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := ValidateBranch(name); err != nil {
		return err
	}
	dir := s.SessionDir(id)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %q %w", id, ErrNotFound)
	}
	if fi, err := os.Stat(filepath.Join(dir, branchesDir, name)); err != nil || !fi.IsDir() {
		return fmt.Errorf("branch %q of session %q %w", name, id, ErrNotFound)
	}
	tmp := filepath.Join(dir, ".current.tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.Symlink(filepath.Join(branchesDir, name), tmp); err != nil {
		return fmt.Errorf("switch session %q to %q: %w", id, name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, currentLink)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("switch session %q to %q: %w", id, name, err)
	}
	return atomicfile.SyncDir(dir)
}
