package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// dangerousVars are the environment variables an agent may not set for a
// command, with why: they make
// programs load code, run other programs, or read configuration from places
// the scope does not cover. The table is data: extend it here.
var dangerousVars = map[string]string{
	"PATH": "changes which programs run", "BASH_ENV": "runs a script at shell start",
	"ENV": "runs a script at shell start", "SHELLOPTS": "changes shell behaviour", "BASHOPTS": "changes shell behaviour",
	"PS4": "runs substitutions when tracing", "PROMPT_COMMAND": "runs a command",
	"CDPATH": "changes where cd goes", "GLOBIGNORE": "changes globbing", "HOME": "moves every per-user configuration file",
	"ZDOTDIR": "moves shell startup files", "XDG_CONFIG_HOME": "moves configuration files", "XDG_CONFIG_DIRS": "moves configuration files",
	"XDG_DATA_HOME": "moves data files", "SHELL": "changes the shell programs run commands with",
	"BROWSER":  "runs a browser program",
	"LESSOPEN": "makes less run an input preprocessor", "LESSCLOSE": "makes less run a command",
	"LESSKEY": "loads less key bindings", "LESSKEYIN": "loads less key bindings", "LESSKEY_SYSTEM": "loads less key bindings",
	"NODE_OPTIONS": "makes node preload code", "PYTHONSTARTUP": "runs a Python script", "PYTHONHOME": "moves the Python library",
	"PYTHONUSERBASE": "moves Python's user site", "PYTHONINSPECT": "opens an interactive interpreter", "PYTHONBREAKPOINT": "runs code at breakpoints",
	"PERL5OPT": "injects perl options", "PERL5DB": "runs debugger code", "PERLLIB": "loads perl modules", "PERL5LIB": "loads perl modules",
	"RUBYOPT": "injects ruby options", "RUBYLIB": "loads ruby libraries", "JAVA_TOOL_OPTIONS": "injects JVM options",
	"_JAVA_OPTIONS": "injects JVM options", "JDK_JAVA_OPTIONS": "injects JVM options", "GOENV": "loads go configuration",
	"CGO_CFLAGS": "passes flags to the C compiler", "CGO_CPPFLAGS": "passes flags to the C compiler", "CGO_CXXFLAGS": "passes flags to the C compiler",
	"CGO_LDFLAGS": "passes flags to the linker", "CGO_FFLAGS": "passes flags to the compiler", "MAKEFLAGS": "injects make options",
	"MAKEFILES": "makes make read more makefiles", "MFLAGS": "injects make options", "TAR_OPTIONS": "injects tar options",
	"RIPGREP_CONFIG_PATH": "loads rg options (such as --pre)", "GREP_OPTIONS": "injects grep options", "SSH_ASKPASS": "runs a program",
	"SUDO_ASKPASS": "runs a program", "RUSTC_WRAPPER": "runs a program", "RUSTC": "runs a program", "RUSTDOC": "runs a program",
	"RUSTFLAGS": "passes flags to the compiler", "OPENSSL_CONF": "loads OpenSSL engines", "GCONV_PATH": "loads code",
	"LOCPATH": "loads locale data", "NLSPATH": "loads message catalogs", "HOSTALIASES": "redirects host names",
	"NPM_CONFIG_SCRIPT_SHELL": "runs npm scripts with another shell",
	"FPATH":                   "loads shell functions", "GOROOT": "runs the Go tools of another tree", "JAVA_HOME": "runs another JVM",
	"SUDO_EDITOR": "runs an editor program", "BASH_LOADABLES_PATH": "loads builtins",
	"GOCACHEPROG": "runs a program as go's cache", "GOAUTH": "runs programs for module authentication",
	"GORACE": "can write race logs anywhere", "PYTHONPLATLIBDIR": "loads Python code from another directory",
	"PYTEST_ADDOPTS": "injects pytest options", "GNUMAKEFLAGS": "injects make options", "LESSKEY_CONTENT": "loads less key bindings that can set LESSOPEN",
	"PYTHONSAFEPATH": "", "PIP_CONFIG_FILE": "loads pip configuration",
	"CURL_HOME": "loads curl configuration (url, output)", "WGETRC": "loads wget configuration (output_document)",
	"SYSTEM_WGETRC": "loads wget configuration", "ZIPOPT": "injects zip options (-TT runs a program)", "UNZIP": "injects unzip options (-d)",
	"RUSTC_WORKSPACE_WRAPPER": "runs a program", "CARGO_HOME_CONFIG": "", "GZIP": "injects gzip options", "BZIP2": "injects bzip2 options",
	"XZ_OPT": "injects xz options", "ZSTD_CLEVEL": "", "LESSSECURE": "", "PERLDB_OPTS": "runs debugger code",
	"AWKPATH": "loads awk code", "AWKLIBPATH": "loads awk extensions", "MANOPT": "injects man options (--pager)",
	"VIMINIT": "runs editor commands", "EXINIT": "runs editor commands", "MYVIMRC": "loads editor code", "GVIMINIT": "runs editor commands",
	"PKG_CONFIG": "names a program go runs", "FC": "names a compiler program", "GCCGO": "names a compiler program",
	"DIRSTACK": "changes where popd goes", "PROMPT_DIRTRIM": "", "EMACSLOADPATH": "loads lisp code", "GIT_TEMPLATE_DIR": "copies hooks", "INPUTRC": "loads readline bindings", "TERMINFO": "loads terminal definitions",
}

// programVars name a program that tools run (a pager, an editor, a
// compiler). They may be set only to one of a few harmless programs.
var programVars = map[string][]string{
	"PAGER": {"cat", "less", "more", ""}, "GIT_PAGER": {"cat", "less", "more", ""}, "MANPAGER": {"cat", "less", "more", ""},
	"SYSTEMD_PAGER": {"cat", "less", ""}, "EDITOR": {"true", "false", ":"}, "VISUAL": {"true", "false", ":"},
	"GIT_EDITOR": {"true", "false", ":"}, "GIT_SEQUENCE_EDITOR": {"true", "false", ":"},
	"CC": {"cc", "gcc", "clang", "tcc", "musl-gcc"}, "CXX": {"c++", "g++", "clang++"},
}

// editorVars name the editor that programs run for a message (git commit
// without -m): set, as a command's prefix, to a program of programVars
// that runs nothing, the editor is safe for that command (editorSafe).
var editorVars = []string{"GIT_EDITOR", "EDITOR", "VISUAL"}

// editorVar reports whether name is one of editorVars.
func editorVar(name string) bool { return slices.Contains(editorVars, name) }

// editorRunsNothing reports whether value makes the editor variable name
// a program that runs nothing.
func editorRunsNothing(name, value string) bool {
	return editorVar(name) && slices.Contains(programVars[name], value)
}

// dangerousVarPrefixes are variable name prefixes refused like dangerousVars.
var dangerousVarPrefixes = map[string]string{
	"LD_": "changes how programs are linked and loaded", "DYLD_": "changes how programs are linked and loaded",
	"BASH_FUNC_": "defines shell functions", "NPM_CONFIG_": "changes npm configuration",
	"CARGO_TARGET_": "can set a runner program", "CARGO_BUILD_": "can set a compiler wrapper",
	"PIP_": "changes pip configuration", "YARN_": "changes yarn configuration",
	"npm_config_": "changes npm configuration", "GRADLE_": "changes gradle options", "MAVEN_": "changes maven options",
	"CGO_CFLAGS_": "changes which compiler flags go allows", "CGO_LDFLAGS_": "changes which linker flags go allows",
	"CGO_CXXFLAGS_": "changes which compiler flags go allows", "CGO_CPPFLAGS_": "changes which compiler flags go allows",
}

// safeGitVars are the GIT_* variables that cannot make git run programs or
// read another repository; every other GIT_* variable is refused.
var safeGitVars = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true, "GIT_NO_REPLACE_OBJECTS": true,
	"GIT_LITERAL_PATHSPECS": true, "GIT_GLOB_PATHSPECS": true, "GIT_NOGLOB_PATHSPECS": true,
	"GIT_ICASE_PATHSPECS": true, "GIT_FLUSH": true, "GIT_PROGRESS_DELAY": true, "GIT_MERGE_VERBOSITY": true,
	"GIT_ADVICE": true, "GIT_DEFAULT_HASH": true, "GIT_CURL_VERBOSE": true, "GIT_LFS_SKIP_SMUDGE": true,
	"GIT_REDACT_COOKIES": true,
}

// safeGitVarValues are GIT_* variables safe with the values given only:
// GIT_MERGE_AUTOEDIT=yes would open an editor program.
var safeGitVarValues = map[string][]string{"GIT_MERGE_AUTOEDIT": {"no"}, "GIT_TRACE_REDACT": {"1", "true", "yes"}}

// gitTraceValue reports whether a GIT_TRACE* value traces to standard
// error or nowhere: git(1) "an integer value greater than 2 and lower than
// 10 … file descriptor", "an absolute path … append the trace messages to
// it" (GIT_TRACE2* also take a directory or a unix socket).
func gitTraceValue(v string) bool {
	switch strings.ToLower(v) {
	case "", "0", "1", "2", "false", "true":
		return true
	}
	return false
}

// safePrefixedVars are variables under a refused prefix that only switch
// behaviour (jobs, caches off, prompts off); write directories among them
// are checked as writeDirVars.
var safePrefixedVars = map[string]bool{
	"CARGO_BUILD_JOBS": true, "CARGO_TARGET_DIR": true, "CARGO_BUILD_TARGET_DIR": true, "PIP_NO_CACHE_DIR": true,
	"PIP_DISABLE_PIP_VERSION_CHECK": true, "PIP_NO_INPUT": true, "PIP_QUIET": true, "PIP_PROGRESS_BAR": true,
	"PIP_NO_COLOR": true, "npm_config_yes": true, "NPM_CONFIG_YES": true, "npm_config_loglevel": true,
	"NPM_CONFIG_LOGLEVEL": true, "npm_config_fund": true, "npm_config_audit": true, "npm_config_update_notifier": true,
}

// writeDirVars name directories programs write to: allowed only when the
// directory is writable in scope.
var writeDirVars = map[string]bool{"GOCACHE": true, "GOMODCACHE": true, "GOPATH": true, "GOCOVERDIR": true,
	"GOTMPDIR": true, "GOBIN": true, "PYTHONPYCACHEPREFIX": true, "TMPDIR": true, "XDG_CACHE_HOME": true,
	"CARGO_HOME": true, "CARGO_TARGET_DIR": true, "CARGO_BUILD_TARGET_DIR": true, "npm_config_cache": true}

// readFileVars name files or directories programs read configuration or
// code from: allowed only when readable in scope.
var readFileVars = map[string]bool{"GOWORK": true, "GOFLAGS_FILE": true}

// pathListVars hold lists of directories code is loaded from: allowed only
// when every entry is readable in scope.
var pathListVars = map[string]bool{"PYTHONPATH": true, "NODE_PATH": true, "CLASSPATH": true, "GEM_PATH": true, "GEM_HOME": true}

// envAssign checks setting variable name to val (nil: known only at run
// time) for a command, or for the rest of the script.
func (s *Scope) envAssign(name string, val *string, cwd string, env Env) []Violation {
	return append(s.hostVar(name, val), s.envValue(name, val, cwd, env)...)
}

// envValue checks what setting a variable makes programs do (see envAssign).
func (s *Scope) envValue(name string, val *string, cwd string, env Env) []Violation {
	deny := func(why string) []Violation {
		return []Violation{{Reason: ReasonDangerousArgument, Resource: name, Rule: "environment " + name,
			Message: fmt.Sprintf("setting %s is refused: it %s", name, why)}}
	}
	if safe, ok := programVars[name]; ok {
		if val != nil {
			for _, v := range safe {
				if *val == v {
					return nil
				}
			}
		}
		names := make([]string, len(safe))
		for i, v := range safe {
			names[i] = cmp.Or(v, `""`)
		}
		return deny("names a program that tools run; only " + strings.Join(names, ", ") + " may be given")
	}
	if why, ok := dangerousVars[name]; ok && why != "" {
		return deny(why)
	}
	if val != nil && (strings.Contains(*val, "$(") || strings.Contains(*val, "`") || strings.Contains(*val, "${")) {
		// make and shells expand such values again: $(shell …) runs.
		return deny("holds shell or make syntax that a program may expand and run")
	}
	for prefix, why := range dangerousVarPrefixes {
		// npm reads its npm_config_ variables in any case (Npm_Config_…).
		if strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) && !safePrefixedVars[name] && !writeDirVars[name] {
			return deny(why)
		}
	}
	if strings.HasPrefix(name, "GIT_") && !safeGitVars[name] {
		switch vals, ok := safeGitVarValues[name]; {
		case ok:
			if val == nil || !slices.Contains(vals, *val) {
				return deny("changes what git runs or reveals (credentials in traces) unless it is " + strings.Join(vals, ", "))
			}
		case strings.HasPrefix(name, "GIT_TRACE"):
			if val == nil || !gitTraceValue(*val) {
				return deny("writes trace messages to a file or descriptor; give 1 (standard error)")
			}
		default:
			return deny("changes which repository, configuration or helper programs git uses")
		}
	}
	switch {
	case name == "GOTOOLCHAIN":
		if val == nil || (*val != "local" && *val != "path" && !strings.HasSuffix(*val, "+path")) {
			return deny("downloads and runs another Go toolchain (only local or path are allowed)")
		}
	case name == "GOPROXY" || name == "GONOSUMDB" || name == "GOPRIVATE":
		if val != nil && strings.Contains(*val, "file:") {
			return deny("loads modules from local files outside the scope")
		}
	case name == "LESS":
		if val == nil || strings.Contains(*val, "lesskey") || strings.Contains(*val, "-k") || strings.Contains(*val, "LOG") || strings.Contains(*val, "-o") {
			return deny("injects less options that load key definitions or write files")
		}
		if strings.Contains(*val, "+") {
			return deny("gives less a command to run when it starts (+!cmd runs a shell command)")
		}
	case name == "PYTHONWARNINGS":
		// Comma-separated -W filters: Python imports each category's
		// module, as for python3 -W.
		if val == nil {
			return deny("names warning categories known only at run time, whose modules Python imports")
		}
		for _, f := range strings.Split(*val, ",") {
			if m := pythonWarningImport(f); m != "" {
				return deny("makes Python import " + m + ", which " + pythonImportDanger[m])
			}
		}
	case writeDirVars[name]:
		if val == nil {
			return deny("names a directory known only at run time that programs write to")
		}
		if vs := s.checkPath(*val, AccessWrite, cwd, env, pathSource{}); vs != nil {
			return deny("makes programs write to " + *val + ", which is outside this session's write scope")
		}
	case readFileVars[name]:
		if val == nil {
			return deny("names a file known only at run time that programs load")
		}
		if vs := s.checkPath(*val, AccessRead, cwd, env, pathSource{}); vs != nil {
			return deny("makes programs load " + *val + ", which is outside this session's read scope")
		}
	case name == "GOFLAGS":
		if val == nil {
			return deny("injects go flags known only at run time")
		}
		c := newChecker(s, env)
		words := knownArgs(strings.Fields(*val))
		p := parseArgs("go", s.programs.lookup("go").subs["build"], words)
		for _, o := range p.occ {
			if o.opt != nil && (o.opt.eff.dangerous() || o.opt.eff == effWrite || o.opt.eff == effRead) {
				return deny("injects the go flag " + o.id + ", which " + orDefault(o.opt.why, "reads or writes files"))
			}
			if o.id == "-ldflags" || o.id == "-gcflags" || o.id == "-asmflags" {
				return deny("injects " + o.id + " (which can name programs such as -extld)")
			}
		}
		_ = c
	case pathListVars[name]:
		if val == nil {
			return deny("loads code from directories known only at run time")
		}
		for _, dir := range strings.Split(*val, ":") {
			if dir == "" {
				continue
			}
			if vs := s.checkPath(dir, AccessRead, cwd, env, pathSource{}); vs != nil {
				return deny("loads code from " + dir + ", which is outside this session's read scope")
			}
		}
	}
	return nil
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
