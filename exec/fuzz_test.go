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

// FuzzDecodeIndex checks that a deny index file, whatever its bytes, never
// makes the decoder panic, yields only paths below its root, and that what
// it accepts encodes, by its records' paths as through the file, to a file
// that decodes to the same index.
func FuzzDecodeIndex(f *testing.F) {
	dirs := map[string]*dirRecord{
		"/p":         {key: dirKey{dev: 1, ino: 2, mtime: 3, ctime: -4}, masked: []string{".env"}, subdirs: []string{"a", "b", "d"}, git: true},
		"/p/a":       {key: dirKey{ino: 5}, subdirs: []string{"c"}},
		"/p/a/c":     {self: true},
		"/p/b":       {masked: []string{"x.pem", "y"}, sockets: []string{"s"}},
		"/elsewhere": {masked: []string{"z"}},
	}
	good := encodeIndex("/p", "id", dirs, fileRef{})
	if _, _, file, err := decodeIndex(good); err != nil || len(file.records("/p", nil)) != 4 {
		f.Fatalf("the seed index does not decode to its four records: %v", err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(encodeIndex("/", "", map[string]*dirRecord{"/": {subdirs: []string{"home"}}, "/home": {masked: []string{".ssh"}}}, fileRef{}))
	f.Add(encodeIndex("/p", "id", nil, fileRef{}))
	f.Add([]byte(indexMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _, _ = decodeIndex(data)
		// The checksum made right, so that the fields are what is tried.
		if len(data) >= 4 {
			data = binary.LittleEndian.AppendUint32(data[:len(data)-4:len(data)-4], crc32c(data[:len(data)-4]))
		}
		root, id, file, err := decodeIndex(data)
		if err != nil {
			return
		}
		m := indexByPath(t, root, file)
		again := encodeIndex(root, id, m, fileRef{})
		if through := encodeIndex(root, id, nil, file.top()); !bytes.Equal(through, again) {
			t.Fatal("the records through the file encode otherwise than by path")
		}
		root2, id2, file2, err := decodeIndex(again)
		if err != nil || root2 != root || id2 != id {
			t.Fatalf("re-encoded index rejected: %v", err)
		}
		m2 := indexByPath(t, root, file2)
		if len(m2) != len(m) {
			t.Fatalf("re-encoded index: %d records, want %d", len(m2), len(m))
		}
		if third := encodeIndex(root, id, m2, fileRef{}); !bytes.Equal(third, again) {
			t.Fatal("encoding is not stable")
		}
	})
}

// indexByPath returns the records of a cache file by path, checking that
// each lies below root, once, and that every name is valid.
func indexByPath(t *testing.T, root string, file *indexFile) map[string]*dirRecord {
	t.Helper()
	m := map[string]*dirRecord{}
	for _, r := range file.records(root, nil) {
		if !within(r.path, root) || filepath.Clean(r.path) != r.path {
			t.Fatalf("record %q outside root %q", r.path, root)
		}
		if _, ok := m[r.path]; ok {
			t.Fatalf("record %q twice", r.path)
		}
		for _, n := range slices.Concat(r.rec.masked, r.rec.subdirs, r.rec.sockets) {
			if !validName(n) {
				t.Fatalf("name %q accepted", n)
			}
		}
		m[r.path] = r.rec
	}
	return m
}
