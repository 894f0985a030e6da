package policy

import (
	"fmt"
	"path/filepath"
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

// gitConfigExtra: git config that writes (rather than reads) configuration.
func gitConfigExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	reads := map[string]bool{"--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true,
		"--list": true, "-l": true, "get": true, "list": true, "--show-origin": true, "--show-scope": true,
		"--name-only": true, "-z": true, "--null": true, "--type": true, "--bool": true, "--int": true, "--path": true,
		"--default": true, "--includes": true, "--no-includes": true, "--local": true, "--global": true, "--system": true,
		"--worktree": true, "--file": true, "-f": true, "--blob": true, "--fixed-value": true}
	var ops []arg
	for _, a := range p.args[1:] { // after "config"
		if !a.known {
			ops = append(ops, a)
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			name, _, _ := strings.Cut(a.s, "=")
			if !reads[name] {
				c.danger(p, allowed, "config", "config "+a.s, whyConfig)
				return
			}
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) > 0 && ops[0].known && (ops[0].s == "get" || ops[0].s == "list") {
		return
	}
	if p.has("--get") || p.has("--get-all") || p.has("--get-regexp") || p.has("--list") || p.has("-l") || p.has("--get-urlmatch") {
		return
	}
	if len(ops) >= 2 && ops[0].known && ops[1].known && safeGitKey(ops[0].s) {
		return // setting a key that cannot run programs (user.email…)
	}
	if len(ops) >= 3 && ops[0].known && ops[0].s == "set" && ops[1].known && safeGitKey(ops[1].s) {
		return
	}
	if len(ops) >= 2 || (len(ops) >= 1 && ops[0].known && (ops[0].s == "set" || ops[0].s == "unset" || ops[0].s == "edit" ||
		ops[0].s == "rename-section" || ops[0].s == "remove-section")) {
		c.danger(p, allowed, "config", "config (writing)", whyConfig)
	}
}

// safeGitKeys are configuration keys (or key prefixes ending in .) that
// cannot make git run a program: git -c may set these.
var safeGitKeys = []string{"color.", "user.name", "user.email", "core.quotepath", "core.autocrlf", "core.safecrlf",
	"core.abbrev", "core.precomposeunicode", "core.ignorecase", "advice.", "log.", "format.pretty", "init.defaultbranch",
	"pull.rebase", "pull.ff", "merge.ff", "merge.conflictstyle", "commit.gpgsign", "tag.gpgsign", "gc.auto",
	"status.", "column.", "i18n.", "push.default", "rebase.autosquash", "rebase.autostash", "diff.renames",
	"diff.algorithm", "diff.noprefix", "diff.mnemonicprefix", "protocol.version", "fetch.prune", "maintenance.auto",
	"safe.bareRepository", "core.fsync", "feature.manyfiles", "index.threads", "pack.threads", "blame.coloring"}

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
	for _, v := range p.values("-c") {
		key, val, _ := strings.Cut(v.s, "=")
		key = strings.ToLower(key)
		safe := v.known && ((key == "core.pager" || strings.HasPrefix(key, "pager.")) && (val == "cat" || val == "less" || val == "more" || val == "false") || safeGitKey(key))
		if !safe {
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
		return // working directory known only at run time
	}
	if gitDir != "" {
		abs, err := absPath(gitDir, st.cwd, c.env)
		if err != nil {
			return
		}
		c.gitConfigWritable(p, allowed, abs)
		return
	}
	if len(p.subPath) > 0 && (p.subPath[0] == "clone" || p.subPath[0] == "init" || p.subPath[0] == "version" || p.subPath[0] == "help") {
		return
	}
	fsys := c.env.fs()
	dir := filepath.Clean(st.cwd)
	for {
		dotgit := childPath(dir, ".git")
		if fi, err := fsys.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				c.gitConfigWritable(p, allowed, dotgit)
			default:
				data, err := fsys.ReadFile(dotgit)
				if err != nil {
					c.danger(p, allowed, ".git", ".git file", "cannot be read to find the repository")
					return
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return
				}
				target = strings.TrimSpace(target)
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				c.gitConfigWritable(p, allowed, filepath.Clean(target))
			}
			return
		}
		if isGitDir(fsys, dir) {
			c.gitConfigWritable(p, allowed, dir)
			return
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}

// isGitDir reports whether dir looks like a repository directory to git:
// HEAD, objects/ and refs/.
func isGitDir(fsys FS, dir string) bool {
	fi, err := fsys.Stat(childPath(dir, "HEAD"))
	if err != nil || fi.IsDir() {
		return false
	}
	if fi, err := fsys.Stat(childPath(dir, "objects")); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := fsys.Stat(childPath(dir, "refs")); err != nil || !fi.IsDir() {
		return false
	}
	return true
}

// gitConfigWritable refuses a git run on a repository directory whose
// configuration or hooks this scope's paths let tool calls write. File
// tools and redirections never write them (gitRunFile), but a program a
// call runs is bounded by the write roots, not by that rule.
func (c *checker) gitConfigWritable(p *parsed, allowed allowEntries, gitDir string) {
	for _, f := range []string{"config", "hooks/pre-commit", "commondir"} {
		target := filepath.Join(gitDir, f)
		if c.s.globsAllowWrite(target, c.env) {
			c.danger(p, allowed, "repository", "in repository "+gitDir,
				fmt.Sprintf("would load %s, which tool calls can write (core.fsmonitor, core.pager and hooks run programs); deny **/.git/** or run git in the project's own repository", target))
			return
		}
	}
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
		if !p.has("-e") && len(ops) > 0 {
			ops = ops[1:]
		}
		dirs := []string{"."}
		if len(ops) > 0 {
			dirs = nil
			for _, a := range ops {
				if a.known {
					dirs = append(dirs, a.s)
				}
			}
		}
		for _, d := range dirs {
			c.recursiveRead(p, d, st.cwd, walkOpts{hidden: true})
		}
	}
	for _, a := range p.operands() {
		if !a.known || strings.Contains(a.s, "://") {
			continue
		}
		if i := strings.IndexByte(a.s, ':'); i >= 0 && i+1 < len(a.s) {
			c.operand(a.s[i+1:], AccessRead, st.cwd, "git "+p.subPath[0]+" "+a.s)
		}
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
		rd("--file"), rd("-F"),
		val("-m --message"), val("--grep"), val("--author"), val("--committer"), val("-L"), val("-S"), val("-G"),
		val("--format --pretty"), val("--since --after"), val("--until --before"), val("--date"), val("-n --max-count"),
		val("--skip"), val("--decorate-refs"), val("--exclude"), val("--branches"), val("--tags"), val("--remotes"),
		val("--glob"), val("--abbrev"), val("-U --unified"), val("--word-diff-regex"), val("--diff-filter"),
	}
	sub := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, common...), extra...)} }
	subs := map[string]*spec{
		"clone":          {operands: opWriteLast, opts: append(append([]option{}, common...), exe("-u", "runs a program as the remote upload-pack"), val("-c"), fl("--recursive --recurse-submodules"))},
		"fetch":          sub(),
		"pull":           sub(),
		"ls-remote":      sub(exe("-u", "runs a program as the remote upload-pack")),
		"push":           sub(fl("-f --force --force-with-lease --force-if-includes --mirror"), fl("-d --delete"), fl("-u --set-upstream")),
		"archive":        sub(wr("-o")),
		"rebase":         sub(exe("-x", "runs a command after every commit")),
		"grep":           sub(exe("-O", "runs a pager program on the matches"), fl("--no-index"), fl("--untracked")),
		"add":            sub(dflag("-f --force", "stages ignored files, which may be denied ones")),
		"difftool":       sub(exe("-x", "runs a diff program"), fl("-y --no-prompt")),
		"mergetool":      sub(),
		"format-patch":   sub(wr("-o --output-directory")),
		"commit":         sub(rd("-t --template"), fl("-a --all"), val("-m --message"), val("-c -C --reuse-message --reedit-message"), oval("--fixup"), oval("--squash")),
		"send-email":     sub(exe("--smtp-server", "can run a local sendmail program"), exe("--to-cmd --cc-cmd --header-cmd --sendmail-cmd", whyExec)),
		"config":         {extra: gitConfigExtra},
		"reset":          sub(fl("--hard"), fl("--soft"), fl("--mixed"), fl("--merge"), fl("--keep")),
		"clean":          sub(fl("-f --force"), fl("-d"), fl("-x"), fl("-X"), fl("-n --dry-run"), fl("-i --interactive")),
		"help":           sub(dflag("-w --web", "starts a browser"), dflag("-m --man", "runs man with its pager"), fl("-a --all")),
		"checkout-index": sub(wr("--prefix")),
		"fast-export":    sub(wr("--export-marks"), rd("--import-marks")),
		"fast-import":    sub(wr("--export-marks"), rd("--import-marks")),
		"submodule":      {subDanger: map[string]string{"foreach": "runs a shell command in every submodule"}},
		"bisect":         {subDanger: map[string]string{"run": "runs a script for every step"}},
		"worktree":       {operands: opRead, subs: map[string]*spec{"add": {operands: opWriteFirst, opts: append(append([]option{}, common...), val("-b -B"))}, "move": {operands: opWrite}}},
		"bundle":         {subs: map[string]*spec{"create": {operands: opWriteFirst}}},
		"init":           {operands: opWrite, opts: append(append([]option{}, common...), conf("--template", "copies hooks from a template directory"))},
		"update-index":   sub(),
		"apply":          sub(dflag("--unsafe-paths", "writes outside the working tree")),
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
		subDanger: map[string]string{
			"filter-branch": "runs shell filters", "filter-repo": "runs code callbacks", "instaweb": "starts a web server and a browser",
			"daemon": "starts a server", "web--browse": "runs a browser program", "remote-ext": "runs a command as a remote",
			"maintenance": "installs scheduled jobs outside the scope", "difftool": "runs a diff tool program", "mergetool": "runs a merge tool program",
			"credential": "talks to credential helper programs",
		},
		defSub: sub(),
	}
}
