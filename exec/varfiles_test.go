package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// TestShellUsersFilesBelowVar reads, from a scope reading the whole
// system, a user's mailbox in /var/mail and the shadow file's backup in
// /var/backups: the view hides the one like a home directory and masks
// the other like /etc/shadow. The files are made for the test where this
// process may make them (as root); the test fails elsewhere under CI.
func TestShellUsersFilesBelowVar(t *testing.T) {
	requireNamespaces(t)
	proj := realDir(t)
	var files []string
	for _, dir := range []string{"/var/mail", "/var/backups"} {
		f, err := os.CreateTemp(dir, "scopegate-test-*")
		if err != nil {
			if os.Getenv("CI") == "true" && os.Getuid() == 0 {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		files = append(files, f.Name())
	}
	// /var/backups is a system directory: the shadow backups are host
	// secrets by name.
	bak := filepath.Join("/var/backups", "shadow.bak")
	if _, err := os.Lstat(bak); err == nil {
		t.Skipf("%s exists on this host; the test makes its own", bak)
	}
	if err := os.Rename(files[1], bak); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(bak) })
	for _, f := range []string{files[0], bak} {
		if err := os.WriteFile(f, []byte(canary+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Deny: []string{"**/.env"}})
	res, err := run(t, r, policy.ToolShell, shellArgs("/bin/sh -c 'cat "+files[0]+" "+bak+"'"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Stdout + res.Stderr; strings.Contains(out, canary) {
		t.Errorf("a mailbox or the shadow backup was read:\n%s", out)
	}
}
