package exec

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
)

func benchRun(b *testing.B, r *Runner, tool string, args any, cwd string) {
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	call := policy.Call{Tool: tool, Args: raw}
	ctx := context.Background()
	b.ReportAllocs()
	before := cpuTime()
	n := 0
	for b.Loop() {
		res, err := r.Run(ctx, call, cwd)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("err %v result %+v", err, res)
		}
		n++
	}
	// CPU time (user and system, this process and its children) per
	// call: on a shared machine, steadier than the wall time.
	b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(n), "cpu-ns/op")
}

// cpuTime is the user and system time of this process and its waited-for
// children so far.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

func BenchmarkShell(b *testing.B) {
	dir := realDir(b)
	// A small worktree with what the standard deny list masks.
	for _, f := range []string{".env", "node_modules/a/b.js", "src/main.go", "src/x/y.go", "docs/readme.md"} {
		writeFile(b, filepath.Join(dir, f), "x", 0o644)
	}
	deny := []string{"**/.git/**", "**/.env", "**/node_modules/**", "**/.ssh/**"}
	host := new(Host)
	for _, bc := range []struct {
		name    string
		confine ConfineMode
		ns      NamespaceMode
		cmd     string
		// net is the scope's network: programs under Landlock alone need
		// the host's to run at all.
		net NetworkPolicy
	}{
		{"builtin_true", ConfineOff, NamespacesOff, "true", hostNetwork},
		{"program_true/unconfined", ConfineOff, NamespacesOff, "/bin/true", hostNetwork},
		{"program_true/landlock", ConfineRequired, NamespacesOff, "/bin/true", hostNetwork},
		// The network's cost: the host's (no network namespace), none
		// (one with loopback alone) and a list (its listeners served).
		{"program_true/namespaces+landlock/network_any", ConfineRequired, NamespacesAuto, "/bin/true", hostNetwork},
		{"program_true/namespaces+landlock/network_none", ConfineRequired, NamespacesAuto, "/bin/true", netScope{mode: "none"}},
		{"program_true/namespaces+landlock/network_list", ConfineRequired, NamespacesAuto, "/bin/true", netScope{mode: "list", hosts: []string{"example.com:443"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.confine == ConfineRequired {
				requireLandlock(b)
			}
			if bc.ns == NamespacesAuto {
				requireNamespaces(b)
			}
			r := newRunner(b, Options{ReadRoots: []string{dir}, WriteRoots: []string{dir}, Confine: bc.confine,
				Namespaces: bc.ns, Deny: deny, Host: host, Network: bc.net})
			if bc.ns == NamespacesAuto && r.Confinement() != ConfinementNamespaces {
				b.Fatalf("confinement %q", r.Confinement())
			}
			benchRun(b, r, policy.ToolShell, policy.ShellArgs{Command: bc.cmd}, dir)
		})
	}
}

// BenchmarkBaselineShTrue is what running `sh -c true` directly costs.
func BenchmarkBaselineShTrue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := osexec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	dir := realDir(b)
	writeFile(b, filepath.Join(dir, "small.txt"), "line one\nline two\nline three\n", 0o644)
	r := newRunner(b, Options{ReadRoots: []string{dir}})
	benchRun(b, r, policy.ToolReadFile, policy.ReadFileArgs{Path: "small.txt"}, dir)
}

// BenchmarkBaselineReadFile is os.ReadFile of the same small file.
func BenchmarkBaselineReadFile(b *testing.B) {
	dir := realDir(b)
	p := filepath.Join(dir, "small.txt")
	writeFile(b, p, "line one\nline two\nline three\n", 0o644)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineCat is `cat FILE` through os/exec.
func BenchmarkBaselineCat(b *testing.B) {
	dir := realDir(b)
	p := filepath.Join(dir, "small.txt")
	writeFile(b, p, "line one\nline two\nline three\n", 0o644)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := osexec.Command("cat", p).Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDenyWalk is the deny walk of a tree of 2,000 directories of
// 25 files (52,000 entries), per 100,000 entries: cold (an empty index:
// every directory listed and each file's link count read); warm (the index
// kept: each directory stat'ed); warm-file (the index read from its cache
// file first, as a process of its own does); and in a process that
// watches directories (serve): watched (nothing changed), watched-changed
// (a file made in one directory before each walk).
func BenchmarkDenyWalk(b *testing.B) {
	dir := sourceTree(b)
	deny := []string{"**/.git/**", "**/.env", "**/node_modules/**", "**/.ssh/**"}
	// Records are kept once their directory is older than racyWindow.
	now := time.Now().Add(2 * racyWindow)
	walk := func(b *testing.B, ix *denyIndex, store string) {
		res, save := ix.walkTrees(context.Background(), []string{dir}, 0, store, now)
		if res[0].err != nil {
			b.Fatal(res[0].err)
		}
		save()
	}
	store := filepath.Join(realDir(b), "index")
	for _, bc := range []struct {
		name string
		// index returns the index a walk uses; fresh ones start empty
		// (or from the cache file, with store).
		index func(b *testing.B) *denyIndex
		// warm walks once first; store keeps the index in the cache
		// file; change makes the nth file in one directory before a walk.
		warm, store, change bool
	}{
		{name: "cold", index: func(*testing.B) *denyIndex { return new(Host).index(deny) }},
		{name: "warm", index: onceIndex(func(*testing.B) *denyIndex { return new(Host).index(deny) }), warm: true},
		{name: "warm-file", index: func(*testing.B) *denyIndex { return new(Host).index(deny) }, warm: true, store: true},
		{name: "watched", index: onceIndex(func(b *testing.B) *denyIndex {
			return (&Host{Dirs: newDirs(b, watch.DirsOptions{})}).index(deny)
		}), warm: true},
		{name: "watched-changed", index: onceIndex(func(b *testing.B) *denyIndex {
			return (&Host{Dirs: newDirs(b, watch.DirsOptions{})}).index(deny)
		}), warm: true, change: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := ""
			if bc.store {
				st = store
			}
			if bc.warm {
				walk(b, bc.index(b), st)
			}
			b.ReportAllocs()
			n, start := 0, time.Now()
			for b.Loop() {
				if bc.change {
					if err := os.WriteFile(filepath.Join(dir, "src", "7", strconv.Itoa(n)), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				walk(b, bc.index(b), st)
				n++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n)*100_000/52_000/1e6, "ms/100k-entries")
		})
	}
}

// onceIndex returns an index func that makes its index on the first call
// and returns the same one after.
func onceIndex(make func(b *testing.B) *denyIndex) func(b *testing.B) *denyIndex {
	var ix *denyIndex
	return func(b *testing.B) *denyIndex {
		if ix == nil {
			ix = make(b)
		}
		return ix
	}
}

// sourceTree makes a tree of 2,000 directories of 25 files (52,000
// entries) below src.
func sourceTree(b *testing.B) string {
	b.Helper()
	dir := realDir(b)
	for d := range 2000 {
		sub := filepath.Join(dir, "src", strconv.Itoa(d/50), strconv.Itoa(d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 25 {
			if err := os.WriteFile(filepath.Join(sub, strconv.Itoa(f)+".go"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}
