package exec

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maxScanLine is the longest line (with its newline) the grep tool reads:
// the bufio.Scanner limit it has always used. A file is searched as one
// buffer only when it is shorter, so that no line can reach the limit;
// longer files are scanned line by line, as before.
const maxScanLine = 1 << 20

// lineMatcher finds the lines of a file that a grep pattern matches, as
// matching the pattern against each line alone would (a line is the text
// between newlines, without one trailing carriage return), but searching
// the whole file at once: candidates first, through a literal that every
// match contains or through the pattern with its anchors made line
// anchors, then the pattern itself on each candidate line.
type lineMatcher struct {
	re *regexp.Regexp
	// lit is a literal every match contains, or nil.
	lit []byte
	// multi finds every line re matches, and more, in a buffer of lines
	// (nil when it could not be built). With endAnchor set it does not on
	// lines that end in a carriage return.
	multi     *regexp.Regexp
	endAnchor bool
}

// minLiteral is the shortest literal worth searching for instead of the
// line-anchored pattern.
const minLiteral = 2

// newLineMatcher compiles pattern, the way the grep tool always has
// (regexp.Compile: RE2 syntax, Perl flags).
func newLineMatcher(pattern string) (*lineMatcher, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	m := &lineMatcher{re: re}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return m, nil // regexp.Compile parsed it: cannot happen; search line by line
	}
	if lit := requiredLiteral(tree); len(lit) >= minLiteral {
		m.lit = []byte(lit)
		return m, nil
	}
	m.endAnchor = lineAnchors(tree)
	if multi, err := regexp.Compile(tree.String()); err == nil {
		m.multi = multi
	}
	return m, nil
}

// requiredLiteral returns a string every match of re contains, as UTF-8
// bytes: the longest run of literal text that every match must go
// through. It is "" when there is none, and for text that holds U+FFFD,
// which a match may meet as an invalid byte instead.
func requiredLiteral(re *syntax.Regexp) string {
	best := ""
	consider := func(s string) {
		if len(s) > len(best) && !bytes.ContainsRune([]byte(s), utf8.RuneError) {
			best = s
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			consider(string(re.Rune))
		}
	case syntax.OpCapture, syntax.OpPlus:
		consider(requiredLiteral(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			consider(requiredLiteral(re.Sub[0]))
		}
	case syntax.OpConcat:
		run := ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run += string(sub.Rune)
				consider(run)
				continue
			}
			run = ""
			consider(requiredLiteral(sub))
		}
	}
	return best
}

// lineAnchors turns the text anchors of re (^ and $ without the m flag,
// \A, \z) into line anchors, in place, and reports whether re holds an
// end anchor. Within one line the two kinds are the same; in a buffer of
// lines the line anchors hold at every line's start and end.
func lineAnchors(re *syntax.Regexp) bool {
	end := false
	switch re.Op {
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op, re.Flags = syntax.OpEndLine, re.Flags&^syntax.WasDollar
		end = true
	case syntax.OpEndLine:
		end = true
	}
	for _, sub := range re.Sub {
		if lineAnchors(sub) {
			end = true
		}
	}
	return end
}

// match appends to found the lines of data (a whole file, shorter than
// maxScanLine) that the pattern matches, as "full:N:text", and reports
// false when data holds a NUL byte (a binary file, left out whole).
func (m *lineMatcher) match(found []string, data []byte, full string) ([]string, bool) {
	if bytes.IndexByte(data, 0) >= 0 {
		return found, false
	}
	next := func(from int) int { return from } // every line is a candidate
	switch {
	case m.lit != nil:
		next = func(from int) int {
			if i := bytes.Index(data[from:], m.lit); i >= 0 {
				return from + i
			}
			return -1
		}
	case m.multi != nil && !(m.endAnchor && bytes.IndexByte(data, '\r') >= 0):
		next = func(from int) int {
			if loc := m.multi.FindIndex(data[from:]); loc != nil {
				return from + loc[0]
			}
			return -1
		}
	}
	line, counted := 1, 0 // line is the number of the line that starts at counted
	for from := 0; from < len(data); {
		at := next(from)
		if at < 0 {
			break
		}
		start := from + bytes.LastIndexByte(data[from:at], '\n') + 1
		end := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			end = at + i
		}
		if start == len(data) {
			break // after the last newline: no line (bufio.ScanLines)
		}
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		text := dropCR(data[start:end])
		if m.re.Match(text) {
			found = append(found, matchLine(full, line, text))
		}
		from = end + 1
	}
	return found, true
}

// dropCR drops one carriage return ending a line, as bufio.ScanLines does.
func dropCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// matchLine is one grep match as results carry it, the line's text cut at
// maxLineText bytes.
func matchLine(full string, n int, text []byte) string {
	if len(text) > maxLineText {
		text = text[:maxLineText]
	}
	return full + ":" + strconv.Itoa(n) + ":" + string(text)
}

// scan matches r line by line, with the grep tool's scanner (lines of up
// to maxScanLine bytes; a longer one ends the file's scan). It reports
// false for a file with a NUL byte in a line it read (binary: left out).
func (m *lineMatcher) scan(found []string, r io.Reader, full string) ([]string, bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxScanLine)
	mark := len(found)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if slices.Contains(line, 0) {
			return found[:mark], false
		}
		if m.re.Match(line) {
			found = append(found, matchLine(full, n, line))
		}
	}
	return found, true
}
