package roam

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const maxSlugLen = 120

// slug turns a title into a file name part the way org-roam-node-slug does:
// combining marks dropped, every run of non-alphanumerics becomes one "_",
// none at either end, lower case. Unlike org-roam it does not decompose
// precomposed letters (é stays é). An empty result becomes "untitled" and a
// long one is cut so the file name stays well below NAME_MAX.
func slug(title string) string {
	var b strings.Builder
	pendingSep := false
	for _, r := range title {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(unicode.ToLower(r))
		default:
			pendingSep = true
		}
		if b.Len() >= maxSlugLen {
			break
		}
	}
	s := b.String()
	for len(s) > maxSlugLen {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	s = strings.TrimSuffix(s, "_")
	if s == "" {
		return "untitled"
	}
	return s
}
