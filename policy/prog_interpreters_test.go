package policy_test

import "testing"

func TestProgInterpreters(t *testing.T) {
	runProgCases(t, []string{"python3", "node", "perl", "bash", "sh"}, []progCase{
		{cmd: "python3 src/main.go"},
		{cmd: "python3 -m pytest -q"},
		{cmd: "bash -c 'ls src'", reason: "command_not_allowed"},
		{cmd: "bash -c 'python3 src/main.go'"},
		{cmd: "python3 -c 'import os; os.system(\"id\")'", reason: "dangerous_argument"},
		{cmd: "node -e 'require(\"child_process\").execSync(\"id\")'", reason: "dangerous_argument"},
		{cmd: "perl -e 'system(\"id\")'", reason: "dangerous_argument"},
		{cmd: "python3 < a.json", reason: "dangerous_argument"},
		{cmd: "python3 OUT/x.py", reason: "path_not_in_scope"},
		{cmd: "python3 .env", reason: "path_denied"},
		{cmd: "sh -c 'cat .env'", reason: "command_not_allowed"},
		{cmd: "python3 -m http.server", reason: "path_denied"}, // serves .env
		{cmd: "python3 -m http.server --directory src"},
	})
}
