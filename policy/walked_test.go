package policy_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// CheckWalked gives every entry of a walk the violations CheckPath gives
// it: deny globs on the spelled and the resolved path, in any case, the
// read globs, protected roots, hard links, paths that are not UTF-8. The
// walk starts at a symlink, so that the two spellings differ.
func TestCheckWalkedIsCheckPath(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	for _, f := range []string{
		"a.go", "b.txt", "sub/c.go", "sub/.ENV", "sub/deep/x.go", ".Git/config", "node_modules/m/i.js",
		"docs/readme.md", "docs/secret.key", "Docs/Other.MD", "sub/link-target.go", "bad\xffname.go", "sub/.env/inside.go",
	} {
		writeFile(t, filepath.Join(real, f), "x", 0o644)
	}
	if err := os.Link(filepath.Join(real, "sub/c.go"), filepath.Join(real, "hard.go")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(real, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Home: filepath.Join(root, "home"), Protected: []string{filepath.Join(real, "sub", "deep")}}
	docs := []policy.Document{
		{Paths: policy.PathRules{Read: []string{root + "/**"}, Deny: []string{"**/.env", "**/.git/**", "**/node_modules/**", "*.key", link + "/docs/readme.md"}}},
		{Paths: policy.PathRules{Read: []string{root + "/*/*.go", root + "/*/sub/**"}, Write: []string{root + "/*/docs/**"}, Deny: []string{"**/.env/**"}}},
		{Paths: policy.PathRules{Read: []string{link + "/**"}, Write: []string{real + "/sub/**"}, Deny: []string{real + "/{a,b}.*", "**/other.md"}}},
	}
	for i, doc := range docs {
		sc, err := policy.Compile(doc, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, access := range []policy.Access{policy.AccessRead, policy.AccessWrite} {
			n, denied, hard := 0, 0, 0
			err = filepath.WalkDir(real, func(resolved string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if resolved == real || d.Type()&fs.ModeSymlink != 0 {
					return nil
				}
				abs := link + strings.TrimPrefix(resolved, real)
				want := sc.CheckPath(abs, access, "/", env)
				var links uint64
				if d.Type().IsRegular() {
					fi, err := os.Lstat(resolved)
					if err != nil {
						return err
					}
					links = uint64(fi.Sys().(*syscall.Stat_t).Nlink)
				}
				got := sc.CheckWalked(abs, resolved, d.IsDir(), links, access, env)
				if links > 1 {
					hard++
				}
				if len(want) > 0 {
					denied++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("scope %d access %d: %s:\nCheckWalked %+v\nCheckPath   %+v", i, access, abs, got, want)
				}
				n++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 20 || denied == 0 || hard == 0 || (access == policy.AccessRead && denied == n) {
				t.Fatalf("scope %d: walked %d entries, %d denied", i, n, denied)
			}
		}
	}
}
