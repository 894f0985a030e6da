package policy_test

import "testing"

func TestProgEditorsReaders(t *testing.T) {
	runProgCases(t, []string{"less", "vim", "cat", "ls", "sort", "head"}, []progCase{
		{cmd: "cat a.json"},
		{cmd: "ls -la src"},
		{cmd: "ls -d OUT"},
		{cmd: "head -n 5 a.json"},
		{cmd: "sort a.json"},
		{cmd: "cat .env", reason: "path_denied"},
		{cmd: "cat OUT/x.json", reason: "path_not_in_scope"},
		{cmd: "ls OUT", reason: "path_not_in_scope"},
		{cmd: "sort -o OUT/x a.json", reason: "path_not_in_scope"},
		{cmd: "sort --compress-program=sh a.json", reason: "dangerous_argument"},
		{cmd: "less '+!id' a.json", reason: "dangerous_argument"},
		{cmd: "vim -c ':!id' a.json", reason: "dangerous_argument"},
		{cmd: "vim '+!id' a.json", reason: "dangerous_argument"},
		{cmd: "less -o OUT/log a.json", reason: "path_not_in_scope"},
	})
}
