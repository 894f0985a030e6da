package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// FuzzRunnersHideNothing checks that a command run by a runner (through
// a shell of its own, or as a wrapped command) is never allowed where the
// command alone is denied.
func FuzzRunnersHideNothing(f *testing.F) {
	for _, s := range []string{"ls -la", "cat .env", "cat README.md > out", "ls; cat .env", "cat $(echo .env)",
		"sh -c id", "ls {n}", "cat ../x", "echo '#(id)'", "ls -p 1", "cat .e''nv", "ls && grep -r x ."} {
		f.Add(s)
	}
	dir := f.TempDir()
	for name, content := range map[string]string{".env": "KEY=x\n", "README.md": "# r\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{dir + "/**"}, Write: []string{dir + "/**"}, Deny: []string{"**/.env"}},
		Shell: policy.ShellRules{Allow: []string{"ls", "cat", "grep", "echo", "hyperfine", "sg", "entr", "uv", "rlwrap",
			"cpulimit", "direnv", "poetry"}},
	}, policy.Env{})
	if err != nil {
		f.Fatal(err)
	}
	decide := func(cmd string) policy.Decision {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: dir}, policy.Env{})
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	f.Fuzz(func(t *testing.T, cmd string) {
		if strings.ContainsAny(cmd, "\x00\n") || strings.TrimSpace(cmd) == "" || strings.HasPrefix(cmd, "-") {
			// A word that starts with - is an option of the runner, not a
			// command.
			return
		}
		forms := []string{"hyperfine " + quote(cmd), "hyperfine -p " + quote(cmd) + " ls", "sg users -c " + quote(cmd),
			"entr -s " + quote(cmd)}
		if c := strings.TrimLeft(cmd, " \t"); c != "" && (c[0] >= 'a' && c[0] <= 'z' || c[0] >= 'A' && c[0] <= 'Z' || strings.IndexByte("0123456789_./~", c[0]) >= 0) {
			// A command word first: the wrapper's words then parse as the
			// command's would.
			forms = append(forms, "rlwrap "+cmd, "uv run "+cmd, "cpulimit -l 5 -- "+cmd, "direnv exec . "+cmd, "poetry run "+cmd)
		}
		bare := decide(cmd)
		for _, form := range forms {
			d := decide(form)
			if !d.Allowed && (d.Message == "" || strings.ContainsAny(d.Message, "\n\r")) {
				t.Fatalf("%s: bad denial message %q", form, d.Message)
			}
			if d.Allowed && !bare.Allowed {
				t.Fatalf("%s is allowed, but %q alone is denied: %s", form, cmd, bare.Message)
			}
		}
	})
}
