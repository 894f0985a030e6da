package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
