package audit

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// escapeLine makes s one line that Org keeps verbatim as a headline or a
// property value: backslash, control characters and invalid UTF-8 bytes
// become backslash escapes, and a leading or trailing space (which Org trims)
// becomes \x20. With max > 0 the result is cut to about max runes with "…".
// unescapeLine reverses it exactly.
func escapeLine(s string, max int) string {
	if plainLine(s, max) {
		return s
	}
	return escapeRunes(s, max)
}

// escapeRunes is escapeLine rune by rune.
func escapeRunes(s string, max int) string {
	var b strings.Builder
	b.Grow(len(s))
	runes := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = `\x` + hex2(s[i])
		case r == '\\':
			piece = `\\`
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case r < 0x20 || r == 0x7f:
			piece = `\x` + hex2(byte(r))
		case r >= 0x80 && r < 0xa0, r == '\u2028', r == '\u2029':
			// C1 controls and Unicode line separators: shown, not obeyed.
			piece = `\u` + strconv.FormatInt(int64(r)|0x10000, 16)[1:]
		case r == ' ' && (i == 0 || i+size == len(s)):
			piece = `\x20`
		default:
			piece = s[i : i+size]
		}
		n := utf8.RuneCountInString(piece)
		if max > 0 && runes+n > max {
			b.WriteString("…")
			return b.String()
		}
		runes += n
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// plainLine reports whether escapeLine(s, max) is s: printable ASCII
// without a backslash or a space at either end, no longer than max.
func plainLine(s string, max int) bool {
	if max > 0 && len(s) > max {
		return false
	}
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// unescapeLine reverses escapeLine. An unknown escape is kept as written.
func unescapeLine(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'x':
			if i+4 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
			b.WriteByte(c)
		case 'u':
			if i+6 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += 5
					continue
				}
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sanitizeBlock makes call output safe for an Org file Emacs can decode:
// invalid UTF-8 becomes U+FFFD and control characters other than tab,
// newline and carriage return become their Unicode control pictures (a NUL
// byte would make Emacs open the whole file as binary).
func sanitizeBlock(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20:
			return 0x2400 + r
		case r == 0x7f:
			return '\u2421'
		case r >= 0x80 && r < 0xa0:
			return '\uFFFD'
		}
		return r
	}, s)
}

// needsComma reports whether a block line must get Org's comma escape: it
// begins, after optional spaces and tabs and any commas, with "*" or "#+".
// It returns where the comma goes (after the leading blanks).
func needsComma(line string) (int, bool) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	at := i
	for i < len(line) && line[i] == ',' {
		i++
	}
	rest := line[i:]
	return at, strings.HasPrefix(rest, "*") || strings.HasPrefix(rest, "#+")
}

// writeBlockBody writes s (already sanitized) as the body of an Org block,
// escaping each line as org-escape-code-in-string does, and ends it with a
// newline.
func writeBlockBody(b *bytes.Buffer, s string) {
	if s == "" {
		return
	}
	for {
		line, rest, more := strings.Cut(s, "\n")
		if at, ok := needsComma(line); ok {
			b.WriteString(line[:at])
			b.WriteByte(',')
			b.WriteString(line[at:])
		} else {
			b.WriteString(line)
		}
		b.WriteByte('\n')
		if !more || rest == "" {
			return
		}
		s = rest
	}
}

// unescapeBlockLine removes the comma escapeBlock added, as
// org-unescape-code-in-string does.
func unescapeBlockLine(line string) string {
	at, ok := needsComma(line)
	if ok && at < len(line) && line[at] == ',' {
		return line[:at] + line[at+1:]
	}
	return line
}
