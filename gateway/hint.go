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
		return "--session " + shellQuote(filepath.Base(session)) + " --branch " + shellQuote(filepath.Base(branchDir))
	}
	return "--branch-dir " + shellQuote(branchDir)
}

// shellQuote quotes s for a shell if it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
