package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The hidden directories of a private view, the helper's side: this file
// runs in the helper (view_helper.go, step 2).

// hideAll replaces each directory of hide with an empty tmpfs that holds
// only the trees of bind, each at its own path with the mounts below it
// (mountFresh), and the links on the way to them; then makes each such
// tmpfs read-only (the trees bound into it keep their own flags). A tree
// that is gone is left out.
func hideAll(hide, bind []string, links []viewLink) error {
	for _, h := range hide {
		if err := mountFresh(h, "0755", pathsWithin(bind, h)); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
			return fmt.Errorf("link %s: %w", l.Path, err)
		}
		if err := unix.Symlink(l.Target, l.Path); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("link %s: %w", l.Path, err)
		}
	}
	for _, h := range hide {
		err := unix.MountSetattr(unix.AT_FDCWD, h, unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("make hidden %s read-only: %w", h, err)
		}
	}
	return nil
}

// pathsWithin returns the paths that lie within dir.
func pathsWithin(paths []string, dir string) []string {
	var out []string
	for _, p := range paths {
		if within(p, dir) {
			out = append(out, p)
		}
	}
	return out
}
