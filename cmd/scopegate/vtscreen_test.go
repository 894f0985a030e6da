package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// vtScreen is what a terminal shows: a grid of cells that a byte stream
// draws into, as an xterm does for the sequences a full-screen program
// writes (cursor moves, erases, scroll regions, the alternate screen).
// Colours and titles are read and dropped.
type vtScreen struct {
	rows, cols int
	main, alt  [][]rune
	g          [][]rune // main or alt
	row, col   int
	wrapNext   bool // the last column is written: the next character wraps
	top, bot   int  // scroll region
	saved      [2]int
	pend       []byte // an escape sequence or character cut by the read
}

// wideTail marks the cell covered by the right half of a wide character.
const wideTail = rune(-1)

func newVTScreen(rows, cols int) *vtScreen {
	s := &vtScreen{rows: rows, cols: cols, bot: rows - 1}
	s.main, s.alt = s.blankGrid(), s.blankGrid()
	s.g = s.main
	return s
}

func (s *vtScreen) blankGrid() [][]rune {
	g := make([][]rune, s.rows)
	for i := range g {
		g[i] = blankLine(make([]rune, s.cols))
	}
	return g
}

func blankLine(l []rune) []rune {
	for i := range l {
		l[i] = ' '
	}
	return l
}

// text is the screen, one line a row, without trailing spaces.
func (s *vtScreen) text() string {
	var b strings.Builder
	for i, l := range s.g {
		if i > 0 {
			b.WriteByte('\n')
		}
		line := make([]rune, 0, len(l))
		for _, r := range l {
			if r != wideTail {
				line = append(line, r)
			}
		}
		b.WriteString(strings.TrimRight(string(line), " "))
	}
	return b.String()
}

// feed draws b; a sequence cut at its end waits for the next feed.
func (s *vtScreen) feed(b []byte) {
	data := append(s.pend, b...)
	s.pend = nil
	for i := 0; i < len(data); {
		n := s.step(data[i:])
		if n == 0 { // incomplete
			if len(data)-i < 1<<16 {
				s.pend = append([]byte(nil), data[i:]...)
			}
			return
		}
		i += n
	}
}

// step draws the first character or sequence of d and returns its length,
// or 0 if d ends before it does.
func (s *vtScreen) step(d []byte) int {
	switch c := d[0]; {
	case c == 0x1b:
		return s.escape(d)
	case c == '\r':
		s.col, s.wrapNext = 0, false
	case c == '\n' || c == '\v' || c == '\f':
		s.lineFeed()
	case c == '\b':
		s.col, s.wrapNext = max(s.col-1, 0), false
	case c == '\t':
		s.col, s.wrapNext = min((s.col/8+1)*8, s.cols-1), false
	case c < 0x20 || c == 0x7f:
	default:
		if !utf8.FullRune(d) {
			return 0
		}
		r, n := utf8.DecodeRune(d)
		s.put(r)
		return n
	}
	return 1
}

func (s *vtScreen) escape(d []byte) int {
	if len(d) < 2 {
		return 0
	}
	switch d[1] {
	case '[':
		for i := 2; i < len(d); i++ {
			if d[i] >= 0x40 && d[i] <= 0x7e {
				s.csi(string(d[2:i]), d[i])
				return i + 1
			}
		}
		return 0
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: to BEL or ST
		for i := 2; i < len(d); i++ {
			if d[i] == 0x07 {
				return i + 1
			}
			if d[i] == 0x1b && i+1 < len(d) && d[i+1] == '\\' {
				return i + 2
			}
		}
		return 0
	case '(', ')', '*', '+', '#', '%', ' ':
		if len(d) < 3 {
			return 0
		}
		return 3
	case '7':
		s.saved = [2]int{s.row, s.col}
	case '8':
		s.row, s.col, s.wrapNext = s.saved[0], s.saved[1], false
	case 'D':
		s.lineFeed()
	case 'E':
		s.col = 0
		s.lineFeed()
	case 'M':
		if s.row == s.top {
			s.scroll(s.top, -1)
		} else {
			s.row = max(s.row-1, 0)
		}
	case 'c':
		*s = *newVTScreen(s.rows, s.cols)
	}
	return 2
}

func (s *vtScreen) csi(body string, final byte) {
	var priv byte
	if body != "" && strings.IndexByte("?<=>", body[0]) >= 0 {
		priv, body = body[0], body[1:]
	}
	if strings.IndexFunc(body, func(r rune) bool { return r < '0' || r > ';' }) >= 0 {
		return // intermediate bytes: a sequence that draws nothing here
	}
	var ps []int
	for f := range strings.SplitSeq(body, ";") {
		n, _ := strconv.Atoi(strings.SplitN(f, ":", 2)[0])
		ps = append(ps, n)
	}
	p := func(i, def int) int {
		if i < len(ps) && ps[i] > 0 {
			return ps[i]
		}
		return def
	}
	if priv == '?' {
		if m := p(0, 0); (m == 1049 || m == 1047 || m == 47) && (final == 'h' || final == 'l') {
			s.altScreen(final == 'h')
		}
		return
	}
	if priv != 0 {
		return
	}
	n := p(0, 1)
	s.wrapNext = false
	switch final {
	case 'A':
		s.row = max(s.row-n, 0)
	case 'B', 'e':
		s.row = min(s.row+n, s.rows-1)
	case 'C', 'a':
		s.col = min(s.col+n, s.cols-1)
	case 'D':
		s.col = max(s.col-n, 0)
	case 'E':
		s.row, s.col = min(s.row+n, s.rows-1), 0
	case 'F':
		s.row, s.col = max(s.row-n, 0), 0
	case 'G', '`':
		s.col = min(n, s.cols) - 1
	case 'H', 'f':
		s.row, s.col = min(n, s.rows)-1, min(p(1, 1), s.cols)-1
	case 'd':
		s.row = min(n, s.rows) - 1
	case 'J':
		switch p(0, 0) {
		case 0:
			s.erase(s.row, s.col, s.rows-1, s.cols)
		case 1:
			s.erase(0, 0, s.row, s.col+1)
		default:
			s.erase(0, 0, s.rows-1, s.cols)
		}
	case 'K':
		switch p(0, 0) {
		case 0:
			s.erase(s.row, s.col, s.row, s.cols)
		case 1:
			s.erase(s.row, 0, s.row, s.col+1)
		default:
			s.erase(s.row, 0, s.row, s.cols)
		}
	case 'X':
		s.erase(s.row, s.col, s.row, min(s.col+n, s.cols))
	case 'P', '@':
		l := s.g[s.row]
		n = min(n, s.cols-s.col)
		if final == 'P' {
			copy(l[s.col:], l[s.col+n:])
			blankLine(l[s.cols-n:])
		} else {
			copy(l[s.col+n:], l[s.col:])
			blankLine(l[s.col : s.col+n])
		}
	case 'L', 'M':
		dir := map[byte]int{'L': -1, 'M': 1}[final]
		for range min(n, s.bot-s.row+1) {
			if s.row >= s.top && s.row <= s.bot {
				s.scroll(s.row, dir)
			}
		}
	case 'S', 'T':
		dir := map[byte]int{'S': 1, 'T': -1}[final]
		for range min(n, s.rows) {
			s.scroll(s.top, dir)
		}
	case 'r':
		if t, b := p(0, 1)-1, min(p(1, s.rows), s.rows)-1; t < b {
			s.top, s.bot, s.row, s.col = t, b, 0, 0
		}
	case 's':
		s.saved = [2]int{s.row, s.col}
	case 'u':
		s.row, s.col = s.saved[0], s.saved[1]
	}
}

func (s *vtScreen) altScreen(on bool) {
	if on && !sameGrid(s.g, s.alt) {
		s.saved = [2]int{s.row, s.col}
		s.alt = s.blankGrid()
		s.g = s.alt
	} else if !on && sameGrid(s.g, s.alt) {
		s.g = s.main
		s.row, s.col = s.saved[0], s.saved[1]
	}
	s.wrapNext = false
}

func sameGrid(a, b [][]rune) bool { return &a[0] == &b[0] }

// erase blanks from (r0, c0) to (r1, c1), c1 exclusive on the last row.
func (s *vtScreen) erase(r0, c0, r1, c1 int) {
	for r := r0; r <= r1; r++ {
		from, to := 0, s.cols
		if r == r0 {
			from = c0
		}
		if r == r1 {
			to = c1
		}
		if from < to {
			blankLine(s.g[r][from:to])
		}
	}
}

func (s *vtScreen) lineFeed() {
	s.wrapNext = false
	if s.row == s.bot {
		s.scroll(s.top, 1)
	} else if s.row < s.rows-1 {
		s.row++
	}
}

// scroll moves the lines from top to the region's bottom up (dir 1) or
// down (dir -1) by one, blanking the line it frees.
func (s *vtScreen) scroll(top, dir int) {
	lines := s.g[top : s.bot+1]
	if dir > 0 {
		first := lines[0]
		copy(lines, lines[1:])
		lines[len(lines)-1] = blankLine(first)
	} else {
		last := lines[len(lines)-1]
		copy(lines[1:], lines)
		lines[0] = blankLine(last)
	}
}

func (s *vtScreen) put(r rune) {
	w := runeWidth(r)
	if w == 0 {
		return
	}
	if s.wrapNext || s.col+w > s.cols {
		s.col = 0
		s.lineFeed()
	}
	s.g[s.row][s.col] = r
	if w == 2 {
		s.g[s.row][s.col+1] = wideTail
	}
	s.col += w
	if s.col >= s.cols {
		s.col, s.wrapNext = s.cols-1, true
	}
}

// runeWidth is the cells r takes, as terminals and Claude Code's renderer
// count them: two for East Asian wide and full-width characters (emoji
// among them), none for combining marks and joiners.
func runeWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r >= 0xfe00 && r <= 0xfe0f:
		return 0
	case r == utf8.RuneError:
		return 1
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func TestVTScreen(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // the first rows
	}{
		{"lines", "ab\r\ncd\rX", []string{"ab", "Xd"}},
		// A renderer that redraws only the cells that change moves the
		// cursor over the ones that already hold the right character.
		{"skipped cells", "Do you want to proceed?\r\x1b[3Cy\x1b[1Cu\x1b[6Cto create x.txt?\x1b[K",
			[]string{"Do you want to create x.txt?"}},
		{"absolute moves", "\x1b[2;3Hx\x1b[1;1Hy\x1b[2dz\x1b[5Gw", []string{"y", " zx w"}},
		{"relative moves", "a\x1b[Bb\x1b[Ac\x1b[2Dd\x1b[Ee\x1b[Ff", []string{"fdc", "eb"}},
		{"erase", "abcdef\x1b[3D\x1b[1K\r\nghi\x1b[1;1H\x1b[J", []string{"", ""}},
		{"erase line end", "abcdef\x1b[3D\x1b[Kx\r\nghi\x1b[2K", []string{"abcx", ""}},
		{"erase chars, delete, insert", "abcdef\r\x1b[2X\x1b[4G\x1b[P\x1b[2G\x1b[@", []string{"   cef"}},
		{"wide", "漢字a\r\x1b[4Cb", []string{"漢字b"}},
		{"tab, backspace", "a\tb\bc", []string{"a       c"}},
		{"sgr and osc ignored", "\x1b[1;31mred\x1b[0m\x1b]0;title\x07 \x1b]8;;http://x\x1b\\link", []string{"red link"}},
		{"save, restore", "\x1b7ab\x1b8c\x1b[s\x1b[2;1Hd\x1b[uz", []string{"cz", "d"}},
		{"alternate screen", "main\x1b[?1049h\x1b[Halt\x1b[?1049lx", []string{"mainx"}},
		{"scroll region", "\x1b[1;3r1\r\n2\r\n3\r\n4\x1b[r\x1b[4;1Hout", []string{"2", "3", "4", "out"}},
		{"reverse index", "1\r\n2\x1b[H\x1bMnew", []string{"new", "1", "2"}},
		{"wrap", strings.Repeat("-", 39) + "漢字", []string{strings.Repeat("-", 39), "漢字"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newVTScreen(5, 40)
			// One byte at a time: a sequence cut by a read is drawn whole.
			for i := range len(tc.in) {
				s.feed([]byte{tc.in[i]})
			}
			rows := strings.Split(s.text(), "\n")
			if got := rows[:len(tc.want)]; !slices.Equal(got, tc.want) {
				t.Errorf("screen %q, want %q first", rows, tc.want)
			}
		})
	}
}

// A dialog is fresh if it is a new one, even under the title of the one
// answered before it.
func TestFreshMatch(t *testing.T) {
	const title = "Doyouwanttoproceed?"
	for _, tc := range []struct {
		now, before string
		want        bool
	}{
		{"catfile" + title + "1.Yes", "", true},
		{"catfile" + title + "1.Yes", "catfile" + title + "❯1.Yes", false},
		{"touchfile" + title + "1.Yes", "catfile" + title + "1.Yes", true},
		{"catfile", "catfile" + title, false},
	} {
		if got := freshMatch(tc.now, tc.before, title); got != tc.want {
			t.Errorf("freshMatch(%q, %q) = %v, want %v", tc.now, tc.before, got, tc.want)
		}
	}
}

func FuzzVTScreen(f *testing.F) {
	for _, seed := range []string{"ab\r\ncd", "\x1b[2;3Hx\x1b[K", "漢\x1b[1;3r\n\n\n\x1bM", "\x1b[?1049h\x1b[999;999H\x1b[99L\x1b[99P\x1b[99@", "\x1b]0;t\x1b\\\x1b[5T\x1b[5S", "\xff\xe6\xbc"} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		s := newVTScreen(4, 6)
		at := min(int(cut), len(in))
		s.feed(in[:at])
		s.feed(in[at:])
		if rows := strings.Split(s.text(), "\n"); len(rows) != 4 {
			t.Fatalf("%d rows", len(rows))
		}
		if s.row < 0 || s.row >= 4 || s.col < 0 || s.col >= 6 {
			t.Fatalf("cursor at %d,%d", s.row, s.col)
		}
	})
}
