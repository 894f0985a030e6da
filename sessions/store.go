package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/policy"
)

// DefaultPreset is the preset of a session created without one.
const DefaultPreset = "executor"

// Store is a sessions root. Its zero value (plus Root) works: the real
// clock and no warnings.
type Store struct {
	// Root is the sessions root directory.
	Root string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Warn receives one line per fallback taken while reading; nil
	// discards them.
	Warn func(string)
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC().Truncate(time.Second)
	}
	return s.Now().UTC().Truncate(time.Second)
}

func (s *Store) warn(msg string) { orDiscard(s.Warn)(msg) }

// SessionDir is the directory of session id (which must be valid):
// <root>/<id>, or when there is none, the session directory whose
// metadata.yml names id as its session_id (an Emacs activity keeps its
// session in a directory named session).
func (s *Store) SessionDir(id string) string {
	dir := filepath.Join(s.Root, id)
	if _, err := os.Lstat(dir); err == nil {
		return dir
	}
	if d, ok := s.byMetadataID(id); ok {
		return d
	}
	return dir
}

// CurrentLink is the path of the current link of the session directory
// named id in the root (a session found by its metadata's id has its link
// elsewhere).
func (s *Store) CurrentLink(id string) string {
	return filepath.Join(s.Root, id, currentLink)
}

// byMetadataID finds the session directory whose current branch's
// metadata.yml has session_id id.
func (s *Store) byMetadataID(id string) (string, bool) {
	ents, err := os.ReadDir(s.Root)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		dir := filepath.Join(s.Root, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || !IsSessionDir(dir) {
			continue
		}
		branch := MainBranch
		if target, err := os.Readlink(filepath.Join(dir, currentLink)); err == nil {
			if name, ok := strings.CutPrefix(filepath.Clean(target), branchesDir+"/"); ok && ValidateBranch(name) == nil {
				branch = name
			}
		}
		if md, err := ReadMetadata(filepath.Join(dir, branchesDir, branch), nil); err == nil && md.SessionID == id {
			return dir, true
		}
	}
	return "", false
}

// CreateOptions describe a new session.
type CreateOptions struct {
	// Name is the human name a generated id is made from.
	Name string
	// ID, when set, is the session id instead of a generated one.
	ID string
	// ExistOK makes Create with an existing ID return that session.
	ExistOK bool
	// Preset is recorded in metadata.yml; empty means DefaultPreset.
	Preset string
	// Scope is the initial scope.yml; ScopeSource says in a comment
	// where it came from.
	Scope       policy.Document
	ScopeSource string
	// Optional metadata.
	Type, ParentSessionID, ProjectRoot string
	Worktrees                          []string
	// Mode is the main branch's mode (ModeEnforce or ModeObserve); empty
	// means enforce.
	Mode string
}

// Created is what Create made (or found, with ExistOK).
type Created struct {
	SessionID  string `json:"session_id"`
	SessionDir string `json:"session_dir"`
	Branch     string `json:"branch"`
	BranchDir  string `json:"branch_dir"`
	// Existed is true when ExistOK returned an existing session.
	Existed bool `json:"-"`
}

// Create makes a session with its main branch. The session is assembled in
// a hidden temporary directory and renamed into place, so no reader ever
// sees a half-made session and concurrent creators never collide: a
// generated id gets a -2, -3… suffix, an explicit id is ErrExists (or the
// existing session with ExistOK).
func (s *Store) Create(ctx context.Context, opts CreateOptions) (Created, error) {
	if opts.ID != "" {
		if err := ValidateID(opts.ID); err != nil {
			return Created{}, err
		}
	}
	if opts.Preset == "" {
		opts.Preset = DefaultPreset
	}
	if err := validName(opts.Preset); err != nil {
		return Created{}, fmt.Errorf("preset %q: %w", opts.Preset, err)
	}
	if opts.Mode != "" {
		if err := ValidMode(opts.Mode); err != nil {
			return Created{}, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	if opts.ID != "" && opts.ExistOK {
		if c, err := s.existing(opts.ID); err == nil || !errors.Is(err, ErrNotFound) {
			return c, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Created{}, fmt.Errorf("create session: %w", err)
	}
	if err := os.MkdirAll(s.Root, dirMode); err != nil {
		return Created{}, fmt.Errorf("create sessions root: %w", err)
	}
	tmp, err := os.MkdirTemp(s.Root, ".create-*")
	if err != nil {
		return Created{}, fmt.Errorf("create session: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	now := s.now()
	md := Metadata{SessionID: opts.ID, Created: now, Updated: now, Preset: opts.Preset, Type: opts.Type,
		ParentSessionID: opts.ParentSessionID, ProjectRoot: opts.ProjectRoot, Worktrees: opts.Worktrees}
	branchDir := filepath.Join(tmp, branchesDir, MainBranch)
	if err := s.populate(tmp, branchDir, opts); err != nil {
		return Created{}, err
	}
	base := opts.ID
	if base == "" {
		base = Slug(opts.Name) + "-" + now.Format("20060102150405")
	}
	for n := 1; n <= 1000; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		md.SessionID = id
		if err := writeYAML(filepath.Join(branchDir, MetadataFile), md); err != nil {
			return Created{}, err
		}
		dst := filepath.Join(s.Root, id)
		err := os.Rename(tmp, dst)
		if err == nil {
			if err := atomicfile.SyncDir(s.Root); err != nil {
				return Created{}, err
			}
			return Created{SessionID: id, SessionDir: dst, Branch: MainBranch, BranchDir: filepath.Join(dst, branchesDir, MainBranch)}, nil
		}
		if !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTEMPTY) {
			return Created{}, fmt.Errorf("create session %q: %w", id, err)
		}
		if opts.ID != "" {
			if opts.ExistOK {
				return s.existing(opts.ID)
			}
			return Created{}, fmt.Errorf("session %q %w", opts.ID, ErrExists)
		}
	}
	return Created{}, fmt.Errorf("create session %q: too many sessions with this name and time", base)
}

// populate writes a new session's files into the (unpublished) tmp dir.
func (s *Store) populate(tmp, branchDir string, opts CreateOptions) error {
	if err := os.MkdirAll(branchDir, dirMode); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if err := os.Chmod(filepath.Join(tmp, branchesDir), dirMode); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if err := os.Chmod(tmp, dirMode); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if err := writeFile(filepath.Join(branchDir, SessionFile), nil); err != nil {
		return err
	}
	scope, err := opts.Scope.Marshal()
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	header := "# Scope of this session branch: every tool call is decided against it.\n"
	if opts.ScopeSource != "" {
		header += "# Created from " + strings.ReplaceAll(opts.ScopeSource, "\n", " ") + ".\n"
	}
	if err := writeFile(filepath.Join(branchDir, ScopeFile), append([]byte(header), scope...)); err != nil {
		return err
	}
	if err := writeYAML(filepath.Join(branchDir, BranchMetadataFile), BranchMetadata{Created: s.now()}); err != nil {
		return err
	}
	if opts.Mode == ModeObserve {
		if err := writeFile(filepath.Join(branchDir, ModeFile), []byte(opts.Mode+"\n")); err != nil {
			return err
		}
	}
	if err := os.Symlink(filepath.Join(branchesDir, MainBranch), filepath.Join(tmp, currentLink)); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

func (s *Store) existing(id string) (Created, error) {
	dir, err := s.Resolve(id, "")
	if err != nil {
		return Created{}, err
	}
	return Created{SessionID: id, SessionDir: s.SessionDir(id), Branch: filepath.Base(dir), BranchDir: dir, Existed: true}, nil
}

func writeYAML(path string, v any) error {
	data, err := marshalYAML(v)
	if err != nil {
		return err
	}
	return writeFile(path, data)
}

// Current returns the name of the branch the session's current link points
// to. A session without the link (an older or damaged one) falls back to
// main, with a warning.
func (s *Store) Current(id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	dir := s.SessionDir(id)
	target, err := os.Readlink(filepath.Join(dir, currentLink))
	if err == nil {
		name, ok := strings.CutPrefix(filepath.Clean(target), branchesDir+"/")
		if !ok || ValidateBranch(name) != nil {
			return "", fmt.Errorf("session %q: current points to %q, not to a branch", id, target)
		}
		return name, nil
	}
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
		return "", fmt.Errorf("session %q %w", id, ErrNotFound)
	}
	if errors.Is(err, fs.ErrNotExist) {
		s.warn(fmt.Sprintf("session %q has no current link; using branch %q", id, MainBranch))
		return MainBranch, nil
	}
	return "", fmt.Errorf("session %q: read current: %w", id, err)
}

// Resolve returns the branch directory of session id and branch (empty:
// where current points), after opening it with [OpenBranch] (which applies
// the legacy migrations). It touches only that session's directory.
func (s *Store) Resolve(id, branch string) (string, error) {
	b, err := s.Open(id, branch)
	if err != nil {
		return "", err
	}
	return b.Dir, nil
}

// Open is Resolve returning the opened branch.
func (s *Store) Open(id, branch string) (*Branch, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if branch != "" {
		if err := ValidateBranch(branch); err != nil {
			return nil, err
		}
		if _, err := os.Stat(s.SessionDir(id)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("session %q %w", id, ErrNotFound)
		}
	} else {
		var err error
		if branch, err = s.Current(id); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(s.SessionDir(id), branchesDir, branch)
	b, err := OpenBranch(dir, s.Warn)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("branch %q of session %q %w", branch, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open session %q: %w", id, err)
	}
	if b.SessionID != id {
		b.SessionID = id
	}
	return b, nil
}
