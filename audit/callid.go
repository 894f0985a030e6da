package audit

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
)

// crockford is Crockford's base32 alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewCallID returns a new call id for a call made at now: 26 characters of
// Crockford base32 holding a 48-bit millisecond timestamp and 80 random bits
// (the ULID layout), so ids sort by time as strings and never collide in
// practice.
func NewCallID(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	// The runtime's per-thread ChaCha8 generator, seeded from the kernel's
	// entropy: ids must not collide, not be secret, and a getrandom(2) per
	// call is a system call on every decision.
	binary.BigEndian.PutUint64(b[6:14], rand.Uint64())
	binary.BigEndian.PutUint16(b[14:], uint16(rand.Uint32()))
	return encodeULID(b)
}

// encodeULID writes 128 bits as 26 base32 digits, the first holding the
// top 3 bits.
func encodeULID(b [16]byte) string {
	var out [26]byte
	// 130 bits of room: read the 128 bits right to left, 5 at a time.
	var acc uint32
	bits := 0
	j := 25
	for i := 15; i >= 0; i-- {
		acc |= uint32(b[i]) << bits
		bits += 8
		for bits >= 5 {
			out[j] = crockford[acc&31]
			j--
			acc >>= 5
			bits -= 5
		}
	}
	out[0] = crockford[acc&31]
	return string(out[:])
}
