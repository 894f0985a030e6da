package roam

import (
	"errors"
	"strings"
)

// errMalformedDrawer is returned for a file-level property drawer that never
// ends or holds a line that is not a property.
var errMalformedDrawer = errors.New("malformed file-level property drawer")

// header is what org-roam reads from the top of a file for its file node: the
// file-level property drawer (the :ID:), the first #+title and every
// #+filetags of the zeroth section, the text before the first heading.
type header struct {
	id    string
	title string
	tags  []string

	// Line numbers (0-based) used to edit the file; -1 when absent.
	drawerEnd    int // the :END: line of the property drawer
	titleLine    int // the first #+title line
	filetagsLine int // the last #+filetags line
	lineTags     []string
}

// splitLines splits src after every "\n"; each line keeps its terminator.
func splitLines(src string) []string {
	var lines []string
	for src != "" {
		i := strings.IndexByte(src, '\n')
		if i < 0 {
			lines = append(lines, src)
			break
		}
		lines = append(lines, src[:i+1])
		src = src[i+1:]
	}
	return lines
}

// text returns a line without its "\n" or "\r\n".
func text(line string) string {
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

func blank(s string) bool { return strings.TrimLeft(s, " \t") == "" }

// heading reports whether s starts an Org heading: stars then a blank or the end.
func heading(s string) bool {
	i := 0
	for i < len(s) && s[i] == '*' {
		i++
	}
	return i > 0 && (i == len(s) || s[i] == ' ' || s[i] == '\t')
}

// comment reports whether s is an Org comment line ("#" then a blank or the end).
func comment(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return s == "#" || strings.HasPrefix(s, "# ") || strings.HasPrefix(s, "#\t")
}

// property splits a drawer line ":KEY: value". KEY has no blanks; the colon
// closing it is followed by a blank or the end of the line.
func property(s string) (key, value string, ok bool) {
	s = strings.Trim(s, " \t")
	if !strings.HasPrefix(s, ":") {
		return "", "", false
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			return "", "", false
		case c == ':' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t'):
			return s[1:i], strings.Trim(s[i+1:], " \t"), true
		}
	}
	return "", "", false
}

// keyword splits "#+KEY: value" (KEY without blanks or colons).
func keyword(s string) (key, value string, ok bool) {
	s = strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(s, "#+") {
		return "", "", false
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			return "", "", false
		case ':':
			if i == 2 {
				return "", "", false
			}
			return s[2:i], strings.Trim(s[i+1:], " \t"), true
		}
	}
	return "", "", false
}

// splitTags splits a #+filetags value the way Org does: on blanks and colons.
func splitTags(v string) []string {
	var tags []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' }) {
		tags = appendNew(tags, f)
	}
	return tags
}

// blockName returns NAME for "#+begin_NAME ..." and "#+end_NAME".
func blockName(s, prefix string) (string, bool) {
	s = strings.TrimLeft(s, " \t")
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	name, _, _ := strings.Cut(s[len(prefix):], " ")
	name, _, _ = strings.Cut(name, "\t")
	if name == "" {
		return "", false
	}
	return strings.ToLower(name), true
}

// parseHeader parses the zeroth section of an Org file. A file without a
// property drawer parses with an empty id; a drawer that is not closed before
// the first heading or the end of the file is an error.
func parseHeader(src string) (header, error) {
	return parseLines(splitLines(zeroth(src)))
}

// zeroth returns src up to its first heading line.
func zeroth(src string) string {
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			j = len(src) - i
		}
		if src[i] == '*' && heading(text(src[i:i+j])) {
			return src[:i]
		}
		i += j + 1
	}
	return src
}

func parseLines(lines []string) (header, error) {
	h := header{drawerEnd: -1, titleLine: -1, filetagsLine: -1}
	i := 0
	for i < len(lines) && (blank(text(lines[i])) || comment(text(lines[i]))) {
		i++
	}
	if i < len(lines) && strings.EqualFold(strings.Trim(text(lines[i]), " \t"), ":PROPERTIES:") {
		for i++; i < len(lines); i++ {
			t := text(lines[i])
			if strings.EqualFold(strings.Trim(t, " \t"), ":END:") {
				h.drawerEnd = i
				break
			}
			key, value, ok := property(t)
			if !ok {
				return header{}, errMalformedDrawer
			}
			if strings.EqualFold(key, "ID") && h.id == "" {
				h.id = value
			}
		}
		if h.drawerEnd < 0 {
			return header{}, errMalformedDrawer
		}
		i++
	}
	unclosed := map[string]bool{} // block names with no #+end_ left; keeps the scan linear
	for ; i < len(lines); i++ {
		t := text(lines[i])
		if heading(t) {
			break
		}
		if name, ok := blockName(t, "#+begin_"); ok && !unclosed[name] {
			if end := blockEnd(lines, i+1, name); end >= 0 {
				i = end
				continue
			}
			unclosed[name] = true
		}
		key, value, ok := keyword(t)
		if !ok {
			continue
		}
		switch strings.ToLower(key) {
		case "title":
			if h.titleLine < 0 {
				h.titleLine, h.title = i, value
			}
		case "filetags":
			tags := splitTags(value)
			h.filetagsLine, h.lineTags = i, tags
			for _, tag := range tags {
				h.tags = appendNew(h.tags, tag)
			}
		}
	}
	return h, nil
}

// blockEnd returns the line of the "#+end_NAME" closing a block opened before
// from, or -1 when the section ends first.
func blockEnd(lines []string, from int, name string) int {
	for j := from; j < len(lines); j++ {
		t := text(lines[j])
		if heading(t) {
			return -1
		}
		if n, ok := blockName(t, "#+end_"); ok && n == name {
			return j
		}
	}
	return -1
}
