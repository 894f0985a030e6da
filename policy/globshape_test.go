package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// The shapes matched by string comparison answer as the glob matcher does,
// for every absolute, cleaned path (what match is given).
func FuzzGlobShapes(f *testing.F) {
	for _, s := range [][2]string{
		{"/a/**", "/a"}, {"/a/**", "/ab"}, {"/a/**", "/a/b/c"}, {"/**", "/"}, {"/**", "/x"},
		{"**/.git/**", "/x/.git"}, {"**/.git/**", "/x/a.git/y"}, {"**/.git/**", "/.git/x"},
		{"**/.env", "/x/.env"}, {"**/.env", "/x/.envrc"}, {"**/.env", "/x.env"},
		{"/etc/shadow", "/etc/shadow"}, {"/etc/shadow", "/etc/shadow-"}, {"**/a/**", "/a/a"},
		{"**/node_modules/**", "/p/node_modules"}, {"/home/u/proj/**", "/home/u/proj2/x"}, {"/\xb0", "/\xa7"}, {"/\ufffd", "/\xa7"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, path string) {
		if !strings.HasPrefix(path, "/") || filepath.Clean(path) != path || !doublestar.ValidatePattern(pat) {
			return
		}
		sh := shapeOf(pat)
		got, decided := sh.matches(path)
		if !decided {
			return
		}
		want, err := doublestar.Match(pat, path)
		if err != nil {
			return
		}
		if got != want {
			t.Fatalf("pattern %q, path %q: shape %d says %v, the matcher %v", pat, path, sh.kind, got, want)
		}
	})
}

func TestGlobShapes(t *testing.T) {
	for pat, kind := range map[string]uint8{
		"/a/**": shapeUnder, "/**": shapeUnder, "**/.git/**": shapeAnyDir, "**/.env": shapeAnyName,
		"/etc/shadow": shapeExact, "**/.env.*": shapeGeneral, "/a/*/b": shapeGeneral, `/a\[b/**`: shapeGeneral,
		"**/a/b/**": shapeGeneral, "/a//**": shapeGeneral, "**/id_rsa*": shapeGeneral,
	} {
		if got := shapeOf(pat).kind; got != kind {
			t.Errorf("shapeOf(%q) = %d, want %d", pat, got, kind)
		}
	}
}
