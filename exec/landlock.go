package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

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
