package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// scopeChecker is the gateway's Checker on a compiled scope: CheckPath and
// CheckWalked as the gateway answers them. With observe set it lets
// through, and records in order, what observe mode lets through.
type scopeChecker struct {
	checker
	scope   *policy.Scope
	env     policy.Env
	observe *recorded
}

// recorded is what an observing scopeChecker let through, in order.
type recorded struct {
	mu sync.Mutex
	vs []policy.Violation
}

func (r *recorded) filter(vs []policy.Violation) []policy.Violation {
	if r == nil || policy.ObservedViolations(vs) == nil {
		return vs
	}
	r.mu.Lock()
	r.vs = append(r.vs, vs...)
	r.mu.Unlock()
	return nil
}

func (c scopeChecker) CheckPath(path string, access policy.Access, cwd string) []policy.Violation {
	return c.observe.filter(c.scope.CheckPath(path, access, cwd, c.env))
}

func (c scopeChecker) CheckWalked(path, resolved string, dir bool, links uint64, access policy.Access) []policy.Violation {
	return c.observe.filter(c.scope.CheckWalked(path, resolved, dir, links, access, c.env))
}

// searchTree makes, below a fresh directory, a project with what the
// search tools must leave out or handle as they always have: deny globs in
// any case, hard links, symbolic links (to files, to directories, out of
// the project, dangling), a FIFO, binary files, CRLF lines, lines longer
// than a match's text, a file without a final newline, names that are not
// UTF-8, and a directory outside the project (files of a mebibyte are
// bigFiles'). It returns the directory holding the project ("proj") and
// the outside ("outside").
func searchTree(t testing.TB) string {
	t.Helper()
	dir := realDir(t)
	proj := filepath.Join(dir, "proj")
	files := map[string]string{
		"a.go":                      "package a\n\nfunc Foo() {}\n// TODO: foo\n",
		"b.txt":                     "Foo here\nfoo there\nFOO everywhere\n",
		"crlf.txt":                  "Foo\r\nbar\r\n\r\nend Foo\r\n",
		"cr-only.txt":               "Foo\r",
		"no-newline.go":             "package x // Foo",
		"empty.txt":                 "",
		"blank-lines.txt":           "\n\n\nFoo\n\n",
		"long.txt":                  strings.Repeat("x", 700) + " Foo " + strings.Repeat("y", 300) + "\nshort Foo\n",
		"bin.dat":                   "Foo\x00\nFoo\n",
		"late-bin.txt":              "Foo\nok\n" + strings.Repeat("z", 100) + "\x00\n",
		"unicode.txt":               "héllo Wörld Foo\n\xff\xfe invalid Foo\n日本語 Foo\n",
		"src/main.go":               "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"Foo\") }\n",
		"src/util/u.go":             "package util\n\n// Helper does Foo.\nfunc Helper() int { return 42 }\n",
		"src/util/u_test.go":        "package util\n\nfunc TestFoo(t *testing.T) {}\n",
		"src/.env":                  "TOKEN=Foo-secret\n",
		"src/.ENV":                  "TOKEN=Foo-secret-upper\n",
		".env/inside.go":            "package env // Foo inside a directory named .env\n",
		".git/config":               "[core] Foo = secret\n",
		".GIT/HEAD":                 "ref: Foo\n",
		"node_modules/m/index.js":   "module.exports = 'Foo'\n",
		"Node_Modules/m/index.js":   "module.exports = 'Foo upper'\n",
		"docs/readme.md":            "# Foo\n\nFoo docs.\n",
		"docs/secret.key":           "Foo key\n",
		"docs/deep/er/x.go":         "package x\nvar Foo = 1\n",
		"docs/deep/er/y.GO":         "package x\nvar Foo = 2\n",
		"bad\xffname/z.go":          "package z // Foo\n",
		"zz/last.txt":               "Foo last\n",
		"zz/linked-target.txt":      "Foo linked\n",
		"a-b/c.go":                  "package c // Foo\n",
		"a/b.go":                    "package b // Foo\n",
		"many/m.txt":                strings.Repeat("Foo again\n", 40),
		"sub dir/with space.go":     "package s // Foo\n",
		"../outside/secret.txt":     "Foo outside\n",
		"../outside/d/inner.go":     "package inner // Foo outside\n",
		"trailing-cr-end.txt":       "a Foo\r\r\nb\r",
		"dollar.txt":                "end$\nFoo$\nFoo\n",
		"tabs.txt":                  "\tFoo\t\n",
		"x/y/z/w/v/deep.go":         "package v\nfunc Foo() {}\n",
		"x/y/z/w/v/.env":            "deep secret Foo\n",
		"x/y/z/w/v/ok.txt":          "fine Foo\n",
		"upper/Foo.GO":              "package upper // Foo\n",
		"upper/NAME.txt":            "Foo\n",
		"nested/.git/objects/a":     "Foo object\n",
		"nested/.gitignore":         "Foo\n",
		"nested/.github/workflow.y": "Foo\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(proj, name), content, 0o644)
	}
	for _, l := range [][2]string{
		{"a.go", "hard.go"}, {"docs/readme.md", "zz/hard-readme.md"}, {"../outside/secret.txt", "outside-hard.txt"},
	} {
		if err := os.Link(filepath.Join(proj, l[0]), filepath.Join(proj, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{
		{"zz/linked-target.txt", "zz/link.txt"}, {"src", "srclink"}, {filepath.Join(dir, "outside"), "outlink"},
		{"missing", "dangling"}, {"../docs", "zz/updocs"}, {".env", "envlink"},
	} {
		target := l[0]
		if !filepath.IsAbs(target) && !strings.HasPrefix(target, "../") {
			target = filepath.Join(proj, target)
		}
		if err := os.Symlink(target, filepath.Join(proj, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// randomTree adds to dir a tree drawn from seed: nested directories, Go
// and text files with and without matches, denied names among them.
func randomTree(t testing.TB, dir string, seed uint64, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	names := []string{"a", "b", "Foo", "foo", "x.go", "y.txt", ".env", "README.md", "main.go", "node_modules", ".git", "lib", "z"}
	lines := []string{"package x", "func Foo() {}", "// foo bar", "FOO = 1", "", "\tfoo()", "Foo\r", "end", "x := []byte(\"Foo\")", "fooFoo"}
	for range n {
		depth := 1 + rng.IntN(4)
		parts := make([]string, depth)
		for i := range parts {
			parts[i] = names[rng.IntN(len(names))]
		}
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(lines[rng.IntN(len(lines))])
			b.WriteByte('\n')
		}
		p := filepath.Join(append([]string{dir}, parts...)...)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			continue // a file is in the way
		}
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
}

// searchScopes are the scopes the engine is compared under: the standard
// deny list with the project readable, read globs narrower than the root
// (the walk still starts at the root), and deny globs of other shapes.
func searchScopes(dir string) map[string]policy.Document {
	proj := filepath.Join(dir, "proj")
	std := []string{"**/.git/**", "**/.env", "**/node_modules/**", "**/*.key"}
	return map[string]policy.Document{
		"standard": {Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}, Deny: std}},
		"narrow":   {Paths: policy.PathRules{Read: []string{proj + "/*.go", proj + "/*.txt", proj + "/src/**", proj + "/x/**"}, Deny: std}},
		"other":    {Paths: policy.PathRules{Read: []string{dir + "/**"}, Deny: []string{"**/.env/**", proj + "/docs/*.md", "**/{a,b}.*", "**/deep/**", "**/sub dir"}}},
		"none":     {Paths: policy.PathRules{Read: []string{dir + "/**"}}},
	}
}

// newSearchRunners returns the runner of a scope, and its twin in observe
// mode (Broad, recording what it lets through).
func newSearchRunner(t testing.TB, dir string, doc policy.Document, observe bool, max int) (*Runner, *recorded) {
	t.Helper()
	env := policy.Env{Home: filepath.Join(dir, "home"), Protected: []string{filepath.Join(dir, "proj", ".sessions")}}
	sc, err := policy.Compile(doc, env)
	if err != nil {
		t.Fatal(err)
	}
	c := scopeChecker{scope: sc, env: env}
	if observe {
		c.observe = new(recorded)
	}
	read, write := sc.Roots()
	return newRunner(t, Options{Checker: c, ReadRoots: read, WriteRoots: write, Protected: env.Protected,
		Deny: sc.DenyPatterns(), MaxMatches: max, Broad: observe}), c.observe
}

// searchOutcome is what a search call gave: its matches, whether they were
// cut, whether it failed, and what observe mode recorded.
type searchOutcome struct {
	Matches   []string
	Truncated bool
	Err       string
	Observed  []policy.Violation
}

func outcome(res Result, err error) searchOutcome {
	o := searchOutcome{Matches: res.Matches, Truncated: res.Truncated}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// take returns what was recorded so far, and forgets it.
func (r *recorded) take() []policy.Violation {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	vs := r.vs
	r.vs = nil
	return vs
}

// compareSearch runs every grep and glob call on the engine and on the
// oracle (the walk before it) and fails on any difference.
// Under the scopes other than "standard" only the first few calls run, in
// two of the four configurations.
func compareSearch(t *testing.T, dir string, greps []policy.GrepArgs, globs []policy.GlobArgs) {
	proj := filepath.Join(dir, "proj")
	ctx := context.Background()
	type config struct {
		observe bool
		max     int
	}
	for name, doc := range searchScopes(dir) {
		greps, globs := greps, globs
		configs := []config{{false, DefaultMaxMatches}, {true, DefaultMaxMatches}, {false, 3}, {true, 3}}
		if name != "standard" {
			greps, globs = greps[:min(len(greps), 6)], globs[:min(len(globs), 12)]
			configs = []config{{false, DefaultMaxMatches}, {true, 3}}
		}
		for _, c := range configs {
			r, rec := newSearchRunner(t, dir, doc, c.observe, c.max)
			tag := fmt.Sprintf("%s/observe=%v/max=%d", name, c.observe, c.max)
			for _, a := range greps {
				got := outcome(r.grep(ctx, a, proj))
				got.Observed = rec.take()
				want := outcome(r.oracleGrep(ctx, a, proj))
				want.Observed = rec.take()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: grep %+v:\n got %s\nwant %s", tag, a, show(got), show(want))
				}
			}
			for _, a := range globs {
				got := outcome(r.glob(ctx, a, proj))
				got.Observed = rec.take()
				want := outcome(r.oracleGlob(ctx, a, proj))
				want.Observed = rec.take()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: glob %+v:\n got %s\nwant %s", tag, a, show(got), show(want))
				}
			}
		}
	}
}

func show(o searchOutcome) string {
	b, _ := json.MarshalIndent(o, "", " ")
	if len(b) > 4000 {
		b = append(b[:4000], "…"...)
	}
	return string(b)
}

// grepCases are grep calls of every kind: literals, expressions with and
// without a literal, anchors, flags, includes, paths.
func grepCases(dir string) []policy.GrepArgs {
	proj := filepath.Join(dir, "proj")
	var out []policy.GrepArgs
	for _, p := range []string{
		"Foo", "foo", "(?i)foo", "FOO", "Foo$", "^Foo", `\AFoo\z`, "^$", "", ".", `Foo\b`, `\bfoo`, "(?m)^Foo$",
		`F[o]+`, `[A-Z][a-z]+ Foo`, `func \w+\(`, "Foo|bar", "(Foo)+ (here|there)", `\r`, "Foo\r", `o$`, "(?s)Foo.bar",
		`[^x]Foo`, "x{700}", "Wörld", "日本", "\ufffd", `\xff`, "y{3}$", `\$$`, `end\$`, "^\\tFoo\\t$", "(?U)F.*o",
		`\d+`, "never matches anything", "(?i)n[aeiou]me", "^package [a-z]+$", "e$|^F",
	} {
		out = append(out, policy.GrepArgs{Pattern: p})
	}
	for _, inc := range []string{"*.go", "**/*.txt", "src/**", "*.{go,txt}", "x/**/*.go", "*.GO", "deep.go"} {
		out = append(out, policy.GrepArgs{Pattern: "Foo", Include: inc})
	}
	for _, p := range []string{"src", "docs", "srclink", "zz", filepath.Join(proj, "x", "y"), "a.go", "crlf.txt", "bin.dat", "missing", "fifo.txt", "hard.go", "zz/link.txt", "dangling", "."} {
		out = append(out, policy.GrepArgs{Pattern: "Foo", Path: p})
		out = append(out, policy.GrepArgs{Pattern: "Foo", Path: p, Include: "*.go"})
	}
	return out
}

// globCases are glob calls of every shape doublestar takes.
func globCases(dir string) []policy.GlobArgs {
	proj := filepath.Join(dir, "proj")
	var out []policy.GlobArgs
	for _, p := range []string{
		"**/*.go", "*", "**", "**/*", "**/x.go", "**/last.txt", "*.go", "src/*", "src/**", "**/.env", "**/.git/**",
		".git/config", "**/", "*/", "**/node_modules/*", "**/link*", "zz/*", "{a,b}.*", "**/{a,b}.go", "**/*.{go,txt}",
		"srclink/**", "outlink/*", "**/deep/**", "docs/**/*.go", "[a-c]*", "**/NAME.txt", "**/foo.go", "x/*/z/**/deep.go",
		"**/m*/**", "nomatch/**", "**/*.GO", "bad\xffname/*",
	} {
		out = append(out, policy.GlobArgs{Pattern: p})
	}
	return append(out, []policy.GlobArgs{
		{Pattern: "*.go", Path: "src/util"}, {Pattern: "**/*.go", Path: "srclink"}, {Pattern: "*", Path: "a.go"},
		{Pattern: filepath.Join(proj, "src", "*.go")}, {Pattern: "**", Path: "docs"}, {Pattern: "**/*", Path: "missing"},
		{Pattern: "*", Path: "outlink"},
	}...)
}

// The engine returns exactly what the walk before it returned, on a tree
// with everything the tools must leave out or treat specially: same
// matches, same order, same cap, same errors, and in observe mode the
// same violations let through, in the same order.
func TestSearchMatchesOracle(t *testing.T) {
	dir := searchTree(t)
	compareSearch(t, dir, grepCases(dir), globCases(dir))
}

// The same on files of about a mebibyte, the length of line the grep tool
// has always read at most: a file longer than that with a match past it,
// a line longer than that (the file's search stops there), a line of just
// that length, a file just under it.
func TestSearchMatchesOracleBigFiles(t *testing.T) {
	dir := realDir(t)
	proj := filepath.Join(dir, "proj")
	big := strings.Repeat("line of text without the word\n", (1<<20)/30+100) + "Foo after a mebibyte\n"
	writeFile(t, filepath.Join(proj, "big.txt"), big, 0o644)
	huge := "Foo first\n" + strings.Repeat("y", 1<<20+10) + "\nFoo never read\n"
	writeFile(t, filepath.Join(proj, "hugeline.txt"), huge, 0o644)
	exact := strings.Repeat("w", 1<<20-1) + "\nFoo\n"
	writeFile(t, filepath.Join(proj, "exact.txt"), exact, 0o644)
	under := "Foo\n" + strings.Repeat("v", 1<<20-6) + "\n"
	writeFile(t, filepath.Join(proj, "under.txt"), under[:1<<20-1], 0o644)
	writeFile(t, filepath.Join(proj, "small.txt"), "Foo\n", 0o644)
	r, _ := newSearchRunner(t, dir, searchScopes(dir)["none"], false, DefaultMaxMatches)
	ctx := context.Background()
	for _, a := range []policy.GrepArgs{{Pattern: "Foo"}, {Pattern: "^$"}, {Pattern: "y{3}$"}, {Pattern: "never"}, {Pattern: "Foo", Path: "big.txt"}} {
		got, want := outcome(r.grep(ctx, a, proj)), outcome(r.oracleGrep(ctx, a, proj))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("grep %+v:\n got %s\nwant %s", a, show(got), show(want))
		}
		if a.Pattern == "Foo" && a.Path == "" && len(got.Matches) != 5 {
			t.Errorf("grep Foo: %d matches, want one in each file: %q", len(got.Matches), got.Matches)
		}
	}
}

// The same on random trees.
func TestSearchMatchesOracleRandom(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := realDir(t)
			randomTree(t, filepath.Join(dir, "proj"), seed, 300)
			greps := []policy.GrepArgs{{Pattern: "Foo"}, {Pattern: "(?i)foo"}, {Pattern: "^$"}, {Pattern: "Foo$"}, {Pattern: "o", Include: "*.go"}}
			globs := []policy.GlobArgs{{Pattern: "**/x.go"}, {Pattern: "**"}, {Pattern: "**/Foo/**"}, {Pattern: "*/*"}}
			compareSearch(t, dir, greps, globs)
		})
	}
}

// The existing tests' trees (files_test.go) give the same results too.
func TestSearchMatchesOracleFileEnv(t *testing.T) {
	e := newFileEnv(t)
	for _, f := range []string{"src/a.go", "src/b/c.go", "src/b/d.txt", ".git/x.go"} {
		writeFile(t, filepath.Join(e.proj, f), "package x\nfunc Foo() {}\n", 0o644)
	}
	writeFile(t, filepath.Join(e.proj, "bin"), "Foo\x00\n", 0o644)
	r := e.runner(t, checker{path: denyBelow(filepath.Join(e.proj, ".git"))})
	ctx := context.Background()
	for _, a := range []policy.GrepArgs{{Pattern: "Foo"}, {Pattern: "Fo+", Include: "*.go"}, {Pattern: "^package", Path: "src/a.go"}, {Pattern: "one"}} {
		got, want := outcome(r.grep(ctx, a, e.proj)), outcome(r.oracleGrep(ctx, a, e.proj))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("grep %+v:\n got %s\nwant %s", a, show(got), show(want))
		}
	}
	for _, a := range []policy.GlobArgs{{Pattern: "**/*.go"}, {Pattern: "*.go", Path: "src/b"}, {Pattern: "**"}} {
		got, want := outcome(r.glob(ctx, a, e.proj)), outcome(r.oracleGlob(ctx, a, e.proj))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("glob %+v:\n got %s\nwant %s", a, show(got), show(want))
		}
	}
}

// No denied file and no hard-linked file is ever in a result, whatever
// the pattern: checked on the results themselves, not against the oracle.
func TestSearchNeverShowsDeniedOrHardLinked(t *testing.T) {
	dir := searchTree(t)
	proj := filepath.Join(dir, "proj")
	r, _ := newSearchRunner(t, dir, searchScopes(dir)["standard"], false, 100_000)
	ctx := context.Background()
	bad := func(p string) bool {
		lower := strings.ToLower(p)
		if strings.Contains(lower, "/.git/") || strings.HasSuffix(lower, "/.git") || strings.Contains(lower, "/node_modules") ||
			strings.HasSuffix(lower, "/.env") || strings.HasSuffix(lower, ".key") || p != proj && !strings.HasPrefix(p, proj+"/") {
			return true
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && nlink(fi) > 1 {
			return true
		}
		return false
	}
	for _, pat := range []string{"", "Foo", "secret", "(?i)foo", "."} {
		res, err := r.grep(ctx, policy.GrepArgs{Pattern: pat}, proj)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) < 20 && pat != "secret" {
			t.Fatalf("grep %q found %d", pat, len(res.Matches))
		}
		for _, m := range res.Matches {
			file := m[:strings.Index(m[len(proj):], ":")+len(proj)]
			if bad(file) || strings.Contains(m, "secret") {
				t.Errorf("grep %q shows %q", pat, m)
			}
		}
	}
	for _, pat := range []string{"**", "**/*", "**/.env", "**/.git/**", "**/*.key", "**/hard*", "**/node_modules/**", "*"} {
		res, err := r.glob(ctx, policy.GlobArgs{Pattern: pat}, proj)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Matches {
			if bad(m) {
				t.Errorf("glob %q shows %q", pat, m)
			}
		}
	}
}

// A cancelled search stops and says why.
func TestSearchCancelled(t *testing.T) {
	dir := realDir(t)
	randomTree(t, filepath.Join(dir, "proj"), 7, 200)
	r, _ := newSearchRunner(t, dir, searchScopes(dir)["none"], false, DefaultMaxMatches)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	proj := filepath.Join(dir, "proj")
	if _, err := r.grep(ctx, policy.GrepArgs{Pattern: "Foo"}, proj); !errors.Is(err, context.Canceled) {
		t.Errorf("grep: %v", err)
	}
	if _, err := r.glob(ctx, policy.GlobArgs{Pattern: "**"}, proj); !errors.Is(err, context.Canceled) {
		t.Errorf("glob: %v", err)
	}
}

// A file swapped for a symbolic link (to a denied file of the same root)
// after the walk checked it is not read through the link: grep opens each
// file with no link on the way or in its place. The serial walk before it
// opened files through the os.Root, which follows a link that stays in the
// root: it read the secret, as the oracle's case shows.
func TestGrepFileSwappedForLink(t *testing.T) {
	for _, engine := range []string{"engine", "oracle"} {
		t.Run(engine, func(t *testing.T) {
			dir := realDir(t)
			proj := filepath.Join(dir, "proj")
			file, secret := filepath.Join(proj, "sub", "a.txt"), filepath.Join(proj, "secret.txt")
			writeFile(t, file, "harmless\n", 0o644)
			writeFile(t, secret, "s3cret\n", 0o644)
			deny := func(p string) []policy.Violation {
				if p == secret {
					return []policy.Violation{{Reason: policy.ReasonPathDenied, Resource: p}}
				}
				if p == file {
					// Checked and allowed; swapped right after.
					if fi, err := os.Lstat(file); err == nil && fi.Mode().IsRegular() {
						if err := os.Rename(file, file+".old"); err != nil {
							t.Error(err)
						}
						if err := os.Symlink("../secret.txt", file); err != nil {
							t.Error(err)
						}
					}
				}
				return nil
			}
			c := checker{path: func(p string, _ policy.Access, _ string) []policy.Violation { return deny(p) }}
			r := newRunner(t, Options{Checker: c, ReadRoots: []string{proj}})
			search := r.grep
			if engine == "oracle" {
				search = r.oracleGrep
			}
			res, err := search(context.Background(), policy.GrepArgs{Pattern: "s3cret", Path: "sub"}, proj)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatal("the swap did not happen")
			}
			leaked := len(res.Matches) > 0
			if engine == "engine" && leaked {
				t.Errorf("read through the swapped link: %q", res.Matches)
			}
			if engine == "oracle" && !leaked {
				t.Errorf("the oracle did not read through the link: the test shows nothing")
			}
		})
	}
}
