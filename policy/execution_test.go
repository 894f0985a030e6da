package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// A recursive reader below denied files: refused for external execution,
// left to the run-time check before a confined call starts, and then
// decided by what the program's view masks (with whether it follows
// links).
func TestExecutionModeRecursiveReaders(t *testing.T) {
	proj := t.TempDir()
	for _, f := range []string{"src/a.go", ".env"} {
		p := filepath.Join(proj, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}, Deny: []string{"**/.env"}},
		Shell: policy.ShellRules{Allow: []string{"grep", "rg", "cp", "tar", "zip"}},
	}, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(cmd string, env policy.Env) policy.Decision {
		args, _ := json.Marshal(policy.ShellArgs{Command: cmd})
		return sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: proj}, env)
	}
	masksAll := func(follow *bool) func(string, bool) bool {
		return func(dir string, f bool) bool { *follow = f; return true }
	}
	for _, tc := range []struct {
		cmd    string
		follow bool
	}{
		{"grep -r TODO .", false}, {"grep -R TODO .", true}, {"grep -nR TODO .", true}, {"grep --dereference-recursive TODO .", true},
		{"rg -uuu TODO .", false}, {"rg -L -uuu TODO .", true}, {"rg --follow -uuu TODO .", true},
		{"cp -r . dest", false}, {"cp -rL . dest", true}, {"cp -a . dest", false},
		{"tar -cf dest.tar .", false}, {"tar -chf dest.tar .", true}, {"tar --dereference -cf dest.tar .", true},
		{"zip -r dest.zip .", true}, {"zip -ry dest.zip .", false},
	} {
		external := decide(tc.cmd, policy.Env{})
		if external.Allowed || external.Reason != policy.ReasonPathDenied || external.Execution != policy.ExecutionExternal {
			t.Errorf("%s, external: %+v; want path_denied", tc.cmd, external)
		}
		before := decide(tc.cmd, policy.Env{Execution: policy.ExecutionConfined})
		if !before.Allowed || before.Execution != policy.ExecutionConfined {
			t.Errorf("%s, confined before the run: %+v; want allowed", tc.cmd, before)
		}
		var follow bool
		if d := decide(tc.cmd, policy.Env{Execution: policy.ExecutionConfined, Masked: masksAll(&follow)}); !d.Allowed {
			t.Errorf("%s, confined in a view that masks the tree: %+v; want allowed", tc.cmd, d)
		} else if follow != tc.follow {
			t.Errorf("%s: follow %v, want %v", tc.cmd, follow, tc.follow)
		}
		unmasked := decide(tc.cmd, policy.Env{Execution: policy.ExecutionConfined, Masked: func(string, bool) bool { return false }})
		if unmasked.Allowed || unmasked.Reason != policy.ReasonPathDenied {
			t.Errorf("%s, confined, nothing masked: %+v; want path_denied", tc.cmd, unmasked)
		}
	}
}

// An argument starting with "/" that no table row makes a path (a script's
// own, an operand of a program no row describes) is no path in confined
// execution, where the private view bounds what the program opens; check
// keeps deciding it as a path. What a row says is a path stays one.
func TestExecutionModeScriptArguments(t *testing.T) {
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, ".env"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}, Deny: []string{"**/.env"}},
		Shell: policy.ShellRules{Allow: []string{"python3", "node", "sh", "cat", "mytool"}},
	}, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(cmd string, execution policy.Execution) policy.Decision {
		args, _ := json.Marshal(policy.ShellArgs{Command: cmd})
		return sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: proj}, policy.Env{Execution: execution})
	}
	for _, tc := range []struct {
		cmd      string
		confined bool // allowed when confined (external refuses them all)
	}{
		{"python3 tool.py /api/users", true},
		{"python3 tool.py --path=/api/users", true},
		{"node app.js /api/users /v2", true},
		{"sh -c 'echo \"$1\"' sh /api/users", true},
		{"sh run.sh /api/users", true},
		{"mytool /api/users", true},
		{"python3 /api/tool.py", false},
		{"python3 -m json.tool /api/users", false},
		{"cat /api/users", false},
		{"python3 tool.py " + proj + "/.env", true},
		{"python3 tool.py .env", false},
	} {
		if d := decide(tc.cmd, policy.ExecutionExternal); d.Allowed {
			t.Errorf("%s, external: allowed", tc.cmd)
		}
		if d := decide(tc.cmd, policy.ExecutionConfined); d.Allowed != tc.confined {
			t.Errorf("%s, confined: %+v; want allowed %v", tc.cmd, d, tc.confined)
		}
	}
}
