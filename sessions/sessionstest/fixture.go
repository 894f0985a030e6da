// Package sessionstest builds large sessions roots for tests and
// benchmarks, quickly (plain writes, no fsync).
package sessionstest

import (
	"fmt"
	"os"
	"path/filepath"
)

// SessionID is the id of the i-th fixture session.
func SessionID(i int) string { return fmt.Sprintf("s-%05d", i) }

// MakeFixture writes n sessions s-00000… under root, each with a main
// branch laid out as sessions.Store.Create would.
func MakeFixture(root string, n int) error {
	files := map[string]string{
		"session.md":          "",
		"scope.yml":           "paths:\n  read: [\"/srv/**\"]\n  deny: [\"**/.git/**\"]\nshell_commands:\n  allow: [ls, git]\n",
		"branch-metadata.yml": "created: 2026-11-22T10:30:05Z\n",
	}
	for i := range n {
		id := SessionID(i)
		dir := filepath.Join(root, id)
		branch := filepath.Join(dir, "branches", "main")
		if err := os.MkdirAll(branch, 0o700); err != nil {
			return fmt.Errorf("make fixture: %w", err)
		}
		md := fmt.Sprintf("session_id: %s\ncreated: 2026-11-22T10:30:05Z\nupdated: 2026-11-22T10:30:05Z\npreset: executor\n", id)
		if err := os.WriteFile(filepath.Join(branch, "metadata.yml"), []byte(md), 0o600); err != nil {
			return fmt.Errorf("make fixture: %w", err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(branch, name), []byte(data), 0o600); err != nil {
				return fmt.Errorf("make fixture: %w", err)
			}
		}
		if err := os.Symlink(filepath.Join("branches", "main"), filepath.Join(dir, "current")); err != nil {
			return fmt.Errorf("make fixture: %w", err)
		}
	}
	return nil
}
