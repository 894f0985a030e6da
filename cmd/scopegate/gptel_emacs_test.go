package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/yamlmsg"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
)

// The tests of this file run both directions between scopegate and gptel's
// persistent sessions with a real Emacs: files in the forms gptel writes
// them (testdata/gptel) are read and decided on by the scopegate binary,
// and what scopegate writes is read by yaml.el, gptel's YAML reader, then
// rewritten as gptel's scope expansion rewrites it and read back by
// scopegate. Without emacs or yaml.el (Debian: emacs-nox, elpa-yaml) they
// skip, and fail when CI=true (scripts/install-test-deps.sh installs both).

// gptelEnv runs the scopegate binary over one sessions root and config dir.
type gptelEnv struct {
	t                   *testing.T
	root, sessions, cfg string
}

func newGptelEnv(t *testing.T) *gptelEnv {
	t.Helper()
	requireProgram(t, "emacs")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &gptelEnv{t: t, root: root, sessions: filepath.Join(root, "sessions"), cfg: filepath.Join(root, "config")}
}

// run runs scopegate with args and returns its stdout and stderr; the
// test fails unless it exits with want.
func (e *gptelEnv) run(want int, args ...string) (stdout, stderr string) {
	e.t.Helper()
	cmd := exec.Command(scopegateBin, args...)
	cmd.Env = append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+e.sessions, "SCOPEGATE_CONFIG_DIR="+e.cfg,
		"HOME="+filepath.Join(e.root, "home"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if code != want {
		e.t.Fatalf("scopegate %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// decide returns the decision of `check` on the branch sel selects.
func (e *gptelEnv) decide(sel []string, call string) policy.Decision {
	e.t.Helper()
	cmd := exec.Command(scopegateBin, append(append([]string{"check"}, sel...), call)...)
	cmd.Env = append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+e.sessions, "SCOPEGATE_CONFIG_DIR="+e.cfg,
		"HOME="+filepath.Join(e.root, "home"))
	out, _ := cmd.Output() // exit 3 for a denial; the JSON says which
	var d policy.Decision
	if err := json.Unmarshal(out, &d); err != nil {
		e.t.Fatalf("check %s: %q is not a decision: %v", call, out, err)
	}
	return d
}

// expect checks the decisions of calls on the branch sel selects: each call
// maps to whether it must be allowed.
func (e *gptelEnv) expect(sel []string, calls map[string]bool) {
	e.t.Helper()
	for call, want := range calls {
		if d := e.decide(sel, call); d.Allowed != want {
			e.t.Errorf("%s: allowed %v (%s %s), want %v", call, d.Allowed, d.Reason, d.Message, want)
		}
	}
}

// fixture writes testdata/gptel/name to dst with ${ROOT} made the test's
// directory.
func (e *gptelEnv) fixture(name, dst string) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gptel", name))
	if err != nil {
		e.t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "${ROOT}", e.root)
	e.write(dst, text)
}

// write writes text to path, making its directory.
func (e *gptelEnv) write(path, text string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// mkdirs makes directories below the test's root.
func (e *gptelEnv) mkdirs(dirs ...string) {
	e.t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(e.root, d), 0o700); err != nil {
			e.t.Fatal(err)
		}
	}
}

// writeCall is the call JSON of writing one byte to path.
func writeCall(path string) string {
	b, _ := json.Marshal(map[string]any{"tool": "write_file", "args": map[string]string{"path": path, "content": "x"}})
	return string(b)
}

// shellCall is the call JSON of running command in the shell.
func shellCall(command string) string {
	b, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]string{"command": command}})
	return string(b)
}

// yamlScalar is one scalar as yaml.el read it: Type is string, true,
// false, null, number, empty (an empty list) or other; Value is the
// string, or the value as Emacs's %s prints it (what gptel writes back).
type yamlScalar struct {
	File, Path, Type, Value string
}

// gptelEmacs runs testdata/gptel/gptel.el's command cmd over files with the
// extra environment env, and returns what dump prints.
func gptelEmacs(t *testing.T, cmd string, env []string, files ...string) []yamlScalar {
	t.Helper()
	emacs := requireProgram(t, "emacs")
	script, err := filepath.Abs(filepath.Join("testdata", "gptel", "gptel.el"))
	if err != nil {
		t.Fatal(err)
	}
	c := exec.CommandContext(t.Context(), emacs, "--batch", "-Q", "-l", script)
	c.Env = append(append(os.Environ(), "GPTEL_CMD="+cmd, "GPTEL_FILES="+strings.Join(files, "\n")), env...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("yaml.el is not installed (scripts/install-test-deps.sh installs elpa-yaml):\n%s", stderr.String())
		}
		t.Skipf("yaml.el is not installed (Debian: elpa-yaml):\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("emacs %s: %v\n%s", cmd, err, stderr.String())
	}
	var recs []yamlScalar
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("emacs printed %q", sc.Text())
		}
		v, err := base64.StdEncoding.DecodeString(f[3])
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, yamlScalar{File: f[0], Path: f[1], Type: f[2], Value: string(v)})
	}
	return recs
}

// lists groups the list entries of a dump by key path ("paths.write").
func lists(recs []yamlScalar) map[string][]yamlScalar {
	out := map[string][]yamlScalar{}
	for _, r := range recs {
		if key, _, ok := strings.Cut(r.Path, "["); ok {
			out[key] = append(out[key], r)
		} else if r.Type == "empty" {
			out[r.Path] = nil
		}
	}
	return out
}

// scopeLists are the lists of a scope by key path.
func scopeLists(d policy.Document) map[string][]string {
	return map[string][]string{
		"paths.read": d.Paths.Read, "paths.write": d.Paths.Write, "paths.deny": d.Paths.Deny,
		"org_roam_patterns.subdirectory": d.OrgRoam.Subdirectory, "org_roam_patterns.tags": d.OrgRoam.Tags,
		"org_roam_patterns.node_ids": d.OrgRoam.NodeIDs,
		"shell_commands.allow":       d.Shell.Allow, "shell_commands.deny": d.Shell.Deny,
	}
}

// showScope is `scope show --json` of a branch, failing on any warning.
func (e *gptelEnv) showScope(sel ...string) policy.Document {
	e.t.Helper()
	out, stderr := e.run(0, append([]string{"scope", "show", "--json"}, sel...)...)
	if stderr != "" {
		e.t.Errorf("scope show warned:\n%s", stderr)
	}
	var d policy.Document
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// allStrings fails the test unless yaml.el read every scalar of recs as a
// string (or an empty list).
func allStrings(t *testing.T, recs []yamlScalar) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("yaml.el read nothing")
	}
	for _, r := range recs {
		if r.Type != "string" && r.Type != "empty" {
			t.Errorf("%s: yaml.el reads %s as %s %q", filepath.Base(r.File), r.Path, r.Type, r.Value)
		}
	}
}

// Emacs → scopegate: files as gptel writes them are read by scopegate and
// decided on as they mean, one case per form.
func TestGptelFilesReadByScopegate(t *testing.T) {
	t.Run("projectile root with a trailing slash", func(t *testing.T) {
		e := newGptelEnv(t)
		e.mkdirs("proj/.git", "projx", "b")
		scope := filepath.Join(e.root, "b", "scope.yml")
		e.fixture("projectile/scope.yml", scope)
		allStrings(t, gptelEmacs(t, "dump", nil, scope))
		sel := []string{"--branch-dir", filepath.Join(e.root, "b"), "--cwd", e.root}
		if got := e.showScope(sel[:2]...).Paths.Write; !slices.Equal(got, []string{e.root + "/proj/**"}) {
			t.Errorf("paths.write = %q, want the clean pattern", got)
		}
		e.expect(sel, map[string]bool{
			writeCall(e.root + "/proj/a.go"):      true,
			writeCall(e.root + "/proj/sub/b.go"):  true,
			writeCall(e.root + "/projx/a.go"):     false,
			writeCall(e.root + "/proj/.git/HEAD"): false,
			shellCall("ls " + e.root + "/proj"):   true,
		})
	})

	t.Run("root with glob metacharacters rewritten double-quoted", func(t *testing.T) {
		e := newGptelEnv(t)
		e.mkdirs("my[proj]", "myp", "extra", "b")
		scope := filepath.Join(e.root, "b", "scope.yml")
		e.fixture("rewritten/scope.yml", scope)
		allStrings(t, gptelEmacs(t, "dump", nil, scope))
		sel := []string{"--branch-dir", filepath.Join(e.root, "b"), "--cwd", e.root}
		e.showScope(sel[:2]...)
		e.expect(sel, map[string]bool{
			writeCall(e.root + "/my[proj]/a.go"):      true,
			writeCall(e.root + "/my[proj]/.env"):      false,
			writeCall(e.root + "/myp/a.go"):           false, // [proj] is no class here
			writeCall(e.root + "/extra/b.txt"):        true,
			shellCall("git -C " + e.root + " status"): true,
			shellCall("rm " + e.root + "/extra/b"):    false,
		})
	})

	for _, form := range []string{"quoted", "unquoted"} {
		t.Run("metadata.yml with preset "+form, func(t *testing.T) {
			e := newGptelEnv(t)
			e.mkdirs("proj")
			id := form + "-20261125100000"
			branch := filepath.Join(e.sessions, id, "branches", "main")
			e.fixture("metadata/"+form+".yml", filepath.Join(branch, "metadata.yml"))
			e.fixture("projectile/scope.yml", filepath.Join(branch, "scope.yml"))
			e.write(filepath.Join(branch, "session.md"), "")
			if err := os.Symlink("branches/main", filepath.Join(e.sessions, id, "current")); err != nil {
				t.Fatal(err)
			}
			allStrings(t, gptelEmacs(t, "dump", nil, filepath.Join(branch, "metadata.yml")))
			out, stderr := e.run(0, "session", "show", id, "--json")
			var info struct {
				SessionID string    `json:"session_id"`
				Preset    string    `json:"preset"`
				Created   time.Time `json:"created"`
			}
			if err := json.Unmarshal([]byte(out), &info); err != nil {
				t.Fatal(err)
			}
			if info.SessionID != id || info.Preset != "executor" || !info.Created.Equal(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)) || stderr != "" {
				t.Errorf("session show: %+v, stderr %q", info, stderr)
			}
			e.expect([]string{"--session", id}, map[string]bool{
				writeCall(e.root + "/proj/a.go"): true,
				writeCall(e.root + "/a.go"):      false,
			})
		})
	}

	t.Run("activity session with the worktree comment", func(t *testing.T) {
		e := newGptelEnv(t)
		act := filepath.Join(e.root, "act")
		e.mkdirs("act/worktrees/w1", "act/worktrees/w2")
		branch := filepath.Join(act, "session", "branches", "main")
		for _, f := range []string{"scope.yml", "metadata.yml", "session.md"} {
			e.fixture("activity/"+f, filepath.Join(branch, f))
		}
		if err := os.Symlink("branches/main", filepath.Join(act, "session", "current")); err != nil {
			t.Fatal(err)
		}
		e.sessions = act
		out, _ := e.run(0, "session", "list", "--json")
		var list []struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].SessionID != "act-20261125100000" {
			t.Fatalf("session list: %s (%v)", out, err)
		}
		// No cwd: the first worktree of the comment, not its glob.
		out, _ = e.run(0, "call", "--session", "act-20261125100000", shellCall("pwd"))
		var res struct {
			Result struct {
				Stdout string `json:"stdout"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || strings.TrimSpace(res.Result.Stdout) != filepath.Join(act, "worktrees", "w1") {
			t.Errorf("pwd without a cwd: %s (%v)", out, err)
		}
		sel := []string{"--session", "act-20261125100000"}
		e.expect(sel, map[string]bool{
			`{"tool":"write_file","args":{"path":"new.txt","content":"x"}}`: true,
			writeCall(act + "/worktrees/w2/a"):                              false,
			writeCall(branch + "/scope.yml"):                                false,
		})
	})

	t.Run("system-prompts.org", func(t *testing.T) {
		e := newGptelEnv(t)
		branch := filepath.Join(e.root, "b")
		e.mkdirs("b")
		prompts := filepath.Join(branch, "system-prompts.org")
		rules := "# Rules\n\n* read before you write\n,* keep the comma\n#+end_src"
		before := time.Now().Add(-time.Second).Truncate(time.Second)
		gptelEmacs(t, "prompt", []string{"GPTEL_NEW=You are careful."}, prompts)
		gptelEmacs(t, "prompt", []string{"GPTEL_PREVIOUS=You are careful.", "GPTEL_NEW=" + rules}, prompts)
		after := time.Now()
		e.write(filepath.Join(e.root, "rules.md"), rules+"\n")
		_, stderr := e.run(0, "prompt", "log", "--branch-dir", branch, "--new-file", filepath.Join(e.root, "rules.md"))
		if stderr != "scopegate: system prompt unchanged; nothing logged\n" {
			t.Errorf("prompt log of gptel's last prompt: stderr %q", stderr)
		}
		if _, stderr := e.run(0, "prompt", "log", "--branch-dir", branch, "--new", "Be brief."); stderr != "" {
			t.Errorf("prompt log: stderr %q", stderr)
		}
		got, err := audit.ReadPrompts(prompts, func(err error) { t.Errorf("warning: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		want := [][2]string{{"", "You are careful.\n"}, {"You are careful.\n", rules + "\n"}, {rules + "\n", "Be brief.\n"}}
		if len(got) != len(want) {
			t.Fatalf("read %d changes, want %d: %+v", len(got), len(want), got)
		}
		for i, w := range want {
			if got[i].Previous != w[0] || got[i].New != w[1] {
				t.Errorf("change %d: %+v, want previous %q, new %q", i, got[i], w[0], w[1])
			}
		}
		for _, c := range got[:2] {
			if c.Time.Before(before) || c.Time.After(after) {
				t.Errorf("gptel's entry at %v, written between %v and %v (local time)", c.Time, before, after)
			}
		}
	})

	t.Run("preset file with scope_profile", func(t *testing.T) {
		e := newGptelEnv(t)
		e.mkdirs("proj")
		e.write(filepath.Join(e.root, "proj", "go.mod"), "module x\n")
		e.write(filepath.Join(e.cfg, "config.yml"), "gptel_presets_dir: presets\n")
		e.fixture("presets/explore.md", filepath.Join(e.cfg, "presets", "explore.md"))
		e.run(0, "session", "create", "--id", "p", "--name", "p", "--preset", "explore", "--project-root", filepath.Join(e.root, "proj"))
		branch := filepath.Join(e.sessions, "p", "branches", "main")
		recs := gptelEmacs(t, "dump", nil, filepath.Join(branch, "metadata.yml"))
		if i := slices.IndexFunc(recs, func(r yamlScalar) bool { return r.Path == "preset" }); i < 0 || recs[i] != (yamlScalar{recs[i].File, "preset", "string", "explore"}) {
			t.Errorf("yaml.el reads metadata.yml's preset as %+v", recs)
		}
		e.expect([]string{"--session", "p"}, map[string]bool{
			`{"tool":"read_file","args":{"path":"` + e.root + `/proj/go.mod"}}`: true,
			writeCall(e.root + "/proj/a.go"):                                    false, // research reads only
		})
	})
}

// scopegate → Emacs: what session create and scope expand write is read
// by yaml.el as the strings scopegate reads, except the words yaml.el
// reads as booleans, numbers and null even quoted (scope show warns of
// them when unquoted); rewritten as gptel's scope expansion writes it, the
// scope still loads and decides the same, but for those words.
func TestScopegateFilesReadByGptel(t *testing.T) {
	e := newGptelEnv(t)
	e.mkdirs("my[proj]/build", "myp/build", "extra")
	proj := filepath.Join(e.root, "my[proj]")
	e.run(0, "session", "create", "--id", "rt", "--name", "rt", "--project-root", proj)
	words := []string{"yes", "on", "no", "off", "y", "true", "1", "0x1F", "1.50", "null"}
	args := []string{"scope", "expand", "--session", "rt", "--write", "build/**", "--read", e.root + "/a[*]b/**"}
	for _, w := range words {
		args = append(args, "--allow-command", w)
	}
	_, stderr := e.run(0, args...)
	if stderr != "" {
		t.Errorf("scope expand warned of what it wrote itself:\n%s", stderr)
	}
	branch := filepath.Join(e.sessions, "rt", "branches", "main")
	sel := []string{"--session", "rt"}
	before := e.showScope(sel...)
	if !slices.Contains(before.Paths.Write, policy.EscapeGlob(proj)+"/build/**") {
		t.Fatalf("paths.write = %q, want the escaped root", before.Paths.Write)
	}

	// metadata.yml and branch-metadata.yml: strings to yaml.el.
	meta := gptelEmacs(t, "dump", nil, filepath.Join(branch, "metadata.yml"), filepath.Join(branch, "branch-metadata.yml"))
	allStrings(t, meta)
	for _, want := range []yamlScalar{{Path: "session_id", Value: "rt"}, {Path: "preset", Value: "executor"}, {Path: "project_root", Value: proj}} {
		if !slices.ContainsFunc(meta, func(r yamlScalar) bool { return r.Path == want.Path && r.Value == want.Value }) {
			t.Errorf("yaml.el does not read %s: %q in metadata.yml: %+v", want.Path, want.Value, meta)
		}
	}

	// scope.yml: every entry is the string scopegate reads, but for the
	// words yaml.el takes for something else, quoted or not; those are
	// exactly the entries scope show warns of when they are unquoted.
	scope := filepath.Join(branch, "scope.yml")
	got := lists(gptelEmacs(t, "dump", nil, scope))
	want := scopeLists(before)
	rewritten := map[string][]string{} // what gptel writes back
	var nonStrings []string
	for key, entries := range want {
		if len(got[key]) != len(entries) {
			t.Errorf("%s: yaml.el reads %d entries, scopegate %d: %+v", key, len(got[key]), len(entries), got[key])
			continue
		}
		for i, v := range entries {
			r := got[key][i]
			rewritten[key] = append(rewritten[key], r.Value)
			if r.Type == "string" {
				if r.Value != v {
					t.Errorf("%s[%d]: yaml.el reads %q, scopegate %q", key, i, r.Value, v)
				}
				continue
			}
			nonStrings = append(nonStrings, v)
			a := yamlmsg.AmbiguousEntries([]byte("l:\n  - " + v + "\n"))
			if len(a) != 1 || !a[0].Gptel {
				t.Errorf("%s[%d]: yaml.el reads %q as %s %s, scope show would not say so: %+v", key, i, v, r.Type, r.Value, a)
			}
		}
	}
	t.Logf("entries yaml.el reads as non-strings, even quoted: %q", nonStrings)
	for _, w := range []string{"yes", "on", "no", "off", "y"} {
		if slices.Contains(nonStrings, w) {
			t.Errorf("yaml.el reads the YAML 1.1 word %q as a non-string", w)
		}
	}

	calls := map[string]bool{
		writeCall(proj + "/build/out.o"):           true,
		writeCall(proj + "/src/a.go"):              true,
		writeCall(e.root + "/myp/build/out.o"):     false,
		writeCall(proj + "/.git/config"):           false,
		shellCall("yes | head -1"):                 true,
		writeCall(e.root + "/extra/b"):             false,
		shellCall("curl http://example.com"):       false,
		`{"tool":"read_file","args":{"path":"x"}}`: true,
	}
	e.expect(sel, calls)

	// gptel's scope expansion rewrites the file double-quoted, adding a
	// write pattern: scopegate loads it without a warning and decides the
	// same, the new pattern granted.
	gptelEmacs(t, "rewrite", []string{"GPTEL_ADD_WRITE=" + e.root + "/extra/**"}, scope)
	after := e.showScope(sel...)
	rewritten["paths.write"] = append(rewritten["paths.write"], e.root+"/extra/**")
	for key, entries := range scopeLists(after) {
		if !slices.Equal(entries, rewritten[key]) {
			t.Errorf("after gptel's rewrite, %s = %q, want %q", key, entries, rewritten[key])
		}
	}
	calls[writeCall(e.root+"/extra/b")] = true
	e.expect(sel, calls)
	// The words yaml.el read as non-strings did not survive: gptel wrote
	// back their values (true as t), which scopegate reads as written.
	if allow := after.Shell.Allow; slices.Contains(allow, "true") || !slices.Contains(allow, "t") {
		t.Errorf("after gptel's rewrite, shell_commands.allow = %q; want true written back as t", allow)
	}
}

// yaml.el, gptel's reader, reads as non-strings exactly the words scope
// show reports as gptel's (Ambiguous.Gptel), and reads them so quoted too;
// YAML 1.1's words it reads as strings.
func TestYamlElAgreesWithScopeWarnings(t *testing.T) {
	requireProgram(t, "emacs")
	words := []string{"true", "True", "TRUE", "false", "FALSE", "null", "Null", "~", "1", "-1", "+1", "0", "017",
		"0o17", "0x1F", "1.5", ".5", "1.", "1e3", "-.5", ".inf", "-.Inf", ".nan",
		"yes", "No", "on", "OFF", "y", "N", "1_000", "0b101", "1:20",
		"ls", "t", "nil", "2to3", "7z", "1.2.3", "2026-01-01", "0x", "tRUE", "git push"}
	dir := t.TempDir()
	var plain, quoted strings.Builder
	plain.WriteString("l:\n")
	quoted.WriteString("l:\n")
	for _, w := range words {
		plain.WriteString("  - " + w + "\n")
		quoted.WriteString(`  - "` + w + "\"\n")
	}
	files := []string{filepath.Join(dir, "plain.yml"), filepath.Join(dir, "quoted.yml")}
	for i, text := range []string{plain.String(), quoted.String()} {
		if err := os.WriteFile(files[i], []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	recs := gptelEmacs(t, "dump", nil, files...)
	if len(recs) != 2*len(words) {
		t.Fatalf("yaml.el read %d scalars, want %d: %+v", len(recs), 2*len(words), recs)
	}
	reported := map[string]yamlmsg.Ambiguous{}
	for _, a := range yamlmsg.AmbiguousEntries([]byte(plain.String())) {
		reported[a.Value] = a
	}
	for i, w := range words {
		p, q := recs[i], recs[len(words)+i]
		a, ok := reported[w]
		if (p.Type != "string") != (ok && a.Gptel) {
			t.Errorf("%q: yaml.el reads %s %q; scope show reports %+v (%v)", w, p.Type, p.Value, a, ok)
		}
		if p.Type != q.Type || p.Value != q.Value {
			t.Errorf("%q: yaml.el reads it plain as %s %q, quoted as %s %q", w, p.Type, p.Value, q.Type, q.Value)
		}
	}
}

// An observe-mode branch and gptel's own scope expansion share its files:
// the mode lives beside scope.yml, which gptel's writer rewrites (dropping
// keys it does not know), so the mode survives the rewrite; what gptel
// adds is granted outright, what it does not is still observed, hard
// denials stay denied, and the suggestion applied by scopegate survives a
// later rewrite by gptel.
func TestGptelExpansionObserveMode(t *testing.T) {
	e := newGptelEnv(t)
	e.mkdirs("proj/.git", "extra", "other")
	proj := filepath.Join(e.root, "proj")
	e.run(0, "session", "create", "--id", "ob", "--name", "ob", "--project-root", proj, "--mode", "observe")
	sel := []string{"--session", "ob"}
	scope := filepath.Join(e.sessions, "ob", "branches", "main", "scope.yml")
	observed := func(call string) {
		t.Helper()
		d := e.decide(sel, call)
		if !d.Allowed || d.Observed == nil || d.Observed.Reason != policy.ReasonPathNotInScope {
			t.Errorf("%s: %+v, want allowed and observed path_not_in_scope", call, d)
		}
	}
	plain := func(call string, allowed bool) {
		t.Helper()
		d := e.decide(sel, call)
		if d.Allowed != allowed || d.Observed != nil {
			t.Errorf("%s: allowed %v observed %+v (%s), want allowed %v, not observed", call, d.Allowed, d.Observed, d.Message, allowed)
		}
	}
	observed(writeCall(e.root + "/extra/a"))
	observed(writeCall(e.root + "/other/b"))

	gptelEmacs(t, "rewrite", []string{"GPTEL_ADD_WRITE=" + e.root + "/extra/**"}, scope)
	if d := e.showScope(sel...); !slices.Contains(d.Paths.Write, e.root+"/extra/**") {
		t.Fatalf("gptel's expansion is missing: paths.write = %q", d.Paths.Write)
	}
	out, _ := e.run(0, "scope", "show", "--session", "ob", "--json")
	if !strings.Contains(out, `"mode":"observe"`) {
		t.Fatalf("the mode did not survive gptel's rewrite: %s", out)
	}
	plain(writeCall(e.root+"/extra/a"), true)
	observed(writeCall(e.root + "/other/b"))
	plain(writeCall(proj+"/.git/config"), false)

	// scopegate's suggestion, applied, then gptel's rewrite: both kept.
	e.run(0, "scope", "suggest", "--session", "ob", "--apply")
	plain(writeCall(e.root+"/other/b"), true)
	gptelEmacs(t, "rewrite", []string{"GPTEL_ADD_WRITE=" + e.root + "/more/**"}, scope)
	d := e.showScope(sel...)
	for _, want := range []string{e.root + "/other/b", e.root + "/extra/**", e.root + "/more/**"} {
		if !slices.Contains(d.Paths.Write, want) {
			t.Errorf("after suggest --apply and gptel's rewrite, paths.write = %q, want %s in it", d.Paths.Write, want)
		}
	}
	plain(writeCall(e.root+"/other/b"), true)

	e.run(0, "scope", "mode", "--session", "ob", "enforce")
	plain(writeCall(e.root+"/other/c"), false)
	entries, err := audit.ReadFile(filepath.Join(e.sessions, "ob", "branches", "main", "tools.org"), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(x audit.Entry) bool { return x.Tool == audit.ToolScopeMode && x.Mode == audit.ModeScope }) {
		t.Errorf("the mode change is not in tools.org")
	}
}

// Every built-in profile, as the binary embeds it, is read by yaml.el,
// gptel's reader, as the strings scopegate reads: no entry yaml.el takes
// for a boolean, a number or null, quoted or not, and each list entry for
// entry. The built-in presets file is read as strings too.
func TestYamlElReadsBuiltinProfiles(t *testing.T) {
	requireProgram(t, "emacs")
	infos, err := profiles.Loader{}.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		t.Fatal("no built-in profile")
	}
	dir := t.TempDir()
	for _, in := range infos {
		t.Run(in.Name, func(t *testing.T) {
			data, source, err := profiles.Loader{}.Raw(in.Name)
			if err != nil || source != profiles.SourceBuiltin {
				t.Fatalf("Raw(%q) = %s, %v", in.Name, source, err)
			}
			doc, err := policy.ParseDocument(data)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, in.Name+".yml")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			recs := gptelEmacs(t, "dump", nil, file)
			allStrings(t, recs)
			got := lists(recs)
			for key, entries := range scopeLists(doc) {
				if len(got[key]) != len(entries) {
					t.Errorf("%s: yaml.el reads %d entries, scopegate %d: %+v", key, len(got[key]), len(entries), got[key])
					continue
				}
				for i, v := range entries {
					if r := got[key][i]; r.Type != "string" || r.Value != v {
						t.Errorf("%s[%d]: yaml.el reads %s %q, scopegate the string %q", key, i, r.Type, r.Value, v)
					}
				}
			}
		})
	}
	t.Run("presets", func(t *testing.T) {
		allStrings(t, gptelEmacs(t, "dump", nil, filepath.Join("..", "..", "profiles", "builtin", "presets.yml")))
	})
}
