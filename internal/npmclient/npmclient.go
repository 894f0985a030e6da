// Package npmclient finds the real npm clients the end-to-end tests drive
// (Claude Code, Codex, the MCP inspector CLI, the MCP SDK), installed into
// e2e/node_modules by scripts/install-test-deps.sh.
package npmclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the e2e directory of the repository: package.json, package-lock.json
// and node_modules of the clients.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "e2e")
}

// Bin returns the path of an installed client's executable (as named in
// node_modules/.bin). A missing client fails the test under CI=true and skips
// it otherwise.
func Bin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		missing(t, name+" (run scripts/install-test-deps.sh)")
	}
	return p
}

// Node returns the path of node, with NODE_PATH-free module resolution from
// Dir (scripts run from there import the installed packages).
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node")
	}
	if _, err := os.Stat(filepath.Join(Dir(), "node_modules")); err != nil {
		missing(t, "e2e/node_modules (run scripts/install-test-deps.sh)")
	}
	return p
}

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required when CI=true", what)
	}
	t.Skipf("%s not installed", what)
}
