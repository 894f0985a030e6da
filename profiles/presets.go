package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
)

// Preset is what scopegate knows of a preset: the scope a session created
// with it starts from.
type Preset struct {
	// ScopeProfile names a profile; it wins over an inline scope.
	ScopeProfile string
	// Scope is the inline scope, nil when the preset has none.
	Scope *policy.Document
}

// presetEntry is one preset in presets.yml: a scope_profile, or the scope
// sections inline.
type presetEntry struct {
	ScopeProfile string             `yaml:"scope_profile"`
	Paths        *policy.PathRules  `yaml:"paths"`
	OrgRoam      *policy.RoamRules  `yaml:"org_roam_patterns"`
	Shell        *policy.ShellRules `yaml:"shell_commands"`
}

// ParsePresets parses a presets.yml strictly: a mapping from preset name to
// a scope_profile and/or the inline scope sections. Unknown keys, duplicate
// keys and invalid names are errors.
func ParsePresets(data []byte) (map[string]Preset, error) {
	var raw map[string]presetEntry
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse presets: %w", yamlmsg.Error(data, err, &raw))
	}
	out := make(map[string]Preset, len(raw))
	for name, e := range raw {
		if !ValidName(name) {
			return nil, fmt.Errorf("parse presets: preset %q: %w", name, ErrInvalidName)
		}
		if e.ScopeProfile != "" && !ValidName(e.ScopeProfile) {
			return nil, fmt.Errorf("parse presets: preset %q: scope_profile %q: %w", name, e.ScopeProfile, ErrInvalidName)
		}
		p := Preset{ScopeProfile: e.ScopeProfile}
		if e.Paths != nil || e.OrgRoam != nil || e.Shell != nil {
			var doc policy.Document
			if e.Paths != nil {
				doc.Paths = *e.Paths
			}
			if e.OrgRoam != nil {
				doc.OrgRoam = *e.OrgRoam
			}
			if e.Shell != nil {
				doc.Shell = *e.Shell
			}
			p.Scope = &doc
		}
		out[name] = p
	}
	return out, nil
}

// Presets returns the built-in presets overridden by name by those of
// <config dir>/presets.yml. A broken user file is an error; the built-ins
// are still returned with it.
func (l Loader) Presets() (map[string]Preset, error) {
	data, err := builtinFS.ReadFile("builtin/presets.yml")
	if err != nil {
		return nil, fmt.Errorf("read built-in presets: %w", err)
	}
	presets, err := ParsePresets(data)
	if err != nil {
		return nil, fmt.Errorf("built-in presets: %w", err)
	}
	if l.ConfigDir == "" {
		return presets, nil
	}
	path := filepath.Join(l.ConfigDir, "presets.yml")
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return presets, nil
	}
	if err != nil {
		return presets, fmt.Errorf("read %s: %w", path, err)
	}
	user, err := ParsePresets(data)
	if err != nil {
		return presets, fmt.Errorf("%s: %w", path, err)
	}
	for name, p := range user {
		presets[name] = p
	}
	return presets, nil
}
