package profiles

import (
	"errors"
	"testing"
)

func TestParseGptelPreset(t *testing.T) {
	for in, want := range map[string]string{
		"---\ndescription: x\nscope_profile: research\n---\nbody":                         "research",
		"---\r\nbackend: Claude\r\nscope_profile: coding\r\n---\r\n":                      "coding",
		"---\ntools:\n  - read_file\n---\nno profile":                                     "",
		"no front matter\nscope_profile: coding\n":                                        "",
		"---\nscope_profile: coding\ndescription: |\n  a --- b\n---\n# --- in the body\n": "coding",
	} {
		got, err := ParseGptelPreset([]byte(in))
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"---\nscope_profile: [x\n---\n", "---\nscope_profile: ../etc\n---\n", "---\nscope_profile: coding\n"} {
		if got, err := ParseGptelPreset([]byte(in)); err == nil {
			t.Errorf("%q: %q, no error", in, got)
		}
	}
	if _, err := ParseGptelPreset([]byte("---\nscope_profile: a/b\n---\n")); !errors.Is(err, ErrInvalidName) {
		t.Errorf("a profile name with a slash: %v", err)
	}
}

func FuzzParseGptelPreset(f *testing.F) {
	f.Add([]byte("---\ndescription: x\nscope_profile: research\n---\nbody"))
	f.Add([]byte("---\nscope_profile: [x\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := ParseGptelPreset(data)
		if err == nil && name != "" && !ValidName(name) {
			t.Fatalf("%q: invalid name %q accepted", data, name)
		}
	})
}
