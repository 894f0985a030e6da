package gateway

import (
	"github.com/scopegate/scopegate/policy"
)

// Redecide decides a recorded call of a branch again against the scope in
// scopeFile, as enforce mode would: with the branch's protected roots and
// default working directory, nothing recorded, nothing counted (scope
// replay). A scope file that cannot be loaded denies, as it would a call.
func (g *Gateway) Redecide(branchDir, scopeFile string, call policy.Call, ex policy.Execution) policy.Decision {
	b := g.open(Target{BranchDir: branchDir, ScopeFile: scopeFile})
	return g.decideScope(b, call, decideOptions{execution: ex}).d
}

// HardDenials are what no widening of a branch may cover, for scope
// suggest: the protected roots of a decision on the branch (the sessions
// root, the config dir, the branch's own session) and its scope (the
// compiled one, for paths.deny and shell_commands.deny). The scope is nil
// with the error when it cannot be loaded.
func (g *Gateway) HardDenials(branchDir string) (protected []string, scope *policy.Scope, env policy.Env, err error) {
	b := g.open(Target{BranchDir: branchDir})
	env = g.env(b.protected, b.meta().cwd)
	return env.Protected, b.scope.scope, env, b.scope.err
}
