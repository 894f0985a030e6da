package agents

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// claudeMeasured are Claude Code's own verdicts on Bash commands under a
// set of deny rules, measured on the real binary
// (testdata/claudecode_bash_rules.json; TestClaudeCodeRules in
// cmd/scopegate measures them again on the installed binary).
type claudeMeasured struct {
	Version string   `json:"version"`
	Deny    []string `json:"deny"`
	Cases   []struct {
		Command string `json:"command"`
		Denied  bool   `json:"denied"`
	} `json:"cases"`
}

func readClaudeMeasured(t *testing.T) claudeMeasured {
	t.Helper()
	data, err := os.ReadFile("testdata/claudecode_bash_rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var m claudeMeasured
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func claudeRules(t *testing.T, settings string) Rules {
	t.Helper()
	s, err := ParseClaudeSettings([]byte(settings), "/p/.claude/settings.json", Env{ProjectDir: "/p", Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	return s.Rules
}

func TestClaudeBashRulesMeasured(t *testing.T) {
	m := readClaudeMeasured(t)
	settings, _ := json.Marshal(map[string]any{"permissions": map[string]any{"deny": m.Deny}})
	r := claudeRules(t, string(settings))
	for _, tc := range m.Cases {
		t.Run(tc.Command, func(t *testing.T) {
			rule, ok, err := r.MatchCommand(tc.Command)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.Denied {
				t.Errorf("matched %v (%s), Claude Code %s denied: %v", ok, rule.Text, m.Version, tc.Denied)
			}
		})
	}
}

// TestClaudeBashRulesFailClosed: where scopegate cannot know what a command
// will be, or looks further than Claude Code does, a rule matches.
func TestClaudeBashRulesFailClosed(t *testing.T) {
	r := claudeRules(t, `{"permissions":{"deny":["Bash(echo:*)","Bash(ls -la)","Bash(curl:*)"]}}`)
	for _, command := range []string{
		"bash -c 'echo k'", "sh -lc \"ls -la\"", "eval 'echo x'", "find . -exec echo {} ;",
		"ls $FLAGS", "$PROG x", "cat <(echo x)", "f() { echo x; }; f", "env -i A=1 echo x",
		"timeout --signal=KILL 5 echo x", "sudo -u bob curl x", "export X=$(echo y)",
		// The strings and operands the shell or a program runs as a command.
		"trap 'echo x' EXIT", "trap -- 'curl x' INT", "busybox echo x", "strace -f echo x",
		"ltrace echo x", "parallel echo ::: x",
	} {
		if _, ok, err := r.MatchCommand(command); err != nil || !ok {
			t.Errorf("%q: matched %v, err %v; want a match", command, ok, err)
		}
	}
	for _, command := range []string{"ls", "printf echo", "grep echo file", "ls -l", "cat echo"} {
		if rule, ok, err := r.MatchCommand(command); err != nil || ok {
			t.Errorf("%q: matched %s, err %v; want none", command, rule.Text, err)
		}
	}
	if _, _, err := r.MatchCommand("echo 'unterminated"); err == nil {
		t.Error("a command that does not parse is not an error")
	}
}

func TestClaudeRulesDenyBeforeAsk(t *testing.T) {
	r := claudeRules(t, `{"permissions":{"ask":["Bash(git:*)"],"deny":["Bash(git push:*)"]}}`)
	for command, want := range map[string]RuleDecision{"git status": RuleAsk, "git status && git push": RuleDeny, "ls": 0} {
		rule, ok, err := r.MatchCommand(command)
		if err != nil || (ok && rule.Decision != want) || (!ok && want != 0) {
			t.Errorf("%q: %v %v %v, want %v", command, rule.Decision, ok, err, want)
		}
	}
}

func TestClaudeSettingsParse(t *testing.T) {
	e := Env{ProjectDir: "/p", Home: "/home/u"}
	for name, tc := range map[string]struct {
		doc     string
		ok      bool
		bash    int
		paths   int
		pathOne []string
	}{
		"no permissions":   {`{"hooks":{}}`, true, 0, 0, nil},
		"other tools":      {`{"permissions":{"deny":["WebFetch(domain:x.com)","mcp__x"]}}`, true, 0, 0, nil},
		"bash all":         {`{"permissions":{"deny":["Bash"]}}`, true, 1, 0, nil},
		"read dotenv":      {`{"permissions":{"deny":["Read(./.env)"]}}`, true, 0, 1, []string{"/**/.env", "/**/.env/**"}},
		"read anchored":    {`{"permissions":{"deny":["Read(./sub/b.txt)"]}}`, true, 0, 1, []string{"/p/sub/b.txt", "/p/sub/b.txt/**"}},
		"read project":     {`{"permissions":{"ask":["Read(/a.txt)"]}}`, true, 0, 1, []string{"/p/a.txt", "/p/a.txt/**"}},
		"read absolute":    {`{"permissions":{"deny":["Read(//etc/x)"]}}`, true, 0, 1, []string{"/etc/x", "/etc/x/**"}},
		"read home":        {`{"permissions":{"deny":["Read(~/h.txt)"]}}`, true, 0, 1, []string{"/home/u/h.txt", "/home/u/h.txt/**"}},
		"edit tree":        {`{"permissions":{"deny":["Edit(d/**)"]}}`, true, 0, 1, []string{"/p/d/**"}},
		"read all":         {`{"permissions":{"deny":["Read"]}}`, true, 0, 1, []string{"/**"}},
		"not an object":    {`[1]`, false, 0, 0, nil},
		"deny not strings": {`{"permissions":{"deny":[1]}}`, false, 0, 0, nil},
		"bad rule":         {`{"permissions":{"deny":["Bash(echo"]}}`, false, 0, 0, nil},
		"trailing":         {`{} {}`, false, 0, 0, nil},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseClaudeSettings([]byte(tc.doc), "s.json", e)
			r := s.Rules
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), "s.json") {
					t.Errorf("error %v does not name the file or wrap ErrInvalidRules", err)
				}
				return
			}
			if len(r.Commands) != tc.bash || len(r.Paths) != tc.paths {
				t.Fatalf("%d command and %d path rules, want %d and %d", len(r.Commands), len(r.Paths), tc.bash, tc.paths)
			}
			if tc.pathOne != nil && strings.Join(r.Paths[0].Globs, " ") != strings.Join(tc.pathOne, " ") {
				t.Errorf("globs %v, want %v", r.Paths[0].Globs, tc.pathOne)
			}
		})
	}
}

func TestClaudeCommandLine(t *testing.T) {
	c := ParseClaudeCommandLine([]string{"claude", "-p", "x", "--settings", "/s.json", "--disallowedTools", "Bash(git:*) Edit", "Read(./x)",
		"--output-format", "json", "--settings={\"a\":1}", "--disallowed-tools=Bash(rm:*)", "--", "--settings", "ignored"})
	if strings.Join(c.Settings, "|") != `/s.json|{"a":1}` || strings.Join(c.Disallowed, "|") != "Bash(git:*) Edit|Read(./x)|Bash(rm:*)" {
		t.Errorf("%+v", c)
	}
	r, err := ParseClaudeRuleList("Bash(git log:*), Bash(rm -rf:*) Edit", RuleDeny, "--disallowedTools", Env{ProjectDir: "/p"})
	if err != nil || len(r.Commands) != 2 || len(r.Paths) != 1 || r.Commands[1].Text != "Bash(rm -rf:*)" {
		t.Errorf("%+v %v", r, err)
	}
}

func TestCodexRules(t *testing.T) {
	src := `# rules
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "forbidden",
    justification = 'Use the review flow.',
    match = [["git", "push", "origin"], "git fetch"],
    not_match = ["git status"],
)
prefix_rule(pattern=["gh", "pr", "view"], decision="prompt")
prefix_rule(pattern=["ls"])  # allow: dropped
host_executable(name="git", paths=["/usr/bin/git"])
`
	r, err := ParseCodexRules([]byte(src), "/c/rules/default.rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Commands) != 2 || r.Commands[0].Justification != "Use the review flow." || r.Commands[0].Source != "/c/rules/default.rules:2" {
		t.Fatalf("%+v", r.Commands)
	}
	for command, want := range map[string]RuleDecision{
		"git push origin": RuleDeny, "git fetch": RuleDeny, "/usr/bin/git push": RuleDeny, "git status": 0,
		"gh pr view 1": RuleAsk, "gh pr list": 0, "ls -la": 0, "bash -lc 'git push'": RuleDeny, "git $CMD": RuleDeny,
	} {
		rule, ok, err := r.MatchCommand(command)
		if err != nil || (ok && rule.Decision != want) || (!ok && want != 0) {
			t.Errorf("%q: %v %v %v, want %v", command, rule.Decision, ok, err, want)
		}
	}
	for name, bad := range map[string]string{
		"unknown call":     `load("x.star", "y")`,
		"unknown argument": `prefix_rule(pattern=["a"], when="x")`,
		"bad decision":     `prefix_rule(pattern=["a"], decision="never")`,
		"no pattern":       `prefix_rule(decision="forbidden")`,
		"variable":         `p = ["a"]`,
		"unterminated":     `prefix_rule(pattern=["a], decision="forbidden")`,
		"twice":            `prefix_rule(pattern=["a"], pattern=["b"])`,
	} {
		if _, err := ParseCodexRules([]byte(bad), "f.rules"); !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), "f.rules:1") {
			t.Errorf("%s: err %v, want ErrInvalidRules naming f.rules:1", name, err)
		}
	}
}

func TestGlobMatchUnknown(t *testing.T) {
	u := string(unknownRune)
	for _, tc := range []struct {
		pattern, subject string
		want             bool
	}{
		{"ls -la", "ls " + u, true}, {"ls -la", "ls -l", false}, {"git push *", "git " + u, true},
		{"echo", u, true}, {"a*b", "axxb", true}, {"a*b", "axxc", false}, {"", "", true}, {"*", "", true},
	} {
		if got := globMatch(tc.pattern, tc.subject); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.subject, got)
		}
	}
}

func TestClaudeSettingsPostToolUse(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/scopegate hook claude-code"}]}]}}`: true,
		`{"hooks":{"PostToolUse":[{"hooks":[{"type":"http","url":"http://127.0.0.1:7411/v1/hooks/claude-code"}]}]}}`:                     true,
		`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"scopegate hook claude-code"}]}]}}`:                 false,
		`{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"prettier --write"}]}]}}`:                                        false,
		`{"hooks":{"PostToolUse":"x"}}`: false,
	} {
		s, err := ParseClaudeSettings([]byte(doc), "s.json", Env{})
		if err != nil || s.PostToolUse != want {
			t.Errorf("%s: PostToolUse %v (%v), want %v", doc, s.PostToolUse, err, want)
		}
	}
}
