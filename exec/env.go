package exec

import (
	"strings"
)

// DefaultPassEnv returns the environment variables passed from the gateway
// to programs: what locating programs, locale, terminal and Go toolchains
// need. A trailing "*" matches a prefix. TMPDIR is always replaced by the
// call's private temporary directory.
func DefaultPassEnv() []string {
	return []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL",
		"LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "NO_COLOR", "TZ",
		"GOPATH", "GOCACHE", "GOMODCACHE", "GOROOT", "GOTOOLCHAIN", "GOPROXY",
		"GONOSUMDB", "GOPRIVATE", "CGO_ENABLED",
		"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	}
}

// neverPass reports whether a variable lets its value choose code to run
// (loader, shell start-up files, pagers, editors, interpreter search paths,
// git helpers) or where git looks for its repository and config. Such
// variables reach no program, whatever PassEnv or the script says.
func neverPass(name string) bool {
	if strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") ||
		strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "BASH_FUNC_") {
		return true
	}
	switch name {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "PS4", "IFS", "CDPATH",
		"PAGER", "MANPAGER", "SYSTEMD_PAGER", "LESSOPEN", "LESSCLOSE", "LESSKEY",
		"EDITOR", "VISUAL", "BROWSER",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT",
		"NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB", "PERL5DB",
		"RUBYLIB", "RUBYOPT", "GEM_PATH", "GEM_HOME",
		"GOFLAGS", "GOENV", "GOEXPERIMENT", "GODEBUG", "CC", "CXX", "CGO_CFLAGS", "CGO_LDFLAGS",
		"MAKEFLAGS", "MFLAGS", "NPM_CONFIG_SCRIPT_SHELL", "SSH_ASKPASS", "SUDO_ASKPASS",
		"TMPDIR", "TMP", "TEMP":
		return true
	}
	return false
}

// passes reports whether name is matched by one of the patterns.
func passes(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

// scrubEnv keeps the variables of environ named by pass, minus those that
// must never pass and any with a NUL byte or no name. Later duplicates win.
func scrubEnv(environ, pass []string) []string {
	out := make([]string, 0, len(pass))
	seen := make(map[string]int, len(pass))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.IndexByte(kv, 0) >= 0 {
			continue
		}
		if neverPass(name) || !passes(name, pass) {
			continue
		}
		if i, dup := seen[name]; dup {
			out[i] = kv
			continue
		}
		seen[name] = len(out)
		out = append(out, kv)
	}
	return out
}
