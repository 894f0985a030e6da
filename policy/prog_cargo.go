package policy

import (
	"slices"
	"strings"
)

// cargo.
//
// Options that start another program: --config ("Overrides a Cargo
// configuration value", such as target.<triple>.runner, build.rustc-wrapper,
// target.<triple>.linker), the compiler flags cargo rustc and cargo
// rustdoc pass on (-C linker=, -C link-arg, rustdoc's --runtool and
// --test-builder), and a command that is not cargo's own, which runs the
// program cargo-NAME ("Cargo is designed so that you can extend it with
// new subcommands without having to modify Cargo ... cargo-something").
// fmt and clippy are the toolchain's (rustup installs them).
//
// Installs: cargo install "builds and installs a Rust binary" into its
// root, outside the scope. cargo build runs the build scripts (build.rs)
// of the project and its dependencies from the registry, as cargo test
// runs the project's tests.

// registerCargo adds the table rows of this file.
func registerCargo(add adder) {
	sub := &spec{opts: opts(conf("--config", whyConfig), rd("--manifest-path"), wr("--target-dir"), wr("--artifact-dir --out-dir"))}
	subs := map[string]*spec{}
	for _, name := range cargoCommands {
		subs[name] = sub
	}
	subs["install"] = &spec{opts: opts(sub.opts, wr("--root"))}
	add(&spec{subs: subs, defSub: sub, aliases: cargoAliases, extra: cargoExtra,
		subDanger: dangerSubs(map[string]string{"install": "builds and installs binaries outside the scope"}),
		opts:      opts(conf("--config", whyConfig), rd("--manifest-path"), chdir("-C"), val("-Z"))}, "cargo")
}

// cargoCommands are cargo's own commands (cargo --list of a rustup
// toolchain: the built-ins, fmt and clippy).
var cargoCommands = []string{"add", "bench", "build", "check", "clean", "clippy", "config", "doc", "fetch", "fix", "fmt",
	"generate-lockfile", "help", "info", "init", "install", "locate-project", "login", "logout", "metadata", "miri", "new",
	"owner", "package", "pkgid", "publish", "remove", "report", "run", "rustc", "rustdoc", "search", "test", "tree",
	"uninstall", "update", "vendor", "verify-project", "version", "yank"}

// cargoAliases are cargo's built-in aliases.
var cargoAliases = map[string]string{"b": "build", "c": "check", "d": "doc", "r": "run", "t": "test", "rm": "remove"}

// cargoExtra refuses a command that is not cargo's own (it runs
// cargo-NAME) and compiler flags that name a program to run.
func cargoExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) == 0 {
		return
	}
	sub := p.subPath[0]
	if !strings.HasPrefix(sub, "+") && cargoAliases[sub] == "" && !slices.Contains(cargoCommands, sub) {
		c.danger(p, allowed, sub, sub, "is not one of cargo's commands, so it runs the program cargo-"+sub+" (or an alias of the project's configuration)")
	}
	if sub != "rustc" && sub != "rustdoc" {
		return
	}
	for i, a := range p.args {
		if !a.known {
			continue
		}
		flag, val := a.s, ""
		switch {
		case a.s == "-C" || a.s == "--codegen":
			if i+1 < len(p.args) {
				val = p.args[i+1].s
			}
		case strings.HasPrefix(a.s, "-C"):
			val = a.s[2:]
		case strings.HasPrefix(a.s, "--codegen="):
			val = a.s[len("--codegen="):]
		case a.s == "--runtool" || a.s == "--test-builder" || strings.HasPrefix(a.s, "--runtool=") || strings.HasPrefix(a.s, "--test-builder="):
			c.danger(p, allowed, flag, flag, "makes rustdoc run another program")
			continue
		default:
			continue
		}
		if strings.HasPrefix(val, "linker") || strings.HasPrefix(val, "link-arg") {
			c.danger(p, allowed, "-C", "-C "+val, "makes the compiler run another program as linker")
		}
	}
}
