package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// progCase is one command of a program's tests and what the decision must
// be: allowed, or denied with a violation of reason (which decides the
// denial unless a hard violation does).
type progCase struct {
	cmd    string
	reason string // "" means allowed
}

// runProgCases decides each case in a project where the scope reads and
// writes proj, reads ro, and denies **/.env and **/secrets/**, with
// network: any (the hosts of commands are tested with runNetCases); allow is
// shell_commands.allow. In cmd, PROJ, RO and OUT are replaced by the
// project, the read-only directory and a directory outside the scope.
func runProgCases(t *testing.T, allow []string, cases []progCase) {
	t.Helper()
	runNetCases(t, policy.NetworkRules{Mode: policy.NetworkAny}, allow, cases)
}

// runNetCases is runProgCases with the network section net.
func runNetCases(t *testing.T, net policy.NetworkRules, allow []string, cases []progCase) {
	t.Helper()
	root := t.TempDir()
	proj, out, ro := filepath.Join(root, "proj"), filepath.Join(root, "out"), filepath.Join(root, "ro")
	for path, content := range map[string]string{
		"proj/a.json": `{"a":1}`, "proj/lib.jq": `def f: .;`, "proj/.env": "TOKEN=x", "proj/secrets/key": "k",
		"proj/src/main.go": "package main", "out/x.json": "{}", "ro/x.json": "{}",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := policy.Compile(policy.Document{
		Paths:   policy.PathRules{Read: []string{proj + "/**", ro + "/**"}, Write: []string{proj + "/**"}, Deny: []string{"**/.env", "**/secrets/**"}},
		Shell:   policy.ShellRules{Allow: allow},
		Network: net,
	}, policy.Env{Home: filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		cmd := strings.NewReplacer("PROJ", proj, "OUT", out, "RO", ro).Replace(tc.cmd)
		args, _ := json.Marshal(policy.ShellArgs{Command: cmd})
		d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: proj}, policy.Env{Home: filepath.Join(root, "home")})
		switch {
		case tc.reason == "" && !d.Allowed:
			t.Errorf("%s: denied (%s: %s), want allowed", tc.cmd, d.Reason, d.Message)
		case tc.reason != "" && d.Allowed:
			t.Errorf("%s: allowed, want denied (%s)", tc.cmd, tc.reason)
		case tc.reason != "" && !hasViolation(d, policy.Reason(tc.reason)):
			t.Errorf("%s: denied for %s (%s), want %s", tc.cmd, d.Reason, d.Message, tc.reason)
		case !d.Allowed && d.Reason != policy.Deciding(d.Violations).Reason:
			t.Errorf("%s: denied for %s, but its deciding violation is %s", tc.cmd, d.Reason, policy.Deciding(d.Violations).Reason)
		}
	}
}

// hasViolation reports whether d is denied for reason: its own reason, or
// one of its violations where a hard one decides it.
func hasViolation(d policy.Decision, reason policy.Reason) bool {
	if d.Reason == reason {
		return true
	}
	for _, v := range d.Violations {
		if v.Reason == reason {
			return !d.Widenable()
		}
	}
	return false
}
