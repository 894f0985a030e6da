package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// A git configuration names files git reads or runs: include.path and
// includeIf.*.path (more configuration), core.hooksPath (the hooks), and
// programs in the values of keys that run them (core.fsmonitor,
// core.pager, alias.*, diff.*.textconv, filter.*.clean…), a command line
// whose words may be paths. A path there that tool calls can write lets
// them choose what git runs: gitConfigRefs lists those paths.

// gitConfigRef is one file a configuration names, and the key naming it.
type gitConfigRef struct {
	key, path string
}

// maxGitConfig is the largest configuration file read; a bigger one cannot
// be checked.
const maxGitConfig = 64<<10 - 1

// gitKeyRunsProgram reports whether the value of key (lower case) in
// section is a program git runs: a command line.
func gitKeyRunsProgram(section, key string) bool {
	switch section {
	case "alias", "pager":
		return true
	}
	switch key {
	case "askpass", "fsmonitor", "external", "textconv", "clean", "smudge", "process", "update", "browser", "tool":
		return true
	}
	for _, suffix := range []string{"command", "cmd", "program", "hook", "helper", "editor", "pager", "driver", "filter", "proxy", "pack"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// gitConfigRefs returns the files the configuration data (the file at
// file, of a repository whose working tree is top) names. Relative
// include paths are taken against the file's directory, relative hook and
// program paths against top, as git does; ~/ against home. An error means
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
		name := section + "." + key
		var paths []string
		var base string
		switch {
		case (section == "include" || section == "includeif") && key == "path":
			paths, base = []string{value}, filepath.Dir(file)
		case section == "core" && key == "hookspath":
			paths, base = []string{value}, top
		case gitKeyRunsProgram(section, key):
			paths, base = commandPaths(value), top
		}
		for _, path := range paths {
			switch {
			case path == "~" || strings.HasPrefix(path, "~/"):
				if home == "" {
					return nil, fmt.Errorf("%s:%d: %s names %s, and no home directory is known", file, n, name, path)
				}
				path = filepath.Join(home, strings.TrimPrefix(path, "~"))
			case strings.HasPrefix(path, "%(prefix)/") || strings.HasPrefix(path, "~"):
				return nil, fmt.Errorf("%s:%d: %s names %s, which is not followed", file, n, name, path)
			case !filepath.IsAbs(path):
				path = filepath.Join(base, path)
			}
			refs = append(refs, gitConfigRef{key: name, path: filepath.Clean(path)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return refs, nil
}

// commandPaths returns the words of a command line (a configuration
// value git runs, through the shell when it needs one) that may be paths:
// those holding a slash or starting with ~, split at blanks, quotes and
// the shell's operators, with a leading "!" (an alias run by the shell)
// dropped. URLs are not paths.
func commandPaths(value string) []string {
	value = strings.TrimPrefix(strings.TrimSpace(value), "!")
	var out []string
	for _, w := range strings.FieldsFunc(value, func(r rune) bool {
		return strings.ContainsRune(" \t\n'\"`;|&()<>=$", r)
	}) {
		if strings.Contains(w, "://") || (!strings.Contains(w, "/") && !strings.HasPrefix(w, "~")) {
			continue
		}
		out = append(out, w)
	}
	return out
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

// gitConfigNamesWritable returns a file that the configurations git
// reads for the repository directory gitDir (working tree top) name and
// tool calls can write, with the key naming it ("" when there is none); an
// error when a configuration cannot be checked. Those are the user's
// (~/.gitconfig, ~/.config/git/config), the repository's config and
// config.worktree, and its common directory's.
func (c *checker) gitConfigNamesWritable(gitDir, top string) (path, key string, err error) {
	fsys := c.env.fs()
	var files []string
	if c.env.Home != "" {
		files = append(files, filepath.Join(c.env.Home, ".gitconfig"), filepath.Join(c.env.Home, ".config", "git", "config"))
	}
	dirs := []string{gitDir}
	if data, err := fsys.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	for _, dir := range dirs {
		files = append(files, filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"))
	}
	for _, file := range files {
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
	return "", "", nil
}
