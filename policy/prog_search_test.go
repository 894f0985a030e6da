package policy_test

import "testing"

func TestProgSearch(t *testing.T) {
	runProgCases(t, []string{"grep", "rg", "fd"}, []progCase{
		{cmd: "grep -n TODO src/main.go"},
		{cmd: "grep -r TODO src"},
		{cmd: "rg TODO src"},
		{cmd: "grep -r TOKEN .", reason: "path_denied"},
		{cmd: "grep -R TOKEN", reason: "path_denied"},
		{cmd: "rg --hidden TOKEN", reason: "path_denied"},
		{cmd: "rg --pre sh TODO", reason: "dangerous_argument"},
		{cmd: "fd -x rm", reason: "dangerous_argument"},
		{cmd: "grep TOKEN .env", reason: "path_denied"},
		{cmd: "grep -f OUT/patterns a.json", reason: "path_not_in_scope"},
	})
}
