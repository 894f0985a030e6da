package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	scexec "github.com/scopegate/scopegate/exec"
)

var update = flag.Bool("update", false, "update the testscript files' golden output")

// scopegateBin is the scopegate binary built once for process-level tests.
var scopegateBin string

// buildFirst builds the binary before the tests run.
type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	dir, err := os.MkdirTemp("", "scopegate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	scopegateBin = filepath.Join(dir, "scopegate")
	out, err := exec.Command("go", "build", "-o", scopegateBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build scopegate: %v\n%s", err, out)
		return 1
	}
	return b.m.Run()
}

func TestMain(m *testing.M) {
	if scexec.IsHelper(os.Args) {
		os.Exit(scexec.RunHelper(os.Args))
	}
	testscript.Main(buildFirst{m}, map[string]func(){
		"scopegate": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The Go caches, so that a script building scopegate (the quick start)
	// finds them under its own HOME.
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	goEnv := strings.Fields(string(out))
	if len(goEnv) != 2 {
		t.Fatalf("go env: %q", out)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("SCOPEGATE_SESSIONS_DIR", filepath.Join(env.WorkDir, "sessions"))
			env.Setenv("SCOPEGATE_CONFIG_DIR", filepath.Join(env.WorkDir, "config"))
			env.Setenv("SCOPEGATE_ROAM_DIR", filepath.Join(env.WorkDir, "roam"))
			env.Setenv("REPO", repo)
			env.Setenv("GOCACHE", goEnv[0])
			env.Setenv("GOMODCACHE", goEnv[1])
			env.Setenv("GOTOOLCHAIN", "local")
			env.Setenv("GOPROXY", "off")
			return os.MkdirAll(home, 0o700)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"perm":      cmdPerm,
			"readlink":  cmdReadlink,
			"jsonvar":   cmdJSONVar,
			"expandenv": cmdExpandEnv,
			"exits":     cmdExits,
			"hintvar":   cmdHintVar,
			"mdblock":   cmdMDBlock,
			"linktree":  cmdLinkTree,
		},
	})
}

// perm MODE PATH... asserts the permission bits of each path.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: perm MODE PATH...")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("perm: %v", err)
	}
	for _, p := range args[1:] {
		fi, err := os.Stat(ts.MkAbs(p))
		ts.Check(err)
		if got := uint64(fi.Mode().Perm()); (got == want) == neg {
			ts.Fatalf("%s has mode %#o, want %#o", p, got, want)
		}
	}
}

// readlink LINK TARGET asserts where a symlink points.
func cmdReadlink(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: readlink LINK TARGET")
	}
	got, err := os.Readlink(ts.MkAbs(args[0]))
	ts.Check(err)
	if (got == args[1]) == neg {
		ts.Fatalf("%s -> %s, want %s", args[0], got, args[1])
	}
}

// jsonvar VAR KEY sets $VAR to the string field KEY of the last stdout.
func cmdJSONVar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonvar VAR KEY")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &m); err != nil {
		ts.Fatalf("stdout is not a JSON object: %v", err)
	}
	s, ok := m[args[1]].(string)
	if !ok {
		ts.Fatalf("stdout has no string field %q", args[1])
	}
	ts.Setenv(args[0], s)
}

// expandenv FILE... replaces $VAR and ${VAR} in each file with the script's
// environment (scope files need absolute paths of $WORK).
func cmdExpandEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expandenv FILE...")
	}
	for _, f := range args {
		p := ts.MkAbs(f)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(os.Expand(string(data), ts.Getenv)), 0o600))
	}
}

// exits CODE PROG ARGS... runs PROG like exec and asserts its exit status.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Logf("stdout:\n%s\nstderr:\n%s", ts.ReadFile("stdout"), ts.ReadFile("stderr"))
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// hintvar VAR sets $VAR to the fix hint of the last stdout's decision: the
// command after "with: " in its message, which must start with
// "scopegate scope expand --session".
func cmdHintVar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hintvar VAR")
	}
	var d struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &d); err != nil {
		ts.Fatalf("stdout is not a decision: %v", err)
	}
	_, hint, ok := strings.Cut(d.Message, " with: ")
	if !ok || !strings.HasPrefix(hint, "scopegate scope expand --session ") {
		ts.Fatalf("no pasteable hint in %q", d.Message)
	}
	ts.Setenv(args[0], hint)
}

// mdblock FILE HEADING OUT writes the first fenced code block below the
// level-2 HEADING of the Markdown FILE to OUT, as it is written there.
func cmdMDBlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mdblock FILE HEADING OUT")
	}
	_, rest, ok := strings.Cut(ts.ReadFile(args[0]), "\n## "+args[1]+"\n")
	if !ok {
		ts.Fatalf("%s has no heading %q", args[0], "## "+args[1])
	}
	if next := strings.Index(rest, "\n## "); next >= 0 {
		rest = rest[:next]
	}
	_, block, ok := strings.Cut(rest, "\n```")
	if ok {
		_, block, ok = strings.Cut(block, "\n") // the info string
	}
	if ok {
		block, _, ok = strings.Cut(block, "\n```")
	}
	if !ok || strings.TrimSpace(block) == "" {
		ts.Fatalf("no code block below %q in %s", "## "+args[1], args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block+"\n"), 0o644))
}

// linktree SRC DIR makes DIR a tree of symbolic links to the entries of
// SRC but .git, e2e and built binaries: a module's source without its
// repository.
func cmdLinkTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: linktree SRC DIR")
	}
	src, dir := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ents, err := os.ReadDir(src)
	ts.Check(err)
	ts.Check(os.MkdirAll(dir, 0o755))
	for _, e := range ents {
		switch e.Name() {
		case ".git", "e2e", "scopegate", "scopegate-full":
			continue
		}
		ts.Check(os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())))
	}
}
