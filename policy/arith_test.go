package policy_test

import "testing"

// TestArithText: bash expands an arithmetic operand with quotes or
// substitutions and evaluates the text again, where an array subscript
// runs command substitutions.
func TestArithText(t *testing.T) {
	runProgCases(t, []string{"cat", "wc", "git", "ls", "nproc"}, []progCase{
		{cmd: "let 'a[$(id)]'", reason: "dynamic_command"},
		{cmd: `let "x=a[\$(id)]+1"`, reason: "dynamic_command"},
		{cmd: "(( 'a[$(id)]' ))", reason: "dynamic_command"},
		{cmd: "[[ 1 -eq 'a[$(id)]' ]]", reason: "dynamic_command"},
		{cmd: "for (( i='a[$(id)]'; 0; )); do :; done", reason: "dynamic_command"},
		{cmd: "x=(1); echo ${x:'a[$(id)]'}", reason: "dynamic_command"},
		{cmd: `read x < a.json; let "$x"`, reason: "dynamic_command"},
		{cmd: `read x < a.json; (( "$x" ))`, reason: "dynamic_command"},
		{cmd: "echo $(( $(cat a.json lib.jq) ))", reason: "dynamic_command"},
		{cmd: "echo $(( $(git log -1 --format=%s) ))", reason: "dynamic_command"},
		{cmd: `x='"$x"'; (( "$x" ))`, reason: "dynamic_command"},
		{cmd: "builtin let 'a[$(id)]'", reason: "dynamic_command"},
		{cmd: "command let 'x=a[$(id)]'", reason: "dynamic_command"},
		{cmd: "let 'x=1+2'"},
		{cmd: "builtin let x=1 'y=x*2'"},
		{cmd: `i=0; let "i=$i+1"`},
		{cmd: "echo $(( '1' + 2 ))"},
		{cmd: `echo "$(( $(wc -l < a.json) + 1 ))"`},
		{cmd: "echo $(( $(ls | wc -l) * 2 ))"},
		{cmd: "echo $(( $(nproc) / 2 ))"},
		{cmd: "echo $(( $(git rev-list --count HEAD) + 1 ))"},
	})
}
