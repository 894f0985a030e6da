package sessions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseWorktreeComment(t *testing.T) {
	for in, want := range map[string][]string{
		"text\n<!-- gptel-activity-worktrees: (\"/a/w1\" \"/a/w 2\") -->\n": {"/a/w1", "/a/w 2"},
		"<!-- gptel-activity-worktrees: (\"/a/q\\\"x\" \"/b/\\\\y\") -->":   {"/a/q\"x", "/b/\\y"},
		"<!-- gptel-activity-worktrees: nil -->":                            nil,
		// as gptel writes them: the tree's glob, a projectile root's slash
		"<!-- gptel-activity-worktrees: (\"/a/w1/**\" \"/a/w2//**\" \"/**\") -->": {"/a/w1", "/a/w2", "/"},
	} {
		got, ok := parseWorktreeComment([]byte(in))
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%q: %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "no comment", "<!-- gptel-activity-worktrees: (\"relative\") -->",
		"<!-- gptel-activity-worktrees: (\"/a\" -->", "<!-- gptel-activity-worktrees: (/a) -->", "<!-- gptel-activity-worktrees: (\"/a\")"} {
		if got, ok := parseWorktreeComment([]byte(in)); ok && got != nil {
			t.Errorf("%q parsed as %q", in, got)
		}
	}
}

func FuzzParseWorktreeComment(f *testing.F) {
	f.Add([]byte("<!-- gptel-activity-worktrees: (\"/a/w1\" \"/a/w 2\") -->"))
	f.Add([]byte("<!-- gptel-activity-worktrees: (\"/a\\\\\\\"\") -->"))
	f.Add([]byte("<!-- gptel-activity-worktrees: (\"/a/w1/**\" \"/a//**\") -->"))
	f.Fuzz(func(t *testing.T, data []byte) {
		paths, ok := parseWorktreeComment(data)
		for _, p := range paths {
			if !ok || !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.HasSuffix(p, "/**") {
				t.Fatalf("%q: path %q", data, p)
			}
		}
	})
}

func TestActivityWorktreesAndIsSessionDir(t *testing.T) {
	act := t.TempDir()
	branch := filepath.Join(act, "session", "branches", "main")
	if err := os.MkdirAll(branch, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(act, "worktrees", "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(act, "worktrees", "a")
	if err := os.WriteFile(filepath.Join(branch, SessionFile), []byte("# chat\n\n<!-- gptel-activity-worktrees: (\""+w+"\") -->\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ActivityWorktrees(branch); err != nil || !slices.Equal(got, []string{w}) {
		t.Errorf("ActivityWorktrees = %q, %v", got, err)
	}
	if !IsSessionDir(filepath.Join(act, "session")) || IsSessionDir(filepath.Join(act, "worktrees")) {
		t.Error("IsSessionDir: session/ is one, worktrees/ is not")
	}
}
