package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/policy"
)

// Branch is an opened branch directory.
type Branch struct {
	// SessionID is the session's id: metadata.yml's session_id when valid,
	// else the session directory's name.
	SessionID string
	// Name is the branch name (the directory's base name).
	Name string
	// Dir is the branch directory; SessionDir the session directory.
	Dir, SessionDir string
	// Metadata is the session metadata; MetadataErr says why it could not
	// be read (wrapping ErrNotFound or ErrCorrupt) and Metadata is zero.
	Metadata    Metadata
	MetadataErr error
}

// ScopeFile is the path of the branch's scope.yml.
func (b *Branch) ScopeFile() string { return filepath.Join(b.Dir, ScopeFile) }

// OpenBranch opens a branch directory: it must exist and be a directory.
// Sessions written by older versions are migrated: a legacy preset.md (or
// scope-plan.yml) holding scope sections becomes scope.yml when the branch
// has none. Each fallback and a corrupt metadata.yml produce one warning;
// neither is fatal, since scope.yml alone decides calls.
func OpenBranch(dir string, warn func(string)) (*Branch, error) {
	warn = orDiscard(warn)
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("branch directory %s %w", dir, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open branch: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open branch: %s is not a directory", dir)
	}
	b := &Branch{Name: filepath.Base(dir), Dir: dir}
	if parent := filepath.Dir(dir); filepath.Base(parent) == branchesDir {
		b.SessionDir = filepath.Dir(parent)
	}
	if err := migrateLegacyScope(dir, warn); err != nil {
		return nil, err
	}
	b.Metadata, b.MetadataErr = ReadMetadata(dir, warn)
	if errors.Is(b.MetadataErr, ErrCorrupt) {
		warn(b.MetadataErr.Error())
	}
	switch {
	case ValidateID(b.Metadata.SessionID) == nil:
		b.SessionID = b.Metadata.SessionID
	case b.SessionDir != "":
		b.SessionID = filepath.Base(b.SessionDir)
	}
	return b, nil
}

// migrateLegacyScope writes scope.yml from the scope sections of a legacy
// preset.md front matter or scope-plan.yml, when scope.yml is missing.
func migrateLegacyScope(dir string, warn func(string)) error {
	scope := filepath.Join(dir, ScopeFile)
	if _, err := os.Lstat(scope); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var src string
	var data []byte
	for _, name := range []string{legacyPresetFile, legacyPlanFile} {
		d, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if name == legacyPresetFile {
			var ok bool
			if d, ok = frontMatter(d); !ok {
				warn(fmt.Sprintf("%s has no YAML front matter; no scope.yml migrated", filepath.Join(dir, name)))
				return nil
			}
		}
		src, data = name, d
		break
	}
	if src == "" {
		return nil
	}
	doc, found, err := scopeSections(data)
	if err != nil {
		warn(fmt.Sprintf("legacy %s of %s holds no valid scope (%v); no scope.yml migrated, every call is denied", src, dir, err))
		return nil
	}
	if !found && src == legacyPlanFile {
		return nil
	}
	out, err := doc.Marshal()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", src, err)
	}
	unlock, err := lockBranch(dir)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(scope); !errors.Is(err, fs.ErrNotExist) {
		return nil // migrated by someone else meanwhile
	}
	header := []byte("# Migrated from the legacy " + src + ".\n")
	if err := writeFile(scope, append(header, out...)); err != nil {
		return fmt.Errorf("migrate %s: %w", src, err)
	}
	warn(fmt.Sprintf("migrated the legacy %s of %s into %s", src, dir, ScopeFile))
	return nil
}

// frontMatter returns the YAML between a leading "---" line and the next.
func frontMatter(data []byte) ([]byte, bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		if rest, ok = bytes.CutPrefix(data, []byte("---\r\n")); !ok {
			return nil, false
		}
	}
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return nil, true
	}
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return nil, false
	}
	return rest[:end+1], true
}

// scopeSections picks paths, org_roam_patterns and shell_commands out of a
// YAML mapping that may hold other keys, and parses them strictly.
func scopeSections(data []byte) (policy.Document, bool, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return policy.Document{}, false, err
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return policy.Document{}, false, nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return policy.Document{}, false, fmt.Errorf("not a mapping")
	}
	keep := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "paths", "org_roam_patterns", "shell_commands":
			keep.Content = append(keep.Content, m.Content[i], m.Content[i+1])
		}
	}
	if len(keep.Content) == 0 {
		return policy.Document{}, false, nil
	}
	out, err := yaml.Marshal(keep)
	if err != nil {
		return policy.Document{}, false, err
	}
	doc, err := policy.ParseDocument(out)
	return doc, true, err
}
