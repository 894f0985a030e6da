// Package roam creates, reads, tags and links org-roam nodes on disk.
//
// A node is one Org file below an org-roam directory whose file-level property
// drawer carries an :ID:. Files are written the way org-roam itself writes them
// (<YYYYMMDDHHMMSS>-<slug>.org, a property drawer, #+title and #+filetags), so
// Emacs picks them up with org-roam-db-sync.
//
// Every file access goes through an [os.Root] opened at the directory, so no
// subdirectory, symlink or file name can reach outside it. Whether a call may
// touch a node at all is decided by the policy package before this package runs.
package roam
