package policy

import "testing"

// Every byte of a cluster of short options is spelled as "-" and the byte.
func TestShortOption(t *testing.T) {
	for b := 0; b < 256; b++ {
		s := "-x" + string([]byte{byte(b)})
		if got, want := shortOption(s, 2), "-"+s[2:3]; got != want {
			t.Fatalf("%d: %q != %q", b, got, want)
		}
	}
}
