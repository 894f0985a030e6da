package policy

import "testing"

func TestGitRunFile(t *testing.T) {
	for p, want := range map[string]bool{
		"/p/.git/config": true, "/p/.git/config.worktree": true, "/p/.git/hooks/pre-commit": true,
		"/p/.git/hooks": true, "/p/.git": true, "/p/.git/modules/sub/config": true,
		"/p/.git/modules/a/b/hooks/post-checkout": true, "/p/.git/worktrees/w/config.worktree": true,
		"/p/sub/.git": true, "/p/.git/commondir": true,
		"/p/.git/HEAD": false, "/p/.git/objects/ab/cd": false, "/p/.git/refs/heads/main": false,
		"/p/.gitignore": false, "/p/config": false, "/p/.git/index": false, "/p/.git/COMMIT_EDITMSG": false,
		"/p/.git/modules/sub/HEAD": false, "/p/docs/hooks/x": false,
	} {
		if got := gitRunFile(p) != ""; got != want {
			t.Errorf("gitRunFile(%s) = %q, want run file %v", p, gitRunFile(p), want)
		}
	}
}
