// Package profiles holds named scope profiles and presets: the built-in ones
// embedded in the binary and the user's in the config dir, which override
// them by name. It turns a preset, a profile or a list of worktrees into the
// scope a new session starts with, resolving ${project_root} on the way.
package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/scopegate/scopegate/policy"
)

//go:embed builtin/*.yml
var builtinFS embed.FS

// ErrNotFound is returned for a profile that neither the config dir nor the
// built-ins define.
var ErrNotFound = errors.New("not found")

// ErrInvalidName is returned for a profile name that cannot be a file name.
var ErrInvalidName = errors.New("invalid profile name")

// SourceBuiltin is the Source of a profile embedded in the binary.
const SourceBuiltin = "built-in"

// Loader finds profiles and presets. Its zero value knows only the built-ins.
type Loader struct {
	// ConfigDir is the scopegate config dir: profiles live in
	// ConfigDir/scope-profiles/<name>.yml, presets in ConfigDir/presets.yml.
	ConfigDir string
	// PresetsDir, when set, holds gptel preset files (config.yml's
	// gptel_presets_dir); see [ParseGptelPreset].
	PresetsDir string
}

// Info describes one available profile.
type Info struct {
	Name string `json:"name"`
	// Source is SourceBuiltin or the path of the user's file.
	Source string `json:"source"`
	// Overrides is true when a user file hides a built-in of the same name.
	Overrides bool `json:"overrides_builtin,omitempty"`
}

// ValidName reports whether name can name a profile, preset, session or
// branch: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ and no "..". (Checked by hand:
// the regular expression's bounded repetition costs milliseconds to compile
// at every process start.)
func ValidName(name string) bool {
	if name == "" || len(name) > 128 || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

func (l Loader) userDir() string {
	if l.ConfigDir == "" {
		return ""
	}
	return filepath.Join(l.ConfigDir, "scope-profiles")
}

// Raw returns a profile's text and where it came from: the user's file when
// there is one, else the built-in.
func (l Loader) Raw(name string) (data []byte, source string, err error) {
	if !ValidName(name) {
		return nil, "", fmt.Errorf("profile %q: %w", name, ErrInvalidName)
	}
	if dir := l.userDir(); dir != "" {
		p := filepath.Join(dir, name+".yml")
		data, err := os.ReadFile(p)
		if err == nil {
			return data, p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("read profile %q: %w", name, err)
		}
	}
	if name == "presets" {
		return nil, "", fmt.Errorf("profile %q: %w", name, ErrNotFound)
	}
	data, err = builtinFS.ReadFile("builtin/" + name + ".yml")
	if err != nil {
		return nil, "", fmt.Errorf("profile %q: %w", name, ErrNotFound)
	}
	return data, SourceBuiltin, nil
}

// Load returns a profile parsed strictly (the scope.yml format).
func (l Loader) Load(name string) (policy.Document, error) {
	data, source, err := l.Raw(name)
	if err != nil {
		return policy.Document{}, err
	}
	doc, err := policy.ParseDocument(data)
	if err != nil {
		return policy.Document{}, fmt.Errorf("profile %q (%s): %w", name, source, err)
	}
	if source == SourceBuiltin {
		doc.Paths.Deny = withCredentials(doc.Paths.Deny)
	}
	return doc, nil
}

// CredentialDeny is the one list of credential stores, shell histories and
// process entries that every built-in profile and every worktree scope
// denies: what no tool call of a coding agent needs to read, and what
// would leak a secret if it did. User profiles choose for themselves.
func CredentialDeny() []string {
	return []string{
		"**/.ssh/**", "**/.gnupg/**", "**/.aws/**", "**/.azure/**", "**/.config/gcloud/**",
		"**/.kube/**", "**/.docker/config.json", "**/.git-credentials", "**/.config/gh/**", "**/.config/hub",
		"**/.npmrc", "**/.pypirc", "**/.cargo/credentials*", "**/.gem/credentials", "**/.terraform.d/credentials*",
		"**/.config/pip/pip.conf", "**/.pip/pip.conf", "**/.config/containers/auth.json", "**/.m2/settings.xml",
		"**/.gradle/gradle.properties", "**/.composer/auth.json", "**/.config/composer/auth.json",
		"**/.password-store/**", "**/.netrc", "**/.authinfo*", "**/.*_history", "**/.python_history",
		"/proc/self/**", "/proc/thread-self/**", "/proc/[0-9]*/**",
	}
}

// withCredentials is deny with CredentialDeny added, each entry once.
func withCredentials(deny []string) []string {
	out := append([]string(nil), deny...)
	for _, c := range CredentialDeny() {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// List returns every available profile, sorted by name.
func (l Loader) List() ([]Info, error) {
	byName := map[string]Info{}
	builtins, err := fs.Glob(builtinFS, "builtin/*.yml")
	if err != nil {
		return nil, fmt.Errorf("list built-in profiles: %w", err)
	}
	for _, p := range builtins {
		name := strings.TrimSuffix(filepath.Base(p), ".yml")
		if name == "presets" {
			continue
		}
		byName[name] = Info{Name: name, Source: SourceBuiltin}
	}
	if dir := l.userDir(); dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list profiles: %w", err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".yml")
			if !ok || e.IsDir() || !ValidName(name) {
				continue
			}
			_, over := byName[name]
			byName[name] = Info{Name: name, Source: filepath.Join(dir, e.Name()), Overrides: over}
		}
	}
	out := make([]Info, 0, len(byName))
	for _, in := range byName {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// StandardDeny is the deny list every worktree scope carries.
func StandardDeny() []string {
	return []string{"**/.git/**", "**/runtime/**", "**/.env", "**/node_modules/**", "**/.ssh/**"}
}

// WorktreeScope is the scope of a session given explicit worktree
// directories: read and write below each, plus [StandardDeny]. The
// directories are taken literally: glob syntax in them is escaped.
func WorktreeScope(dirs []string) policy.Document {
	var doc policy.Document
	for _, d := range dirs {
		pat := strings.TrimSuffix(policy.EscapeGlob(filepath.Clean(d)), "/") + "/**"
		doc.Paths.Read = append(doc.Paths.Read, pat)
		doc.Paths.Write = append(doc.Paths.Write, pat)
	}
	doc.Paths.Deny = withCredentials(StandardDeny())
	return doc
}
