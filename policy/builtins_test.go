package policy_test

import "testing"

// TestBuiltinAssignedNames: the names builtins assign are checked like
// assignments; bash evaluates a subscript in them.
func TestBuiltinAssignedNames(t *testing.T) {
	runProgCases(t, []string{"sleep", "ls"}, []progCase{
		{cmd: "sleep 0 & wait -n -p 'b[$(id)]'", reason: "dynamic_command"},
		{cmd: "sleep 0 & wait -np 'b[$(id)]'", reason: "dynamic_command"},
		{cmd: "sleep 0 & wait -p PATH; ls", reason: "dangerous_argument"},
		{cmd: "sleep 0 & wait -n -p job; echo $job"},
		{cmd: "sleep 1 & wait $!"},
		{cmd: "sleep 1 & wait"},
	})
}
