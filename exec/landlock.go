package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// helperArg is the hidden first argument that turns the scopegate binary
// into the Landlock helper; probeArg turns it into the namespace probe.
const (
	helperArg = "__scopegate-confine"
	probeArg  = "__scopegate-probe-namespaces"
)

// helperExitCode is the helper's exit status when it cannot confine or
// start the program: the shell's "cannot execute".
const helperExitCode = 126

// rules is what the helper grants, sent to it as JSON.
type rules struct {
	// ABI is the Landlock ABI version the gateway probed; the helper
	// enforces the matching go-landlock config in strict mode.
	ABI int `json:"abi"`
	// RW are directories granted full access (write roots, the private
	// temporary directory).
	RW []string `json:"rw,omitempty"`
	// RWFiles are single files granted read and write (device files, and
	// the files beside a protected root inside a write root).
	RWFiles []string `json:"rw_files,omitempty"`
	// RO are directories and files granted reading and executing.
	RO []string `json:"ro,omitempty"`
	// View, when set, is the private filesystem view the helper builds in
	// its new namespaces before applying Landlock.
	View *view `json:"view,omitempty"`
}

// systemRO returns what programs need to start and work: loaders,
// libraries, toolchains, configuration, CPU topology. With namespaces
// (private view) /etc is granted whole, since the view masks the host's
// secrets in it ([hostSecrets]), and /proc is granted whole, since it is
// the view's own /proc showing only the call's processes; the private
// /tmp is readable (not writable: it holds the read roots carried into
// it, and a write grant there would reach them). Without them the
// host's /etc and /proc are reachable as they are, so only the entries of
// [systemEtc] and [systemProc] are granted. Missing paths are ignored;
// entries may be file globs.
func systemRO(namespaces bool) []string {
	ro := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/sys/devices/system/cpu", "/opt", "/nix/store", "/snap"}
	if namespaces {
		// The private /tmp holds only the roots carried into it.
		return append(ro, "/etc", "/proc", privateTmp)
	}
	return append(append(ro, systemEtc()...), systemProc()...)
}

// systemEtc is the part of /etc that programs read to start and work when
// the host's /etc cannot be masked: the loader's cache, users and groups
// (names only; their hashes are in shadow), name resolution, time zone and
// locale, certificates, alternatives, tool configuration (git, python,
// pip, npm, ssh client, terminfo, file's magic). Secrets are not in it.
func systemEtc() []string {
	return []string{
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf",
		"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols", "/etc/networks",
		"/etc/hostname", "/etc/machine-id", "/etc/os-release", "/etc/lsb-release", "/etc/debian_version",
		"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
		"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
		"/etc/pki/tls/certs", "/etc/pki/ca-trust", "/etc/crypto-policies",
		"/etc/alternatives", "/etc/shells", "/etc/mtab", "/etc/terminfo", "/etc/mime.types",
		"/etc/magic", "/etc/magic.mime", "/etc/gitconfig", "/etc/python3*", "/etc/perl",
		"/etc/pip.conf", "/etc/npmrc", "/etc/fonts", "/etc/xdg", "/etc/manpath.config",
		"/etc/ssh/ssh_config", "/etc/ssh/ssh_config.d", "/etc/vim", "/etc/nanorc", "/etc/inputrc",
	}
}

// systemProc is the part of the host's /proc granted without namespaces:
// the program's own entry (/proc/self is resolved when the rules are made,
// in the helper, whose pid the program keeps; other processes' entries,
// their environ above all, stay closed) and system-wide counters.
func systemProc() []string {
	return []string{"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg",
		"/proc/uptime", "/proc/version", "/proc/filesystems", "/proc/sys/kernel",
		"/proc/sys/vm/overcommit_memory", "/proc/sys/net/core/somaxconn"}
}

// systemRWFiles are the device files every program may use.
func systemRWFiles() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
}

// landlockABI returns the kernel's Landlock ABI version, 0 when absent.
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return 0
	}
	return v
}

// configFor returns go-landlock's config for a kernel ABI: the highest the
// library knows that the kernel supports.
func configFor(abi int) (landlock.Config, error) {
	configs := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4,
		landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	if abi < 1 {
		return landlock.Config{}, ErrNoLandlock
	}
	return configs[min(abi, len(configs))-1], nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// buildRules computes the helper's grants. A write root that holds a
// protected root cannot be granted whole, since Landlock has no deny: it is
// granted read-only, and write access is granted on each of its entries
// that does not lead to the protected root, recursively along the way.
// Consequence: no new entry can be created directly in a directory on the
// path from the write root to the protected root. A write root inside a
// protected root is not granted write at all.
func buildRules(abi int, readRoots, writeRoots, protected []string, tmp string, namespaces bool) (rules, error) {
	rl := rules{ABI: abi, RW: []string{tmp}, RWFiles: systemRWFiles()}
	for _, p := range systemRO(namespaces) {
		if !strings.ContainsAny(p, "*?[") {
			rl.RO = append(rl.RO, p)
			continue
		}
		m, _ := filepath.Glob(p)
		rl.RO = append(rl.RO, m...)
	}
	rl.RO = append(rl.RO, readRoots...)
	for _, w := range writeRoots {
		if err := splitWrite(&rl, w, protected); err != nil {
			return rules{}, err
		}
	}
	return rl, nil
}

func splitWrite(rl *rules, dir string, protected []string) error {
	var inside []string
	for _, p := range protected {
		if within(dir, p) {
			rl.RO = append(rl.RO, dir)
			return nil
		}
		if within(p, dir) {
			inside = append(inside, p)
		}
	}
	if len(inside) == 0 {
		rl.RW = append(rl.RW, dir)
		return nil
	}
	rl.RO = append(rl.RO, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("split write root %q around protected roots: %w", dir, err)
	}
	for _, e := range ents {
		child := filepath.Join(dir, e.Name())
		switch {
		case e.Type().IsDir():
			if err := splitWrite(rl, child, inside); err != nil {
				return err
			}
		case e.Type().IsRegular():
			rl.RWFiles = append(rl.RWFiles, child)
		}
		// Symlinks and other entries get nothing: Landlock rules bind to
		// what a path names at rule creation, and a link's target is
		// decided by its own root.
	}
	return nil
}

// helperArgv returns the argv that runs program under the helper.
func helperArgv(helper string, rl rules, program string, args []string) ([]string, error) {
	b, err := json.Marshal(rl)
	if err != nil {
		return nil, fmt.Errorf("encode landlock rules: %w", err)
	}
	argv := make([]string, 0, 4+len(args))
	argv = append(argv, helper, helperArg, string(b), "--", program)
	return append(argv, args...), nil
}

// IsHelper reports whether args (os.Args) ask this process to be the
// Landlock helper. main calls it first thing.
func IsHelper(args []string) bool {
	return len(args) > 1 && (args[1] == helperArg || args[1] == probeArg)
}

// parseHelperArgs splits the helper's argv into its rules, the program
// path and the program's argv (argv[0] is the program as the user wrote it).
func parseHelperArgs(args []string) (rules, string, []string, error) {
	if len(args) < 5 || args[1] != helperArg || args[3] != "--" {
		return rules{}, "", nil, errors.New("usage: scopegate " + helperArg + " RULES -- PROGRAM ARGV0 [ARG...]")
	}
	var rl rules
	if err := json.Unmarshal([]byte(args[2]), &rl); err != nil {
		return rules{}, "", nil, fmt.Errorf("decode rules: %w", err)
	}
	lists := [][]string{rl.RW, rl.RWFiles, rl.RO}
	if rl.View != nil {
		lists = append(lists, rl.View.Carry, rl.View.Masks)
	}
	for _, list := range lists {
		for _, p := range list {
			if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
				return rules{}, "", nil, fmt.Errorf("decode rules: path %q is not absolute", p)
			}
		}
	}
	if !filepath.IsAbs(args[4]) {
		return rules{}, "", nil, fmt.Errorf("program %q is not absolute", args[4])
	}
	argv := args[5:]
	if len(argv) == 0 {
		argv = []string{args[4]}
	}
	return rl, args[4], argv, nil
}

// RunHelper confines this process with Landlock as its arguments say and
// replaces it with the program, so the program and all its children run
// confined. It returns only on failure, with the exit status to use.
func RunHelper(args []string) int {
	if len(args) > 1 && args[1] == probeArg {
		return runProbe(args[2:])
	}
	rl, program, argv, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
	}
	// Descriptors the gateway inherited from whoever started it (an
	// agent's socket, a file it had open) would pass on to the program,
	// past Landlock, which checks only opens: none but the standard
	// streams and the helper's own pipes survive the program's exec.
	first := 3
	if rl.View != nil {
		first = viewFD + 1
	}
	if err := cloexecFrom(first); err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: close inherited descriptors: %v\n", err)
		return helperExitCode
	}
	if rl.View != nil {
		return runInView(rl, program, argv)
	}
	if err := restrict(rl); err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
	}
	// Die with the gateway, whatever happened to the parent-death signal
	// set at fork: if the gateway is already gone, do not start at all.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		fmt.Fprintln(os.Stderr, "scopegate: the gateway exited before the program started")
		return 126
	}
	err = syscall.Exec(program, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "scopegate: %s: %v\n", argv[0], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return helperExitCode
}

// cloexecFrom marks every descriptor from first up close-on-exec: with
// one close_range, or where a seccomp filter refuses it, one by one as
// /proc/self/fd lists them.
func cloexecFrom(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) {
		return cloexecByProc(first)
	}
	return err
}

// cloexecByProc is cloexecFrom without close_range.
func cloexecByProc(first int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < first {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// restrict applies rl to this process in strict mode.
func restrict(rl rules) error {
	cfg, err := configFor(rl.ABI)
	if err != nil {
		return err
	}
	// A write root may be a single file (a scope naming one file): it
	// gets file rights, like the RO files below.
	var rwDirs []string
	rwFiles := slices.Clone(rl.RWFiles)
	for _, p := range slices.Compact(slices.Sorted(slices.Values(rl.RW))) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			rwFiles = append(rwFiles, p)
			continue
		}
		rwDirs = append(rwDirs, p)
	}
	rw := landlock.RWDirs(rwDirs...).IgnoreIfMissing()
	if rl.ABI >= 2 {
		// Moving files between directories of the write roots.
		rw = rw.WithRefer()
	}
	// Landlock takes directory rights only on directories: files get
	// file rights.
	var roDirs, roFiles []string
	for _, p := range rl.RO {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			roDirs = append(roDirs, p)
		default:
			roFiles = append(roFiles, p)
		}
	}
	// From ABI 6, signals and abstract unix sockets are scoped to the
	// domain: the program cannot stop, signal or talk to a process outside
	// it (the gateway, its parent under Landlock alone, which a SIGSTOP
	// would keep from ever enforcing the timeout).
	args := []any{cfg.HandledAccessFS}
	if rl.ABI >= 6 {
		args = append(args, cfg.Scoped)
	}
	full, err := landlock.NewConfig(args...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	err = full.Restrict(
		landlock.RODirs(roDirs...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		rw,
		landlock.RWFiles(rwFiles...).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}
