package policy_test

import "testing"

func TestProgGit(t *testing.T) {
	runProgCases(t, []string{"git"}, []progCase{
		{cmd: "git status"},
		{cmd: "git log --oneline -n 5"},
		{cmd: "git diff HEAD~1 -- src/main.go"},
		{cmd: "git -c color.ui=always log"},
		{cmd: "git commit -m 'fix: x'"},
		{cmd: "git -c core.pager='sh -c id' log", reason: "dangerous_argument"},
		{cmd: "git -c core.sshCommand=evil fetch", reason: "dangerous_argument"},
		{cmd: "git --exec-path=OUT status", reason: "dangerous_argument"},
		{cmd: "git rebase -x 'make test' main", reason: "dangerous_argument"},
		{cmd: "git grep -O vim TODO", reason: "dangerous_argument"},
		{cmd: "git submodule foreach 'rm -rf .'", reason: "dangerous_argument"},
		{cmd: "git config core.fsmonitor 'sh x'", reason: "dangerous_argument"},
		{cmd: "git fetch --upload-pack='sh -c id' origin", reason: "dangerous_argument"},
		{cmd: "git show HEAD:.env", reason: "path_denied"},
		{cmd: "git grep --no-index TOKEN", reason: "path_denied"},
		{cmd: "git -C OUT status", reason: "path_not_in_scope"},
		{cmd: "git bundle verify OUT/x.json", reason: "path_not_in_scope"},
		{cmd: "git bundle list-heads .env", reason: "path_denied"},
		{cmd: "git bundle verify a.json"},
	})
}
