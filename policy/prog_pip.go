package policy

import (
	"path/filepath"
	"strings"
)

// pip, and python -m pip (checked as pip).
//
// Options that start another program: --python ("The Python interpreter
// to use"), --keyring-provider ("Enable the credential lookup via the
// keyring library", the keyring program with subprocess), config's
// --editor and config set/edit/unset, which change pip's configuration.
//
// Installs that build: pip builds a source distribution, a local
// directory, or a VCS URL ("pip install git+https://…", "-e
// vcs+protocol://repo_url#egg=pkg") by running its build backend or
// setup.py; --no-binary forces that for packages of the index ("Do not
// use binary packages"). Where the caller runs the command (check), a
// VCS URL, an archive URL and --no-binary, on the command line or in a
// requirements file it reads, are refused: nothing confines the build
// script they fetch. A confined run bounds them. The project's own
// directory (pip install -e .) is the project's code, and packages of the
// index install as wheels where there are some.
//
// Installs outside the scope: --user ("Install to the Python user install
// directory"), and --target, --prefix, --root, --src, which are files
// written.

// registerPip adds the table rows of this file.
func registerPip(add adder) {
	add(pipSpec(), "pip", "pip3")
}

// pipSpec is pip's table row.
func pipSpec() *spec {
	global := opts(wr("--log"), wr("--cache-dir"), exe("--python", "runs another Python interpreter"),
		dflag("--user", "installs into the user's directory, outside the scope"),
		conf("--keyring-provider", "runs the keyring program or imports its module for credentials"),
		rd("--cert"), rd("--client-cert"), val("--proxy"), val("--retries"), val("--timeout"),
		flags("-v -q --isolated --no-cache-dir -U --upgrade --no-deps -e --editable --pre"))
	inst := func(extra ...option) *spec {
		return &spec{opts: append(append([]option{}, global...), append([]option{wr("-t --target"), wr("--prefix"), wr("--root"),
			wr("--src"), rd("-r --requirement"), rd("-c --constraint"), val("-i --index-url"), val("--extra-index-url"),
			rd("-f --find-links"), val("--no-binary"), val("--only-binary")}, extra...)...)}
	}
	return &spec{opts: global, defSub: &spec{opts: global}, extra: pipExtra,
		subs: map[string]*spec{
			"install": inst(), "download": inst(wr("-d --dest")), "wheel": inst(wr("-w --wheel-dir")),
			"config": {opts: opts(exe("--editor", "runs an editor")), subDanger: map[string]string{"set": whyConfig, "edit": whyConfig, "unset": whyConfig}},
		}}
}

// pipExtra refuses, where the caller runs the command, an install that
// builds what it fetches: a VCS or archive URL, or --no-binary, given on
// the command line or in a requirements file read.
func pipExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	if len(p.subPath) == 0 || (p.subPath[0] != "install" && p.subPath[0] != "wheel" && p.subPath[0] != "download") {
		return
	}
	sub := p.subPath[0]
	for _, v := range p.values("--no-binary") {
		if !v.known || v.s != ":none:" {
			c.unconfined(p, allowed, "--no-binary", "--no-binary "+argvText([]arg{v}), "builds packages from source, running their build scripts")
		}
	}
	specs := append(p.operands(), p.values("-e")...)
	for _, a := range specs {
		if !a.known {
			c.unconfined(p, allowed, sub, sub+" $…", "installs a requirement named at run time, which may be a URL it builds")
		} else if pipBuildsURL(a.s) {
			c.unconfined(p, allowed, sub, sub+" "+a.s, "fetches and builds it, running its build script")
		}
	}
	for _, f := range append(p.values("-r"), p.values("-c")...) {
		if !f.known || st.cwd == "" && !filepath.IsAbs(f.s) {
			continue // refused as a file known only at run time
		}
		path := f.s
		if !filepath.IsAbs(path) {
			path = filepath.Join(st.cwd, path)
		}
		data, err := c.env.fs().ReadFile(path)
		if err != nil {
			continue // pip fails on a requirements file it cannot read
		}
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, " #")
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "-r") || strings.HasPrefix(line, "--requirement") || strings.HasPrefix(line, "-c") || strings.HasPrefix(line, "--constraint") {
				c.unconfined(p, allowed, sub, sub+" -r "+f.s, "reads another requirements file ("+line+"), which is not followed")
			} else if strings.Contains(line, "--no-binary") || pipBuildsURL(line) {
				c.unconfined(p, allowed, sub, sub+" -r "+f.s, "fetches and builds "+line+", running its build script")
			}
		}
	}
}

// pipBuildsURL reports whether a requirement fetches something pip
// builds: a VCS URL (git+, hg+, svn+, bzr+), or a URL of an archive that
// is not a wheel, also as "name @ URL" and "-e URL".
func pipBuildsURL(req string) bool {
	l := strings.ToLower(strings.TrimSpace(req))
	l = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "--editable"), "-e"))
	if _, url, ok := strings.Cut(l, "@ "); ok {
		l = strings.TrimSpace(url)
	}
	for _, vcs := range []string{"git+", "hg+", "svn+", "bzr+"} {
		if strings.HasPrefix(l, vcs) {
			return true
		}
	}
	if i := strings.Index(l, "://"); i > 0 && !strings.ContainsAny(l[:i], " =<>") {
		u, _, _ := strings.Cut(l, "#")
		return !strings.HasSuffix(u, ".whl")
	}
	return false
}
