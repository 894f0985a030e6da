package exec

import (
	"encoding/json"
	"path/filepath"
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
