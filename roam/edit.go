package roam

import (
	"strings"
)

// render returns the text of a new node file, as org-roam's default capture
// template writes it.
func render(id, title string, tags []string) string {
	var b strings.Builder
	b.WriteString(":PROPERTIES:\n:ID:       ")
	b.WriteString(id)
	b.WriteString("\n:END:\n#+title: ")
	b.WriteString(title)
	b.WriteString("\n")
	if len(tags) > 0 {
		b.WriteString(filetagsLine(tags, "\n"))
	}
	return b.String()
}

func filetagsLine(tags []string, eol string) string {
	return "#+filetags: :" + strings.Join(tags, ":") + ":" + eol
}

// eolOf returns the line ending used by line ("\n" when it has none).
func eolOf(line string) string {
	if strings.HasSuffix(line, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// withTags returns src with tags merged into its last #+filetags line, so
// they come after every tag the file has; without one, a #+filetags line is
// added after #+title, else after the property drawer. Tags the file already
// has are left alone; changed is false when none was new.
func withTags(src string, h header, tags []string) (out string, changed bool) {
	var add []string
	for _, t := range tags {
		if !contains(h.tags, t) {
			add = appendNew(add, t)
		}
	}
	if len(add) == 0 {
		return src, false
	}
	lines := splitLines(src)
	if h.filetagsLine >= 0 {
		old := lines[h.filetagsLine]
		eol := eolOf(old)
		if !strings.HasSuffix(old, "\n") {
			eol = ""
		}
		lines[h.filetagsLine] = filetagsLine(append(append([]string(nil), h.lineTags...), add...), eol)
		return strings.Join(lines, ""), true
	}
	after := h.titleLine
	if after < 0 {
		after = h.drawerEnd
	}
	if after < 0 {
		// No drawer and no title: the tags go first.
		return filetagsLine(add, "\n") + src, true
	}
	eol := eolOf(lines[after])
	if !strings.HasSuffix(lines[after], "\n") {
		lines[after] += eol
	}
	lines = append(lines[:after+1], append([]string{filetagsLine(add, eol)}, lines[after+1:]...)...)
	return strings.Join(lines, ""), true
}

func contains(list []string, s string) bool {
	for _, have := range list {
		if have == s {
			return true
		}
	}
	return false
}

// linkText returns the Org ID link to a node. Brackets in the title would end
// the description early, so they become parentheses.
func linkText(id, title string) string {
	desc := strings.NewReplacer("[", "(", "]", ")").Replace(title)
	return "[[id:" + id + "][" + desc + "]]"
}

// withLink returns src with a link to the node id appended on its own line,
// unless src already links to it (with any description).
func withLink(src, id, title string) (out string, changed bool) {
	if strings.Contains(src, "[[id:"+id+"]") {
		return src, false
	}
	eol := "\n"
	if lines := splitLines(src); len(lines) > 0 {
		last := lines[len(lines)-1]
		eol = eolOf(last)
		if !strings.HasSuffix(last, "\n") {
			src += eol
		}
	}
	return src + linkText(id, title) + eol, true
}
