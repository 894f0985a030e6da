package exec

import (
	"context"
	"errors"
	"fmt"
	"github.com/scopegate/scopegate/exec/netproxy"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scopegate/scopegate/policy"
)

// Checker re-decides single accesses at run time. The gateway implements it
// around the session's compiled scope. A non-empty result means denied.
type Checker interface {
	// CheckExec decides one fully expanded argv about to run in cwd, in
	// confined execution: view says what the program's private view does
	// (policy.Env.Masked and policy.Env.ReadOnlyRepo).
	CheckExec(argv []string, cwd string, view View) []policy.Violation
	// CheckPath decides one file access relative to cwd.
	CheckPath(path string, access policy.Access, cwd string) []policy.Violation
	// CheckWalked decides an access to an entry a directory walk met, as
	// CheckPath would, without asking the filesystem
	// (policy.Scope.CheckWalked): path is the entry's absolute, clean
	// path as the call spells it, resolved where it really is; dir says
	// whether it is a directory, links is a regular file's link count (0:
	// not read, the hard-link rule is then the caller's).
	CheckWalked(path, resolved string, dir bool, links uint64, access policy.Access) []policy.Violation
	// LookPath returns the file a program word runs (policy.Scope.LookPath):
	// what the decision matched is what runs, with no other lookup.
	LookPath(word, cwd string) (string, error)
	// TrustedPath is the PATH programs get: the directories bare names are
	// looked up in, none of which a tool call can write.
	TrustedPath() []string
}

// View is what a program's run-time check may ask of the private view
// the program is about to run in.
type View interface {
	// Masked reports whether a program reading every file below dir
	// meets nothing denied (policy.Env.Masked).
	Masked(dir string, follow bool) bool
	// ReadOnlyRepo says whether the repository directory gitDir is
	// read-only for every program of the call, and unchanged since the
	// session began (policy.Env.ReadOnlyRepo).
	ReadOnlyRepo(gitDir string) error
}

// ConfineMode says how shell calls are confined.
type ConfineMode int

const (
	// ConfineRequired runs programs only under Landlock; where Landlock is
	// unavailable shell calls fail with [ErrNoLandlock]. It is the zero value.
	ConfineRequired ConfineMode = iota
	// ConfineAllowUnconfined uses Landlock where available and otherwise
	// runs programs unconfined, reporting Confinement "none".
	ConfineAllowUnconfined
	// ConfineOff never uses Landlock. It exists for measurements and for
	// hosts whose users accept running without it; results say "none".
	ConfineOff
)

// NamespaceMode says whether shell programs get a private view of the
// filesystem (new user, mount, PID and IPC namespaces) under Landlock.
type NamespaceMode int

const (
	// NamespacesAuto gives programs the private view where the host lets
	// an unprivileged process enter namespaces (probed once per [Host]).
	// Elsewhere programs run under Landlock alone where that leaves no
	// denied file readable, or with [ConfineAllowUnconfined]; otherwise
	// they are refused (exit 126). It is the zero value.
	NamespacesAuto NamespaceMode = iota
	// NamespacesOff runs programs under Landlock alone.
	NamespacesOff
)

// Confinement values reported in [Result.Confinement].
const (
	// ConfinementNamespaces: a private filesystem view (denied paths and
	// host secrets masked, private /tmp and /proc) with Landlock beneath.
	ConfinementNamespaces = "namespaces+landlock"
	ConfinementLandlock   = "landlock"
	ConfinementNone       = "none"
)

// Defaults of [Options].
const (
	DefaultMaxOutput = 1 << 20
	DefaultMaxRead   = 1 << 20
	DefaultKillGrace = 2 * time.Second
	// DefaultMaxMatches caps glob and grep results and list_dir entries.
	DefaultMaxMatches = 1000
)

// Options configure a [Runner]. The zero value works once Checker is set:
// Landlock is required, caps are the defaults above.
type Options struct {
	// Checker re-checks every access at run time. Required.
	Checker Checker
	// ReadRoots and WriteRoots are the canonical directories below which
	// the scope grants reads and writes (write implies read). File tools
	// open their os.Root at the longest one holding the target; Landlock
	// grants exactly these.
	ReadRoots, WriteRoots []string
	// Protected roots are never writable, even inside a write root: the
	// sessions root and the config dir.
	Protected []string
	// Deny are the scope's paths.deny globs as the compiled scope holds
	// them: absolute doublestar patterns, or ones starting with "**". In
	// the private view every file and directory below a read or write
	// root that matches one is masked (matching ignores case).
	Deny []string
	// Confine says whether Landlock is required.
	Confine ConfineMode
	// Namespaces says whether programs get the private view.
	Namespaces NamespaceMode
	// Host shares what Runners learn about the host (namespace probe,
	// deny walk cache); the gateway keeps one for the process. Nil gives
	// this Runner its own.
	Host *Host
	// MaxOutput caps each of stdout and stderr, in bytes.
	MaxOutput int
	// MaxRead caps what read_file returns and what edit_file and grep read
	// of one file, in bytes.
	MaxRead int64
	// MaxMatches caps glob and grep matches and list_dir entries.
	MaxMatches int
	// KillGrace is the time between SIGINT and SIGKILL to a program's
	// process group when a call times out.
	KillGrace time.Duration
	// HelperPath is the executable that becomes the Landlock helper when
	// re-executed with the hidden argument; default os.Executable().
	HelperPath string
	// PassEnv names environment variables passed to programs in addition
	// to [DefaultPassEnv]; a trailing "*" matches a prefix. Variables of
	// the never-passed list are dropped regardless.
	PassEnv []string
	// Environ is the environment filtered for programs; default os.Environ().
	Environ []string
	// TempDir is where each shell call's private temporary directory is
	// made (TMPDIR of its programs); default os.TempDir().
	TempDir string
	// Now is the clock for DurationMS; default time.Now.
	Now func() time.Time
	// Stdout and Stderr, when set, receive the output of a shell call as it
	// comes, besides the capped copy in the result.
	Stdout, Stderr io.Writer
	// OnStart, when set, is called with the pid of each started program,
	// which is also its process group id.
	OnStart func(pid int)
	// Progress, when set, receives the stderr of shell calls as it comes
	// (the result still carries all of it, capped).
	Progress io.Writer
	// Broad gives the call the bounds of the user's own account, as observe
	// mode runs calls (docs/learning.md): programs and file tools may read and
	// write the whole filesystem but the protected roots, whose writes stay
	// refused; the private view is that of a scope reading the whole
	// system (viewplan.go). ReadRoots and WriteRoots stay the scope's own:
	// what the view binds back, walks and masks.
	Broad bool
	// SessionStart is when the session began. In a private view every
	// repository directory below the write roots is read-only; git runs on
	// one the scope lets programs write only when its configuration and
	// hooks have not changed since SessionStart, asked only then (nil, or
	// the zero time: never).
	SessionStart func() time.Time
	// Network is the scope's network section (policy.Network): where the
	// programs of shell calls may connect. Nil is `network: none`.
	Network NetworkPolicy
	// Resolver looks up, on the host side, the names programs connect to
	// through the proxies; default the host's resolver.
	Resolver netproxy.Resolver
	// Home is the home directory. A scope that reads the whole system sees
	// in it only what its view binds back (viewplan.go); a program found
	// below it gets its toolchain root.
	Home string
	// ProjectRoot is the session's project root: shown in the view of a
	// scope that reads the whole system, whether or not it writes there.
	ProjectRoot string
	// IndexDir, when set, is where the deny walk keeps its index between
	// processes (denyindex.go): a directory no tool call can write (below
	// the sessions root). Unset, each process walks anew.
	IndexDir string
}

// Errors callers branch on.
var (
	// ErrDenied marks an access refused at run time; see [DeniedError].
	ErrDenied = errors.New("denied")
	// ErrNoLandlock: Landlock is required but this kernel lacks it.
	ErrNoLandlock = errors.New("landlock is not available on this system")
	// ErrUnsupportedTool: the tool is not run by this package.
	ErrUnsupportedTool = errors.New("tool not run by exec")
	// ErrNotInRoots: the path is below no read or write root.
	ErrNotInRoots = errors.New("path is outside the scope roots")
	// ErrProtected: the path is inside a protected root.
	ErrProtected = errors.New("path is protected")
	// ErrHardLink: the file has more than one hard link.
	ErrHardLink = errors.New("file has more than one hard link")
	// ErrNoMatch: edit_file's old_string does not occur.
	ErrNoMatch = errors.New("old_string not found")
	// ErrAmbiguous: edit_file's old_string occurs more than once.
	ErrAmbiguous = errors.New("old_string is ambiguous")
	// ErrInvalidArgs: the args do not make a runnable call.
	ErrInvalidArgs = errors.New("invalid arguments")
)

// DeniedError is an access refused at run time by the [Checker] or by an
// invariant (protected roots). It matches [ErrDenied].
type DeniedError struct {
	Violations []policy.Violation
	// Err is the invariant that refused, if not the Checker.
	Err error
}

func (e *DeniedError) Error() string {
	if len(e.Violations) == 0 {
		return "denied"
	}
	v := policy.Deciding(e.Violations)
	if v.Message != "" {
		return "denied: " + v.Message
	}
	return fmt.Sprintf("denied: %s %s", v.Reason, v.Resource)
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Unwrap returns the invariant that refused, if any.
func (e *DeniedError) Unwrap() error { return e.Err }

// Entry is one list_dir entry.
type Entry struct {
	Name string `json:"name"`
	// Type is "file", "dir", "symlink" or "other".
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// Result is what a call produced (docs/reference.md, The call and the decision).
type Result struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out"`

	Content      *string  `json:"content,omitempty"`
	Entries      []Entry  `json:"entries,omitempty"`
	Matches      []string `json:"matches,omitempty"`
	BytesWritten *int64   `json:"bytes_written,omitempty"`
	Replacements *int     `json:"replacements,omitempty"`

	// Confinement is "namespaces+landlock", "landlock" or "none" for
	// shell calls.
	Confinement string `json:"confinement,omitempty"`
	// Toolchains are the directories below the home directory granted to
	// programs of a shell call that were found there (read and execute).
	Toolchains []string `json:"toolchains,omitempty"`
	// Refused lists what was refused at run time.
	Refused []policy.Violation `json:"refused,omitempty"`
	// Unmasked lists, with --confine best-effort only, the trees of the
	// private view whose denied files could not all be found, and why:
	// programs ran with them readable there.
	Unmasked []string `json:"unmasked,omitempty"`
	// Observed lists what the run-time checks would have refused in
	// enforce mode and observe mode let through (set by the caller that
	// observed it).
	Observed []policy.Violation `json:"observed,omitempty"`
	// Network lists the connections the call's programs attempted, and
	// NetworkMode what bounded them, for shell calls.
	Network     []netproxy.Conn `json:"network,omitempty"`
	NetworkMode NetworkMode     `json:"network_mode,omitempty"`
}

// Runner runs allowed calls. It is safe for concurrent use.
type Runner struct {
	opts     Options
	abi      int // Landlock ABI version; 0 when unavailable
	helper   string
	protect  []string
	readRts  []string
	writeRts []string
	passEnv  []string
	baseEnv  []string
	deny     []string // lower-case deny globs
	host     *Host
}

// New returns a Runner. It probes Landlock once.
func New(opts Options) (*Runner, error) {
	if opts.Checker == nil {
		return nil, errors.New("new runner: Options.Checker is nil")
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.MaxRead <= 0 {
		opts.MaxRead = DefaultMaxRead
	}
	if opts.MaxMatches <= 0 {
		opts.MaxMatches = DefaultMaxMatches
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	r := &Runner{opts: opts, host: opts.Host}
	if r.host == nil {
		r.host = new(Host)
	}
	for _, p := range opts.Deny {
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "**") {
			return nil, fmt.Errorf("new runner: deny pattern %q is neither absolute nor starts with **", p)
		}
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("new runner: deny pattern %q is not a valid glob", p)
		}
		r.deny = append(r.deny, strings.ToLower(p))
	}
	for _, list := range []struct {
		in  []string
		out *[]string
	}{{opts.ReadRoots, &r.readRts}, {opts.WriteRoots, &r.writeRts}, {opts.Protected, &r.protect}} {
		for _, p := range list.in {
			if !filepath.IsAbs(p) {
				return nil, fmt.Errorf("new runner: root %q is not absolute", p)
			}
			*list.out = append(*list.out, filepath.Clean(p))
		}
	}
	if opts.Confine != ConfineOff {
		r.abi = landlockABI()
		if r.abi > 0 {
			r.helper = opts.HelperPath
			if r.helper == "" {
				exe, err := os.Executable()
				if err != nil {
					return nil, fmt.Errorf("new runner: find helper executable: %w", err)
				}
				r.helper = exe
			}
		}
	}
	r.passEnv = append(DefaultPassEnv(), opts.PassEnv...)
	r.baseEnv = scrubEnv(opts.Environ, r.passEnv)
	return r, nil
}

// Confinement reports what shell calls will run under:
// "namespaces+landlock", "landlock" or "none". The first call may probe
// the host for namespaces.
func (r *Runner) Confinement() string {
	switch {
	case r.abi == 0:
		return ConfinementNone
	case r.namespaces():
		return ConfinementNamespaces
	default:
		return ConfinementLandlock
	}
}

// expectedConfinement is what programs would run under, without probing
// the host: for a shell call that started none.
func (r *Runner) expectedConfinement() string {
	switch {
	case r.abi == 0:
		return ConfinementNone
	case r.opts.Namespaces != NamespacesAuto:
		return ConfinementLandlock
	}
	if probed, err := r.host.probed(); probed {
		if err != nil {
			return ConfinementLandlock
		}
		return ConfinementNamespaces
	}
	if !userNamespacesEnabled() {
		return ConfinementLandlock
	}
	return ConfinementNamespaces
}

// namespaces reports whether programs get the private view.
func (r *Runner) namespaces() bool {
	return r.abi > 0 && r.opts.Namespaces == NamespacesAuto && r.host.namespacesOK(r.helper) == nil
}

// Run runs one allowed call with relative paths taken against cwd. A
// refusal at run time inside a shell command is reported in the Result
// (exit code 126, Refused); a file tool's refusal is a [*DeniedError].
func (r *Runner) Run(ctx context.Context, call policy.Call, cwd string) (Result, error) {
	start := r.opts.Now()
	var res Result
	var err error
	switch call.Tool {
	case policy.ToolShell:
		var a policy.ShellArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.runShell(ctx, a, cwd)
		}
	case policy.ToolReadFile:
		var a policy.ReadFileArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.readFile(ctx, a, cwd)
		}
	case policy.ToolWriteFile:
		var a policy.WriteFileArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.writeFile(ctx, a, cwd)
		}
	case policy.ToolEditFile:
		var a policy.EditFileArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.editFile(ctx, a, cwd)
		}
	case policy.ToolListDir:
		var a policy.ListDirArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.listDir(ctx, a, cwd)
		}
	case policy.ToolGlob:
		var a policy.GlobArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.glob(ctx, a, cwd)
		}
	case policy.ToolGrep:
		var a policy.GrepArgs
		if err = policy.DecodeArgs(call.Args, &a); err == nil {
			res, err = r.grep(ctx, a, cwd)
		}
	default:
		return Result{}, fmt.Errorf("run %s: %w", call.Tool, ErrUnsupportedTool)
	}
	res.DurationMS = r.opts.Now().Sub(start).Milliseconds()
	if err != nil {
		return res, fmt.Errorf("run %s: %w", call.Tool, err)
	}
	return res, nil
}

// grantRoots are the read and write roots Landlock grants and file tools
// open their os.Root at: the scope's, and the whole filesystem when the
// runner is broad.
func (r *Runner) grantRoots() (read, write []string) {
	if !r.opts.Broad {
		return r.readRts, r.writeRts
	}
	return append(slices.Clone(r.readRts), "/"), append(slices.Clone(r.writeRts), "/")
}

// makeHomeWriteRoots creates the write roots below the home directory that
// do not exist yet (toolchain caches such as ~/.cache/go-build): Landlock
// grants only what exists, and a program cannot make the directories
// above its own write root.
func (r *Runner) makeHomeWriteRoots() {
	if r.opts.Home == "" {
		return
	}
	home := filepath.Clean(r.opts.Home)
	for _, w := range r.writeRts {
		if w == home || !within(w, home) {
			continue
		}
		if _, err := os.Lstat(w); errors.Is(err, fs.ErrNotExist) {
			_ = os.MkdirAll(w, 0o700) // best effort: a failure shows as the program's own error
		}
	}
}
