package gateway

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A request never gets an identity older than the file it arrived after. A
// writer replaces the file again and again, each version one byte longer
// than the last, while readers stat it through the group: every reader must
// see at least the version that was in place when its request started.
func TestStatGroupNeverStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scope.yml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var g statGroup
	var done atomic.Bool
	var inPlace atomic.Int64 // size of the version in place
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := 1; i <= 300; i++ {
			tmp := filepath.Join(dir, "tmp")
			if err := os.WriteFile(tmp, bytes.Repeat([]byte{'x'}, i), 0o600); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
				return
			}
			inPlace.Store(int64(i))
		}
	}()
	var checks atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				want := inPlace.Load()
				got, err := g.stat(path)
				if err != nil {
					t.Error(err)
					return
				}
				if int64(got.size) < want {
					t.Errorf("stat gave version %d, version %d was in place before the request", got.size, want)
					return
				}
				checks.Add(1)
			}
		}()
	}
	wg.Wait()
	if checks.Load() == 0 {
		t.Fatal("no stat was checked")
	}
}

func TestStatGroupMissingFile(t *testing.T) {
	var g statGroup
	if _, err := g.stat(filepath.Join(t.TempDir(), "nope")); !os.IsNotExist(err) {
		t.Fatalf("got %v, want not-exist", err)
	}
}
