package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"
)

// File names inside a branch directory.
const (
	SessionFile        = "session.md"
	ScopeFile          = "scope.yml"
	MetadataFile       = "metadata.yml"
	BranchMetadataFile = "branch-metadata.yml"
	legacyPlanFile     = "scope-plan.yml"
	legacyPresetFile   = "preset.md"
	currentLink        = "current"
	branchesDir        = "branches"
)

// ErrCorrupt marks a metadata file that exists but cannot be parsed. It is
// reported and left as it is.
var ErrCorrupt = errors.New("corrupt")

// Metadata is metadata.yml: the session's identity and how it was created.
type Metadata struct {
	SessionID       string    `yaml:"session_id" json:"session_id"`
	Created         time.Time `yaml:"created" json:"created,omitzero"`
	Updated         time.Time `yaml:"updated" json:"updated,omitzero"`
	Preset          string    `yaml:"preset" json:"preset"`
	Type            string    `yaml:"type,omitempty" json:"type,omitempty"`
	ParentSessionID string    `yaml:"parent_session_id,omitempty" json:"parent_session_id,omitempty"`
	ProjectRoot     string    `yaml:"project_root,omitempty" json:"project_root,omitempty"`
	Worktrees       []string  `yaml:"worktrees,omitempty" json:"worktrees,omitempty"`
}

// Root is the directory a session's relative paths mean: its project
// root, else its first worktree; "" when it has neither.
func (m Metadata) Root() string {
	if m.ProjectRoot != "" {
		return m.ProjectRoot
	}
	if len(m.Worktrees) > 0 {
		return m.Worktrees[0]
	}
	return ""
}

// MarshalYAML writes preset double-quoted, the one spelling the original
// gptel code finds it by; the rest as plain YAML.
func (m Metadata) MarshalYAML() (any, error) {
	type plain Metadata
	var n yaml.Node
	if err := n.Encode(plain(m)); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "preset" {
			n.Content[i+1].Style = yaml.DoubleQuotedStyle
		}
	}
	return &n, nil
}

// BranchMetadata is branch-metadata.yml: where a branch came from.
type BranchMetadata struct {
	// ParentBranch is empty for a session's first branch.
	ParentBranch        string    `yaml:"parent_branch,omitempty" json:"parent_branch,omitempty"`
	Created             time.Time `yaml:"created" json:"created,omitzero"`
	BranchPointPosition *int64    `yaml:"branch_point_position,omitempty" json:"branch_point_position,omitempty"`
}

// rawMetadata is what older and newer writers put in metadata.yml: read
// leniently (unknown keys ignored, timestamps in any ISO 8601 spelling).
type rawMetadata struct {
	SessionID       string   `yaml:"session_id"`
	Created         string   `yaml:"created"`
	Updated         string   `yaml:"updated"`
	Preset          string   `yaml:"preset"`
	AgentType       string   `yaml:"agent_type"`
	Type            string   `yaml:"type"`
	ParentSessionID string   `yaml:"parent_session_id"`
	ProjectRoot     string   `yaml:"project_root"`
	Worktrees       []string `yaml:"worktrees"`
}

func parseTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// ReadMetadata reads a branch's session metadata: metadata.yml, else the
// legacy scope-plan.yml (with a warning); agent_type stands in for a
// missing preset (with a warning). A file that cannot be parsed is an error
// wrapping [ErrCorrupt]; no file at all wraps [ErrNotFound].
func ReadMetadata(branchDir string, warn func(string)) (Metadata, error) {
	warn = orDiscard(warn)
	path := filepath.Join(branchDir, MetadataFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		plan := filepath.Join(branchDir, legacyPlanFile)
		data, err = os.ReadFile(plan)
		if errors.Is(err, fs.ErrNotExist) {
			return Metadata{}, fmt.Errorf("read metadata of %s: %w", branchDir, ErrNotFound)
		}
		if err == nil {
			warn(fmt.Sprintf("%s has no %s; reading the legacy %s instead (recreate the session to migrate)", branchDir, MetadataFile, legacyPlanFile))
			path = plan
		}
	}
	if err != nil {
		return Metadata{}, fmt.Errorf("read metadata: %w", err)
	}
	var raw rawMetadata
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return Metadata{}, fmt.Errorf("%s is %w (left untouched): %v", path, ErrCorrupt, err)
	}
	md := Metadata{
		SessionID: raw.SessionID, Created: parseTime(raw.Created), Updated: parseTime(raw.Updated),
		Preset: raw.Preset, Type: raw.Type, ParentSessionID: raw.ParentSessionID,
		ProjectRoot: raw.ProjectRoot, Worktrees: raw.Worktrees,
	}
	if md.Preset == "" && raw.AgentType != "" {
		warn(fmt.Sprintf("%s has no preset; using its legacy agent_type %q", path, raw.AgentType))
		md.Preset = raw.AgentType
	}
	return md, nil
}

// ReadBranchMetadata reads a branch's branch-metadata.yml.
func ReadBranchMetadata(branchDir string) (BranchMetadata, error) {
	path := filepath.Join(branchDir, BranchMetadataFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return BranchMetadata{}, fmt.Errorf("read %s: %w", path, ErrNotFound)
	}
	if err != nil {
		return BranchMetadata{}, fmt.Errorf("read branch metadata: %w", err)
	}
	var raw struct {
		ParentBranch        string `yaml:"parent_branch"`
		Created             string `yaml:"created"`
		BranchPointPosition *int64 `yaml:"branch_point_position"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return BranchMetadata{}, fmt.Errorf("%s is %w: %v", path, ErrCorrupt, err)
	}
	return BranchMetadata{ParentBranch: raw.ParentBranch, Created: parseTime(raw.Created), BranchPointPosition: raw.BranchPointPosition}, nil
}

func marshalYAML(v any) ([]byte, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	return data, nil
}

func orDiscard(warn func(string)) func(string) {
	if warn == nil {
		return func(string) {}
	}
	return warn
}
