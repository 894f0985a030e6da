package policy

import "strings"

// go: the Go command.
//
// cmd/go: -exec "runs the test binary using xprog", -toolexec "a program to
// use to invoke toolchain programs", -vettool runs another vet; go generate
// runs the commands of //go:generate comments; go run pkg@version downloads
// and runs code; go env -w writes the go configuration file; go tool runs
// tools that may open browsers (pprof -http, trace) or invoke external
// linkers (-extld).

// registerGo adds the table rows of this file.
func registerGo(add adder) {
	add(goSpec(), "go")
	// gofmt -w rewrites its operands; -r applies a rewrite rule.
	add(&spec{extra: gofmtExtra, opts: opts(inPlace("-w"), fl("-l"), fl("-d"), fl("-s"), fl("-e"), val("-r"), wr("-cpuprofile"))}, "gofmt")
}

// goBuildVCSOff reports whether -buildvcs=false keeps go from running git.
func goBuildVCSOff(p *parsed) bool {
	for _, a := range p.args {
		if a.known && (a.s == "-buildvcs=false" || a.s == "--buildvcs=false") {
			return true
		}
	}
	return false
}

// goExtra checks what go's subcommands do with their operands and flags.
func goExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	sub := ""
	if len(p.subPath) > 0 {
		sub = p.subPath[0]
	}
	ops := p.operands()
	switch sub {
	case "run", "install", "get", "test", "build", "vet":
		for _, a := range ops {
			if a.known && strings.Contains(a.s, "@") && !strings.HasPrefix(a.s, "-") && sub == "run" {
				c.danger(p, allowed, "run pkg@version", "run "+a.s, "downloads and runs code from outside the scope")
			}
		}
	}
	if (sub == "build" || sub == "install") && !goBuildVCSOff(p) && st.cwd != "" {
		// -buildvcs (auto) stamps the binary with what git says of the
		// repository the package lies in: go runs git there.
		c.gitDiscover(p, allowed, st.cwd)
	}
	switch sub {
	case "tool":
		if len(ops) > 0 && ops[0].known {
			switch t := ops[0].s; {
			case t == "trace" || (t == "pprof" && (goFlagArg(p.args, "http") || goFlagArg(p.args, "web") || goFlagArg(p.args, "tools"))):
				c.danger(p, allowed, "tool "+t, "tool "+t, "starts a web server and a browser")
			case t == "test2json" || t == "cgo" || t == "dist":
				c.danger(p, allowed, "tool "+t, "tool "+t, "runs other programs")
			case t == "link" && (goFlagArg(p.args, "extld") || goFlagArg(p.args, "extar") || goFlagArg(p.args, "extldflags")):
				c.danger(p, allowed, "tool link", "tool link -extld", "runs an external linker program")
			}
		}
	}
	if sub == "mod" && len(ops) > 0 && ops[0].known && ops[0].s == "edit" {
		// go mod edit [flags] [go.mod]: the file named (else ./go.mod) is
		// rewritten.
		for _, a := range ops[1:] {
			if a.known {
				c.operand(a.s, AccessWrite, st.cwd, "go mod edit")
			}
		}
	}
	if sub == "tool" {
		// go tool compile/link/asm/pack -o FILE write it.
		for i, a := range p.args {
			if !a.known {
				continue
			}
			name, v, hasEq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.s, "-"), "-"), "=")
			if name == "o" && strings.HasPrefix(a.s, "-") {
				if !hasEq && i+1 < len(p.args) {
					v = p.args[i+1].s
				}
				if v != "" {
					c.operand(v, AccessWrite, st.cwd, "go tool -o")
				}
			}
		}
	}
	if sub == "doc" && goFlagArg(p.args, "http") {
		c.danger(p, allowed, "doc -http", "doc -http", "downloads and runs a documentation server and starts a browser")
	}
	for i, a := range p.args {
		if !a.known {
			continue
		}
		name, v, hasEq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.s, "-"), "-"), "=")
		if name == "replace" && !hasEq && i+1 < len(p.args) {
			v, hasEq = p.args[i+1].s, p.args[i+1].known
		}
		if name == "replace" && hasEq {
			if _, to, ok := strings.Cut(v, "="); ok && (looksLikePath(to) || strings.HasPrefix(to, ".")) {
				c.operand(to, AccessRead, st.cwd, "go mod edit -replace")
			}
		}
		if sub == "tool" && goFlagArg([]arg{a}, "http") {
			c.danger(p, allowed, "tool -http", "tool "+a.s, "starts a web server and a browser")
		}
		if !strings.HasPrefix(a.s, "-test.") {
			continue
		}
		name, v, ok := strings.Cut(a.s, "=")
		switch strings.TrimPrefix(name, "-test.") {
		case "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "testlogfile", "gocoverdir", "fuzzcachedir":
			if ok {
				c.operand(v, AccessWrite, st.cwd, "go test "+name)
			}
		}
	}
	for _, name := range []string{"-ldflags", "-gcflags", "-asmflags", "-gccgoflags"} {
		for _, v := range p.values(name) {
			if !v.known {
				// -ldflags "-X main.version=$(git describe)": version
				// stamping, left to the run-time check; data read at run
				// time may add -extld.
				if name != "-ldflags" || v.data {
					c.danger(p, allowed, name, name, "is known only at run time")
				}
			} else if bad := unsafeToolFlag(v.s); bad != "" {
				c.danger(p, allowed, name, name+" "+bad, "passes a flag to the compiler or linker that writes files or runs programs (only -N -l -m -s -w -X -B -e -S -dwarf= -buildid= and -race are passed)")
			}
		}
	}
}

// gofmtExtra: gofmt -w writes every file below its directory operands.
func gofmtExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if !p.has("-w") {
		return
	}
	for _, a := range p.operands() {
		if !a.known {
			continue
		}
		if abs, err := absPath(a.s, st.cwd, c.env); err == nil {
			if fi, err := c.env.fs().Stat(abs); err == nil && fi.IsDir() {
				c.recursiveRead(p, a.s, st.cwd, walkOpts{filters: []walkFilter{{glob: "*.go", include: true, files: true}}, verb: "rewrites"})
			}
		}
	}
}

// goFlagArg reports whether args hold the Go flag name, spelled -name or
// --name, with or without a value.
func goFlagArg(args []arg, name string) bool {
	for _, a := range args {
		if !a.known {
			continue
		}
		s := strings.TrimPrefix(strings.TrimPrefix(a.s, "-"), "-")
		if s == name || strings.HasPrefix(s, name+"=") {
			return true
		}
	}
	return false
}

// unsafeToolFlag returns the first flag in a -gcflags/-ldflags value
// ("[pattern=]flags", split on spaces and quotes) that is not one of the
// few that only change the code built: -o, -cpuprofile, -extld,
// -importcfg… write files or run programs.
func unsafeToolFlag(v string) string {
	if pat, rest, ok := strings.Cut(v, "="); ok && !strings.HasPrefix(pat, "-") {
		v = rest // all=-N -l
	}
	words := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == '\'' || r == '"' })
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			return w
		}
		name, _, hasEq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-"), "=")
		switch name {
		case "N", "l", "m", "s", "w", "B", "e", "S", "race", "std", "complete", "dwarf", "buildid", "compressdwarf", "checklinkname":
		case "X":
			if !hasEq {
				i++ // -X importpath.name=value
			}
		default:
			return w
		}
	}
	return ""
}

// goSpec is go's table row: build flags, shared by the build subcommands.
func goSpec() *spec {
	build := opts(
		chdir("-C"), // go build -C dir: as go -C dir build
		exe("-exec", "runs the built binary through another program"), exe("-toolexec", "runs every build tool through another program"),
		wr("-o"), rd("-overlay"), rd("-modfile"), rd("-pgo"), val("-ldflags"), val("-gcflags"), val("-asmflags"), val("-gccgoflags"),
		val("-tags"), val("-mod"), val("-p"), val("-count"), val("-run"), val("-bench"), val("-benchtime"), val("-timeout"),
		val("-cpu"), val("-parallel"), val("-coverpkg"), val("-covermode"), val("-shuffle"), val("-skip"), val("-fuzz"),
		val("-fuzztime"), val("-fuzzminimizetime"), val("-list"), val("-buildmode"), val("-compiler"), val("-installsuffix"),
		// Boolean flags take a value only after "=" (-buildvcs=false).
		oval("-trimpath"), oval("-buildvcs"), oval("-failfast"), oval("-linkshared"), oval("-modcacherw"),
		wr("-debug-actiongraph"), wr("-debug-trace"), wr("-debug-runtime-trace"), wr("-pkgdir"),
		wr("-coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir -json-file"),
		exe("-vettool", "runs another vet program"), val("-vet"), val("-f"),
		flags("-race -msan -asan -cover -v -x -n -a -work -json -short -benchmem -c -i -u -t -d -m -e -deps -find -test -export -compiled"))
	b := func() *spec { return &spec{singleDash: true, opts: append([]option{}, build...)} }
	return &spec{singleDash: true, extra: goExtra,
		opts: opts(chdir("-C")),
		subs: map[string]*spec{
			"build": b(), "run": {singleDash: true, posixStop: true, opts: append([]option{}, build...)}, "test": b(), "vet": b(), "install": b(), "list": b(), "get": b(),
			"env": {singleDash: true, opts: opts(conf("-w", "writes the go configuration file"), conf("-u", "writes the go configuration file"), fl("-json -changed"))},
			"mod": {singleDash: true}, "tool": {singleDash: true}, "clean": b(), "fmt": b(), "doc": {singleDash: true}, "work": {singleDash: true},
			"version": {singleDash: true}, "generate": b(), "fix": b(),
		},
		subDanger: map[string]string{"generate": "runs the commands named in //go:generate comments",
			"install": "writes binaries outside the scope (GOBIN)", "bug": "opens a browser", "telemetry": "changes the go configuration"},
	}
}
