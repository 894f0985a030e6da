package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Summary is one line of a session listing.
type Summary struct {
	SessionID     string    `json:"session_id"`
	SessionDir    string    `json:"session_dir"`
	CurrentBranch string    `json:"current_branch,omitempty"`
	Preset        string    `json:"preset,omitempty"`
	Created       time.Time `json:"created,omitzero"`
	Updated       time.Time `json:"updated,omitzero"`
	// Error says why the session's metadata could not be read.
	Error string `json:"error,omitempty"`
}

// List returns every session under the root, sorted by directory: one
// directory read, then per session its current link and metadata.yml.
// Hidden and invalid names (temporary directories of creators) and
// directories that are not sessions are skipped. Warnings
// of legacy fallbacks are not repeated here.
func (s *Store) List(ctx context.Context) ([]Summary, error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	quiet := &Store{Root: s.Root, Now: s.Now}
	out := make([]Summary, 0, len(entries))
	for _, e := range entries {
		// A directory is a session only if it looks like one: an Emacs
		// activity keeps worktrees/ beside its session/.
		if id := e.Name(); e.IsDir() && ValidateID(id) == nil && IsSessionDir(filepath.Join(s.Root, id)) {
			out = append(out, Summary{SessionID: id, SessionDir: filepath.Join(s.Root, id)})
		}
	}
	// Reading metadata dominates; spread it over the CPUs.
	workers := min(runtime.GOMAXPROCS(0), len(out))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(out) || ctx.Err() != nil {
					return
				}
				quiet.summarize(&out[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

func (s *Store) summarize(sum *Summary) {
	branch, err := s.Current(sum.SessionID)
	if err != nil {
		sum.Error = err.Error()
		return
	}
	sum.CurrentBranch = branch
	md, err := ReadMetadata(filepath.Join(sum.SessionDir, branchesDir, branch), nil)
	if err != nil {
		sum.Error = err.Error()
	}
	sum.Preset, sum.Created, sum.Updated = md.Preset, md.Created, md.Updated
	// The id is metadata's when it names another one (an activity's
	// session/ directory); `--session` finds it by that id.
	if md.SessionID != "" && md.SessionID != sum.SessionID && ValidateID(md.SessionID) == nil {
		sum.SessionID = md.SessionID
	}
}

// BranchInfo describes one branch of a session.
type BranchInfo struct {
	Name    string `json:"name"`
	Dir     string `json:"dir"`
	Current bool   `json:"current"`
	// Mode is the branch's mode: enforce or observe ("invalid" when its
	// mode file holds neither; calls are then enforced).
	Mode string `json:"mode"`
	BranchMetadata
	// Error says why branch-metadata.yml could not be read.
	Error string `json:"error,omitempty"`
}

// Branches lists a session's branches, sorted by name.
func (s *Store) Branches(id string) ([]BranchInfo, error) {
	current, err := s.Current(id)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(s.SessionDir(id), branchesDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list branches of %q: %w", id, err)
	}
	var out []BranchInfo
	for _, e := range entries {
		if !e.IsDir() || ValidateBranch(e.Name()) != nil {
			continue
		}
		bi := BranchInfo{Name: e.Name(), Dir: filepath.Join(dir, e.Name()), Current: e.Name() == current}
		bm, err := ReadBranchMetadata(bi.Dir)
		if err != nil && !errors.Is(err, ErrNotFound) {
			bi.Error = err.Error()
		}
		bi.BranchMetadata = bm
		bi.Mode, err = ReadMode(bi.Dir)
		if err != nil {
			bi.Mode = "invalid"
			if bi.Error == "" {
				bi.Error = err.Error()
			}
		}
		out = append(out, bi)
	}
	return out, nil
}

// Info is the detail of one session.
type Info struct {
	Metadata
	SessionDir    string       `json:"session_dir"`
	CurrentBranch string       `json:"current_branch"`
	Branches      []BranchInfo `json:"branches"`
	// MetadataError says why metadata could not be read.
	MetadataError string `json:"metadata_error,omitempty"`
}

// Show returns a session's metadata (from its current branch), its current
// branch and all its branches.
func (s *Store) Show(id string) (Info, error) {
	b, err := s.Open(id, "")
	if err != nil {
		return Info{}, err
	}
	info := Info{Metadata: b.Metadata, SessionDir: s.SessionDir(id), CurrentBranch: b.Name}
	info.SessionID = id
	if b.MetadataErr != nil {
		info.MetadataError = b.MetadataErr.Error()
	}
	if info.Branches, err = s.Branches(id); err != nil {
		return Info{}, err
	}
	return info, nil
}
