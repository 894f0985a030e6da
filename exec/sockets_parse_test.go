package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// procNetUnixSample is /proc/net/unix as Linux writes it: a header, then
// "%pK: %08X %08X %08X %04X %02X %5lu" and " path" for a bound socket.
const procNetUnixSample = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 23816 /run/systemd/journal/stdout
0000000000000000: 00000003 00000000 00000000 0001 03   640
0000000000000000: 00000002 00000000 00010000 0001 01 18201 @/tmp/.X11-unix/X0
0000000000000000: 00000002 00000000 00010000 0005 01 19304 /run/user/1000/bus
ffff8d1c4a3b2c00: 00000002 00000000 00000000 0002 01  9021 /dev/log
0000000000000000: 00000002 00000000 00010000 0001 01 40111 /home/u/a dir/with space.sock
0000000000000000: 00000002 00000000 00010000 0001 01 40112 relative.sock
garbage /etc/passwd
0000000000000000 00000002 00000000 00010000 0001 01 40113 /no/colon
0000000000000000: 00000002 00000000 00010000 0001 01 /too/few
`

func TestParseProcNetUnix(t *testing.T) {
	got := parseProcNetUnix([]byte(procNetUnixSample))
	want := []string{"/run/systemd/journal/stdout", "/run/user/1000/bus", "/dev/log", "/home/u/a dir/with space.sock"}
	if !slices.Equal(got, want) {
		t.Errorf("parseProcNetUnix = %q, want %q", got, want)
	}
}

// FuzzParseProcNetUnix checks the parser of /proc/net/unix: never a
// panic, every path absolute, one line each; and a line as Linux writes
// it gives back its path.
func FuzzParseProcNetUnix(f *testing.F) {
	f.Add([]byte(procNetUnixSample), "/run/docker.sock", uint64(12))
	f.Add([]byte("Num RefCount\n0: 0 0 0 0 0 0 /x\n"), "/a b", uint64(123456))
	f.Add([]byte(""), "@abstract", uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, path string, inode uint64) {
		lines := strings.Count(string(data), "\n") + 1
		got := parseProcNetUnix(data)
		if len(got) > lines {
			t.Fatalf("%d paths from %d lines", len(got), lines)
		}
		for _, p := range got {
			if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\n\x00") {
				t.Fatalf("path %q", p)
			}
		}
		line := fmt.Sprintf("0000000000000000: 00000002 00000000 00010000 0001 01 %5d %s\n", inode, path)
		got = parseProcNetUnix([]byte(line))
		if strings.HasPrefix(path, "/") && !strings.ContainsAny(path, "\n\x00") && (len(got) != 1 || got[0] != path) {
			t.Fatalf("line %q: %q", line, got)
		}
	})
}

// TestEtcLinksBelow checks which files links in /etc lead to below the
// fresh directories: regular files only, through chains of links.
func TestEtcLinksBelow(t *testing.T) {
	root := realDir(t)
	etc, run := filepath.Join(root, "etc"), filepath.Join(root, "run")
	resolv := filepath.Join(run, "systemd", "resolve", "stub-resolv.conf")
	writeFile(t, resolv, "nameserver 127.0.0.53\n", 0o644)
	writeFile(t, filepath.Join(root, "usr", "zone"), "", 0o644)
	if err := os.MkdirAll(filepath.Join(run, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"resolv.conf": "../run/systemd/resolve/stub-resolv.conf",
		"chain":       "resolv.conf",
		"localtime":   "../usr/zone",
		"adir":        "../run/dir",
		"dangling":    "../run/missing",
	} {
		if err := os.MkdirAll(etc, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(etc, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(etc, "hosts"), "", 0o644)
	if got := new(Host).etcLinksBelow(etc, []string{run}); !slices.Equal(got, []string{resolv}) {
		t.Errorf("etcLinksBelow = %q, want %q", got, resolv)
	}
}
