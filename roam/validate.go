package roam

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	maxIDLen    = 64
	maxTagLen   = 128
	maxTitleLen = 1024
)

// validID reports whether id looks like an org-roam ID: [0-9A-Za-z-]{1,64}.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

func checkID(arg, id string) error {
	if !validID(id) {
		return &InvalidError{Arg: arg, Value: id, Reason: "want 1 to 64 of [0-9A-Za-z-]"}
	}
	return nil
}

// tagRune reports whether r may appear in an Org tag ([[:alnum:]_@#%], and '-').
func tagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_@#%-", r)
}

func validTag(t string) bool {
	if t == "" || len(t) > maxTagLen || !utf8.ValidString(t) {
		return false
	}
	for _, r := range t {
		if !tagRune(r) {
			return false
		}
	}
	return true
}

// checkTags validates tags and returns them without duplicates, in order.
func checkTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if !validTag(t) {
			return nil, &InvalidError{Arg: "tags", Value: t, Reason: "a tag is one word of letters, digits and _@#%-"}
		}
		out = appendNew(out, t)
	}
	return out, nil
}

// appendNew appends t to list unless it is already there.
func appendNew(list []string, t string) []string {
	for _, have := range list {
		if have == t {
			return list
		}
	}
	return append(list, t)
}

// checkTitle returns the title without surrounding blanks, or an error when it
// is empty, too long, not UTF-8 or not a single line.
func checkTitle(title string) (string, error) {
	bad := func(reason string) error { return &InvalidError{Arg: "title", Value: title, Reason: reason} }
	if !utf8.ValidString(title) {
		return "", bad("not valid UTF-8")
	}
	for _, r := range title {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", bad("must be one line without control characters")
		}
	}
	t := strings.TrimSpace(title)
	if t == "" {
		return "", bad("empty")
	}
	if len(t) > maxTitleLen {
		return "", bad("longer than 1024 bytes")
	}
	return t, nil
}

// checkSubdir returns the cleaned, slash-separated subdirectory ("." for none)
// or an error when it is absolute, climbs with "..", names a hidden directory
// (which org-roam and Read skip) or contains odd characters.
func checkSubdir(sub string) (string, error) {
	bad := func(reason string) error { return &InvalidError{Arg: "subdirectory", Value: sub, Reason: reason} }
	if sub == "" {
		return ".", nil
	}
	if !utf8.ValidString(sub) {
		return "", bad("not valid UTF-8")
	}
	for _, r := range sub {
		if unicode.IsControl(r) || r == '\\' {
			return "", bad("contains a control character or backslash")
		}
	}
	if strings.HasPrefix(sub, "/") {
		return "", bad("must be relative to the roam directory")
	}
	for _, el := range strings.Split(sub, "/") {
		if el == ".." {
			return "", bad(`must not contain ".."`)
		}
		if el != "." && strings.HasPrefix(el, ".") {
			return "", bad("must not name a hidden directory")
		}
	}
	return path.Clean(sub), nil
}
