package policy

import (
	"regexp"
	"strings"
	"testing"
)

func TestJQCode(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{`.kind == "import"`, `.kind == "      "`},
		{`import "a" as $a; $a`, `import " " as $a; $a`},
		{`"a\"import" | .`, `"         " | .`},
		{`"x\(import "m" as $m; 1)y"`, `"  (import " " as $m; 1) "`},
		{"# import \"a\"\n.", "            \n."},
		{`"unterminated import`, `"                   `},
	} {
		if got := jqCode(tc.filter); got != tc.want {
			t.Errorf("jqCode(%q) = %q, want %q", tc.filter, got, tc.want)
		}
	}
}

// FuzzJQCode checks that jqCode keeps the filter's length and every byte
// outside strings and comments, and blanks nothing a directive needs.
func FuzzJQCode(f *testing.F) {
	for _, s := range []string{`.a | "import"`, `import "x" as $x; .`, `"a\(1 + ("b")) c"`, "# c\ninclude \"m\";", `"\\" | import "y" as $y; .`} {
		f.Add(s)
	}
	directive := regexp.MustCompile(`^(import|include)\s*"`)
	f.Fuzz(func(t *testing.T, s string) {
		got := jqCode(s)
		if len(got) != len(s) {
			t.Fatalf("jqCode(%q) has length %d, want %d", s, len(got), len(s))
		}
		for i := range len(got) {
			if got[i] != s[i] && got[i] != ' ' {
				t.Fatalf("jqCode(%q) changed byte %d to %q", s, i, got[i])
			}
		}
		// A filter that starts with a directive keeps it.
		if directive.MatchString(s) && !directive.MatchString(got) {
			t.Fatalf("jqCode(%q) = %q lost its leading directive", s, got)
		}
	})
}

func TestGitColonPath(t *testing.T) {
	for _, tc := range []struct {
		in               string
		path             string
		fromTop, fromCwd bool
	}{
		{"HEAD:src/a.go", "src/a.go", true, false},
		{"HEAD:./a.go", "./a.go", false, true},
		{"HEAD:../.env", "../.env", false, true},
		{"HEAD:", "", false, false},
		{":/", "", true, false},
		{":/src", "src", true, false},
		{":/fix bug", "fix bug", true, false},
		{":(top)x", "x", true, false},
		{":(top,icase)x", "x", true, false},
		{":(icase)x", "x", false, true},
		{":(exclude).env", "", false, false},
		{":!.env", "", false, false},
		{":^.env", "", false, false},
		{":/!:x", "", false, false},
		{":0:.env", ".env", true, false},
		{":.env", ".env", true, true},
		{":(top", "(top", false, true},
	} {
		path, top, cwd := gitColonPath(tc.in)
		if path != tc.path || top != tc.fromTop || cwd != tc.fromCwd {
			t.Errorf("gitColonPath(%q) = %q, %v, %v; want %q, %v, %v", tc.in, path, top, cwd, tc.path, tc.fromTop, tc.fromCwd)
		}
	}
}

func TestFnmatchName(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{".env", ".env", true},
		{"*.env", ".env", true},
		{"**/.env", ".env", false},
		{"src/.env", ".env", false},
		{"[!a].env", "b.env", true},
		{"[!a].env", "a.env", false},
		{"[", "[", true}, // an unmatched [ is literal, as in fnmatch(3)
	} {
		if got := fnmatchName(tc.pattern, tc.name); got != tc.want {
			t.Errorf("fnmatchName(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestWildMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*.env", "./services/api/.env", true},
		{"*/runtime/*", "internal/runtime/state.json", true},
		{".env", "services/api/.env", false},
		{"node_modules/*", "node_modules/a/b.json", true},
		{"[!a]x", "bx", true},
		{"[!a]x", "ax", false},
		{"[^a]x", "ax", false},
		{"[a-c]x", "bx", true},
		{"[]]x", "]x", true},
		{"[ab", "[ab", true},
		{`\*x`, "*x", true},
		{`\*x`, "ax", false},
		{"a?c", "a/c", true},
		{"**", "", true},
	} {
		if got := wildMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// FuzzWildMatch checks wildMatch against what any matcher of these
// wildcards must do: a string matches itself with its specials escaped,
// "*" matches everything, and a pattern without specials matches only
// itself.
func FuzzWildMatch(f *testing.F) {
	for _, s := range []string{"a", "*.env", "[!a]b", "x/y/z", `\[`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		var esc []byte
		for i := range len(s) {
			if strings.IndexByte(`*?[\`, s[i]) >= 0 {
				esc = append(esc, '\\')
			}
			esc = append(esc, s[i])
		}
		if !wildMatch(string(esc), s) {
			t.Fatalf("%q escaped as %q does not match itself", s, esc)
		}
		if !wildMatch("*", s) {
			t.Fatalf("* does not match %q", s)
		}
		if !strings.ContainsAny(p, `*?[\`) && wildMatch(p, s) != (p == s) {
			t.Fatalf("literal %q against %q", p, s)
		}
	})
}
