package policy_test

import "testing"

func TestProgWrappers(t *testing.T) {
	runProgCases(t, []string{"env", "timeout", "xargs", "nice", "cat", "ls"}, []progCase{
		{cmd: "timeout 5 ls"},
		{cmd: "env FOO=1 ls"},
		{cmd: "nice -n 10 cat a.json"},
		{cmd: "timeout 5 rm -rf .", reason: "command_not_allowed"},
		{cmd: "env -S 'rm -rf .'", reason: "command_not_allowed"},
		{cmd: "env PATH=OUT ls", reason: "dangerous_argument"},
		{cmd: "xargs rm < a.json", reason: "command_not_allowed"},
		{cmd: "nice cat .env", reason: "path_denied"},
	})
}
