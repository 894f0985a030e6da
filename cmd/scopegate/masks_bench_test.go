package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/scopegate/scopegate/gateway"
)

// BenchmarkCLICallProjectSize measures `scopegate call` of `ls -d .` (the
// per-call build) under the coding profile on three projects, in a tmpfs
// (memDir): a small one, one of 150,000 files and one of 1,000,000 entries
// (directories of 50 empty files). warm alternates the three in every iteration, each after
// its first call, and reports each one's median and the differences; the
// same through serve, and through serve with a file made in each project
// before each call; cold-1M is the first call on the big project, its
// index removed before each (the kernel's caches stay warm).
func BenchmarkCLICallProjectSize(b *testing.B) {
	bin := buildLean(b, false)
	root := b.TempDir()
	w := &workspace{root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config"), bin: bin}
	sizes := []struct {
		name    string
		entries int
	}{{"small", 0}, {"150k", 150_000}, {"1M", 1_000_000}}
	ids := map[string]string{}
	projs := map[string]string{}
	mem := memDir(b)
	for _, sz := range sizes {
		proj := filepath.Join(mem, "proj-"+sz.name)
		if err := os.MkdirAll(filepath.Join(proj, "src"), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{".env", "src/main.go", "README.md"} {
			if err := os.WriteFile(filepath.Join(proj, f), []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if sz.entries > 0 {
			scaleTree(b, filepath.Join(proj, "gen"), sz.entries, 50)
		}
		out, err := w.cmd("session", "create", "--name", sz.name, "--profile", "coding", "--project-root", proj).Output()
		var created struct {
			ID string `json:"session_id"`
		}
		if err != nil || json.Unmarshal(out, &created) != nil {
			b.Fatalf("session create: %v %s", err, out)
		}
		ids[sz.name], projs[sz.name] = created.ID, proj
	}
	call := func(b *testing.B, name string) time.Duration {
		c, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": "ls -d ."}, "cwd": projs[name]})
		start := time.Now()
		out, err := w.cmd("call", "--session", ids[name], string(c)).Output()
		d := time.Since(start)
		var res struct {
			Result struct {
				ExitCode    int    `json:"exit_code"`
				Confinement string `json:"confinement"`
			} `json:"result"`
		}
		if err != nil || json.Unmarshal(out, &res) != nil || res.Result.ExitCode != 0 || res.Result.Confinement != "namespaces+landlock" {
			b.Fatalf("call on %s: %v %s", name, err, out)
		}
		return d
	}
	// warm alternates the calls on the three projects; change, when set,
	// is made in a project before each call on it.
	warm := func(b *testing.B, change func(proj string, i int)) {
		for _, sz := range sizes {
			call(b, sz.name)
		}
		times := map[string][]time.Duration{}
		i := 0
		for b.Loop() {
			for _, sz := range sizes {
				if change != nil {
					change(projs[sz.name], i)
				}
				times[sz.name] = append(times[sz.name], call(b, sz.name))
			}
			i++
		}
		median := func(ds []time.Duration) float64 {
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			return float64(ds[len(ds)/2].Microseconds()) / 1000
		}
		m := map[string]float64{}
		for _, sz := range sizes {
			m[sz.name] = median(times[sz.name])
			b.ReportMetric(m[sz.name], "ms-"+sz.name)
		}
		b.ReportMetric(m["150k"]-m["small"], "ms-150k-over-small")
		b.ReportMetric(m["1M"]-m["small"], "ms-1M-over-small")
	}
	b.Run("warm", func(b *testing.B) { warm(b, nil) })
	b.Run("cold-1M", func(b *testing.B) {
		index := filepath.Join(w.sessions, gateway.IndexDirName)
		var total time.Duration
		n := 0
		for b.Loop() {
			if err := os.RemoveAll(index); err != nil {
				b.Fatal(err)
			}
			total += call(b, "1M")
			n++
		}
		b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms-first-call")
	})
	b.Run("serve-warm", func(b *testing.B) {
		full := *w
		full.bin = scopegateBin
		s := startServe(b, &full)
		defer s.cmd.Process.Kill()
		warm(b, nil)
	})
	// A file made in the project's source directory before each call, as
	// an agent's edits do: serve lists that directory again and walks the
	// rest of the tree from memory.
	b.Run("serve-after-change", func(b *testing.B) {
		full := *w
		full.bin = scopegateBin
		s := startServe(b, &full)
		defer s.cmd.Process.Kill()
		warm(b, func(proj string, i int) {
			if err := os.WriteFile(filepath.Join(proj, "src", "edit"+strconv.Itoa(i)+".go"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		})
	})
}
