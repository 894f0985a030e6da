package policy

import (
	"strings"
	"sync"
)

// This file holds the table of programs the checker knows and the means to
// write its rows. A row (spec) says a program's options (with synonyms, so
// deny entries match by meaning), which option values are files read or
// written, which options or subcommands run other programs or inline code
// (dangerous unless an allow entry names them), which programs wrap another
// command, and the program's own check for what the row cannot say. The
// rows are in the prog_*.go files, one per program or family; see "How to
// add a program" in doc.go. Programs not listed are checked generically:
// path-like operands are read.

// isStdinPath reports whether a script path is standard input in disguise.
func isStdinPath(s string) bool {
	return s == "-" || s == "/dev/stdin" || s == "/dev/tty" || strings.HasPrefix(s, "/dev/fd/") ||
		strings.HasPrefix(s, "/proc/self/fd/") || strings.HasPrefix(s, "/dev/pts/")
}

// hasPrefixArg reports whether one of args starts with prefix.
func hasPrefixArg(args []arg, prefix string) bool {
	for _, a := range args {
		if a.known && strings.HasPrefix(a.s, prefix) {
			return true
		}
	}
	return false
}

// opt is one option of a table row: its synonyms, arity, effect and why.
func opt(names string, a arity, eff effect, why string) option {
	return option{names: strings.Fields(names), arity: a, eff: eff, why: why}
}

// Constructors for the table, by what the option does: fl is a flag, val
// takes a value, oval an attached value only, rd and wr name a file read or
// written, chdir a working directory, exe a program run, code inline code,
// conf configuration that can run programs, dflag a dangerous flag, pat a
// pattern or script, patFile a file holding one, inPlace and inPlaceSuffix
// an in-place edit (without or with a backup suffix), pair a name and a
// value, rdPair a name and a file read; dest marks a value naming a host
// connected to.
func fl(names string) option            { return opt(names, flagOpt, effNone, "") }
func val(names string) option           { return opt(names, valueOpt, effNone, "") }
func oval(names string) option          { return opt(names, optValueOpt, effNone, "") }
func rd(names string) option            { return opt(names, valueOpt, effRead, "") }
func wr(names string) option            { return opt(names, valueOpt, effWrite, "") }
func owr(names string) option           { return opt(names, optValueOpt, effWrite, "") }
func chdir(names string) option         { return opt(names, valueOpt, effChdir, "") }
func exe(names, why string) option      { return opt(names, valueOpt, effExec, why) }
func code(names, why string) option     { return opt(names, valueOpt, effCode, why) }
func conf(names, why string) option     { return opt(names, valueOpt, effConfig, why) }
func dflag(names, why string) option    { return opt(names, flagOpt, effDanger, why) }
func pat(names string) option           { return opt(names, valueOpt, effPattern, "") }
func patFile(names string) option       { return opt(names, valueOpt, effPatternFile, "") }
func inPlaceSuffix(names string) option { return opt(names, optValueOpt, effInPlace, "") }
func inPlace(names string) option       { return opt(names, flagOpt, effInPlace, "") }
func pair(names string) option          { return opt(names, pairOpt, effNone, "") }
func rdPair(names string) option        { return opt(names, pairOpt, effRead, "") }
func stopAt(o option) option            { o.stop = true; return o }

// dest marks an option whose value names where the program connects,
// read as k says: its host is checked against network (prog_hosts.go).
func dest(o option, k connKind) option { o.conn = k; return o }

// opts gathers options and lists of options.
func opts(items ...any) []option {
	var out []option
	for _, it := range items {
		switch it := it.(type) {
		case option:
			out = append(out, it)
		case []option:
			out = append(out, it...)
		}
	}
	return out
}

// flags are independent flags without values (not synonyms).
func flags(names string) []option {
	var out []option
	for _, n := range strings.Fields(names) {
		out = append(out, fl(n))
	}
	return out
}

// dangerSubs is the subcommands of a row that are dangerous in
// themselves, with why.
func dangerSubs(m map[string]string) map[string]string { return m }

const (
	whyExec   = "runs another program"
	whyCode   = "runs inline code"
	whyConfig = "changes configuration that can make it run programs"
	whyStdin  = "runs code read from standard input, which cannot be checked"
)

// programs is the table of known programs, by base name. It is shared by
// every compiled scope of the process and never modified once a group is
// built: each group of rows (the register function of a prog_*.go file) is
// built when one of its programs is first looked up, since a call needs
// few of them and building them all costs a process about a millisecond.
type programs struct {
	groups [numGroups]programGroup
}

// programGroup is one group of rows, built once.
type programGroup struct {
	once  sync.Once
	specs map[string]*spec
}

// programTable returns the shared table.
var programTable = sync.OnceValue(func() *programs { return &programs{} })

// spec returns the row of a program by its exact name, or nil.
func (t *programs) spec(name string) *spec {
	g, ok := groupOf(name)
	if !ok {
		return nil
	}
	grp := &t.groups[g]
	grp.once.Do(func() {
		grp.specs = map[string]*spec{}
		registerGroup(g, func(sp *spec, names ...string) {
			sp.build()
			for _, n := range names {
				grp.specs[n] = sp
			}
		})
	})
	return grp.specs[name]
}

// lookup returns the spec of a program by base name, or nil.
func (t *programs) lookup(name string) *spec {
	if sp := t.spec(name); sp != nil {
		return sp
	}
	// python3.12, pip3.11 …
	if i := strings.IndexByte(name, '.'); i > 0 && isVersion(name[i+1:]) {
		return t.spec(name[:i])
	}
	return nil
}

// isVersion reports whether s is a version suffix (3.12).
func isVersion(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

// adder adds a table row under one or more program names.
type adder func(sp *spec, names ...string)

// The groups of rows, one per register function.
const (
	groupFileUtils = iota
	groupReaders
	groupSearch
	groupJQ
	groupSed
	groupAwk
	groupFind
	groupArchives
	groupInterpreters
	groupGo
	groupMake
	groupPackageManagers
	groupPip
	groupCargo
	groupGit
	groupNetwork
	groupEditors
	groupWrappers
	groupRunners
	numGroups
)

// registerGroup adds the rows of group g.
func registerGroup(g int, add adder) {
	[numGroups]func(adder){
		groupFileUtils:       registerFileUtils,
		groupReaders:         registerReaders,
		groupSearch:          registerSearch,
		groupJQ:              registerJQ,
		groupSed:             registerSed,
		groupAwk:             registerAwk,
		groupFind:            registerFind,
		groupArchives:        registerArchives,
		groupInterpreters:    registerInterpreters,
		groupGo:              registerGo,
		groupMake:            registerMake,
		groupPackageManagers: registerPackageManagers,
		groupPip:             registerPip,
		groupCargo:           registerCargo,
		groupGit:             registerGit,
		groupNetwork:         registerNetwork,
		groupEditors:         registerEditors,
		groupWrappers:        registerWrappers,
		groupRunners:         registerRunners,
	}[g](add)
}

// groupOf returns the group whose register function adds a program's row.
// TestProgramGroups checks it against the register functions.
func groupOf(name string) (int, bool) {
	switch name {
	case "rm", "mkdir", "rmdir", "touch", "truncate", "shred", "unlink", "tee", "chmod", "chown", "chgrp", "cp", "mv", "ln", "install", "uniq", "xxd", "split", "patch", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "zstd", "unzstd", "dd":
		return groupFileUtils, true
	case "cat", "tac", "head", "tail", "wc", "ls", "dir", "vdir", "tree", "du", "stat", "cut", "tr", "echo", "printf", "basename", "dirname", "seq", "yes", "sleep", "whoami", "id", "uname", "hostname", "date", "true", "false", "which", "nproc", "arch", "groups", "tty", "env-true", "diff", "join", "paste", "column", "fold", "fmt", "base64", "base32", "strings", "file", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "od", "hexdump", "sort", "shuf", "kill":
		return groupReaders, true
	case "grep", "egrep", "fgrep", "rgrep", "zgrep", "rg", "fd", "fdfind":
		return groupSearch, true
	case "jq", "gojq", "yq":
		return groupJQ, true
	case "sed", "gsed":
		return groupSed, true
	case "awk", "gawk", "mawk", "nawk":
		return groupAwk, true
	case "find":
		return groupFind, true
	case "tar", "gtar", "bsdtar", "zip", "unzip":
		return groupArchives, true
	case "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish",
		"lua", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "luajit", "expect", "gdb":
		return groupInterpreters, true
	case "go", "gofmt":
		return groupGo, true
	case "make", "gmake":
		return groupMake, true
	case "npm", "npx", "pnpm", "yarn":
		return groupPackageManagers, true
	case "pip", "pip3":
		return groupPip, true
	case "cargo":
		return groupCargo, true
	case "git":
		return groupGit, true
	case "curl", "wget", "ssh", "scp", "sftp", "rsync", "socat":
		return groupNetwork, true
	case "less", "more", "most", "vi", "vim", "nvim", "view", "vimdiff", "ex", "gvim", "emacs", "emacsclient", "man":
		return groupEditors, true
	case "env", "nice", "nohup", "chronic", "unbuffer", "setsid", "caffeinate", "timeout", "stdbuf", "time", "ionice", "xargs", "sudo", "doas", "strace", "ltrace", "flock", "watch", "chroot", "busybox", "toybox",
		"taskset", "prlimit", "setpriv", "script", "unshare", "nsenter", "runuser", "su", "capsh", "chrt", "parallel",
		"fakeroot", "eatmydata", "xvfb-run", "torsocks", "proxychains", "proxychains4", "dbus-run-session", "numactl":
		return groupWrappers, true
	case "tmux", "screen", "at", "batch", "systemd-run", "hyperfine", "entr", "sg", "rlwrap", "cpulimit", "uv", "uvx", "poetry", "pipenv",
		"conda", "mamba", "micromamba", "bundle", "direnv":
		return groupRunners, true
	}
	return 0, false
}
