package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// A git configuration may name other files git reads or runs: an
// include.path or includeIf.*.path (more configuration), core.hooksPath
// (the hooks) and core.fsmonitor (a program, unless a boolean). When the
// repository directory is read-only for git (Env.ReadOnlyRepo), those
// files must be too: gitConfigRefs lists them.

// gitConfigRef is one file a configuration names, and the key naming it.
type gitConfigRef struct {
	key, path string
}

// maxGitConfig is the largest configuration file read; a bigger one cannot
// be checked.
const maxGitConfig = 64<<10 - 1

// gitConfigRefs returns the files the configuration data (the file at
// file, of a repository whose working tree is top) names. Relative
// include paths are taken against the file's directory, relative hook and
// monitor paths against top, as git does; ~/ against home. An error means
// the data cannot be read as a configuration.
func gitConfigRefs(data []byte, file, top, home string) ([]gitConfigRef, error) {
	if len(data) > maxGitConfig {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxGitConfig)
	}
	var refs []gitConfigRef
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitConfig+1)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: a section header without ]", file, n)
			}
			// [name "subsection"] or [name.subsection]: the name decides.
			name := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(name, " \t\"."); i >= 0 {
				name = name[:i]
			}
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		key, value, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		value = gitConfigValue(value)
		if strings.HasSuffix(value, `\`) {
			// A value continued on the next line is not followed.
			return nil, fmt.Errorf("%s:%d: a value continued on the next line", file, n)
		}
		var base string
		switch {
		case (section == "include" || section == "includeif") && key == "path":
			base = filepath.Dir(file)
		case section == "core" && key == "hookspath":
			base = top
		case section == "core" && key == "fsmonitor":
			switch strings.ToLower(value) {
			case "", "true", "false", "yes", "no", "on", "off", "1", "0":
				continue
			}
			base = top
		default:
			continue
		}
		path := value
		switch {
		case path == "~" || strings.HasPrefix(path, "~/"):
			if home == "" {
				return nil, fmt.Errorf("%s:%d: %s names %s, and no home directory is known", file, n, key, path)
			}
			path = filepath.Join(home, strings.TrimPrefix(path, "~"))
		case strings.HasPrefix(path, "%(prefix)/") || strings.HasPrefix(path, "~"):
			return nil, fmt.Errorf("%s:%d: %s names %s, which is not followed", file, n, key, path)
		case !filepath.IsAbs(path):
			path = filepath.Join(base, path)
		}
		refs = append(refs, gitConfigRef{key: section + "." + key, path: filepath.Clean(path)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return refs, nil
}

// gitConfigValue is a raw value without its comment and quotes.
func gitConfigValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case ch == '"':
			quoted = !quoted
		case ch == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (ch == '#' || ch == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(ch)
		}
	}
	return strings.TrimSpace(b.String())
}

// gitConfigNamesWritable returns, for a repository directory git is to
// run on read-only, a file its configuration names that tool calls can
// write, with the key naming it ("" when there is none); an error when a
// configuration cannot be checked. The configurations read are the
// repository's config and config.worktree, and its common directory's.
func (c *checker) gitConfigNamesWritable(gitDir, top string) (path, key string, err error) {
	fsys := c.env.fs()
	dirs := []string{gitDir}
	if data, err := fsys.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	for _, dir := range dirs {
		for _, name := range []string{"config", "config.worktree"} {
			file := filepath.Join(dir, name)
			data, err := fsys.ReadFile(file)
			if err != nil {
				continue // git reads no file that is not there
			}
			refs, err := gitConfigRefs(data, file, top, c.env.Home)
			if err != nil {
				return "", "", err
			}
			for _, r := range refs {
				if c.s.globsAllowWrite(r.path, c.env) || c.s.globsAllowWrite(filepath.Join(r.path, "x"), c.env) {
					return r.path, r.key, nil
				}
			}
		}
	}
	return "", "", nil
}
