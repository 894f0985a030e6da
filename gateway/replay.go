package gateway

import (
	"path/filepath"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// Redecide decides a recorded call of a branch again against the scope in
// scopeFile, as enforce mode would: with the branch's protected roots and
// default working directory, nothing recorded, nothing counted (scope
// replay). A scope file that cannot be loaded denies, as it would a call.
func (g *Gateway) Redecide(branchDir, scopeFile string, call policy.Call, ex policy.Execution) policy.Decision {
	g.syncFiles()
	protected := g.protectedNow()
	cwd := ""
	if call.Cwd == "" {
		cwd = g.branchCwd(branchDir)
	}
	extra := append([]string{scopeFile}, unprotectedSession(protected, branchDir)...)
	env := g.env(protected, cwd, extra...)
	env.Execution = ex
	sc, err := g.loadScope(scopeFile, env)
	var d policy.Decision
	if err != nil {
		d = DenyFor(call.Tool, err)
	} else {
		if ex == policy.ExecutionConfined {
			env.ReadOnlyRepo = g.expectReadOnlyRepo(sc, env, branchDir)
		}
		d = sc.Decide(call, env)
	}
	if !policy.KnownTool(d.Tool) {
		d.Tool = call.Tool
	}
	d.Execution = ex
	return d
}

// HardDenials are what no widening of a branch may cover, for scope
// suggest: the protected roots of a decision on the branch (the sessions
// root, the config dir, the branch's own session) and its scope (the
// compiled one, for paths.deny and shell_commands.deny). The scope is nil
// with the error when it cannot be loaded.
func (g *Gateway) HardDenials(branchDir string) (protected []string, scope *policy.Scope, env policy.Env, err error) {
	g.syncFiles()
	p := g.protectedNow()
	env = g.env(p, g.branchCwd(branchDir), unprotectedSession(p, branchDir)...)
	scope, err = g.loadScope(filepath.Join(branchDir, sessions.ScopeFile), env)
	return env.Protected, scope, env, err
}
