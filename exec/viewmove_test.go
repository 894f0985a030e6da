package exec

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShellMovedDirectoryStaysMasked renames, from one program of a call,
// a directory holding a masked file, and reads it from the next: the
// masks found before the call must still cover it.
func TestShellMovedDirectoryStaysMasked(t *testing.T) {
	requireNamespaces(t)
	proj := realDir(t)
	writeFile(t, filepath.Join(proj, "sub", ".env"), "TOKEN="+canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "a", "b", ".env"), "TOKEN="+canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "a", "b", "ok.txt"), allowed+"\n", 0o644)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Deny: []string{"**/.env"}})
	for _, tc := range []struct{ name, cmd string }{
		{"the parent", "mv sub moved 2>&1; cat moved/.env sub/.env 2>&1"},
		{"an ancestor", "mv a z 2>&1; cat z/b/.env a/b/.env z/b/ok.txt a/b/ok.txt 2>&1"},
		{"a later call", "cat moved/.env z/b/.env 2>&1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, r, "shell", map[string]any{"command": tc.cmd}, proj)
			if err != nil {
				t.Fatal(err)
			}
			if out := res.Stdout + res.Stderr; strings.Contains(out, canary) {
				t.Fatalf("a masked file read after its directory moved:\n%s", out)
			}
		})
	}
}
