package policy_test

import "testing"

func TestProgFileUtils(t *testing.T) {
	runProgCases(t, []string{"rm", "cp", "mv", "ln", "dd", "install", "split", "tee"}, []progCase{
		{cmd: "rm -f a.json"},
		{cmd: "cp a.json b.json"},
		{cmd: "cp -r src src2"},
		{cmd: "mv a.json src/"},
		{cmd: "rm RO/x.json", reason: "path_not_in_scope"},
		{cmd: "cp RO/x.json OUT/", reason: "path_not_in_scope"},
		{cmd: "cp -r . copy", reason: "path_denied"},
		{cmd: "cp .env copy", reason: "path_denied"},
		{cmd: "ln -s .env link", reason: "path_denied"},
		{cmd: "dd if=.env of=x", reason: "path_denied"},
		{cmd: "dd if=a.json of=OUT/x", reason: "path_not_in_scope"},
		{cmd: "install --strip-program=sh -s a.json b", reason: "dangerous_argument"},
		{cmd: "split --filter='sh -c id' a.json", reason: "dangerous_argument"},
		{cmd: "tee OUT/x < a.json", reason: "path_not_in_scope"},
	})
}
