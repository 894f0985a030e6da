package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

// repoFixture is a project with a repository, a nested one two levels
// down and a linked worktree whose repository directory lies in the
// first.
func repoFixture(t *testing.T) string {
	t.Helper()
	proj := realDir(t)
	for _, f := range []string{".git/HEAD", ".git/config", ".git/hooks/pre-commit.sample", "a/b/.git/HEAD", "a/b/.git/config", "src/main.go"} {
		writeFile(t, filepath.Join(proj, f), "[core]\n", 0o644)
	}
	writeFile(t, filepath.Join(proj, ".git/worktrees/wt/commondir"), "../..\n", 0o644)
	writeFile(t, filepath.Join(proj, "wt/.git"), "gitdir: "+filepath.Join(proj, ".git/worktrees/wt")+"\n", 0o644)
	return proj
}

// TestRepositoriesReadOnly: in the private view every repository below
// the write roots is read-only, and neither it nor a directory above it
// up to the write root can be moved, while the rest of the project stays
// writable.
func TestRepositoriesReadOnly(t *testing.T) {
	requireNamespaces(t)
	proj := repoFixture(t)
	var view View
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Checker: checker{view: func(v View) { view = v }}, Network: hostNetwork,
		SessionStart: func() time.Time { return time.Now().Add(time.Second) }})
	attempts := map[string]string{
		"config":        "echo '[core] fsmonitor = x' >> .git/config",
		"commondir":     "echo /tmp > .git/commondir",
		"hook":          "echo 'id' > .git/hooks/pre-commit",
		"hooks dir":     "mkdir .git/hooks/new",
		"worktree conf": "echo x > .git/worktrees/wt/config.worktree",
		"nested config": "echo x >> a/b/.git/config",
		"git file":      "echo 'gitdir: /tmp' > wt/.git",
		"move repo":     "mv .git .git-old",
		"move nested":   "mv a/b/.git a/b/g",
		"move parent":   "mv a a2",
		"move parent 2": "mv a/b a/c",
		"remove file":   "rm -f wt/.git",
	}
	var script strings.Builder
	for name, cmd := range attempts {
		script.WriteString("(" + cmd + ") 2>/dev/null && echo 'DID " + name + "'\n")
	}
	script.WriteString("echo ok > src/new.txt && echo WROTE-PROJECT\n")
	res, err := run(t, r, policy.ToolShell, shellArgs("/bin/sh -c \""+strings.ReplaceAll(script.String(), `"`, `\"`)+"\""), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != ConfinementNamespaces {
		t.Fatalf("confinement %q", res.Confinement)
	}
	if strings.Contains(res.Stdout, "DID") {
		t.Errorf("a program changed a repository:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stdout, "WROTE-PROJECT") {
		t.Errorf("the project is no longer writable: %+v", res)
	}
	for _, f := range []string{".git/config", "a/b/.git/config", "wt/.git", ".git/HEAD"} {
		if !exists(filepath.Join(proj, f)) {
			t.Errorf("%s is gone", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git/config")); string(b) != "[core]\n" {
		t.Errorf(".git/config now holds %q", b)
	}
	if exists(filepath.Join(proj, ".git/commondir")) {
		t.Error(".git/commondir was made")
	}

	if view == nil {
		t.Fatal("the checker was not asked")
	}
	for _, dir := range []string{".git", "a/b/.git", ".git/worktrees/wt"} {
		if err := view.ReadOnlyRepo(filepath.Join(proj, dir)); err != nil {
			t.Errorf("ReadOnlyRepo(%s): %v", dir, err)
		}
	}
	// A repository made since the call began is not one the view protects.
	writeFile(t, filepath.Join(proj, "later/.git/config"), "", 0o644)
	if err := view.ReadOnlyRepo(filepath.Join(proj, "later/.git")); err == nil {
		t.Error("ReadOnlyRepo holds for a repository made after the call began")
	}
}

// TestReadOnlyRepoChangedSinceStart: a repository whose configuration or
// hooks changed after the session began is not trusted, nor one for a
// session whose start is not known, nor under Landlock alone.
func TestReadOnlyRepoChangedSinceStart(t *testing.T) {
	requireNamespaces(t)
	proj := repoFixture(t)
	for _, tc := range []struct {
		name  string
		start func() time.Time
		ns    NamespaceMode
		says  string
	}{
		{name: "changed since", start: func() time.Time { return time.Now().Add(-time.Hour) }, says: "after this session began"},
		{name: "start unknown", says: "not recorded"},
		{name: "landlock alone", start: func() time.Time { return time.Now().Add(time.Second) }, ns: NamespacesOff, says: "without a private view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Network: hostNetwork,
				SessionStart: tc.start, Namespaces: tc.ns})
			err := r.ExpectReadOnlyRepo(filepath.Join(proj, ".git"))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("ExpectReadOnlyRepo: %v, want an error saying %q", err, tc.says)
			}
		})
	}
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Network: hostNetwork,
		SessionStart: func() time.Time { return time.Now().Add(time.Second) }})
	if err := r.ExpectReadOnlyRepo(filepath.Join(proj, ".git")); err != nil {
		t.Fatalf("ExpectReadOnlyRepo of an unchanged repository: %v", err)
	}
	// A hook that is a link runs its target, which may be anywhere.
	if err := os.Symlink(filepath.Join(proj, "src/main.go"), filepath.Join(proj, ".git/hooks/post-checkout")); err != nil {
		t.Fatal(err)
	}
	if err := r.ExpectReadOnlyRepo(filepath.Join(proj, ".git")); err == nil {
		t.Fatal("ExpectReadOnlyRepo holds with a hook that is a symbolic link")
	}
}
