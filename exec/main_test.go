package exec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func TestMain(m *testing.M) {
	// The test binary is its own Landlock helper.
	if IsHelper(os.Args) {
		os.Exit(RunHelper(os.Args))
	}
	os.Exit(m.Run())
}

// checker is a Checker made of functions; nil ones allow everything.
type checker struct {
	exec func(argv []string, cwd string) []policy.Violation
	path func(path string, access policy.Access, cwd string) []policy.Violation
	// view, when set, is given what the runner says of its view.
	view func(View)
}

func (c checker) CheckExec(argv []string, cwd string, view View) []policy.Violation {
	if c.view != nil {
		c.view(view)
	}
	if c.exec == nil {
		return nil
	}
	return c.exec(argv, cwd)
}

func (c checker) CheckPath(path string, access policy.Access, cwd string) []policy.Violation {
	if c.path == nil {
		return nil
	}
	return c.path(path, access, cwd)
}

// CheckWalked is CheckPath, on the path as the call spells it.
func (c checker) CheckWalked(path, _ string, _ bool, _ uint64, access policy.Access) []policy.Violation {
	return c.CheckPath(path, access, "/")
}

// LookPath finds programs as the gateway does, on this process's PATH
// (no scope: none of it is writable).
func (c checker) LookPath(word, cwd string) (string, error) {
	var sc policy.Scope
	return sc.LookPath(word, cwd, policy.Env{Path: c.TrustedPath()})
}

func (c checker) TrustedPath() []string { return filepath.SplitList(os.Getenv("PATH")) }

// denyProgram denies argv whose program is name.
func denyProgram(name string) func([]string, string) []policy.Violation {
	return func(argv []string, _ string) []policy.Violation {
		if filepath.Base(argv[0]) == name {
			return []policy.Violation{{Reason: policy.ReasonCommandNotAllowed, Resource: name,
				Message: name + " is not in shell_commands.allow of this session's scope"}}
		}
		return nil
	}
}

// denyBelow denies paths below dir.
func denyBelow(dir string) func(string, policy.Access, string) []policy.Violation {
	return func(p string, _ policy.Access, cwd string) []policy.Violation {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if within(filepath.Clean(p), dir) {
			return []policy.Violation{{Reason: policy.ReasonPathNotInScope, Resource: p,
				Message: p + " is not in paths of this session's scope"}}
		}
		return nil
	}
}

// requireLandlock skips a test without Landlock, except under CI=true.
func requireLandlock(t testing.TB) {
	t.Helper()
	if landlockABI() == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("landlock is not available")
		}
		t.Skip("landlock is not available")
	}
}

// realDir returns a fresh canonical temporary directory.
func realDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newRunner returns a Runner whose helper is this test binary. A nil
// Checker allows everything.
func newRunner(t testing.TB, opts Options) *Runner {
	t.Helper()
	if opts.Checker == nil {
		opts.Checker = checker{}
	}
	if opts.HelperPath == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		opts.HelperPath = exe
	}
	if opts.TempDir == "" {
		opts.TempDir = realDir(t)
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs tool with args (marshalled to JSON) in cwd.
func run(t testing.TB, r *Runner, tool string, args any, cwd string) (Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), policy.Call{Tool: tool, Args: raw}, cwd)
}

func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func ptr[T any](v T) *T { return &v }
