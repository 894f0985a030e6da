package policy_test

import "testing"

func TestProgFind(t *testing.T) {
	runProgCases(t, []string{"find"}, []progCase{
		{cmd: "find . -name '*.go'"},
		{cmd: "find src -type f -newer a.json"},
		{cmd: "find . -exec rm {} \\;", reason: "dangerous_argument"},
		{cmd: "find . -execdir sh -c id \\;", reason: "dangerous_argument"},
		{cmd: "find . -ok cat {} \\;", reason: "dangerous_argument"},
		{cmd: "find . -fprint OUT/list", reason: "path_not_in_scope"},
		{cmd: "find . -delete", reason: "dangerous_argument"},
		{cmd: "find OUT -name x", reason: "path_not_in_scope"},
	})
}
