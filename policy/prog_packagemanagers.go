package policy

import (
	"path/filepath"
	"strings"
)

// Package managers: npm, pip, cargo.
//
// npm: exec/x and init/create fetch and run packages, explore runs a shell,
// --script-shell, --editor and -c/--call run programs, config set/edit
// change the configuration that picks them (npm-config(7)), and -g/--global
// or --location=global install outside the scope. pip: --user installs
// into the home directory, config set writes pip's configuration, and
// -r/-c read requirement files. cargo install builds and installs binaries
// outside the scope, --config sets configuration that can name programs.

// registerPackageManagers adds the table rows of this file.
func registerPackageManagers(add adder) {
	add(npmSpec(), "npm")
	add(pipSpec(), "pip", "pip3")
	add(&spec{subs: map[string]*spec{"install": {}},
		subDanger: dangerSubs(map[string]string{"install": "builds and installs binaries outside the scope"}),
		defSub:    &spec{opts: opts(conf("--config", whyConfig), rd("--manifest-path"), wr("--target-dir"))},
		opts:      opts(conf("--config", whyConfig), rd("--manifest-path"), chdir("-C"), val("-Z"))}, "cargo")
}

// npmExtra checks --location, --prefix and init's initializer package.
func npmExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("--location") {
		if !v.known || v.s == "global" || v.s == "user" {
			c.danger(p, allowed, "--location", "--location="+v.s, "installs or changes packages outside the scope")
		}
	}
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
}

// npmSpec is npm's table row.
func npmSpec() *spec {
	global := opts(exe("--script-shell", "runs scripts with another shell"), chdir("-C --prefix"), exe("--browser", "runs a browser program"),
		conf("--userconfig --globalconfig", "loads configuration that can set the script shell"),
		code("--node-options", "passes options (such as --require) to node"), exe("-c --call", whyExec), exe("--shell", whyExec),
		exe("--editor", whyExec), val("-w --workspace"), fl("-ws --workspaces"), fl("-y --yes"), val("--registry"), val("--tag"),
		val("--loglevel"), flags("-s --silent -q --quiet -d --verbose --if-present --ignore-scripts -D --save-dev -E --save-exact -P --save-prod"))
	s := func(extra ...option) *spec { return &spec{opts: append(append([]option{}, global...), extra...)} }
	gl := dflag("-g --global", "installs or changes packages outside the scope")
	loc := opt("--location", valueOpt, effNone, "")
	return &spec{opts: global, defSub: s(),
		subs: map[string]*spec{
			"install": s(gl, loc), "uninstall": s(gl), "link": s(gl), "update": s(gl),
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

// pipSpec is pip's table row.
func pipSpec() *spec {
	global := opts(wr("--log"), wr("--cache-dir"), exe("--python", "runs another Python interpreter"), dflag("--user", "installs into the user's directory, outside the scope"), val("--proxy"), val("--retries"), val("--timeout"), flags("-v -q --isolated --no-cache-dir -U --upgrade --no-deps -e --editable --pre"))
	inst := func(extra ...option) *spec {
		return &spec{opts: append(append([]option{}, global...), append([]option{wr("-t --target"), wr("--prefix"), wr("--root"),
			wr("--src"), rd("-r --requirement"), rd("-c --constraint"), val("-i --index-url"), val("--extra-index-url"),
			rd("-f --find-links")}, extra...)...)}
	}
	return &spec{opts: global, defSub: &spec{opts: global},
		subs: map[string]*spec{
			"install": inst(), "download": inst(wr("-d --dest")), "wheel": inst(wr("-w --wheel-dir")),
			"config": {subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "unset": whyConfig}},
		}}
}
