package netproxy

import (
	"errors"
	"fmt"
)

// recordHandshake is the TLS record type of a handshake message.
const recordHandshake = 0x16

// errShortHello is a ClientHello cut before its end.
var errShortHello = errors.New("truncated ClientHello")

// helloServerName returns the host name of the server_name extension of a TLS
// ClientHello handshake message (its 4-byte header included), or "" when
// it has none. Anything that is not a well-formed ClientHello is an error.
func helloServerName(msg []byte) (string, error) {
	r := reader{b: msg}
	if t := r.u8(); t != 1 {
		if r.bad {
			return "", errShortHello
		}
		return "", fmt.Errorf("handshake message type %d is not a ClientHello", t)
	}
	body := r.sub(3)
	if r.bad {
		return "", errShortHello
	}
	body.skip(2 + 32)    // legacy_version, random
	body.skip(body.n(1)) // legacy_session_id
	body.skip(body.n(2)) // cipher_suites
	body.skip(body.n(1)) // legacy_compression_methods
	if body.bad {
		return "", errShortHello
	}
	if len(body.b) == 0 {
		return "", nil // no extensions
	}
	exts := body.sub(2)
	if body.bad || len(body.b) != 0 {
		return "", errors.New("malformed ClientHello extensions")
	}
	name := ""
	seen := false
	for len(exts.b) > 0 {
		typ := exts.u16()
		data := exts.sub(2)
		if exts.bad {
			return "", errors.New("malformed ClientHello extension")
		}
		if typ != 0 {
			continue
		}
		if seen {
			return "", errors.New("two server_name extensions")
		}
		seen = true
		list := data.sub(2)
		if data.bad || len(data.b) != 0 {
			return "", errors.New("malformed server_name extension")
		}
		for len(list.b) > 0 {
			kind := list.u8()
			n := list.sub(2)
			if list.bad {
				return "", errors.New("malformed server_name extension")
			}
			if kind != 0 {
				continue
			}
			if name != "" {
				return "", errors.New("two host names in server_name")
			}
			name = string(n.b)
			if !validHost(normHost(name)) {
				return "", fmt.Errorf("server name %q is not a host name", name)
			}
		}
	}
	return name, nil
}

// reader reads big-endian fields of a TLS message; a read past the end
// sets bad and yields zeros.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) skip(n int) { r.take(n) }

// n reads a length of size bytes.
func (r *reader) n(size int) int {
	v := 0
	for _, c := range r.take(size) {
		v = v<<8 | int(c)
	}
	return v
}

func (r *reader) u8() int  { return r.n(1) }
func (r *reader) u16() int { return r.n(2) }

// sub reads a length of size bytes and returns the bytes it covers.
func (r *reader) sub(size int) reader {
	b := r.take(r.n(size))
	return reader{b: b, bad: r.bad}
}
