package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The view of a scope reading the whole system hides the home directory
// and binds back its project, its configuration files (through their
// links) and the toolchains of the trusted PATH found there.
func TestViewPlanWholeSystem(t *testing.T) {
	home, err := os.MkdirTemp("/var/tmp", "scopegate-plan-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	proj := filepath.Join(home, "code", "proj")
	writeFile(t, filepath.Join(proj, "main.go"), "package main\n", 0o644)
	writeFile(t, filepath.Join(home, "dotfiles", "gitconfig"), "[user]\n\tname = t\n", 0o644)
	writeFile(t, filepath.Join(home, ".pyenv", "shims", "python3"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(home, "secret.txt"), "x", 0o600)
	if err := os.Symlink("dotfiles/gitconfig", filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Options{Checker: pathChecker{checker{}, []string{filepath.Join(home, ".pyenv", "shims")}},
		ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Home: home, ProjectRoot: proj})
	tmp := realDir(t)
	p := r.plan(tmp)
	for _, want := range []string{"/var/tmp", "/root"} {
		if !slices.Contains(p.hide, want) {
			t.Errorf("hide %q lacks %s", p.hide, want)
		}
	}
	for _, h := range p.hide {
		if systemDir(h) && !strings.HasPrefix(h, "/var/") {
			t.Errorf("a system directory is hidden: %s", h)
		}
	}
	for _, want := range []string{proj, filepath.Join(home, "dotfiles", "gitconfig"), filepath.Join(home, ".pyenv")} {
		if !slices.Contains(p.bind, want) {
			t.Errorf("bind %q lacks %s", p.bind, want)
		}
	}
	if slices.ContainsFunc(p.bind, func(b string) bool { return within(filepath.Join(home, "secret.txt"), b) }) {
		t.Errorf("bind %q shows secret.txt", p.bind)
	}
	if want := (viewLink{Path: filepath.Join(home, ".gitconfig"), Target: "dotfiles/gitconfig"}); !slices.Contains(p.links, want) {
		t.Errorf("links %v lack %v", p.links, want)
	}
	if !slices.Contains(p.walk, proj) || !slices.Contains(p.shallow, filepath.Join(home, ".pyenv")) || slices.Contains(p.walk, filepath.Join(home, ".pyenv")) {
		t.Errorf("walk %q, shallow %q", p.walk, p.shallow)
	}
	if p.linksToo {
		t.Error("links followed out of a walked tree reach system directories nothing masks")
	}
}

func TestToolchainOf(t *testing.T) {
	r := newRunner(t, Options{Home: "/home/u"})
	hide := []string{"/home", "/root", "/work"}
	for program, want := range map[string][]string{
		"/home/u/.cargo/bin/cargo":                {"/home/u/.cargo", "/home/u/.rustup"},
		"/home/u/.pyenv/shims/python3":            {"/home/u/.pyenv"},
		"/home/other/.local/bin/tool":             {"/home/other/.local/bin"},
		"/home/u/.local/share/pipx/venvs/x/bin/x": {"/home/u/.local/share/pipx"},
		"/home/u/.local/lib/python3/x":            {"/home/u/.local/lib"},
		"/home/u/.local/share/x":                  {"/home/u/.local/share/x"},
		"/home/u/.local/x":                        {"/home/u/.local/x"},
		"/home/u/.config/composer/vendor/bin/x":   {"/home/u/.config/composer"},
		"/home/u/.config/x":                       {"/home/u/.config/x"},
		"/home/u/go/bin/gopls":                    {"/home/u/go/bin", "/home/u/go/pkg"},
		"/home/u/go/src/x/main":                   {"/home/u/go/src"},
		"/root/.pyenv/shims/python3":              {"/root/.pyenv"},
		"/work/tools/bin/x":                       {"/work/tools"},
		"/work/x":                                 {"/work/x"},
		"/usr/bin/cat":                            nil,
		"/home/u/.nvm/versions/node/v22/bin/node": {"/home/u/.nvm/versions/node/v22"},
	} {
		if got := r.toolchainOf(program, hide); !slices.Equal(got, want) {
			t.Errorf("toolchainOf(%s) = %q, want %q", program, got, want)
		}
	}
}

func TestResolveBind(t *testing.T) {
	dir := realDir(t)
	writeFile(t, filepath.Join(dir, "real", "f"), "x", 0o644)
	for link, target := range map[string]string{"a": "b", "b": "real", "abs": filepath.Join(dir, "a")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	final, links, ok := resolveBind(filepath.Join(dir, "abs", "f"), all)
	if !ok || final != filepath.Join(dir, "real", "f") || len(links) != 3 {
		t.Errorf("resolveBind: %s %v %v", final, links, ok)
	}
	for _, p := range []string{filepath.Join(dir, "loop"), filepath.Join(dir, "missing")} {
		if _, _, ok := resolveBind(p, all); ok {
			t.Errorf("%s resolved", p)
		}
	}
}
