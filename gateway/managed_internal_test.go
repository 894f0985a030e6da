package gateway

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/policy"
)

// BenchmarkManagedLayer is what one call pays for the managed policy: its
// read (from the loader's cache, after a stat of the file or a look at
// the Watcher's version) and the scope within it (from the gateway's
// cache).
func BenchmarkManagedLayer(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "managed.yml")
	if err := os.WriteFile(path, []byte("paths:\n  deny: [\"**/secrets/**\"]\n  ceiling:\n    read: [\"/**\"]\n    write: [\""+root+"/**\"]\nnetwork: [\".corp.example.com:443\"]\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	own, err := policy.Compile(policy.Document{Paths: policy.PathRules{Read: []string{root + "/**"}}}, policy.Env{})
	if err != nil {
		b.Fatal(err)
	}
	scope := loadedScope{scope: own}
	// The floor of the stat case: the system call alone.
	b.Run("files=stat(2)-alone", func(b *testing.B) {
		var st syscall.Stat_t
		for b.Loop() {
			_ = syscall.Stat(path, &st)
		}
	})
	for _, watched := range []bool{false, true} {
		b.Run(map[bool]string{false: "files=stat", true: "files=watched"}[watched], func(b *testing.B) {
			opts := Options{Managed: &config.ManagedLoader{Path: path}}
			if watched {
				w, err := watch.New()
				if err != nil {
					b.Skipf("no inotify: %v", err)
				}
				defer w.Close()
				opts.Watcher = w
			}
			g := New(opts)
			if l := g.withinManaged(path, scope, g.loadManaged()); l.err != nil || l.scope.Managed() == nil {
				b.Fatalf("%+v", l)
			}
			b.ReportAllocs()
			for b.Loop() {
				g.withinManaged(path, scope, g.loadManaged())
			}
		})
	}
}
