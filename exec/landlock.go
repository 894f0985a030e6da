package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// helperArg is the hidden first argument that turns the scopegate binary
// into the Landlock helper.
const helperArg = "__scopegate-confine"

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
	// RO are directories granted reading and executing.
	RO []string `json:"ro,omitempty"`
}

// systemRO are what programs need to start and work: loaders, libraries,
// configuration (ld.so.cache, certificates, passwd), /proc for self
// inspection. Missing ones are ignored.
func systemRO() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc", "/proc", "/sys/devices/system/cpu", "/opt", "/nix/store", "/snap"}
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
func buildRules(abi int, readRoots, writeRoots, protected []string, tmp string) (rules, error) {
	rl := rules{ABI: abi, RW: []string{tmp}, RWFiles: systemRWFiles()}
	rl.RO = append(rl.RO, systemRO()...)
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
	return len(args) > 1 && args[1] == helperArg
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
	for _, list := range [][]string{rl.RW, rl.RWFiles, rl.RO} {
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
	rl, program, argv, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scopegate: confine: %v\n", err)
		return helperExitCode
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

// restrict applies rl to this process in strict mode.
func restrict(rl rules) error {
	cfg, err := configFor(rl.ABI)
	if err != nil {
		return err
	}
	rw := landlock.RWDirs(slices.Compact(slices.Sorted(slices.Values(rl.RW)))...).IgnoreIfMissing()
	if rl.ABI >= 2 {
		// Moving files between directories of the write roots.
		rw = rw.WithRefer()
	}
	err = cfg.RestrictPaths(
		landlock.RODirs(rl.RO...).IgnoreIfMissing(),
		rw,
		landlock.RWFiles(rl.RWFiles...).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}
