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
// only the trees of bind, each at its own path with the mounts below it,
// and the links on the way to them; then makes each such tmpfs read-only
// (the trees bound into it keep their own flags). The trees are cloned
// before anything covers them. A tree that is gone is left out.
func hideAll(hide, bind []string, links []viewLink) error {
	if len(hide) == 0 {
		return nil
	}
	fds := make([]int, len(bind))
	dirs := make([]bool, len(bind))
	for i, b := range bind {
		fd, err := unix.OpenTree(unix.AT_FDCWD, b, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			fds[i] = -1
			continue
		}
		if err != nil {
			return fmt.Errorf("clone %s: %w", b, err)
		}
		defer unix.Close(fd)
		fds[i] = fd
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("clone %s: %w", b, err)
		}
		dirs[i] = st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	for _, h := range hide {
		if err := unix.Mount("tmpfs", h, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
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
	for i, b := range bind {
		if fds[i] < 0 {
			continue
		}
		if err := mountPoint(b, dirs[i]); err != nil {
			return fmt.Errorf("bind %s back: %w", b, err)
		}
		if err := unix.MoveMount(fds[i], "", unix.AT_FDCWD, b, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("bind %s back: %w", b, err)
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
