package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// This file decides which file a program word runs. A word with a slash
// names a path. A bare word is looked up on the trusted PATH: the
// directories of Env.Path that are absolute and that no write root of the
// scope holds, so that nothing a tool call can write is found by name. The
// gateway runs the file found here; it does no other lookup.

// ErrProgramNotFound: no file of that name on the trusted PATH.
var ErrProgramNotFound = errors.New("not found on the trusted PATH")

// TrustedPath returns the directories bare program names are looked up in:
// those of env.Path that are absolute and whose canonical form no write
// root of the scope holds; the current directory and relative entries are
// never searched.
func (s *Scope) TrustedPath(env Env) []string {
	var out []string
	for _, d := range env.Path {
		if !filepath.IsAbs(d) {
			continue
		}
		real, err := canonicalize(filepath.Clean(d), env.fs())
		if err != nil || s.writable(real) {
			continue
		}
		out = append(out, filepath.Clean(d))
	}
	return out
}

// writable reports whether a write root of the scope holds p.
func (s *Scope) writable(p string) bool {
	for _, w := range s.writeRoots {
		if within(p, w) {
			return true
		}
	}
	return false
}

// LookPath returns the file a program word runs, in canonical form: for a
// word with a slash the file it names (relative to cwd); for a bare name
// the first regular executable file of that name on the trusted PATH. A
// file found by name that resolves into a write root is not trusted
// (a symbolic link on PATH into the project).
func (s *Scope) LookPath(word, cwd string, env Env) (string, error) {
	if strings.Contains(word, "/") {
		abs, err := absPath(word, cwd, env)
		if err != nil {
			return "", fmt.Errorf("program %s: %w", word, err)
		}
		real, err := canonicalize(abs, env.fs())
		if err != nil {
			return "", fmt.Errorf("program %s: %w", word, err)
		}
		return real, nil
	}
	if word == "" || word == "." || word == ".." {
		return "", fmt.Errorf("program %q: %w", word, ErrProgramNotFound)
	}
	for _, d := range s.TrustedPath(env) {
		real, err := canonicalize(filepath.Join(d, word), env.fs())
		if err != nil {
			continue
		}
		fi, err := env.fs().Stat(real)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if s.writable(real) {
			continue
		}
		return real, nil
	}
	return "", fmt.Errorf("program %s: %w (%s)", word, ErrProgramNotFound, strings.Join(s.TrustedPath(env), ":"))
}
