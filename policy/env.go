package policy

import (
	"io/fs"
	"os"
)

// FS is the read-only view of the filesystem a decision may consult: to
// resolve symlinks, count hard links, expand globs and find git directories.
// [OSFS] is the real one; tests may hand in another.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
}

// OSFS is the [FS] of the running system.
type OSFS struct{}

// Lstat calls [os.Lstat].
func (OSFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Stat calls [os.Stat].
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Readlink calls [os.Readlink].
func (OSFS) Readlink(name string) (string, error) { return os.Readlink(name) }

// ReadDir calls [os.ReadDir].
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// ReadFile reads at most 64 KiB of a file: decisions only peek at small
// files (git's .git pointer files).
func (OSFS) ReadFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := f.Read(buf)
	if n > 0 {
		return buf[:n], nil
	}
	return nil, err
}

// Env is everything a decision is handed besides the scope and the call.
// Its zero value works: the real filesystem, no home directory, no protected
// roots.
type Env struct {
	// FS is the filesystem view; nil means [OSFS].
	FS FS
	// Home is the home directory that ~ and $HOME expand to; empty means
	// they cannot be expanded (such paths are then denied).
	Home string
	// HomeOf returns the home directory of a named user, for ~user. Nil
	// means ~user cannot be expanded (and such paths are denied).
	HomeOf func(user string) (string, bool)
	// Getenv returns the value of an environment variable that a shell
	// command may reference (besides HOME). Nil means none is known.
	Getenv func(name string) (string, bool)
	// Protected are absolute roots no scope can make writable: the sessions
	// root and the config dir (docs/design.md, Paths).
	Protected []string
	// RoamDir is the org-roam directory that roam subdirectories are
	// relative to.
	RoamDir string
	// Cwd is the working directory used when the call has none.
	Cwd string
	// Path is the PATH programs are looked up in (the gateway's own); see
	// [Scope.TrustedPath]. Nil means programs are not looked up: a bare
	// word matches allow entries by name, a word with a slash only an
	// entry naming that path.
	Path []string
	// Execution says who runs what is decided; the zero value is
	// [ExecutionExternal].
	Execution Execution
	// Masked, in confined execution while a call runs, reports whether a
	// program reading every file below dir reads nothing the scope denies
	// nor a regular file with more than one hard link (what the file tools
	// refuse), because the private view it runs in hides those files;
	// follow says
	// the program follows the symbolic links it meets. The runner sets it
	// for each program it is about to start. Nil in confined execution
	// means the call has not started: recursive readers are then decided
	// when they run, against the view they get.
	Masked func(dir string, follow bool) bool
	// ReadOnlyRepo, in confined execution, says whether git may run on the
	// repository directory gitDir although this scope lets programs write
	// its configuration or hooks: nil when every program of the call sees
	// gitDir read-only (the private view binds it so) and its configuration
	// and hooks are as they were when the session began; otherwise why
	// not. Nil (the function) means no view can: git is then refused there.
	ReadOnlyRepo func(gitDir string) error

	// notes collects what an allowed decision says besides "allowed"
	// (a condition it holds under); set by Decide.
	notes *[]string
}

// Execution names who runs a decided call (docs/reference.md, The call and the decision).
type Execution string

// The execution modes.
const (
	// ExecutionExternal: the caller runs the command itself (check, a
	// hook's file tools), so the decision is all that stands in the way.
	ExecutionExternal Execution = "external"
	// ExecutionConfined: scopegate's runner runs it, in a private view
	// where denied files are masked, re-checking every program it starts.
	ExecutionConfined Execution = "confined"
)

// execution is e's mode, external when unset.
func (e Env) execution() Execution {
	if e.Execution == ExecutionConfined {
		return ExecutionConfined
	}
	return ExecutionExternal
}

// fs is the filesystem view of e, the OS one when none is set.
func (e Env) fs() FS {
	if e.FS == nil {
		return OSFS{}
	}
	return e.FS
}
