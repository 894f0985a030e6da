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
		{cmd: "perl -Mstrict -MList::Util=sum,max -mPOSIX -M-warnings src/main.go"},
		{cmd: "perl -d:Trace src/main.go"},
		{cmd: "perl -Isrc src/main.go"},
		{cmd: "perl -M'POSIX;system(\"id\")' src/main.go", reason: "dangerous_argument"},
		{cmd: "perl -m'POSIX;system(1)' src/main.go", reason: "dangerous_argument"},
		{cmd: "perl '-d:Peek;BEGIN{system(1)}' src/main.go", reason: "dangerous_argument"},
		{cmd: "perl -IOUT src/main.go", reason: "path_not_in_scope"},
	})
}
