package sessions

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Emacs activity sessions (gptel's activities integration) keep their
// worktrees in the session file of a branch, as a comment line the
// original appends once:
//
//	<!-- gptel-activity-worktrees: ("/home/u/act/worktrees/a/**" "/home/u/act/worktrees/b/**") -->
//
// The list is printed by Emacs Lisp's %S: strings in double quotes, with
// backslash escaping a quote or a backslash. gptel writes each worktree as
// the glob of its tree (the directory with "/**"); a plain directory is
// read as well.

// activityComment starts the worktree comment.
const activityComment = "<!-- gptel-activity-worktrees:"

// ActivityWorktrees returns the worktrees an activity session's branch
// lists in its session file (session.md, else session.org), or none.
func ActivityWorktrees(branchDir string) ([]string, error) {
	for _, name := range []string{SessionFile, "session.org"} {
		data, err := os.ReadFile(filepath.Join(branchDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if ws, ok := parseWorktreeComment(data); ok {
			return ws, nil
		}
	}
	return nil, nil
}

// parseWorktreeComment finds the worktree comment in a session file and
// returns its absolute paths; ok is false when there is none or it does not
// parse.
func parseWorktreeComment(data []byte) (paths []string, ok bool) {
	i := bytes.LastIndex(data, []byte(activityComment))
	if i < 0 {
		return nil, false
	}
	rest := data[i+len(activityComment):]
	end := bytes.Index(rest, []byte("-->"))
	if end < 0 {
		return nil, false
	}
	list := strings.TrimSpace(string(rest[:end]))
	if list == "nil" || list == "()" {
		return nil, true
	}
	if !strings.HasPrefix(list, "(") || !strings.HasSuffix(list, ")") {
		return nil, false
	}
	s := list[1 : len(list)-1]
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			return paths, true
		}
		if s[0] != '"' {
			return nil, false
		}
		var b strings.Builder
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) {
				j++
			}
			b.WriteByte(s[j])
		}
		if j >= len(s) {
			return nil, false
		}
		p := filepath.Clean(b.String())
		for strings.HasSuffix(p, "/**") {
			p = filepath.Clean(strings.TrimSuffix(p, "**"))
		}
		if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
			return nil, false
		}
		paths = append(paths, p)
		s = s[j+1:]
	}
}

// IsSessionDir reports whether dir is a session: it holds branches/ or a
// current link, or the files of the layout before branches.
func IsSessionDir(dir string) bool {
	for _, name := range []string{branchesDir, currentLink, SessionFile, MetadataFile, ScopeFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}
