package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goSpeak matches what only Go's own errors say: type names, decoder
// prefixes, YAML tags.
var goSpeak = regexp.MustCompile(`Go (value|struct)|\b(policy|gateway|sessions|audit|exec|profiles|config|main|roam|server)\.[A-Z]\w*|\bunmarshal\b|\bjson: |\byaml: |!!\w+|\[\]string|map\[string\]|\*\w+\.\w+`)

// TestErrorsInOwnWords runs every documented error path through the binary:
// what the user or model reads names the field, the expected type, the file
// and line, and never a Go type; stderr is one line; messages are one line.
func TestErrorsInOwnWords(t *testing.T) {
	w := newWorkspace(t)
	bad := filepath.Join(w.root, "bad.yml")
	badScope := "paths:\n  reed: []\n  read: abc\n  write:\n    - {a: b}\nnetwrok: 1\nshell_commands:\n  allow: yes\n"
	if err := os.WriteFile(bad, []byte(badScope), 0o600); err != nil {
		t.Fatal(err)
	}
	syntax := filepath.Join(w.root, "syntax.yml")
	if err := os.WriteFile(syntax, []byte("paths: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.cfg, "scope-profiles"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte("serve:\n  listn: x\nretention:\n  audit_days: many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "scope-profiles", "broken.yml"), []byte(badScope), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "presets.yml"), []byte("executor:\n  scope_profil: coding\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(call string) []string { return []string{"check", "--scope", bad, call} }
	ok := filepath.Join(w.root, "ok.yml")
	if err := os.WriteFile(ok, []byte("paths:\n  read: [\"/**\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	okCheck := func(call string) []string { return []string{"check", "--scope", ok, "--cwd", w.proj, call} }
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"call is an array", okCheck(`[1]`), 2, "a call must be a JSON object"},
		{"tool is a number", okCheck(`{"tool":1}`), 2, `"tool" must be a string, got a number`},
		{"cwd is a boolean", okCheck(`{"tool":"list_dir","cwd":true}`), 2, `"cwd" must be a string, got a boolean`},
		{"unknown key", okCheck(`{"tool":"list_dir","argz":{}}`), 2, `unknown key "argz"`},
		{"not JSON", okCheck(`{tool`), 2, "not valid JSON at byte"},
		{"cut short", okCheck(`{"tool":`), 2, "the JSON ends early"},
		{"empty", okCheck(``), 2, "no call given"},
		{"two objects", okCheck(`{"tool":"a"} {}`), 2, "trailing data"},
		{"args an array", okCheck(`{"tool":"read_file","args":[1]}`), 3, "args must be a JSON object, got an array"},
		{"path a number", okCheck(`{"tool":"read_file","args":{"path":3}}`), 3, `must be a string, got a number`},
		{"unknown arg", okCheck(`{"tool":"read_file","args":{"path":"/x","bogus":1}}`), 3, "bogus"},
		{"old_string a number", okCheck(`{"tool":"edit_file","args":{"path":"/x","old_string":1,"new_string":"b"}}`), 3, "old_string"},
		{"timeout a string", okCheck(`{"tool":"shell","args":{"command":"ls","timeout_ms":"5"}}`), 3, "timeout_ms"},
		{"tags a string", okCheck(`{"tool":"roam_add_tags","args":{"node_id":"x","tags":"a"}}`), 3, "tags"},
		{"unknown tool", okCheck(`{"tool":"format_disk","args":{}}`), 3, "format_disk"},
		{"scope file invalid", check(`{"tool":"list_dir","args":{"path":"/"}}`), 2, `line 6: unknown key "netwrok" in the top level`},
		{"scope file type", check(`{"tool":"list_dir","args":{"path":"/"}}`), 2, "line 3: paths.read must be a list of strings, got a string (abc)"},
		{"scope file syntax", []string{"check", "--scope", syntax, `{"tool":"list_dir","args":{"path":"/"}}`}, 2, "line 1:"},
		{"scope file missing", []string{"check", "--scope", filepath.Join(w.root, "nosuch.yml"), `{"tool":"list_dir","args":{"path":"/"}}`}, 2, "no such file"},
		{"unknown session", []string{"check", "--session", "nosuch", `{"tool":"list_dir","args":{"path":"/"}}`}, 2, "nosuch"},
		{"bad session id", []string{"check", "--session", "../x", `{"tool":"list_dir","args":{"path":"/"}}`}, 2, "../x"},
		{"no selector", []string{"check", `{"tool":"list_dir","args":{"path":"/"}}`}, 2, "no branch selected"},
		{"bad --since", []string{"audit", "--session", w.id, "--since", "yesterday"}, 2, "--since"},
		{"bad --decision", []string{"audit", "--session", w.id, "--decision", "maybe"}, 2, "want allowed, denied, error, interrupted, asked or observed"},
		{"bad --confine", []string{"--confine", "x", "version"}, 2, "--confine"},
		{"bad --listen", []string{"serve", "--listen", "garbage"}, 2, "invalid address"},
		{"bad port", []string{"serve", "--listen", "127.0.0.1:99999"}, 2, "invalid address"},
		{"unknown flag", []string{"check", "--nope"}, 2, "unknown flag"},
		{"config.yml invalid", []string{"gc"}, 2, "config.yml"},
		{"presets.yml invalid", []string{"session", "create", "--name", "p"}, 2, `line 2: unknown key "scope_profil" in executor`},
		{"user profile invalid", []string{"profiles", "show", "broken"}, 0, "netwrok"},
		{"nothing to expand", []string{"scope", "expand", "--session", w.id}, 2, "nothing to add"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := w.cmd(c.args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if err != nil {
				code = cmd.ProcessState.ExitCode()
			}
			all := stdout.String() + stderr.String()
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s", code, c.code, all)
			}
			if !strings.Contains(all, c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, all)
			}
			if m := goSpeak.FindString(all); m != "" {
				t.Errorf("output speaks Go (%q):\n%s", m, all)
			}
			if s := strings.TrimSuffix(stderr.String(), "\n"); strings.Contains(s, "\n") {
				t.Errorf("stderr is more than one line:\n%s", s)
			}
			if out := stdout.String(); strings.HasPrefix(out, "{") {
				var d struct {
					Message    string
					Violations []struct{ Message string }
				}
				if err := json.Unmarshal([]byte(out), &d); err != nil {
					t.Fatalf("stdout: %v", err)
				}
				for _, m := range append([]string{d.Message}, func() (ms []string) {
					for _, v := range d.Violations {
						ms = append(ms, v.Message)
					}
					return
				}()...) {
					if strings.ContainsAny(m, "\n\r") || strings.Contains(m, `\n`) {
						t.Errorf("message is not one line: %q", m)
					}
				}
			}
		})
	}
}

// A port in use says so and points to --listen.
func TestServePortInUse(t *testing.T) {
	w := newWorkspace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := w.cmd("serve", "--listen", ln.Addr().String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("serve ran on a port in use")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInternal {
		t.Errorf("exit %d, want %d", code, exitInternal)
	}
	if msg := stderr.String(); !strings.Contains(msg, "already in use") || !strings.Contains(msg, "--listen HOST:PORT") {
		t.Errorf("stderr %q", msg)
	}
}
