package agents

import "testing"

// FuzzClaudeRules checks that Claude Code settings and the commands they
// are matched against never panic, that every form of a command has words,
// and that a rule denying every Bash command matches every command that
// holds a simple command.
func FuzzClaudeRules(f *testing.F) {
	for _, s := range []struct{ settings, command string }{
		{`{"permissions":{"deny":["Bash(echo:*)","Read(./.env)"],"ask":["Bash(npm run *)"]}}`, "ls && echo x"},
		{`{"permissions":{"deny":["Bash(* --force)","Bash(rm*)","Edit(//etc/**)"]}}`, "timeout 5 git push --force"},
		{`{"permissions":{"deny":["Bash"]}}`, "bash -c 'eval \"x $(y)\"'"},
		{`{"permissions":{"ask":["Bash(ls -la)"]}}`, "find . -exec ls -la {} +"},
		{`{}`, ""},
	} {
		f.Add(s.settings, s.command)
	}
	e := Env{ProjectDir: "/p", Home: "/h"}
	allSettings, err := ParseClaudeSettings([]byte(`{"permissions":{"deny":["Bash"]}}`), "all.json", e)
	all := allSettings.Rules
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, settings, command string) {
		forms, err := commandForms(command)
		for _, w := range forms {
			if len(w) == 0 {
				t.Fatalf("%q: a form without words", command)
			}
		}
		if err == nil && len(forms) > 0 {
			if _, ok, err := all.MatchCommand(command); err != nil || !ok {
				t.Fatalf("%q: the rule denying every command does not match (%v)", command, err)
			}
		}
		s, err := ParseClaudeSettings([]byte(settings), "s.json", e)
		if err != nil {
			return
		}
		_, _, _ = s.Rules.MatchCommand(command)
	})
}
