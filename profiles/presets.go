package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// Presets returns the built-in presets overridden by name by the gptel
// preset files of PresetsDir, then by those of <config dir>/presets.yml. A broken user file is an error; the built-ins
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
	if l.PresetsDir != "" {
		gptel, err := readGptelPresets(l.PresetsDir)
		if err != nil {
			return presets, err
		}
		for name, p := range gptel {
			presets[name] = p
		}
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

// gptelPreset is what scopegate reads of a gptel preset file's front
// matter; gptel's own keys (backend, model, tools…) are left alone.
type gptelPreset struct {
	ScopeProfile *string `yaml:"scope_profile"`
}

// ParseGptelPreset reads the scope_profile of a gptel preset file: YAML
// front matter between "---" lines at the top of a Markdown file. A file
// without front matter or without scope_profile has none (""); front
// matter that does not parse is an error with its line.
func ParseGptelPreset(data []byte) (string, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", nil
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return "", errors.New("front matter has no closing ---")
	}
	var p gptelPreset
	// A blank line in place of the opening "---" keeps the line numbers
	// of errors those of the file.
	doc := []byte("\n" + front)
	if err := yaml.Unmarshal(doc, &p); err != nil {
		return "", fmt.Errorf("front matter: %w", yamlmsg.Error(doc, err, &p))
	}
	if p.ScopeProfile == nil {
		return "", nil
	}
	if !ValidName(*p.ScopeProfile) {
		return "", fmt.Errorf("scope_profile %q: %w", *p.ScopeProfile, ErrInvalidName)
	}
	return *p.ScopeProfile, nil
}

// readGptelPresets reads every <name>.md of dir as a preset; those that
// name no scope_profile are left out (they give no scope).
func readGptelPresets(dir string) (map[string]Preset, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("gptel presets: %w", err)
	}
	out := map[string]Preset{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || e.IsDir() || !ValidName(name) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("gptel preset %s: %w", path, err)
		}
		profile, err := ParseGptelPreset(data)
		if err != nil {
			return nil, fmt.Errorf("gptel preset %s: %w", path, err)
		}
		if profile != "" {
			out[name] = Preset{ScopeProfile: profile}
		}
	}
	return out, nil
}
