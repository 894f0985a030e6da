package agents_test

import (
	"testing"

	"github.com/scopegate/scopegate/agents"
)

// FuzzMap checks that no hook input makes the mapping panic, and that a
// mapping is never empty unless it is a tool the mapping does not cover.
func FuzzMap(f *testing.F) {
	for _, s := range []string{
		input("Bash", `{"command":"ls"}`),
		input("Read", `{"file_path":"/p/a"}`),
		input("MultiEdit", `{"file_path":"/p/b","edits":[{"old_string":"a","new_string":"b"}]}`),
		input("apply_patch", `{"command":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}`),
		input("WebFetch", `{}`),
		`{"hook_event_name":"PreToolUse"}`,
	} {
		f.Add(agents.ClaudeCode, s)
		f.Add(agents.Codex, s)
	}
	f.Fuzz(func(t *testing.T, agent, data string) {
		in, err := agents.ParseInput([]byte(data))
		if err != nil {
			return
		}
		m, err := agents.Map(agent, in)
		if err != nil {
			return
		}
		if m.Kind != agents.KindOther && len(m.Calls) == 0 {
			t.Fatalf("%s %s: mapped to no call", agent, data)
		}
		if m.Kind == agents.KindShell && len(m.Calls) != 1 {
			t.Fatalf("%s %s: shell mapping has %d calls", agent, data, len(m.Calls))
		}
	})
}

// FuzzPatchPaths checks that the patch parser never panics and never
// returns an empty path list without an error.
func FuzzPatchPaths(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** Delete File: a\n*** End Patch")
	f.Add("")
	f.Fuzz(func(t *testing.T, patch string) {
		paths, err := agents.PatchPaths(patch)
		if err == nil && len(paths) == 0 {
			t.Fatalf("%q: no paths and no error", patch)
		}
	})
}

// FuzzCodexRules checks that the rules parser never panics and that the
// text of every rule it keeps reads back as the same rule.
func FuzzCodexRules(f *testing.F) {
	f.Add("prefix_rule(pattern=[\"git\", [\"push\", \"fetch\"]], decision=\"forbidden\", justification='x')\n", "git push")
	f.Add("# c\nprefix_rule(\n  pattern = ['rm'],\n  decision = 'prompt',\n  match = [['rm', 'x']],\n)\nhost_executable(name=\"rm\", paths=[r\"/bin/rm\"])", "rm -rf x")
	f.Add("prefix_rule(pattern=[], decision=\"forbidden\")", "")
	f.Fuzz(func(t *testing.T, src, command string) {
		r, err := agents.ParseCodexRules([]byte(src), "f.rules")
		if err != nil {
			return
		}
		_, _, _ = r.MatchCommand(command)
		for _, c := range r.Commands {
			again, err := agents.ParseCodexRules([]byte(c.Text), "again.rules")
			if err != nil || len(again.Commands) != 1 || again.Commands[0].Text != c.Text || again.Commands[0].Decision != c.Decision {
				t.Fatalf("rule %s does not read back: %+v, %v", c.Text, again.Commands, err)
			}
		}
	})
}
