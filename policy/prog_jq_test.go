package policy_test

import "testing"

func TestProgJQ(t *testing.T) {
	runProgCases(t, []string{"jq", "gojq", "yq", "cat"}, []progCase{
		{cmd: "jq .a a.json"},
		{cmd: "jq -r '.a' PROJ/a.json"},
		{cmd: "jq -n --arg x OUT/x.json '$x'"},
		{cmd: "jq -n --argjson x 1 '$x'"},
		{cmd: "jq --rawfile t a.json -n '$t'"},
		{cmd: "jq --slurpfile t a.json -n '$t'"},
		{cmd: "jq -f lib.jq a.json", reason: "dangerous_argument"},
		{cmd: "jq --indent 4 . a.json"},
		{cmd: "jq -n '$ARGS' --args a b"},
		{cmd: "cat a.json | jq -c ."},
		{cmd: "gojq .a a.json"},
		{cmd: "yq '.a' a.json"},
		{cmd: "yq -i '.a = 2' a.json"},
		// Files read by options that take a name and a file.
		{cmd: "jq --rawfile t .env -n '$t'", reason: "path_denied"},
		{cmd: "jq --slurpfile t OUT/x.json -n '$t'", reason: "path_not_in_scope"},
		{cmd: "jq -n --rawfile t secrets/key '$t'", reason: "path_denied"},
		{cmd: "gojq --rawfile t .env -n '$t'", reason: "path_denied"},
		{cmd: "jq -f OUT/x.json a.json", reason: "path_not_in_scope"},
		{cmd: "jq . .env", reason: "path_denied"},
		// Modules and data files from the library search path.
		{cmd: "jq -L OUT -n 'import \"x\" as $x; $x'", reason: "path_not_in_scope"},
		{cmd: `jq -n 'import "x" as $x; $x'`, reason: "dangerous_argument"},
		{cmd: `jq -n 'include "m"; f'`, reason: "dangerous_argument"},
		// yq writes in place and loads files from its expressions.
		{cmd: "yq -i '.a = 2' RO/x.json", reason: "path_not_in_scope"},
		{cmd: "yq --inplace '.a = 2' RO/x.json", reason: "path_not_in_scope"},
		{cmd: "jq . RO/x.json"},
		{cmd: `yq -n 'load("OUT/x.json")'`, reason: "dangerous_argument"},
		{cmd: `yq -n 'load_str(".env")'`, reason: "dangerous_argument"},
		{cmd: `yq -s '.name' a.json`, reason: "dangerous_argument"},
	})
}
