package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The chain (see the package documentation): every entry this package
// appends to tools.org carries two properties at the end of its drawer,
//
//	:CHAIN_SEQ: N
//	:CHAIN:    <64 hex digits>
//
// N counts the branch's chained entries from 1. The :CHAIN: value is the
// lower-case hex SHA-256 of the entry's text followed by the previous
// chained entry's :CHAIN: value (nothing for the first). The entry's text
// is its bytes as written, from the "*" of its headline to the newline that
// ends its last line that is not empty (before the next level-1 headline,
// or the end of the file), with the 64 hex digits of its own :CHAIN: value
// taken out: the line reads ":CHAIN:" and four spaces there.
const (
	chainProp    = "CHAIN"
	chainSeqProp = "CHAIN_SEQ"
	// chainKey is the :CHAIN: line up to its value, as writeKey writes it.
	chainKey = ":CHAIN:    "
	// chainHexLen is the length of a :CHAIN: value.
	chainHexLen = 2 * sha256.Size
)

// headMagic starts the chain head file.
const headMagic = "scopegate-chain 1"

// headLen is the length of the head file: one line of fixed width,
// "scopegate-chain 1 SEQ VALUE SIZE BASESEQ BASEVALUE CRC\n", numbers as 20
// decimal digits, values as 64 hex digits ("-" repeated for none), CRC the
// CRC-32 (IEEE) of what comes before it, in 8 hex digits.
const headLen = len(headMagic) + 3*(1+20) + 2*(1+chainHexLen) + 1 + 8 + 1

// ChainHeadPath is the file that keeps the chain head of the tools.org at
// logPath: beside it, in the branch directory, where no tool call can write.
func ChainHeadPath(logPath string) string {
	return filepath.Join(filepath.Dir(logPath), "."+filepath.Base(logPath)+".chain")
}

// chainHead is the state of a branch's chain after its latest entry: its
// sequence number and :CHAIN: value, and the size of tools.org once that
// entry was written; and the base the chain of the file starts from: zero,
// or the last entry pruned from its start (scopegate gc). The zero value is
// the state before the first entry.
type chainHead struct {
	Seq   uint64
	Value string
	Size  int64
	// BaseSeq and BaseValue are the entry before the first in the file.
	BaseSeq   uint64
	BaseValue string
}

// encode is the head file's content (headLen bytes).
func (h chainHead) encode() []byte {
	return h.appendEncoded(make([]byte, 0, headLen))
}

// appendEncoded appends the head file's content to b.
func (h chainHead) appendEncoded(b []byte) []byte {
	b = append(b, headMagic...)
	b = append(b, ' ')
	b = appendPadded(b, h.Seq)
	b = append(b, ' ')
	b = appendValue(b, h.Value)
	b = append(b, ' ')
	b = appendPadded(b, uint64(h.Size))
	b = append(b, ' ')
	b = appendPadded(b, h.BaseSeq)
	b = append(b, ' ')
	b = appendValue(b, h.BaseValue)
	b = append(b, ' ')
	b = appendCRC(b, crc32.ChecksumIEEE(b[len(b)-headCRCAt:]))
	return append(b, '\n')
}

// appendCRC appends a CRC-32 as 8 lower-case hex digits.
func appendCRC(b []byte, crc uint32) []byte {
	var d [4]byte
	binary.BigEndian.PutUint32(d[:], crc)
	return hex.AppendEncode(b, d[:])
}

// noValue stands for an empty chain value in the head.
var noValue = strings.Repeat("-", chainHexLen)

// appendValue appends a chain value, or noValue for none.
func appendValue(b []byte, v string) []byte {
	if v == "" {
		return append(b, noValue...)
	}
	return append(b, v...)
}

// parseValue reads what appendValue wrote.
func parseValue(f []byte) (string, bool) {
	if string(f) == noValue {
		return "", true
	}
	return string(f), validChainValue(f)
}

// appendPadded appends n as 20 decimal digits.
func appendPadded(b []byte, n uint64) []byte {
	var d [20]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:]...)
}

// errBadHead reports a chain head file that does not parse.
var errBadHead = errors.New("malformed chain head")

// Offsets of the fields in a head file (see headLen): each is preceded by
// one space.
const (
	headSeqAt       = len(headMagic) + 1
	headValueAt     = headSeqAt + 20 + 1
	headSizeAt      = headValueAt + chainHexLen + 1
	headBaseSeqAt   = headSizeAt + 20 + 1
	headBaseValueAt = headBaseSeqAt + 20 + 1
	headCRCAt       = headBaseValueAt + chainHexLen + 1
)

// parseHead reads a head file's content.
func parseHead(data []byte) (chainHead, error) {
	if len(data) != headLen || data[headLen-1] != '\n' || !bytes.HasPrefix(data, []byte(headMagic)) {
		return chainHead{}, errBadHead
	}
	for _, at := range []int{headSeqAt, headValueAt, headSizeAt, headBaseSeqAt, headBaseValueAt, headCRCAt} {
		if data[at-1] != ' ' {
			return chainHead{}, errBadHead
		}
	}
	var crc [8]byte
	if string(appendCRC(crc[:0], crc32.ChecksumIEEE(data[:headCRCAt]))) != string(data[headCRCAt:headLen-1]) {
		return chainHead{}, errBadHead
	}
	var h chainHead
	var err1, err2, err3 error
	h.Seq, err1 = parsePadded(data[headSeqAt:headValueAt-1], 64)
	size, err2 := parsePadded(data[headSizeAt:headBaseSeqAt-1], 63)
	h.BaseSeq, err3 = parsePadded(data[headBaseSeqAt:headBaseValueAt-1], 64)
	h.Size = int64(size)
	value, ok1 := parseValue(data[headValueAt : headSizeAt-1])
	base, ok2 := parseValue(data[headBaseValueAt : headCRCAt-1])
	h.Value, h.BaseValue = value, base
	switch {
	case err1 != nil || err2 != nil || err3 != nil || !ok1 || !ok2,
		(h.Seq == 0) != (h.Value == ""), (h.BaseSeq == 0) != (h.BaseValue == ""), h.BaseSeq > h.Seq:
		return chainHead{}, errBadHead
	}
	return h, nil
}

// parsePadded reads what appendPadded wrote: 20 decimal digits, of a
// number that fits in bits.
func parsePadded(f []byte, bits int) (uint64, error) {
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, errBadHead
		}
	}
	return strconv.ParseUint(string(f), 10, bits)
}

// readHead reads the head file at path; an empty one is ErrNotExist (it
// was created by an append that did not get to write it).
func readHead(path string) (chainHead, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return chainHead{}, err
	}
	if len(data) == 0 {
		return chainHead{}, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	h, err := parseHead(data)
	if err != nil {
		return chainHead{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// headFile is the open chain head of one append.
type headFile struct {
	path string
	fd   int
	// buf holds what write writes.
	buf [headLen]byte
}

// openHead opens (creates) the head file at path for reading and writing.
func openHead(path string) (*headFile, error) {
	fd, err := retry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return nil, fmt.Errorf("open chain head %s: %w", path, err)
	}
	return &headFile{path: path, fd: fd}, nil
}

func (f *headFile) close() { syscall.Close(f.fd) }

// read reads the head; see readHead.
func (f *headFile) read() (chainHead, error) {
	var buf [headLen + 1]byte
	n, err := retry(func() (int, error) { return syscall.Pread(f.fd, buf[:], 0) })
	if err != nil {
		return chainHead{}, fmt.Errorf("read chain head %s: %w", f.path, err)
	}
	if n == 0 {
		return chainHead{}, fs.ErrNotExist
	}
	return parseHead(buf[:n])
}

// write replaces the head in place: one pwrite(2) of the whole fixed-width
// line, under the tools.org lock that every reader of the head holds too,
// so no reader sees half of it. It is not forced to the disk: a head lost,
// torn (its CRC fails) or behind after a crash is found again from
// tools.org by the next append (see loadHead).
func (f *headFile) write(h chainHead) error {
	data := h.appendEncoded(f.buf[:0])
	n, err := retry(func() (int, error) { return syscall.Pwrite(f.fd, data, 0) })
	if err == nil && n != len(data) {
		err = ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("write chain head %s: %w", f.path, err)
	}
	return nil
}

// loadHead is the chain state to append after, read under the tools.org
// lock from the head file, with fd open on tools.org of the given size.
// When the head file records that size, that is all it reads. Otherwise:
//   - tools.org grew past the head (another program appended, or an append
//     stopped between its write and its head): the new bytes are read, and
//     the chained entries among them that continue the head are taken;
//   - tools.org is shorter than the head says (cut): the chain goes on from
//     the head, and verify reports the cut;
//   - no head (a log from before the chain, or a lost head): the whole
//     file is read and the chain goes on from its last chained entry.
//
// exact reports that the head file recorded the size: the state after the
// last append, which proves that the file ends a line (every append and
// every rewrite by gc leave it ending in a newline), so that the caller
// need not read its last byte.
func loadHead(fd int, head *headFile, size int64) (h chainHead, exact bool, err error) {
	h, err = head.read()
	switch {
	case err == nil && h.Size >= size:
		return h, h.Size == size, nil
	case err == nil:
		tail, rerr := preadAll(fd, h.Size, size)
		if rerr != nil {
			return chainHead{}, false, rerr
		}
		h = continueHead(h, tail)
		h.Size = size
		return h, false, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errBadHead):
		all, rerr := preadAll(fd, 0, size)
		if rerr != nil {
			return chainHead{}, false, rerr
		}
		h = lastLink(all)
		h.Size = size
		return h, false, nil
	default:
		return chainHead{}, false, err
	}
}

// preadAll reads bytes [from, to) of fd.
func preadAll(fd int, from, to int64) ([]byte, error) {
	buf := make([]byte, to-from)
	for off := 0; off < len(buf); {
		n, err := retry(func() (int, error) { return syscall.Pread(fd, buf[off:], from+int64(off)) })
		if err != nil {
			return nil, fmt.Errorf("read tools.org: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("read tools.org: %w", io.ErrUnexpectedEOF)
		}
		off += n
	}
	return buf, nil
}

// continueHead returns h moved past the chained entries of text that
// continue it, in order; it stops at the first that does not.
func continueHead(h chainHead, text []byte) chainHead {
	splitEntries(text, 1, func(_ int, raw []byte) bool {
		l := parseLink(raw)
		if !l.chained {
			return true
		}
		if l.err != nil || l.seq != h.Seq+1 || l.sum(h.Value) != l.value {
			return false
		}
		h.Seq, h.Value = l.seq, l.value
		return true
	})
	return h
}

// lastLink is the state after the last well-formed chained entry of text.
func lastLink(text []byte) chainHead {
	var h chainHead
	splitEntries(text, 1, func(_ int, raw []byte) bool {
		if l := parseLink(raw); l.chained && l.err == nil {
			h.Seq, h.Value = l.seq, l.value
		}
		return true
	})
	return h
}

// sealSpace is what seal adds to an entry, at most.
const sealSpace = 2*12 + 20 + chainHexLen + 2

// seal appends to dst the rendered entry text with the chain properties
// added at the end of its drawer, and moves h past it. s, when not nil, is
// a SHA-256 to reuse.
func (h *chainHead) seal(dst, text []byte, s hash.Hash) []byte {
	if s == nil {
		s = sha256.New()
	}
	end := drawerEnd(text)
	h.Seq++
	start := len(dst)
	dst = append(dst, text[:end]...)
	writeKeyTo(&dst, chainSeqProp)
	dst = strconv.AppendUint(dst, h.Seq, 10)
	dst = append(dst, '\n')
	dst = append(dst, chainKey...)
	// The value's place is kept, and filled once the text around it is in.
	at := len(dst) - start
	var hx [chainHexLen]byte
	dst = append(dst, hx[:]...)
	dst = append(dst, '\n')
	dst = append(dst, text[end:]...)
	hx = chainSum(s, dst[start:], at, chainHexLen, h.Value)
	copy(dst[start+at:], hx[:])
	h.Value = string(hx[:])
	return dst
}

// chainSum is the :CHAIN: value of an entry chained after the value prev,
// for the entry's text whose own :CHAIN: value is at [at, at+n): the
// SHA-256, in lower-case hex, of the text without that value, followed by
// prev. Both the writer (seal) and the reader (link.sum) use it. s is a
// SHA-256 to reuse.
func chainSum(s hash.Hash, entry []byte, at, n int, prev string) [chainHexLen]byte {
	s.Reset()
	s.Write(entry[:at])
	s.Write(entry[at+n:])
	s.Write([]byte(prev))
	var sum [sha256.Size]byte
	var hx [chainHexLen]byte
	hex.Encode(hx[:], s.Sum(sum[:0]))
	return hx
}

// drawerEnd is the offset of the ":END:" line of the drawer of a rendered
// entry: the first such line (a property value is one line).
func drawerEnd(text []byte) int {
	return bytes.Index(text, []byte("\n:END:\n")) + 1
}

// writeKeyTo is writeKey on a byte slice.
func writeKeyTo(dst *[]byte, key string) {
	b := append(*dst, ':')
	b = append(b, key...)
	b = append(b, ':')
	for n := len(key) + 2; n < 10; n++ {
		b = append(b, ' ')
	}
	*dst = append(b, ' ')
}

// validChainValue reports whether v is a :CHAIN: value: 64 lower-case hex
// digits.
func validChainValue(v []byte) bool {
	if len(v) != chainHexLen {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// link is one level-1 entry of a tools.org file as the chain sees it.
type link struct {
	// chained reports whether the drawer has a :CHAIN: property.
	chained bool
	// scopegate reports whether the drawer has :CALL_ID: and :DECISION:,
	// as every entry this package writes.
	scopegate bool
	callID    string
	headline  string
	seq       uint64
	value     string
	// raw is the entry's text; [at, at+len(value)) is its :CHAIN: value.
	raw []byte
	at  int
	// err is why the chain properties cannot be read.
	err error
}

// sum is the :CHAIN: value the entry would have after prev.
func (l *link) sum(prev string) string {
	hx := chainSum(sha256.New(), l.raw, l.at, len(l.value), prev)
	return string(hx[:])
}

// parseLink reads the drawer of one entry's text (from its headline).
func parseLink(raw []byte) link {
	// Empty lines after an entry are not its text: an Org writer may put one
	// before the heading it appends. No entry written here ends in one.
	for bytes.HasSuffix(raw, []byte("\n\n")) {
		raw = raw[:len(raw)-1]
	}
	l := link{raw: raw}
	line, rest, _ := bytes.Cut(raw, []byte("\n"))
	l.headline = string(bytes.TrimPrefix(line, []byte("* ")))
	off := len(line) + 1
	line, rest, _ = bytes.Cut(rest, []byte("\n"))
	if string(line) != ":PROPERTIES:" {
		return l
	}
	off += len(line) + 1
	var haveSeq, haveDecision bool
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		start := off
		off += len(line) + 1
		if string(line) == ":END:" {
			break
		}
		key, value, ok := bytes.Cut(bytes.TrimPrefix(line, []byte(":")), []byte(":"))
		if !ok || !bytes.HasPrefix(line, []byte(":")) {
			continue
		}
		trimmed := bytes.Trim(value, " \t")
		switch string(key) {
		case "CALL_ID":
			l.callID = unescapeLine(string(trimmed))
		case "DECISION":
			haveDecision = len(trimmed) > 0
		case chainSeqProp:
			if haveSeq && l.err == nil {
				l.err = errors.New("two :CHAIN_SEQ: properties")
			}
			haveSeq = true
			n, err := strconv.ParseUint(string(trimmed), 10, 64)
			if (err != nil || n == 0) && l.err == nil {
				l.err = fmt.Errorf(":CHAIN_SEQ: %q is not a positive number", trimmed)
			}
			l.seq = n
		case chainProp:
			if l.chained && l.err == nil {
				l.err = errors.New("two :CHAIN: properties")
			}
			l.chained = true
			l.value = string(trimmed)
			l.at = start + len(line) - len(bytes.TrimLeft(value, " \t"))
			if !validChainValue(trimmed) && l.err == nil {
				l.err = fmt.Errorf(":CHAIN: %q is not a SHA-256 in hex", trimmed)
			}
		}
	}
	l.scopegate = l.callID != "" && haveDecision
	if l.chained && !haveSeq && l.err == nil {
		l.err = errors.New("no :CHAIN_SEQ: property")
	}
	return l
}

// offsetIn is where sub starts in text, of which it is a subslice
// (text[off:…], as splitEntries hands them out): both share one backing
// array and end at the same capacity, so the capacity sub lacks is its
// offset.
func offsetIn(text, sub []byte) int {
	return cap(text) - cap(sub)
}

// splitEntries calls fn with the text of each level-1 entry of text (a
// "* " line up to the next one or the end) and the number of its headline
// line, counting the first line of text as line first; text before the
// first headline is skipped. It stops when fn returns false.
func splitEntries(text []byte, first int, fn func(line int, raw []byte) bool) {
	lineNo := first
	start, startLine := -1, 0
	for off := 0; off < len(text); {
		if text[off] == '*' && off+1 < len(text) && text[off+1] == ' ' {
			if start >= 0 && !fn(startLine, text[start:off]) {
				return
			}
			start, startLine = off, lineNo
		}
		nl := bytes.IndexByte(text[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
		lineNo++
	}
	if start >= 0 {
		fn(startLine, text[start:])
	}
}
