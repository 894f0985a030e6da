package policy_test

import "testing"

func TestProgEditorsReaders(t *testing.T) {
	runProgCases(t, []string{"less", "vim", "cat", "ls", "sort", "head", "man"}, []progCase{
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
		{cmd: "man ls"},
		{cmd: "man -k printf"},
		{cmd: "man 5 crontab"},
		{cmd: "man -P cat ls"},
		{cmd: "man --pager=less ls"},
		{cmd: "man -P 'cat;id' ls", reason: "dangerous_argument"},
		{cmd: "man -P '' ls", reason: "dangerous_argument"},
		{cmd: "man --pager=id ls", reason: "dangerous_argument"},
		{cmd: "man -Pid ls", reason: "dangerous_argument"},
		{cmd: "man --pag id ls", reason: "dangerous_argument"},
		{cmd: "man -H ls", reason: "dangerous_argument"},
		{cmd: "man --html=id ls", reason: "dangerous_argument"},
		{cmd: "man -C a.json ls", reason: "dangerous_argument"},
		{cmd: "man -l OUT/x.json", reason: "path_not_in_scope"},
	})
}
