package policy_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// identityFixture is a project (writable) holding a planted program named
// like an allowed one, a trusted bin directory holding the real one, and a
// PATH that also lists the project, its bin, "." and a relative entry.
func identityFixture(t *testing.T) (sc *policy.Scope, env policy.Env, root string) {
	t.Helper()
	root = t.TempDir()
	for path, mode := range map[string]os.FileMode{
		"bin/cat": 0o755, "bin/notexec": 0o644, "proj/cat": 0o755, "proj/bin/ls": 0o755, "proj/a.txt": 0o644,
		"bin2/ls": 0o755, "bin2/tool": 0o755,
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	// A link on a trusted directory into the project is not trusted.
	if err := os.Symlink(filepath.Join(root, "proj/cat"), filepath.Join(root, "bin2/linked")); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "proj")
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{root + "/**"}, Write: []string{proj + "/**"}},
		Shell: policy.ShellRules{Allow: []string{"cat", "ls", "linked", "tool", filepath.Join(root, "bin2/tool")}},
	}, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	env = policy.Env{Path: []string{".", "bin", filepath.Join(proj, "bin"), proj, filepath.Join(root, "bin"), filepath.Join(root, "bin2")}}
	return sc, env, root
}

func TestTrustedPathAndLookPath(t *testing.T) {
	sc, env, root := identityFixture(t)
	got := sc.TrustedPath(env)
	want := []string{filepath.Join(root, "bin"), filepath.Join(root, "bin2")}
	if strings.Join(got, ":") != strings.Join(want, ":") {
		t.Errorf("TrustedPath = %v, want %v (no cwd, relative or writable entries)", got, want)
	}
	for _, tc := range []struct {
		word, want string
		err        error
	}{
		{word: "cat", want: filepath.Join(root, "bin/cat")},
		{word: "ls", want: filepath.Join(root, "bin2/ls")}, // not the project's bin/ls
		{word: "notexec", err: policy.ErrProgramNotFound},
		{word: "linked", err: policy.ErrProgramNotFound}, // resolves into the project
		{word: "missing", err: policy.ErrProgramNotFound},
		{word: "./cat", want: filepath.Join(root, "proj/cat")},
	} {
		p, err := sc.LookPath(tc.word, filepath.Join(root, "proj"), env)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("LookPath(%s) = %q, %v; want %v", tc.word, p, err, tc.err)
			}
			continue
		}
		if err != nil || p != tc.want {
			t.Errorf("LookPath(%s) = %q, %v; want %q", tc.word, p, err, tc.want)
		}
	}
}

// A word with a slash is a path: it matches a bare-name allow entry only
// when it is the file that name finds on the trusted PATH.
func TestProgramIdentity(t *testing.T) {
	sc, env, root := identityFixture(t)
	proj := filepath.Join(root, "proj")
	for _, tc := range []struct {
		cmd     string
		allowed bool
	}{
		{"cat a.txt", true},
		{"./cat a.txt", false},
		{proj + "/cat a.txt", false},
		{"bin/ls", false},
		{filepath.Join(root, "bin/cat") + " a.txt", true},
		{"../bin/cat a.txt", true},
		{"tool", true},
		{filepath.Join(root, "bin2/tool"), true}, // an entry naming the path
		{"ls && ./cat a.txt", false},
	} {
		args, _ := json.Marshal(policy.ShellArgs{Command: tc.cmd})
		d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: proj}, env)
		if d.Allowed != tc.allowed {
			t.Errorf("%s: allowed=%v (%s: %s), want %v", tc.cmd, d.Allowed, d.Reason, d.Message, tc.allowed)
		}
		if !tc.allowed && d.Reason != policy.ReasonCommandNotAllowed {
			t.Errorf("%s: reason %s, want command_not_allowed", tc.cmd, d.Reason)
		}
	}
	// Without a PATH to look in, a path matches only an entry naming it.
	args, _ := json.Marshal(policy.ShellArgs{Command: filepath.Join(root, "bin/cat") + " a.txt"})
	if d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: proj}, policy.Env{}); d.Allowed {
		t.Errorf("with no PATH, a program by path matched a bare entry")
	}
}
