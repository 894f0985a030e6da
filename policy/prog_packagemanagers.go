package policy

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// Node package managers: npm, npx, pnpm, yarn.
//
// Options and subcommands that start another program: npm exec/x and npx
// ("Run a command from a local or remote npm package"), init/create and
// pnpm/yarn create and dlx fetch and run packages, npm explore ("Spawn a
// subshell in the directory of the installed package"), npm edit and config
// edit open an editor, --script-shell ("The shell to use for scripts run
// with the npm exec, npm run and npm init <package-spec> commands"),
// --editor, --shell, -c/--call, --browser, --git ("The command to use for
// git commands") and --node-gyp run programs, config set/edit change the
// configuration that picks them (npm-config(7)). pnpm runs a program of
// that name when a command is not one of its own or a script of
// package.json ("pnpm <cmd>": "If the command is not found, pnpm will run
// it as pnpm exec"), yarn runs a script or a package's binary.
//
// Installs that run lifecycle scripts: an install from a git repository,
// whose prepare script runs ("If the package being installed contains a
// prepare script, its dependencies and devDependencies will be installed,
// and the prepare script will be run"). Where the caller runs the command
// (check) it is refused unless --ignore-scripts is given; a confined run
// bounds it. Installs from the registry, and rebuild of the installed
// packages, run the packages' scripts as npm test runs the project's.
//
// Installs outside the scope: -g/--global and --location=global|user
// ("operates in global mode, so that packages are installed into the
// prefix folder"), yarn global, pnpm's --global-dir and store options;
// --prefix, --cache, --modules-folder and the like are files written.

// registerPackageManagers adds the table rows of this file.
func registerPackageManagers(add adder) {
	add(npmSpec(), "npm")
	add(&spec{opts: opts(npmGlobal(), val("-p --package")), extra: npmLocation}, "npx")
	add(pnpmSpec(), "pnpm")
	add(yarnSpec(), "yarn")
}

// npmGlobal are npm's options every command takes (npm-config(7)).
func npmGlobal() []option {
	return opts(exe("--script-shell", "runs scripts with another shell"), chdir("-C --prefix"), exe("--browser", "runs a browser program"),
		conf("--userconfig --globalconfig", "loads configuration that can set the script shell"),
		code("--node-options", "passes options (such as --require) to node"), exe("-c --call", whyExec), exe("--shell", whyExec),
		exe("--editor", whyExec), exe("--git", "runs another program for git dependencies"),
		exe("--node-gyp", "runs another program to build native addons"), exe("--viewer", "runs a program to show help"),
		wr("--cache"), val("-w --workspace"), fl("-ws --workspaces"), fl("-y --yes"), val("--registry"), val("--tag"),
		val("--loglevel"), flags("-s --silent -q --quiet -d --verbose --if-present --ignore-scripts -D --save-dev -E --save-exact -P --save-prod"))
}

// npmLocation refuses --location global or user, which install outside
// the scope.
func npmLocation(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("--location") {
		if !v.known || v.s == "global" || v.s == "user" {
			c.danger(p, allowed, "--location", "--location="+v.s, "installs or changes packages outside the scope")
		}
	}
}

// npmExtra checks --location, --prefix, init's initializer package, and
// the scripts rebuild and git installs run.
func npmExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	npmLocation(c, p, allowed, st)
	for _, v := range p.values("-C") {
		if v.known {
			c.operand(v.s, AccessWrite, st.cwd, "npm --prefix")
		}
	}
	if len(p.subPath) > 0 && (p.subPath[0] == "init") && len(p.operands()) > 0 {
		c.danger(p, allowed, "init", "init "+argvText(p.operands()[:1]), "runs a remote initializer package")
	}
	if len(p.subPath) > 0 && p.subPath[0] == "init" && st.cwd != "" {
		// A project .npmrc may name an init module, which npm init runs.
		if data, err := c.env.fs().ReadFile(filepath.Join(st.cwd, ".npmrc")); err == nil && strings.Contains(strings.ToLower(string(data)), "init") {
			c.danger(p, allowed, "init", "init (.npmrc)", "runs the init module the project's .npmrc may name")
		}
	}
	nodeInstallScripts(c, p, allowed, map[string]bool{"install": true, "install-test": true, "install-ci-test": true, "update": true})
}

// nodeInstallScripts refuses, where the caller runs the command, an
// install of a git repository without --ignore-scripts: it runs the git
// package's prepare script.
func nodeInstallScripts(c *checker, p *parsed, allowed allowEntries, installs map[string]bool) {
	if len(p.subPath) == 0 || p.has("--ignore-scripts") {
		return
	}
	sub := p.subPath[0]
	if !installs[sub] {
		return
	}
	for _, a := range p.operands() {
		if !a.known {
			c.unconfined(p, allowed, sub, sub+" $…", "installs a package named at run time, which may be a git repository whose prepare script runs")
		} else if nodeGitSpec(a.s) {
			c.unconfined(p, allowed, sub, sub+" "+a.s, "installs a git repository and runs its prepare script")
		}
	}
}

// nodeGitSpec reports whether a package spec names a git repository
// (npm-install(1): git+https://…, git://…, github:user/repo, gist:…,
// bitbucket:…, gitlab:…, and user/repo), as is or behind an alias
// (name@github:user/repo, name@npm:…).
func nodeGitSpec(s string) bool {
	l := strings.ToLower(s)
	for _, pre := range []string{"git+", "git://", "github:", "gitlab:", "bitbucket:", "gist:"} {
		if strings.HasPrefix(l, pre) {
			return true
		}
	}
	if i := strings.IndexByte(l[min(1, len(l)):], '@'); i >= 0 {
		if rest := l[i+2:]; rest != "" && nodeGitSpec(rest) {
			return true
		}
	}
	// user/repo[#ref]: one slash, not a @scope/name, not a path or a URL.
	name, _, _ := strings.Cut(l, "#")
	return strings.Count(name, "/") == 1 && !strings.ContainsAny(name[:1], "@.~/") && !strings.Contains(name, ":")
}

// npmSpec is npm's table row.
func npmSpec() *spec {
	global := npmGlobal()
	s := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, global...), extra...)} }
	gl := dflag("-g --global", "installs or changes packages outside the scope")
	loc := opt("--location", valueOpt, effNone, "")
	return &spec{opts: global, defSub: s(),
		subs: map[string]*spec{
			"install": s(gl, loc), "uninstall": s(gl), "link": s(gl), "update": s(gl), "rebuild": s(gl),
			"config": {opts: global, subs: map[string]*spec{}, subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "delete": whyConfig, "fix": whyConfig}},
			"init":   s(code("--init-module", "loads a JavaScript module that runs as the initializer")), "exec": s(),
		},
		abbrev:  true,
		aliases: npmAliases,
		subDanger: map[string]string{"exec": "runs a package's program, fetched if needed",
			"explore": "runs a shell in a package", "set": whyConfig, "edit": "runs an editor",
			"link": "links packages into the global prefix",
			"docs": "starts a browser", "bugs": "starts a browser", "repo": "starts a browser"},
		extra: npmExtra,
	}
}

// npmAliases are npm's other names for its commands (npm's
// lib/utils/cmd-list.js), typos included: "npm innit x" runs init.
var npmAliases = map[string]string{
	"author": "owner", "home": "docs", "issues": "bugs", "info": "view", "show": "view", "find": "search",
	"add": "install", "unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall",
	"un": "uninstall", "rb": "rebuild", "list": "ls", "ln": "link", "create": "init", "i": "install",
	"it": "install-test", "cit": "install-ci-test", "up": "update", "c": "config", "s": "search", "se": "search",
	"tst": "test", "t": "test", "ddp": "dedupe", "v": "view", "run": "run-script", "clean-install": "ci",
	"clean-install-test": "install-ci-test", "x": "exec", "why": "explain", "la": "ll", "verison": "version",
	"ic": "ci", "innit": "init", "in": "install", "ins": "install", "inst": "install", "insta": "install",
	"instal": "install", "isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install",
	"install-clean": "ci", "isntall-clean": "ci", "hlep": "help", "dist-tags": "dist-tag", "upgrade": "update",
	"udpate": "update", "rum": "run-script", "sit": "install-ci-test", "urn": "run-script", "ogr": "org",
	"add-user": "adduser",
}

// pnpmSpec is pnpm's table row (pnpm.io/cli).
func pnpmSpec() *spec {
	global := opts(chdir("-C --dir"), dflag("-g --global", "installs or changes packages outside the scope"),
		wr("--global-dir --global-bin-dir --store-dir --virtual-store-dir --modules-dir --cache-dir --state-dir"),
		exe("--script-shell", "runs scripts with another shell"), code("--node-options", "passes options (such as --require) to node"),
		val("-F --filter"), val("--reporter"), val("--loglevel"), val("--registry"), val("-w --workspace-root"),
		flags("-r --recursive --ignore-scripts -D --save-dev -P --save-prod -E --save-exact -O --save-optional --frozen-lockfile --prefer-offline --offline -s --silent --if-present --parallel"))
	s := &spec{opts: global}
	subs := map[string]*spec{}
	for _, name := range pnpmCommands {
		subs[name] = s
	}
	return &spec{opts: global, subs: subs, defSub: s, aliases: pnpmAliases, extra: pnpmExtra,
		subDanger: map[string]string{
			"exec": "runs a program with the packages' binaries first on PATH", "dlx": "fetches a package and runs its program",
			"create": "fetches a create-* package and runs it", "env": "installs Node.js versions outside the scope",
			"setup": "changes the shell's startup files", "self-update": "replaces pnpm itself",
			"config": whyConfig, "link": "links packages into the global directory",
		}}
}

// pnpmCommands are pnpm's own commands (pnpm help -a).
var pnpmCommands = []string{"add", "install", "update", "remove", "link", "unlink", "import", "rebuild", "prune", "fetch",
	"install-test", "dedupe", "patch", "patch-commit", "patch-remove", "audit", "list", "ll", "outdated", "why", "licenses",
	"run", "test", "exec", "dlx", "create", "start", "publish", "pack", "root", "bin", "store", "config", "init",
	"deploy", "doctor", "env", "setup", "self-update", "server", "approve-builds", "ignored-builds", "help", "version"}

// pnpmAliases are pnpm's short names for its commands.
var pnpmAliases = map[string]string{"i": "install", "up": "update", "upgrade": "update", "rm": "remove", "uninstall": "remove",
	"un": "remove", "ln": "link", "rb": "rebuild", "it": "install-test", "ls": "list", "t": "test", "run-script": "run",
	"c": "config", "la": "list"}

// pnpmExtra checks what pnpm runs besides its commands: a command that
// is not its own runs the script of that name in package.json, else the
// program of that name; rebuild and git installs run package scripts.
func pnpmExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) > 0 && !slices.Contains(pnpmCommands, p.subPath[0]) {
		nodeScriptOrProgram(c, p, allowed, st)
	}
	nodeInstallScripts(c, p, allowed, map[string]bool{"add": true, "install": true, "update": true})
}

// nodeScriptOrProgram refuses a command of pnpm or yarn that is neither
// its own nor a script of the package.json in the working directory: it
// runs the program of that name (a package's binary, or one on PATH).
func nodeScriptOrProgram(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	name := p.subPath[0]
	if st.cwd != "" {
		if data, err := c.env.fs().ReadFile(filepath.Join(st.cwd, "package.json")); err == nil {
			var pkg struct {
				Scripts map[string]json.RawMessage `json:"scripts"`
			}
			if json.Unmarshal(data, &pkg) == nil {
				if _, ok := pkg.Scripts[name]; ok {
					return
				}
			}
		}
	}
	c.danger(p, allowed, name, name, "is not a script of package.json here, so it runs the program of that name")
}

// yarnSpec is yarn's table row (yarn 1 and yarn berry).
func yarnSpec() *spec {
	global := opts(chdir("--cwd"), wr("--modules-folder --global-folder --cache-folder --link-folder --prefix"),
		conf("--use-yarnrc", "loads configuration that can set the script shell"), val("--registry"), val("--network-timeout"),
		val("--mutex"), flags("--ignore-scripts --frozen-lockfile --immutable --pure-lockfile --prefer-offline --offline -D --dev -E --exact -P --peer -O --optional -W --ignore-workspace-root-check -s --silent --verbose --production --non-interactive"))
	s := &spec{opts: global}
	subs := map[string]*spec{}
	for _, name := range yarnCommands {
		subs[name] = s
	}
	return &spec{opts: global, subs: subs, defSub: s, extra: yarnExtra,
		subDanger: map[string]string{
			"exec": "runs a shell command", "dlx": "fetches a package and runs its program",
			"create": "fetches a create-* package and runs it", "global": "installs packages outside the scope",
			"config": whyConfig, "set": "downloads a yarn release that later yarn commands run",
			"policies": "downloads a yarn release that later yarn commands run", "link": "links packages into the global folder",
		}}
}

// yarnCommands are yarn's own commands (yarn 1 and berry).
var yarnCommands = []string{"add", "install", "remove", "upgrade", "up", "upgrade-interactive", "outdated", "why", "list",
	"info", "npm", "pack", "publish", "run", "test", "start", "exec", "dlx", "create", "global", "config", "set", "policies",
	"link", "unlink", "cache", "check", "audit", "licenses", "workspace", "workspaces", "init", "version", "versions",
	"help", "bin", "dedupe", "rebuild", "constraints", "node", "plugin", "explain", "autoclean", "import", "owner", "tag", "team",
	"login", "logout", "generate-lock-entry"}

// yarnExtra: yarn with no command installs; a command that is not yarn's
// own runs the script of that name, else a package's binary.
func yarnExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) > 0 && !slices.Contains(yarnCommands, p.subPath[0]) {
		nodeScriptOrProgram(c, p, allowed, st)
	}
	if len(p.subPath) > 0 && p.subPath[0] == "node" {
		c.danger(p, allowed, "node", "node", "runs node with the arguments given")
	}
	nodeInstallScripts(c, p, allowed, map[string]bool{"add": true, "install": true, "upgrade": true, "up": true})
}
