package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
)

// The managed policy (docs/managed.md): one file per machine, written by its
// administrator, that every session is decided within. This file reads
// it: where it is, whether it can be trusted, what it says; policy
// applies it.

// ManagedPath is where the machine's managed policy is installed.
const ManagedPath = "/etc/scopegate/managed.yml"

// ManagedEnv names the variable that may name a managed policy file where
// ManagedPath does not exist (tests, machines without one). It can never
// replace or empty an installed policy.
const ManagedEnv = "SCOPEGATE_MANAGED_FILE"

// maxManagedSize bounds the managed file read.
const maxManagedSize = 1 << 20

// ErrManagedUntrusted marks a managed file that root does not own, or that
// someone else than root could change (it, or a directory on its way, is
// writable by group or others).
var ErrManagedUntrusted = errors.New("managed policy not trusted")

// ManagedError is a managed policy that cannot be used: which file, and
// what is wrong with it. It matches policy.ErrManagedInvalid, and when
// Untrusted, ErrManagedUntrusted.
type ManagedError struct {
	// Path is the file ("" while only its content is known).
	Path string
	// Untrusted says that someone else than root could have written it.
	Untrusted bool
	// Fault is what is wrong, with the line where it is one.
	Fault string
}

func (e *ManagedError) Error() string {
	name := "managed policy"
	if e.Path != "" {
		name += " " + e.Path
	}
	if e.Untrusted {
		return name + " is not trusted: " + e.Fault
	}
	return name + ": " + e.Fault
}

// Is matches policy.ErrManagedInvalid, and ErrManagedUntrusted for an
// untrusted file.
func (e *ManagedError) Is(target error) bool {
	return target == policy.ErrManagedInvalid || e.Untrusted && target == ErrManagedUntrusted
}

// ManagedFile is the content of managed.yml.
type ManagedFile struct {
	// Paths, Shell and Network are the rules decisions apply
	// (policy.ManagedRules).
	Paths   policy.ManagedPaths `yaml:"paths" json:"paths"`
	Shell   policy.ManagedShell `yaml:"shell_commands" json:"shell_commands"`
	Network policy.NetworkRules `yaml:"network" json:"-"`
	// Modes says which branch modes are allowed.
	Modes ManagedModes `yaml:"modes" json:"modes"`
	// Approvals is "deny" to refuse every approval channel; "" or "ask"
	// leaves it to config.yml.
	Approvals string `yaml:"approvals" json:"approvals,omitempty"`
	// Telemetry, when set, is an export of every audited event that user
	// configuration cannot turn off.
	Telemetry *Telemetry `yaml:"telemetry" json:"telemetry,omitempty"`
}

// ManagedModes is the modes section of managed.yml.
type ManagedModes struct {
	// Observe false refuses observe mode (nil: allowed).
	Observe *bool `yaml:"observe" json:"observe,omitempty"`
}

// Rules are the rules of f that decisions apply.
func (f ManagedFile) Rules() policy.ManagedRules {
	return policy.ManagedRules{Paths: f.Paths, Shell: f.Shell, Network: f.Network}
}

// Managed is a managed policy as read: where from, its digest, its
// content and its compiled rules. It is immutable and shared.
type Managed struct {
	// Path is the file read.
	Path string `json:"file"`
	// FromEnv says that ManagedEnv named it, ManagedPath not existing.
	FromEnv bool `json:"from_env,omitempty"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// File is what it says.
	File ManagedFile `json:"-"`
	// Policy is File's rules compiled.
	Policy *policy.Managed `json:"-"`
}

// ObserveAllowed reports whether branches may be in observe mode.
func (m *Managed) ObserveAllowed() bool {
	return m == nil || m.File.Modes.Observe == nil || *m.File.Modes.Observe
}

// ApprovalsAllowed reports whether a call may be offered to the user.
func (m *Managed) ApprovalsAllowed() bool {
	return m == nil || m.File.Approvals != ApprovalsDeny
}

// Source says where the policy comes from, for people: the file, and why
// it is that one.
func (m *Managed) Source() string {
	if m.FromEnv {
		return m.Path + " (named by " + ManagedEnv + "; " + ManagedPath + " does not exist)"
	}
	return m.Path
}

// ParseManaged decodes managed.yml data strictly (unknown keys, duplicate
// keys, wrong types, a second document are errors naming the line) and
// checks every value: approvals, telemetry, and each glob, shell entry and
// network entry (compiled with home as ~), naming its line. The error is a
// *ManagedError.
func ParseManaged(data []byte, home string) (ManagedFile, *policy.Managed, error) {
	var f ManagedFile
	fail := func(format string, args ...any) (ManagedFile, *policy.Managed, error) {
		return ManagedFile{}, nil, &ManagedError{Fault: fmt.Sprintf(format, args...)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return fail("%v", yamlmsg.Error(data, err, &f))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fail("more than one YAML document")
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	switch f.Approvals {
	case "", ApprovalsAsk, ApprovalsDeny:
	default:
		return fail("line %d: approvals %q: want ask or deny", nodeLine(&root, "approvals"), f.Approvals)
	}
	if f.Telemetry != nil {
		if err := f.Telemetry.validate(); err != nil {
			return fail("line %d: telemetry.%v", nodeLine(&root, "telemetry"), err)
		}
		if f.Telemetry.Endpoint == "" {
			return fail("line %d: telemetry: an endpoint is required (the collector's URL)", nodeLine(&root, "telemetry"))
		}
	}
	m, err := policy.CompileManaged(f.Rules(), policy.Env{Home: home})
	if err != nil {
		var ee *policy.EntryError
		if errors.As(err, &ee) {
			return fail("line %d: %v", entryLine(&root, ee), ee)
		}
		return fail("%v", err)
	}
	return f, m, nil
}

// nodeLine is the line of the node at a key path of a YAML document (1
// when not found).
func nodeLine(root *yaml.Node, keys ...string) int {
	n := lookup(root, keys...)
	if n == nil {
		return 1
	}
	return n.Line
}

// lookup returns the value node at a key path of a YAML document, nil
// when there is none.
func lookup(root *yaml.Node, keys ...string) *yaml.Node {
	if root == nil || len(root.Content) == 0 {
		return nil
	}
	n := root.Content[0]
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// entryLine is the line of the entry an EntryError names.
func entryLine(root *yaml.Node, ee *policy.EntryError) int {
	n := lookup(root, strings.Split(ee.List, ".")...)
	if n == nil {
		return 1
	}
	if n.Kind == yaml.SequenceNode && ee.Index < len(n.Content) {
		return n.Content[ee.Index].Line
	}
	return n.Line
}

// ManagedLoader reads the machine's managed policy for every decision,
// from a cache while the file is unchanged. It is safe for concurrent use;
// its zero value reads ManagedPath alone.
type ManagedLoader struct {
	// Path is the installed policy; "" is ManagedPath.
	Path string
	// Fallback is read where Path does not exist: what ManagedEnv names.
	Fallback string
	// Home is the home directory ~ in the policy's globs is.
	Home string
	// Version, when set, gives the version of a path that changes when the
	// file or a directory on its way changes (internal/watch); ok is false
	// for a path it cannot follow, which is then stat'ed.
	Version func(path string) (version uint64, ok bool)

	// owner is the uid that must own the file and its directories (0).
	owner uint32
	mu    sync.Mutex
	last  managedResult
}

// managedResult is a load and the stamp of what it read.
type managedResult struct {
	valid bool
	stamp managedStamp
	m     *Managed
	err   error
}

// managedStamp tells whether the managed file changed: for each of the
// installed path and the fallback, its watched version or its identity.
type managedStamp struct {
	primary, fallback pathStamp
}

// stable reports whether the stamp can tell a change: neither file failed
// to stat.
func (s managedStamp) stable() bool { return !s.primary.failed && !s.fallback.failed }

// pathStamp is one path's version: watched, or what stat(2) says of it
// (its change time moves with a chmod or chown; a missing file is a stamp
// of its own), or failed (it could not be stat'ed: never served from the
// cache).
type pathStamp struct {
	failed  bool
	watched bool
	version uint64
	file    fileStamp
}

// NewManagedLoader is the loader of this process: ManagedPath, else the
// file ManagedEnv names, ~ being home.
func NewManagedLoader(home string) *ManagedLoader {
	return &ManagedLoader{Path: ManagedPath, Fallback: os.Getenv(ManagedEnv), Home: home}
}

// Load returns the managed policy, nil when there is none. An error (an
// unreadable, untrusted or invalid file) is a *ManagedError
// and names the file and the fault: every call is then denied.
func (l *ManagedLoader) Load() (*Managed, error) {
	st := l.stamp()
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	if last.valid && last.stamp == st && st.stable() {
		return last.m, last.err
	}
	m, err := l.read()
	l.mu.Lock()
	l.last = managedResult{valid: true, stamp: st, m: m, err: err}
	l.mu.Unlock()
	return m, err
}

// primary is the installed path.
func (l *ManagedLoader) primary() string {
	if l.Path == "" {
		return ManagedPath
	}
	return l.Path
}

// stamp is the version of the files Load reads now.
func (l *ManagedLoader) stamp() managedStamp {
	var st managedStamp
	st.primary = l.pathStamp(l.primary())
	if l.Fallback != "" && (st.primary.watched || !st.primary.file.exists) {
		st.fallback = l.pathStamp(l.Fallback)
	}
	return st
}

// pathStamp is path's version now.
func (l *ManagedLoader) pathStamp(path string) pathStamp {
	if l.Version != nil {
		if v, ok := l.Version(path); ok {
			return pathStamp{watched: true, version: v}
		}
	}
	st, err := statFile(path)
	if err != nil {
		return pathStamp{failed: true}
	}
	return pathStamp{file: st}
}

// read loads the policy.
func (l *ManagedLoader) read() (*Managed, error) {
	path, fromEnv := l.primary(), false
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if l.Fallback == "" {
			return nil, nil
		}
		path, fromEnv = l.Fallback, true
		if !filepath.IsAbs(path) {
			return nil, &ManagedError{Path: path, Fault: "named by " + ManagedEnv + ", it is not an absolute path"}
		}
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &ManagedError{Path: path, Fault: "named by " + ManagedEnv + ", it does not exist"}
		}
	}
	if err := checkTrusted(path, l.owner); err != nil {
		return nil, &ManagedError{Path: path, Untrusted: true, Fault: err.Error()}
	}
	data, err := readLimited(path)
	if err != nil {
		return nil, &ManagedError{Path: path, Fault: "read: " + err.Error()}
	}
	f, compiled, err := ParseManaged(data, l.Home)
	if me := (*ManagedError)(nil); errors.As(err, &me) {
		me.Path = path
		return nil, me
	}
	sum := sha256.Sum256(data)
	return &Managed{Path: path, FromEnv: fromEnv, SHA256: hex.EncodeToString(sum[:]), File: f, Policy: compiled}, nil
}

// readLimited reads a file of at most maxManagedSize bytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManagedSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManagedSize {
		return nil, fmt.Errorf("larger than %d bytes", maxManagedSize)
	}
	return data, nil
}

// maxLinks bounds the symbolic links followed to the managed file.
const maxLinks = 40

// checkTrusted walks path as the kernel does and refuses it unless only
// owner (root) could have made it what it is: every directory a name is
// looked up in, every symbolic link followed and the file itself belong to
// owner, and neither the file nor a directory is writable by group or
// others, except a directory with the sticky bit (/tmp), where others may
// not remove or rename what owner's entries are. This is how sudo treats
// sudoers, applied to the whole way to the file.
func checkTrusted(path string, owner uint32) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s is not an absolute path", path)
	}
	if err := trustedEntry("/", owner, true); err != nil {
		return err
	}
	resolved, rest, links := "/", strings.TrimPrefix(filepath.Clean(path), "/"), 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := trustedEntry(next, owner, false); err != nil {
				return err
			}
			links++
			if links > maxLinks {
				return fmt.Errorf("%s: too many levels of symbolic links", path)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) {
				resolved = "/"
			}
			rest = strings.TrimPrefix(target, "/") + "/" + rest
			rest = strings.TrimSuffix(rest, "/")
		case fi.IsDir():
			if err := trustedEntry(next, owner, true); err != nil {
				return err
			}
			resolved = next
		case rest == "" && fi.Mode().IsRegular():
			return trustedEntry(next, owner, true)
		default:
			return fmt.Errorf("%s is not a regular file", next)
		}
	}
	return fmt.Errorf("%s is a directory, not a file", path)
}

// trustedEntry checks one entry of the way: owned by owner and, when
// modes count (not a symbolic link), not writable by group or others
// unless a sticky directory.
func trustedEntry(p string, owner uint32, modes bool) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner to check", p)
	}
	if st.Uid != owner {
		return fmt.Errorf("%s belongs to uid %d, not root: it must belong to root and be writable by root alone", p, st.Uid)
	}
	if !modes {
		return nil
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		who := "group"
		if perm&0o020 == 0 {
			who = "others"
		} else if perm&0o002 != 0 {
			who = "group and others"
		}
		return fmt.Errorf("%s is writable by %s (mode %04o): it must be writable by root alone", p, who, perm)
	}
	return nil
}
