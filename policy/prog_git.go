package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// git: version control whose configuration runs programs.
//
// git-config(1): core.pager, core.editor, core.sshCommand, core.fsmonitor,
// core.hooksPath, diff.external, alias.* ("!" aliases), credential.helper,
// filter.*.clean/smudge and more name programs that git runs. So -c, a
// repository directory the tool calls can write (.git/config, .git/hooks),
// and --exec-path let a later git command run arbitrary code (GTFOBins: git,
// "Shell"). Subcommands run programs too: rebase -x, difftool -x, grep -O,
// bisect run, submodule foreach, send-email's --*-cmd options, and
// --upload-pack/--receive-pack on the transport commands. git grep
// --no-index reads every file below its pathspecs, and REV:PATH names a
// file's content.

// registerGit adds the table rows of this file.
func registerGit(add adder) {
	add(gitSpec(), "git")
}

// gitConfigExtra: git config that writes (rather than reads) configuration
// may set or unset only keys that cannot make git run a program, and
// writes the file it names (--global, --system, --file) as a tool call.
func gitConfigExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	reads := map[string]bool{"--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true,
		"--list": true, "-l": true, "--show-origin": true, "--show-scope": true,
		"--name-only": true, "-z": true, "--null": true, "--type": true, "--bool": true, "--int": true, "--path": true,
		"--default": true, "--includes": true, "--no-includes": true, "--local": true, "--global": true, "--system": true,
		"--worktree": true, "--blob": true, "--fixed-value": true}
	// Modes that write; the key follows.
	writes := map[string]bool{"--unset": true, "--unset-all": true, "--add": true, "--replace-all": true}
	var ops []arg
	mode, file := "", ""
	fileKnown := true
	args := p.args[1:] // after "config"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			ops = append(ops, a)
			continue
		}
		if !strings.HasPrefix(a.s, "-") {
			ops = append(ops, a)
			continue
		}
		name, v, hasVal := strings.Cut(a.s, "=")
		switch {
		case name == "--file" || name == "-f":
			if !hasVal && i+1 < len(args) {
				i++
				v, fileKnown = args[i].s, args[i].known
			}
			file = v
		case writes[name]:
			mode = name
		case !reads[name]:
			c.danger(p, allowed, "config", "config "+a.s, whyConfig)
			return
		}
	}
	if len(ops) > 0 && ops[0].known {
		switch ops[0].s {
		case "get", "list":
			return
		case "set", "unset":
			mode, ops = ops[0].s, ops[1:]
		case "edit", "rename-section", "remove-section":
			c.danger(p, allowed, "config", "config "+ops[0].s, whyConfig)
			return
		}
	}
	if p.has("--get") || p.has("--get-all") || p.has("--get-regexp") || p.has("--list") || p.has("-l") || p.has("--get-urlmatch") {
		return
	}
	unset := mode == "--unset" || mode == "--unset-all" || mode == "unset"
	if !unset && mode == "" && len(ops) < 2 {
		return // git config KEY reads the value
	}
	safe := len(ops) > 0 && ops[0].known && (unset && safeGitUnset(ops[0].s) || !unset && len(ops) >= 2 && ops[1].known && safeGitSetting(ops[0].s, ops[1].s))
	if !safe {
		c.danger(p, allowed, "config", "config (writing)", whyConfig)
		return
	}
	// The file written, when it is not the repository's own.
	switch {
	case file != "" || !fileKnown:
		if !fileKnown {
			c.danger(p, allowed, "config", "config --file", "writes a configuration file known only at run time")
			return
		}
		c.operand(file, AccessWrite, st.cwd, "git config --file")
	case p.has("--global"):
		c.operand("~/.gitconfig", AccessWrite, st.cwd, "git config --global")
	case p.has("--system"):
		c.operand("/etc/gitconfig", AccessWrite, st.cwd, "git config --system")
	}
}

// safeGitUnset reports whether unsetting a configuration key cannot make
// git run a program: the keys safe with any value (unsetting core.pager
// or credential.helper hands the choice to other configuration files).
func safeGitUnset(key string) bool {
	return safeGitKey(key)
}

// safeGitKeys are configuration keys (or key prefixes ending in .) that
// cannot make git run a program: git -c may set these.
var safeGitKeys = []string{"color.", "user.name", "user.email", "core.quotepath", "core.autocrlf", "core.safecrlf",
	"core.abbrev", "core.precomposeunicode", "core.ignorecase", "advice.", "log.", "format.pretty", "init.defaultbranch",
	"pull.rebase", "pull.ff", "merge.ff", "merge.conflictstyle", "commit.gpgsign", "tag.gpgsign", "gc.auto",
	"status.", "column.", "i18n.", "push.default", "rebase.autosquash", "rebase.autostash", "diff.renames",
	"diff.algorithm", "diff.noprefix", "diff.mnemonicprefix", "protocol.version", "fetch.prune", "maintenance.auto",
	"safe.bareRepository", "core.fsync", "feature.manyfiles", "index.threads", "pack.threads", "blame.coloring",
	"core.filemode", "core.whitespace", "core.longpaths", "core.eol", "core.checkstat", "core.trustctime",
	"core.untrackedcache", "core.preloadindex", "core.commitgraph", "core.bigfilethreshold", "core.compression",
	"diff.renamelimit", "diff.context", "diff.interhunkcontext", "diff.indentheuristic", "diff.colormoved",
	"diff.statgraphwidth", "diff.relative", "diff.ignoresubmodules", "merge.renamelimit", "merge.renames",
	"merge.verbosity", "merge.stat", "http.postbuffer", "http.lowspeedlimit", "http.lowspeedtime", "fetch.parallel",
	"fetch.writecommitgraph", "rerere.enabled", "rerere.autoupdate", "gc.autodetach", "gc.autopacklimit",
	"checkout.workers", "push.autosetupremote", "push.followtags", "rebase.updaterefs", "branch.autosetupmerge",
	"branch.autosetuprebase", "branch.sort", "tag.sort", "grep.linenumber", "grep.patterntype", "grep.extendedregexp",
	"grep.fullname", "grep.column", "commit.verbose", "commit.status", "am.threeway", "pack.windowmemory"}

// safeGitValues are configuration keys that cannot make git run a program
// when set to one of the values given: "" resets a helper list
// (credential.helper) or turns the pager off.
var safeGitValues = map[string][]string{
	"core.pager": {"cat", "less", "more", "false", ""}, "credential.helper": {""}, "submodule.recurse": {"false"},
	"core.editor": {"true", "false", ":"}, "sequence.editor": {"true", "false", ":"},
}

// safeGitSetting reports whether git -c key=val cannot make git run a
// program.
func safeGitSetting(key, val string) bool {
	key = strings.ToLower(key)
	if strings.HasPrefix(key, "pager.") {
		key = "core.pager"
	}
	if vals, ok := safeGitValues[key]; ok {
		return slices.Contains(vals, val)
	}
	return safeGitKey(key)
}

// safeGitKey reports whether a configuration key cannot make git run a
// program (see safeGitKeys).
func safeGitKey(key string) bool {
	key = strings.ToLower(key)
	for _, k := range safeGitKeys {
		if k = strings.ToLower(k); key == k || (strings.HasSuffix(k, ".") && strings.HasPrefix(key, k)) {
			return true
		}
	}
	return false
}

// gitExtra refuses git runs whose repository configuration tool calls can
// write: a planted repository (a bare one, or a .git file pointing
// elsewhere) can set core.fsmonitor, core.pager… and run programs on any
// git command. It also refuses -c settings that run programs and
// --exec-path, and checks the paths each subcommand reads.
func gitExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) > 0 {
		sub := p.subPath[0]
		switch {
		case strings.HasSuffix(sub, "--helper"):
			// submodule--helper foreach, bisect--helper run: the commands
			// behind refused subcommands.
			c.danger(p, allowed, sub, sub, "is git's internal helper of another subcommand, which runs programs")
		case strings.HasPrefix(sub, "credential-"):
			c.danger(p, allowed, sub, sub, "reads or stores credentials")
		case sub == "apply" || sub == "am":
			gitPatchExtra(c, p, allowed, st)
		case sub == "commit" && !p.has("-m") && !p.has("-F") && !p.has("-c") && !p.has("-C") && !p.has("--no-edit") && !p.has("--fixup"),
			sub == "tag" && (p.has("-a") || p.has("-s") || p.has("-u")) && !p.has("-m") && !p.has("-F"):
			if st.editorSafe || gitEditorSafe(c, p, st) {
				break
			}
			// The message is edited in the editor git starts (vi by
			// default), which takes its commands from standard input.
			c.danger(p, allowed, "editor", sub+" without a message", "opens an editor program; give the message with -m")
		}
		if sub != "help" && p.has("--help") {
			c.danger(p, allowed, "--help", sub+" --help", "runs man and its pager (or a browser); use -h")
		}
	}
	for _, v := range p.values("-L") {
		// -L <range>:<file> reads the file.
		if i := strings.LastIndexByte(v.s, ':'); v.known && i >= 0 && i+1 < len(v.s) {
			c.operand(v.s[i+1:], AccessRead, st.cwd, "git -L")
		}
	}
	for _, v := range p.values("-c") {
		key, val, hasVal := strings.Cut(v.s, "=")
		if !hasVal {
			val = "true" // -c KEY sets a boolean
		}
		if !v.known || !safeGitSetting(key, val) {
			c.danger(p, allowed, "-c", "-c "+v.s, "sets configuration (core.pager, core.sshCommand, alias.*…) that can run programs")
		}
	}
	gitPathsExtra(c, p, allowed, st)
	if len(p.values("--exec-path")) > 0 {
		c.danger(p, allowed, "--exec-path", "--exec-path=…", "runs git's subcommands from another directory")
	}
	for _, o := range p.occ {
		if o.has && o.value.known && (strings.Contains(o.value.s, "ext::") || strings.HasPrefix(o.value.s, "fd::")) {
			c.danger(p, allowed, "ext::", o.text, "runs a command as the remote")
		}
	}
	if len(p.subPath) > 0 && p.subPath[0] == "push" {
		if ops := p.operands(); len(ops) > 0 && ops[0].known && looksLikePath(ops[0].s) && !strings.Contains(ops[0].s, ":") {
			c.operand(ops[0].s, AccessWrite, st.cwd, "git push to")
		}
	}
	for _, a := range p.operands() {
		if !a.known {
			continue
		}
		if strings.HasPrefix(a.s, "ext::") || strings.HasPrefix(a.s, "fd::") {
			c.danger(p, allowed, "ext::", a.s, "runs a command as the remote")
		}
		if len(p.subPath) > 0 && p.subPath[0] == "push" && strings.HasPrefix(a.s, "+") {
			if len(c.s.denyCmds) > 0 {
				p.occ = append(p.occ, occurrence{id: "-f", text: a.s})
				c.denyCheck(p, "")
			}
		}
	}
	var gitDir string
	for _, v := range p.values("--git-dir") {
		if v.known {
			gitDir = v.s
		} else {
			c.danger(p, allowed, "--git-dir", "--git-dir", "names a repository known only at run time")
			return
		}
	}
	if st.cwd == "" {
		c.unknownCwd("git's repository")
		return
	}
	if gitDir != "" {
		abs, err := absPath(gitDir, st.cwd, c.env)
		if err != nil {
			return
		}
		if real, err := canonicalize(abs, c.env.fs()); err == nil {
			abs = real
		}
		c.gitRepo(p, allowed, abs, gitTop(abs))
		return
	}
	if len(p.subPath) > 0 && (p.subPath[0] == "clone" || p.subPath[0] == "init" || p.subPath[0] == "version" || p.subPath[0] == "help") {
		return
	}
	c.gitDiscover(p, allowed, st.cwd)
}

// gitDiscover checks the repository git finds from cwd, as git finds it
// (setup.c): from the directory the kernel resolves, upwards, the first
// directory whose .git is a repository directory (or a .git file naming
// one), or which is itself one (bare). A .git that is not a repository is
// passed over, as git passes over it.
func (c *checker) gitDiscover(p *parsed, allowed allowEntries, cwd string) {
	fsys := c.env.fs()
	dir, err := canonicalize(filepath.Clean(cwd), fsys)
	if err != nil {
		c.danger(p, allowed, "repository", "in "+cwd, "runs in a directory whose links cannot be resolved, so its repository cannot be found")
		return
	}
	for {
		dotgit := childPath(dir, ".git")
		if fi, err := fsys.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				if isGitDir(fsys, dotgit) {
					c.gitRepo(p, allowed, dotgit, dir)
					return
				}
			default:
				data, err := fsys.ReadFile(dotgit)
				if err != nil {
					c.danger(p, allowed, ".git", ".git file", "cannot be read to find the repository")
					return
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return // git stops: "invalid gitfile format"
				}
				target = strings.TrimSpace(target)
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				if real, err := canonicalize(filepath.Clean(target), fsys); err == nil {
					target = real
				}
				c.gitRepo(p, allowed, filepath.Clean(target), dir)
				return
			}
		}
		if isGitDir(fsys, dir) {
			c.gitRepo(p, allowed, dir, dir)
			return
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}

// isGitDir reports whether dir is a repository directory to git
// (is_git_directory): a HEAD, and objects/ and refs/ in its common
// directory, which a commondir file names. A HEAD beside a commondir file
// counts whatever that names: git may take it for a repository.
func isGitDir(fsys FS, dir string) bool {
	if _, err := fsys.Lstat(childPath(dir, "HEAD")); err != nil {
		return false
	}
	if _, err := fsys.Lstat(childPath(dir, "commondir")); err == nil {
		return true
	}
	if fi, err := fsys.Stat(childPath(dir, "objects")); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := fsys.Stat(childPath(dir, "refs")); err != nil || !fi.IsDir() {
		return false
	}
	return true
}

// gitRepo checks a git run on the repository directory gitDir, whose
// working tree is top: the files its configuration names, then whether
// tool calls can write the configuration itself.
func (c *checker) gitRepo(p *parsed, allowed allowEntries, gitDir, top string) {
	named, key, err := c.gitConfigNamesWritable(gitDir, top)
	switch {
	case err != nil:
		c.danger(p, allowed, "repository", "in repository "+gitDir, "has a configuration that cannot be checked ("+err.Error()+")")
	case named != "":
		c.danger(p, allowed, "repository", "in repository "+gitDir,
			fmt.Sprintf("would run or read %s, which its configuration names (%s) and tool calls can write", named, key))
	default:
		c.gitConfigWritable(p, allowed, gitDir)
	}
}

// gitConfigWritable refuses a git run on a repository directory whose
// configuration or hooks this scope's paths let tool calls write. File
// tools and redirections never write them (gitRunFile), but a program a
// call runs is bounded by the write roots, not by that rule.
//
// In confined execution the private view can take that away: it binds the
// repository directory read-only for every program of every call
// (Env.ReadOnlyRepo), so git runs on a configuration no program of the
// session wrote, and the decision says so.
func (c *checker) gitConfigWritable(p *parsed, allowed allowEntries, gitDir string) {
	for _, f := range []string{"config", "hooks/pre-commit", "commondir"} {
		target := filepath.Join(gitDir, f)
		if !c.s.globsAllowWrite(target, c.env) {
			continue
		}
		why := fmt.Sprintf("would load %s, which tool calls can write (core.fsmonitor, core.pager and hooks run programs); deny **/.git/** or run git in the project's own repository", target)
		if c.env.execution() == ExecutionConfined {
			var cannot string
			if c.env.ReadOnlyRepo == nil {
				cannot = "this host gives programs no private view"
			} else if err := c.env.ReadOnlyRepo(gitDir); err != nil {
				cannot = err.Error()
			} else if !allowed.names("repository") {
				c.note(fmt.Sprintf("git runs with %s read-only (this scope lets programs write it, so the private view keeps it read-only for every program of the session): git commands that write the repository, such as commit, add and checkout, fail", gitDir))
				return
			}
			why += "; a confined call runs git on such a repository only read-only and unchanged since the session began, which does not hold here: " + cannot
		}
		c.danger(p, allowed, "repository", "in repository "+gitDir, why)
		return
	}
}

// gitTop is the working tree of a repository directory as far as its
// path tells: the directory holding a .git, else the directory itself.
func gitTop(gitDir string) string {
	if filepath.Base(gitDir) == ".git" {
		return filepath.Dir(gitDir)
	}
	return gitDir
}

// gitPathsExtra: git grep over the working tree reads untracked files too,
// and REV:PATH names a file's content in a revision or the index.
func gitPathsExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) == 0 {
		return
	}
	if p.subPath[0] == "grep" && (p.has("--no-index") || p.has("--untracked")) {
		// The pattern is the first operand unless -e gives it; pathspecs
		// follow (all of . when none).
		ops := p.operands()
		if !p.has("-e") && !p.has("-f") && len(ops) > 0 {
			ops = ops[1:]
		}
		dirs := []string{"."}
		if len(ops) > 0 {
			dirs = nil
			for _, a := range ops {
				switch {
				case !a.known || strings.ContainsAny(a.s, "*?[") || strings.HasPrefix(a.s, ":"):
					dirs = append(dirs, ".") // a wildcard pathspec matches below the working directory
				default:
					dirs = append(dirs, a.s)
				}
			}
		}
		for _, d := range dirs {
			c.recursiveRead(p, d, st.cwd, walkOpts{hidden: true})
		}
	}
	gitTreeExtra(c, p, st)
	ops := p.operands()
	if p.subPath[0] == "grep" && !p.has("-e") && !p.has("-f") && len(ops) > 0 {
		ops = ops[1:] // the pattern
	}
	if p.subPath[0] == "cat-file" && (p.has("--batch") || p.has("--batch-check") || p.has("--batch-command")) {
		ops = append(ops, gitBatchObjects(st)...)
	}
	var top string
	topKnown := false
	for _, a := range ops {
		if !a.known || strings.Contains(a.s, "://") || !strings.Contains(a.s, ":") {
			continue
		}
		path, fromTop, fromCwd := gitColonPath(a.s)
		if fromTop && st.cwd != "" {
			if !topKnown {
				top, topKnown = gitWorkTree(c, p, st.cwd), true
			}
			c.operand(filepath.Join(top, path), AccessRead, st.cwd, "git "+p.subPath[0]+" "+a.s)
		}
		if fromCwd {
			c.operand(path, AccessRead, st.cwd, "git "+p.subPath[0]+" "+a.s)
		}
	}
}

// gitBatchObjects returns the object names git cat-file --batch reads
// on standard input, when its text is known: a here-string, a
// here-document, or echo or printf before the pipe (with
// --batch-command, the name after contents or info).
func gitBatchObjects(st *shellState) []arg {
	text := st.stdinText
	if text == nil && st.pipedIn {
		text = st.pipedText
	}
	if text == nil {
		return nil
	}
	var out []arg
	for line := range strings.Lines(*text) {
		line = strings.TrimRight(line, "\n")
		if cmd, rest, ok := strings.Cut(line, " "); ok && (cmd == "contents" || cmd == "info") {
			line = rest
		}
		out = append(out, arg{s: strings.TrimSpace(line), known: true})
	}
	return out
}

// gitEditorSafe reports whether the editor git would start runs nothing:
// -c core.editor=true, or GIT_EDITOR, VISUAL or EDITOR set so.
func gitEditorSafe(c *checker, p *parsed, st *shellState) bool {
	for _, v := range p.values("-c") {
		if key, val, ok := strings.Cut(v.s, "="); v.known && ok && strings.EqualFold(key, "core.editor") {
			return val == "true" || val == "false" || val == ":"
		}
	}
	for _, name := range []string{"GIT_EDITOR", "VISUAL", "EDITOR"} {
		if v, ok := c.varValue(name, st); ok {
			return v == "true" || v == "false" || v == ":"
		}
	}
	return false
}

// gitPatchExtra checks the files a patch git apply (or am) writes: read
// from the patch files named, refused when the patch comes from standard
// input or creates a symbolic link (its target is the patch's content).
func gitPatchExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if (p.has("--check") || p.has("--stat") || p.has("--numstat") || p.has("--summary")) && !p.has("--apply") {
		return // reports on the patch, applies nothing
	}
	var files []arg
	for _, a := range p.operands() {
		if !a.known || a.s == "-" {
			c.danger(p, allowed, "apply", p.subPath[0]+" -", "applies a patch read from standard input or named at run time, whose files cannot be checked")
			return
		}
		files = append(files, a)
	}
	if len(files) == 0 {
		c.danger(p, allowed, "apply", p.subPath[0]+" (standard input)", "applies a patch read from standard input, whose files cannot be checked")
		return
	}
	if st.cwd == "" {
		return // the operands are refused as relative to an unknown directory
	}
	top := gitWorkTree(c, p, st.cwd)
	for _, f := range files {
		abs, err := absPath(f.s, st.cwd, c.env)
		if err != nil {
			continue
		}
		data, err := c.env.fs().ReadFile(abs)
		if err != nil || c.written[filepath.Clean(abs)] {
			c.danger(p, allowed, "apply", p.subPath[0]+" "+f.s, "applies a patch that cannot be read before it runs (missing, or written by the same command)")
			continue
		}
		targets, symlink := patchTargets(string(data))
		if symlink {
			c.danger(p, allowed, "apply", p.subPath[0]+" "+f.s, "creates a symbolic link, whose target cannot be checked")
		}
		strip := 1
		for _, v := range p.values("-p") {
			if n, err := strconv.Atoi(v.s); v.known && err == nil {
				strip = n
			}
		}
		prefix := ""
		for _, v := range p.values("--directory") {
			prefix = v.s
		}
		for _, t := range targets {
			c.operand(filepath.Join(top, prefix, stripComponents(t, strip)), AccessWrite, st.cwd, p.subPath[0]+" "+f.s+" writes")
		}
	}
}

// patchTargets reads a unified or git diff for the files it writes (as
// spelled in it, a/ and b/ prefixes kept) and whether it makes a symbolic
// link.
func patchTargets(data string) (targets []string, symlink bool) {
	for line := range strings.Lines(data) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "new file mode 120000"), strings.HasPrefix(line, "new mode 120000"):
			symlink = true
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "*** "):
			t := strings.TrimSpace(line[4:])
			if before, _, ok := strings.Cut(t, "\t"); ok {
				t = before
			}
			if t != "/dev/null" && t != "" {
				targets = append(targets, t)
			}
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			_, t, _ := strings.Cut(line, " to ")
			targets = append(targets, "a/"+t)
		case strings.HasPrefix(line, "rename from "):
			targets = append(targets, "a/"+strings.TrimPrefix(line, "rename from "))
		}
	}
	return targets, symlink
}

// stripComponents drops n leading directories of a patch path (-p n).
func stripComponents(p string, n int) string {
	for ; n > 0; n-- {
		_, rest, ok := strings.Cut(p, "/")
		if !ok {
			break
		}
		p = rest
	}
	return p
}

// gitTreeExtra checks the git commands that read or remove every file
// below the work tree or their operands, untracked ones included: stash
// -u/-a, clean -f and diff --no-index. Files git ignores are skipped (by
// the root .gitignore's plain names) unless the command takes them too
// (stash -a, clean -x). Staging (git add -A) is git's own use of the
// index and is not refused.
func gitTreeExtra(c *checker, p *parsed, st *shellState) {
	sub := p.subPath[0]
	verb := "reads"
	var dirs []string
	ignored := false
	switch {
	case sub == "stash" && (p.has("-u") || p.has("-a")):
		ignored, verb = p.has("-a"), "stashes and removes"
		dirs = append(dirs, gitWorkTree(c, p, st.cwd))
	case sub == "clean" && (!p.has("-n") || p.has("--no-dry-run")):
		ignored, verb = p.has("-x") || p.has("-X"), "removes"
		whole := len(p.operands()) == 0
		for _, a := range p.operands() {
			if !a.known || strings.ContainsAny(a.s, "*?[") || strings.HasPrefix(a.s, ":") {
				whole = true // a wildcard or magic pathspec matches anywhere
			} else {
				dirs = append(dirs, a.s) // pathspecs limit what it removes
			}
		}
		if whole {
			dirs = append(dirs, gitWorkTree(c, p, st.cwd))
		}
	case sub == "diff" && (p.has("--no-index") || gitDiffOutside(c, p, st)):
		ignored = true
		for _, a := range p.operands() {
			if a.known {
				dirs = append(dirs, a.s)
			}
		}
	}
	for _, d := range dirs {
		o := walkOpts{hidden: true, filters: []walkFilter{{glob: ".git", dirs: true}}, verb: verb}
		if !ignored && st.cwd != "" && !c.wroteIgnoreFile {
			top := gitWorkTree(c, p, st.cwd)
			o.gitignore = c.gitignoreNames(top, filepath.Clean(d) == top)
		}
		c.recursiveRead(p, d, st.cwd, o)
	}
}

// gitDiffOutside reports whether git diff is given two paths of which one
// is outside the work tree: git then compares them as files (as with
// --no-index), reading every file below both.
func gitDiffOutside(c *checker, p *parsed, st *shellState) bool {
	ops := p.operands()
	if len(ops) != 2 || st.cwd == "" {
		return false
	}
	top := gitWorkTree(c, p, st.cwd)
	for _, a := range ops {
		if !a.known {
			continue
		}
		abs, err := absPath(a.s, st.cwd, c.env)
		if err != nil {
			continue
		}
		if _, err := c.env.fs().Lstat(abs); err == nil && !pathWithin(abs, top) {
			return true
		}
	}
	return false
}

// pathWithin reports whether path is dir or below it.
func pathWithin(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// gitColonPath is the file an operand with a colon names, and whether its
// path is from the top of the work tree or from the working directory
// (gitrevisions(7), gitglossary(7) "pathspec"). REV:PATH and :N:PATH name
// PATH from the top unless it starts with ./ or ../; pathspec magic :/PATH
// and :(top)PATH from the top, other magic from the working directory; a
// plain :PATH is the index's PATH (from the top) or a pathspec (from the
// working directory), so both. An exclusion (:!PATH, :^PATH,
// :(exclude)PATH) and REV: name no file read.
func gitColonPath(s string) (path string, fromTop, fromCwd bool) {
	i := strings.IndexByte(s, ':')
	if i > 0 {
		path = s[i+1:]
		if path == "" {
			return "", false, false
		}
		if path == "." || path == ".." || strings.HasPrefix(path, "./") || strings.HasPrefix(path, "../") {
			return path, false, true
		}
		return path, true, false
	}
	rest := s[1:]
	top, exclude, magic := false, false, false
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return rest, false, true
		}
		magic = true
		for w := range strings.SplitSeq(rest[1:end], ",") {
			switch strings.TrimSpace(w) {
			case "top":
				top = true
			case "exclude":
				exclude = true
			}
		}
		rest = rest[end+1:]
	} else {
		for rest != "" && strings.IndexByte("/!^", rest[0]) >= 0 {
			magic = true
			top = top || rest[0] == '/'
			exclude = exclude || rest[0] != '/'
			rest = rest[1:]
		}
		if magic {
			rest = strings.TrimPrefix(rest, ":")
		} else if len(rest) >= 2 && rest[0] >= '0' && rest[0] <= '3' && rest[1] == ':' {
			return rest[2:], true, false // :N:PATH, a stage of the index
		}
	}
	switch {
	case exclude:
		return "", false, false
	case top:
		return rest, true, false
	case magic:
		return rest, false, true
	}
	return rest, true, true
}

// gitWorkTree is the top of the work tree git would use from cwd: the
// --work-tree given, else the nearest directory holding .git, else cwd.
func gitWorkTree(c *checker, p *parsed, cwd string) string {
	for _, v := range p.values("--work-tree") {
		if abs, err := absPath(v.s, cwd, c.env); err == nil && v.known {
			return abs
		}
	}
	fsys := c.env.fs()
	for dir := filepath.Clean(cwd); ; {
		if _, err := fsys.Lstat(childPath(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Clean(cwd)
		}
		dir = parent
	}
}

// gitSpec is git's table row: global options, subcommands and their options.
func gitSpec() *spec {
	// Options shared by many subcommands: any of them on any subcommand.
	common := []option{
		exe("--upload-pack", "runs a program as the remote upload-pack"), exe("--receive-pack", "runs a program as the remote receive-pack"),
		exe("--exec", whyExec), wr("--output"), exe("--open-files-in-pager", "runs a pager program on the matches"),
		exe("--extcmd", "runs a diff program"), conf("--template", "copies hooks from a template directory"),
		conf("--config", whyConfig), wr("--separate-git-dir"), rd("--git-dir"), rd("--work-tree"),
		rd("--file"), rd("--pathspec-from-file"),
		// Options that take a value in one subcommand are flags in others
		// (-m, -n, -F, -L, -G, -S): as flags (a value then reads as an
		// operand) they never swallow the option after them; those that
		// take only an attached value are oval.
		fl("-m"), fl("-n"), fl("-F"), val("--message"), val("--grep"), val("--author"), val("--committer"), val("-L"), oval("-S"), oval("-G"),
		oval("--format --pretty"), val("--since --after"), val("--until --before"), val("--date"), val("--max-count"),
		val("--skip"), val("--decorate-refs"), oval("--exclude"), oval("--branches"), oval("--tags"), oval("--remotes"),
		oval("--glob"), oval("--abbrev"), oval("-U --unified"), val("--word-diff-regex"), val("--diff-filter"),
	}
	sub := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, common...), extra...)} }
	subs := map[string]*spec{
		"clone":     {operands: opWriteLast, opts: append(append([]option{}, common...), exe("-u", "runs a program as the remote upload-pack"), val("-c"), fl("--recursive --recurse-submodules"))},
		"fetch":     sub(),
		"pull":      sub(),
		"ls-remote": sub(exe("-u", "runs a program as the remote upload-pack")),
		"push":      sub(fl("-f --force --force-with-lease --force-if-includes --mirror"), fl("-d --delete"), fl("-u --set-upstream")),
		"archive":   sub(wr("-o"), rd("--add-file"), rd("--remote")),
		"blame":     sub(rd("--contents"), rd("--ignore-revs-file")),
		"rebase":    sub(exe("-x", "runs a command after every commit")),
		"grep": {operands: opPatternFirst, opts: append(append([]option{}, common...), exe("-O --open-files-in-pager", "runs a pager program on the matches"),
			pat("-e"), patFile("-f"), fl("-F --fixed-strings"), fl("--no-index"), fl("--untracked"), fl("--cached"), fl("-L -G"))},
		"add":          sub(dflag("-f --force", "stages ignored files, which may be denied ones")),
		"difftool":     sub(exe("-x", "runs a diff program"), fl("-y --no-prompt")),
		"mergetool":    sub(),
		"format-patch": sub(wr("-o --output-directory")),
		"commit":       sub(rd("-t --template"), fl("-a --all"), val("-m --message"), rd("-F --file"), val("-c -C --reuse-message --reedit-message"), oval("--fixup"), oval("--squash")),
		"tag":          sub(val("-m --message"), rd("-F --file")),
		"merge":        sub(val("-m --message"), rd("-F --file")),
		"notes":        sub(val("-m --message"), rd("-F --file")),
		"stash":        sub(val("-m --message"), fl("-u --include-untracked"), fl("-a --all")),
		"clean":        sub(fl("-f --force"), fl("-d"), fl("-x"), fl("-X"), fl("-n --dry-run"), dflag("-i --interactive", "runs an interactive shell-like prompt"), val("-e --exclude"), fl("--no-dry-run")),
		"revert":       sub(val("-m --mainline")),
		"cherry-pick":  sub(val("-m --mainline")),
		"log":          sub(val("-n --max-count"), val("-S"), val("-G")),
		"diff":         sub(val("-S"), val("-G")),
		"show":         sub(val("-n --max-count"), val("-S"), val("-G")),
		"shortlog":     sub(val("-n --max-count")),
		"rev-list":     sub(val("-n --max-count"), val("-S"), val("-G")),
		"whatchanged":  sub(val("-n --max-count"), val("-S"), val("-G")),
		"mailsplit":    sub(wr("-o")),
		"merge-file":   {operands: opWriteFirst, opts: append(append([]option{}, common...), fl("-p --stdout"), val("-L"))},
		"mailinfo":     {operands: opWrite},
		"read-tree":    sub(wr("--index-output")),
		"hash-object":  sub(dflag("--stdin-paths", "hashes files named on standard input, which cannot be checked")),
		"update-index": sub(fl("--add"), fl("--remove"), fl("--force-remove"), fl("--replace"), fl("--refresh"),
			dflag("--stdin", "stages files named on standard input, which cannot be checked"),
			dflag("--index-info", "stages entries read from standard input, which cannot be checked"),
			dflag("--cacheinfo", "stages an entry by object and mode (a symbolic link it then checks out can point anywhere)")),
		"send-email":     sub(exe("--smtp-server", "can run a local sendmail program"), exe("--to-cmd --cc-cmd --header-cmd --sendmail-cmd", whyExec)),
		"config":         {extra: gitConfigExtra},
		"reset":          sub(fl("--hard"), fl("--soft"), fl("--mixed"), fl("--merge"), fl("--keep")),
		"help":           sub(dflag("-w --web", "starts a browser"), dflag("-m --man", "runs man with its pager"), fl("-a --all")),
		"checkout-index": sub(wr("--prefix")),
		"fast-export":    sub(wr("--export-marks"), rd("--import-marks")),
		"fast-import":    sub(wr("--export-marks"), rd("--import-marks"), rd("--import-marks-if-exists")),
		"submodule":      {subDanger: map[string]string{"foreach": "runs a shell command in every submodule"}},
		"bisect":         {subDanger: map[string]string{"run": "runs a script for every step"}},
		"worktree":       {operands: opRead, subs: map[string]*spec{"add": {operands: opWriteFirst, opts: append(append([]option{}, common...), val("-b -B"))}, "move": {operands: opWrite}}},
		"bundle":         {subs: map[string]*spec{"create": {operands: opWriteFirst}, "verify": {operands: opRead}, "list-heads": {operands: opRead}, "unbundle": {operands: opRead}}},
		"init":           {operands: opWrite, opts: append(append([]option{}, common...), conf("--template", "copies hooks from a template directory"))},
		"apply":          sub(dflag("--unsafe-paths", "writes outside the working tree"), val("-p"), val("--directory"), fl("--check"), fl("--stat"), fl("--numstat"), fl("--summary"), fl("--apply"), fl("--index"), fl("--cached"), fl("-R --reverse")),
		"am":             sub(),
	}
	return &spec{
		extra: gitExtra,
		opts: opts(val("-c"),
			conf("--config-env", "sets configuration from the environment"), chdir("-C"), rd("--git-dir"), wr("--work-tree"),
			oval("--exec-path"), val("--namespace"), val("--super-prefix"), val("--list-cmds"), fl("-p --paginate"),
			fl("-P --no-pager"), fl("--bare"), fl("--no-replace-objects"), fl("--literal-pathspecs"), fl("--glob-pathspecs"),
			fl("--noglob-pathspecs"), fl("--icase-pathspecs"), fl("--no-optional-locks"), fl("--version"), fl("--help")),
		subs: subs,
		// send-pack is push's plumbing: deny entries on push hold for it.
		aliases: map[string]string{"send-pack": "push"},
		subDanger: map[string]string{
			"filter-branch": "runs shell filters", "filter-repo": "runs code callbacks", "instaweb": "starts a web server and a browser",
			"merge-index": "runs a program for every unmerged file", "merge-one-file": "is run by merge-index",
			"daemon": "starts a server", "web--browse": "runs a browser program", "remote-ext": "runs a command as a remote",
			"maintenance": "installs scheduled jobs outside the scope", "difftool": "runs a diff tool program", "mergetool": "runs a merge tool program",
			"credential": "talks to credential helper programs",
		},
		defSub: sub(),
	}
}
