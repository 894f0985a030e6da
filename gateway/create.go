package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/scopegate/scopegate/policy"
)

// A confined run is granted only what exists (Landlock binds its rules to
// files and directories, and the view shows a path only when it exists),
// so a one-time grant to write a file that does not exist yet could not
// let a program create it. scopegate makes such a file, empty, just before
// the run it is granted for, and removes it after the run if the program
// left it as it was made. Granting the directory instead would let the
// program write every file in it.

// unworkable says why a widening offered for call could not let it run
// ("" when it can): a path to write that does not exist must be a file the
// call creates in an existing directory. A directory the call makes (mkdir,
// install -d) cannot be granted that way, and neither can a path whose
// directory does not exist.
func unworkable(ws []policy.Widening, call policy.Call) string {
	var dirs map[string]bool
	for _, w := range ws {
		if w.Flag != policy.WidenWrite || hasGlob(w.Value) {
			continue
		}
		if _, err := os.Lstat(w.Value); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		parent := filepath.Dir(w.Value)
		if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
			return fmt.Sprintf("%s does not exist, nor does its directory %s, and a one-time grant can only let a call write a file that exists or one scopegate makes in an existing directory",
				w.Value, parent)
		}
		if dirs == nil {
			dirs = madeDirs(call)
		}
		if dirs[w.Value] {
			return fmt.Sprintf("the call makes the directory %s, which a one-time grant cannot let it do (only a file can be made for it); the user can widen the scope to its parent instead",
				w.Value)
		}
	}
	return ""
}

// hasGlob reports whether a widening's value is a pattern rather than one
// path.
func hasGlob(v string) bool { return strings.ContainsAny(v, "*?[{") }

// madeDirs are the directories a shell call's mkdir and install -d name,
// as absolute paths (their directories' symbolic links resolved). A call
// that is not a shell command, or that does not parse, makes none.
func madeDirs(call policy.Call) map[string]bool {
	out := map[string]bool{}
	if call.Tool != policy.ToolShell {
		return out
	}
	var a policy.ShellArgs
	if policy.DecodeArgs(call.Args, &a) != nil {
		return out
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(a.Command), "")
	if err != nil {
		return out
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		var words []string
		for _, w := range ce.Args {
			words = append(words, w.Lit())
		}
		prog := path.Base(words[0])
		if prog != "mkdir" && !(prog == "install" && containsWord(words, "-d", "--directory")) {
			return true
		}
		for _, w := range words[1:] {
			if w == "" || strings.HasPrefix(w, "-") {
				continue
			}
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(call.Cwd, p)
			}
			p = filepath.Clean(p)
			out[p] = true
			if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
				out[filepath.Join(dir, filepath.Base(p))] = true
			}
		}
		return true
	})
	return out
}

func containsWord(words []string, any ...string) bool {
	for _, w := range words {
		for _, a := range any {
			if w == a {
				return true
			}
		}
	}
	return false
}

// madeFile is a file scopegate made, empty, for a granted run.
type madeFile struct {
	path  string
	ino   uint64
	mtime time.Time
}

// makeGrantedFiles makes, empty, every file a grant's --write widenings
// name that does not exist yet, in its existing directory, so that the
// confined run can be granted it. Creation is exclusive: a path that
// appears meanwhile is left to its maker.
func makeGrantedFiles(ws []policy.Widening) ([]madeFile, error) {
	var made []madeFile
	for _, w := range ws {
		if w.Flag != policy.WidenWrite || hasGlob(w.Value) {
			continue
		}
		f, err := os.OpenFile(w.Value, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			removeUntouched(made)
			return nil, fmt.Errorf("make %s for the granted run: %w", w.Value, err)
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			removeUntouched(made)
			return nil, fmt.Errorf("make %s for the granted run: %w", w.Value, err)
		}
		m := madeFile{path: w.Value, mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			m.ino = st.Ino
		}
		made = append(made, m)
	}
	return made, nil
}

// removeUntouched removes the files scopegate made that the run left as
// they were made: still empty, the same file, not modified since.
func removeUntouched(made []madeFile) {
	for _, m := range made {
		fi, err := os.Lstat(m.path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || !fi.ModTime().Equal(m.mtime) {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ino != m.ino {
			continue
		}
		_ = os.Remove(m.path)
	}
}
