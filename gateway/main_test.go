package gateway_test

import (
	"os"
	"testing"

	"github.com/scopegate/scopegate/exec"
)

func TestMain(m *testing.M) {
	// The test binary is its own Landlock helper, so that tests can run
	// shell calls confined, as scopegate runs them.
	if exec.IsHelper(os.Args) {
		os.Exit(exec.RunHelper(os.Args))
	}
	os.Exit(m.Run())
}
