package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// The shape of the generated project of the search benchmark: 150,000
// small Go files, 50 to a directory, 60 × 50 directories.
const (
	benchTop, benchMid, benchFiles = 60, 50, 50
	// benchTreeEnv names a directory to keep the tree in between runs
	// (scripts/bench.sh sets it, and removes the tree at the end); without
	// it each run makes its own, in a temporary directory.
	benchTreeEnv = "SCOPEGATE_BENCH_TREE"
	// The patterns searched: a literal in about one file in 5,000 (30
	// files), an expression matching about as rarely, a file name once in
	// each top directory (60).
	benchLiteral = "ScopegateNeedle"
	benchRegex   = `func \w+Needle[0-9]+\(`
	benchName    = "doc.go"
)

// benchTree returns the generated project, made now unless the directory
// named by $SCOPEGATE_BENCH_TREE already holds it.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := os.Getenv(benchTreeEnv)
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "tree")
	}
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return filepath.Join(dir, "proj")
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	proj := filepath.Join(dir, "proj")
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha beta gamma delta value index count buffer reader writer parse render handle config " +
		"request response client server token stream record entry module scope check result error status")
	word := func() string { return words[rng.IntN(len(words))] }
	title := func() string { s := word(); return strings.ToUpper(s[:1]) + s[1:] }
	n := 0
	for top := range benchTop {
		for mid := range benchMid {
			d := filepath.Join(proj, fmt.Sprintf("pkg%02d", top), fmt.Sprintf("sub%02d", mid))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range benchFiles {
				var sb strings.Builder
				fmt.Fprintf(&sb, "package sub%02d\n\nimport \"fmt\"\n\n", mid)
				for range 4 {
					fn := title() + title()
					fmt.Fprintf(&sb, "// %s %s the %s of a %s.\nfunc %s(%s int) (string, error) {\n\t%s := %s + %d\n\treturn fmt.Sprint(%s), nil\n}\n\n",
						fn, word(), word(), word(), fn, word(), word(), word(), rng.IntN(1000), word())
				}
				if n%5000 == 17 {
					fmt.Fprintf(&sb, "// %s marks this file.\n", benchLiteral)
				}
				if n%5000 == 2711 {
					fmt.Fprintf(&sb, "func %sNeedle%d() {}\n", title(), n)
				}
				name := fmt.Sprintf("file%d.go", f)
				if f == 0 && mid == benchMid/2 {
					name = benchName
				}
				if err := os.WriteFile(filepath.Join(d, name), []byte(sb.String()), 0o644); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return proj
}

// BenchmarkSearchTree runs the grep and glob tools on the generated
// project of 150,000 files, warm, beside ripgrep, find and fd on the same
// tree, each case's pair one after the other. The tools run as the
// gateway runs them: a Runner whose Checker is the compiled scope of a
// worktree session (the standard deny list). Run with -count to alternate
// the pairs:
//
//	go test ./exec -run '^$' -bench SearchTree -benchtime 5x -count 6
func BenchmarkSearchTree(b *testing.B) {
	proj := benchTree(b)
	env := policy.Env{Home: b.TempDir()}
	sc, err := policy.Compile(policy.Document{Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"},
		Deny: []string{"**/.git/**", "**/.env", "**/.env.*", "**/node_modules/**", "**/*.pem", "**/*.key", "**/id_rsa*", "**/.ssh/**", "**/.aws/**"}}}, env)
	if err != nil {
		b.Fatal(err)
	}
	read, write := sc.Roots()
	r := newRunner(b, Options{Checker: scopeChecker{scope: sc, env: env}, ReadRoots: read, WriteRoots: write, Deny: sc.DenyPatterns()})
	ctx := context.Background()
	tool := func(name string, args any, want int) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := run(b, r, name, args, proj)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Matches) != want {
					b.Fatalf("%d matches, want %d", len(res.Matches), want)
				}
			}
		}
	}
	command := func(want int, argv ...string) func(*testing.B) {
		return func(b *testing.B) {
			if _, err := osexec.LookPath(argv[0]); err != nil {
				b.Skipf("%s is not installed", argv[0])
			}
			for b.Loop() {
				out, err := osexec.CommandContext(ctx, argv[0], argv[1:]...).Output()
				if err != nil {
					b.Fatalf("%s: %v", argv[0], err)
				}
				if n := strings.Count(string(out), "\n"); n != want {
					b.Fatalf("%s: %d lines, want %d", argv[0], n, want)
				}
			}
		}
	}
	// The engine before this one (search_oracle_test.go).
	before := func(search func() (Result, error), want int) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				res, err := search()
				if err != nil || len(res.Matches) != want {
					b.Fatalf("%d matches, %v", len(res.Matches), err)
				}
			}
		}
	}
	files := benchTop * benchMid * benchFiles
	lits, res := (files+5000-1-17)/5000, (files+5000-1-2711)/5000
	b.Run("grep_literal/scopegate", tool(policy.ToolGrep, policy.GrepArgs{Pattern: benchLiteral}, lits))
	b.Run("grep_literal/rg", command(lits, "rg", "-uu", "-n", benchLiteral, proj))
	b.Run("grep_regex/scopegate", tool(policy.ToolGrep, policy.GrepArgs{Pattern: benchRegex}, res))
	b.Run("grep_regex/rg", command(res, "rg", "-uu", "-n", benchRegex, proj))
	b.Run("grep_literal/before", before(func() (Result, error) { return r.oracleGrep(ctx, policy.GrepArgs{Pattern: benchLiteral}, proj) }, lits))
	b.Run("grep_regex/before", before(func() (Result, error) { return r.oracleGrep(ctx, policy.GrepArgs{Pattern: benchRegex}, proj) }, res))
	b.Run("glob_name/scopegate", tool(policy.ToolGlob, policy.GlobArgs{Pattern: "**/" + benchName}, benchTop))
	b.Run("glob_name/find", command(benchTop, "find", proj, "-name", benchName))
	b.Run("glob_name/fd", command(benchTop, "fdfind", "-u", "-g", benchName, proj))
	b.Run("glob_name/before", before(func() (Result, error) { return r.oracleGlob(ctx, policy.GlobArgs{Pattern: "**/" + benchName}, proj) }, benchTop))
}
