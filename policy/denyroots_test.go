package policy_test

import (
	"slices"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func TestDenyPatterns(t *testing.T) {
	var doc policy.Document
	doc.Paths.Read = []string{"/proj/**"}
	doc.Paths.Deny = []string{"**/.env", "node_modules/**", "/Proj/Secret/**"}
	s, err := policy.Compile(doc, policy.Env{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	got := s.DenyPatterns()
	for _, want := range []string{"**/.env", "**/node_modules/**", "/proj/secret/**"} {
		if !slices.Contains(got, want) {
			t.Errorf("DenyPatterns() = %q, lacks %q", got, want)
		}
	}
}
