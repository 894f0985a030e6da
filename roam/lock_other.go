//go:build !unix

package roam

import (
	"fmt"
	"os"
)

// lockedDir is an open directory. Without flock, concurrent rewrites of one
// node from separate processes are not serialized on this platform.
type lockedDir struct{ f *os.File }

func lockDir(root *os.Root, name string) (*lockedDir, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open directory %q: %w", name, err)
	}
	return &lockedDir{f: f}, nil
}

func (d *lockedDir) unlock() { d.f.Close() }
