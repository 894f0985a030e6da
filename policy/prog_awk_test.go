package policy_test

import "testing"

func TestProgAwk(t *testing.T) {
	runProgCases(t, []string{"awk"}, []progCase{
		{cmd: "awk '{print $1}' a.json"},
		{cmd: "awk -F: '/x/ {n++} END {print n}' a.json"},
		{cmd: `awk 'BEGIN {system("id")}'`, reason: "dangerous_argument"},
		{cmd: `awk '{print | "sh"}' a.json`, reason: "dangerous_argument"},
		{cmd: `awk '{print > "OUT/x"}' a.json`, reason: "path_not_in_scope"},
		{cmd: `awk 'BEGIN {while ((getline l < ".env") > 0) print l}'`, reason: "path_denied"},
		{cmd: `awk --sandbox 'BEGIN {system("id")}'`},
	})
}
