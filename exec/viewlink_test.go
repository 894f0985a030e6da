package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// TestShellProjectRootThroughLink runs a call whose project and write
// root are a symbolic link to the project, in a scope reading the whole
// system: the view masks each denied file once, whatever names lead to
// it, and the program runs.
func TestShellProjectRootThroughLink(t *testing.T) {
	requireNamespaces(t)
	home := homeOutsideTmp(t)
	proj := filepath.Join(home, "proj")
	writeFile(t, filepath.Join(proj, ".env"), "TOKEN="+canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "ok.txt"), allowed+"\n", 0o644)
	link := filepath.Join(home, "link")
	if err := os.Symlink("proj", link); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{link}, ProjectRoot: link,
		Home: home, Deny: []string{"**/.env"}})
	for _, cwd := range []string{proj, link} {
		res, err := run(t, r, policy.ToolShell, shellArgs("cat ok.txt .env"), cwd)
		if err != nil {
			t.Fatal(err)
		}
		if out := res.Stdout + res.Stderr; strings.Contains(out, canary) || !strings.Contains(res.Stdout, allowed) {
			t.Errorf("in %s: %+v", cwd, res)
		}
	}
}
