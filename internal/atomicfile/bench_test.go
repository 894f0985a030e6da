package atomicfile_test

import (
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// BenchmarkWrite replaces a record of the journal's size with each
// Options, in a directory of the test's filesystem.
func BenchmarkWrite(b *testing.B) {
	data := make([]byte, 300)
	for _, o := range []struct {
		name string
		opts atomicfile.Options
	}{{"atomic", atomicfile.Options{}}, {"sync", atomicfile.Options{Sync: true}}, {"durable", atomicfile.Options{Durable: true}}} {
		b.Run(o.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "01JD.json")
			b.ReportAllocs()
			for b.Loop() {
				if err := atomicfile.Write(path, data, o.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
