package exec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParseHelperArgs checks that the helper's argument parser never
// panics and accepts only absolute paths, which re-encode to the same rules.
func FuzzParseHelperArgs(f *testing.F) {
	for _, seed := range []string{
		`{"abi":7,"rw":["/tmp/x"],"ro":["/usr"],"rw_files":["/dev/null"]}`,
		`{"abi":1}`, `{"abi":7,"rw":["rel"]}`, `{"ro":["/a\u0000b"]}`, `null`, `[]`, `{`,
	} {
		f.Add(seed, "/bin/true")
	}
	f.Fuzz(func(t *testing.T, rulesJSON, program string) {
		rl, prog, argv, err := parseHelperArgs([]string{"scopegate", helperArg, rulesJSON, "--", program, "true"})
		if err != nil {
			return
		}
		if !filepath.IsAbs(prog) || len(argv) == 0 {
			t.Fatalf("accepted program %q argv %q", prog, argv)
		}
		for _, list := range [][]string{rl.RW, rl.RWFiles, rl.RO} {
			for _, p := range list {
				if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
					t.Fatalf("accepted path %q", p)
				}
			}
		}
		b, err := json.Marshal(rl)
		if err != nil {
			t.Fatal(err)
		}
		rl2, _, _, err := parseHelperArgs([]string{"scopegate", helperArg, string(b), "--", program})
		if err != nil {
			t.Fatalf("re-encoded rules rejected: %v", err)
		}
		if b2, _ := json.Marshal(rl2); string(b2) != string(b) {
			t.Fatalf("round trip: %s != %s", b2, b)
		}
	})
}

// FuzzScrubEnv checks that no variable of the never-passed list and no
// variable outside the pass list survives scrubbing, whatever the input.
func FuzzScrubEnv(f *testing.F) {
	for _, seed := range []string{"PATH=/bin\nLD_PRELOAD=x\nHOME=/h", "BASH_ENV=x\nLC_ALL=C", "=x\nA\nGIT_DIR=/x", "PATH=a\x00b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, env string) {
		pass := append(DefaultPassEnv(), "GIT_*", "LD_*")
		for _, kv := range scrubEnv(strings.Split(env, "\n"), pass) {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || name == "" || neverPass(name) || !passes(name, pass) || strings.IndexByte(kv, 0) >= 0 {
				t.Fatalf("%q passed", kv)
			}
		}
	})
}

// FuzzGrepLines checks that searching a file as one buffer finds exactly
// the lines that matching the pattern line by line finds (the grep tool's
// scanner), with the same numbers and text, and leaves out the same
// binary files.
func FuzzGrepLines(f *testing.F) {
	for _, seed := range []struct{ pattern, data string }{
		{"Foo", "a\nFoo\nb Foo\n"}, {"^$", "\n\nx\n"}, {"Foo$", "Foo\r\nFoo\n"}, {`\AFoo\z`, "Foo\nFoo\r\n"},
		{"(?i)foo", "FOO\nfOo"}, {"a\nb", "a\nb\n"}, {`x\r`, "x\r\r\nx\r\n"}, {`[^a]+`, "aaa\n\nb\n"},
		{"\ufffd", "\xff\n"}, {`\bfoo\b`, "foo\nafoo\n"}, {"(?s).", "\n"}, {"", ""}, {"(?m)^a$", "a\r\na\n"},
		{`(a|b)c+d`, "acd\nbccd\nad\n"}, {"x{2,}y", "xxy\nxy\n"}, {"F", "F\x00\n"}, {"$", "a"},
	} {
		f.Add(seed.pattern, []byte(seed.data))
	}
	f.Fuzz(func(t *testing.T, pattern string, data []byte) {
		if len(data) >= maxScanLine {
			return
		}
		m, err := newLineMatcher(pattern)
		if err != nil {
			return
		}
		got, gotOK := m.match(nil, data, "f")
		want, wantOK := m.scan(nil, bytes.NewReader(data), "f")
		if gotOK != wantOK || !slices.Equal(got, want) {
			t.Fatalf("pattern %q data %q:\nbuffer %v %q\nlines  %v %q", pattern, data, gotOK, got, wantOK, want)
		}
	})
}

// FuzzParseDirents checks that the getdents(2) parser never panics and
// gives only names a directory can hold.
func FuzzParseDirents(f *testing.F) {
	rec := func(name string, typ byte) []byte {
		n := (direntName + len(name) + 1 + 7) &^ 7
		b := make([]byte, n)
		binary.NativeEndian.PutUint16(b[direntReclen:], uint16(n))
		b[direntType] = typ
		copy(b[direntName:], name)
		return b
	}
	f.Add(slices.Concat(rec(".", 4), rec("..", 4), rec("a.go", 8), rec("dir", 4), rec("l", 10), rec("x", 0)))
	f.Add(rec("name-that-is-long-enough-to-pad", 8))
	f.Add([]byte{})
	f.Add(make([]byte, 19))
	f.Fuzz(func(t *testing.T, buf []byte) {
		ents, unknown := parseDirents(buf, nil, nil)
		for _, e := range ents {
			if e.name == "" || e.name == "." || e.name == ".." || strings.ContainsAny(e.name, "/\x00") {
				t.Fatalf("entry %q", e.name)
			}
		}
		for _, i := range unknown {
			if i < 0 || i >= len(ents) {
				t.Fatalf("unknown index %d of %d", i, len(ents))
			}
		}
	})
}
