package policy_test

import "testing"

func TestProgSed(t *testing.T) {
	runProgCases(t, []string{"sed"}, []progCase{
		{cmd: "sed -n 1,5p a.json"},
		{cmd: "sed -i 's/a/b/' a.json"},
		{cmd: "sed -i 's/a/b/' RO/x.json", reason: "path_not_in_scope"},
		{cmd: "sed 's/a/b/e' a.json", reason: "dangerous_argument"},
		{cmd: "sed '1e id' a.json", reason: "dangerous_argument"},
		{cmd: "sed 'w OUT/copy' a.json", reason: "path_not_in_scope"},
		{cmd: "sed 'r .env' a.json", reason: "path_denied"},
		{cmd: "sed -f OUT/script a.json", reason: "path_not_in_scope"},
		{cmd: "sed --sandbox 's/a/b/' a.json"},
	})
}
