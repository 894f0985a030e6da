package gateway

import (
	"path/filepath"
	"strings"

	"github.com/scopegate/scopegate/policy"
)

// selectHints makes the fix hints of a denial pasteable: the selector of the
// branch the call was decided on goes after "scopegate scope expand".
func (g *Gateway) selectHints(d *policy.Decision, branchDir string) {
	if !strings.Contains(d.Message, policy.ExpandCommand+" ") {
		return
	}
	with := policy.ExpandCommand + " " + g.selector(branchDir) + " "
	d.Message = strings.Replace(d.Message, policy.ExpandCommand+" ", with, 1)
	for i := range d.Violations {
		d.Violations[i].Message = strings.Replace(d.Violations[i].Message, policy.ExpandCommand+" ", with, 1)
	}
}

// selector names a branch directory on the command line: --session ID
// --branch NAME when it lies in the sessions root, else --branch-dir DIR.
func (g *Gateway) selector(branchDir string) string {
	branches := filepath.Dir(branchDir)
	session := filepath.Dir(branches)
	if g.opts.SessionsDir != "" && filepath.Base(branches) == "branches" && filepath.Dir(session) == filepath.Clean(g.opts.SessionsDir) {
		return "--session " + policy.ShellQuote(filepath.Base(session)) + " --branch " + policy.ShellQuote(filepath.Base(branchDir))
	}
	return "--branch-dir " + policy.ShellQuote(branchDir)
}
