package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
	"github.com/scopegate/scopegate/sessions/sessionstest"
)

// TestConcurrentExpandAndCheck runs 16 scopegate processes expanding one
// branch's scope while other processes keep deciding calls on it: every
// expansion must land, and no decision may see a torn or missing file.
func TestConcurrentExpandAndCheck(t *testing.T) {
	work := t.TempDir()
	env := append(os.Environ(),
		"HOME="+filepath.Join(work, "home"),
		"SCOPEGATE_SESSIONS_DIR="+filepath.Join(work, "sessions"),
		"SCOPEGATE_CONFIG_DIR="+filepath.Join(work, "config"),
	)
	run := func(args ...string) (stdout []byte, code int, err error) {
		cmd := exec.Command(scopegateBin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.Bytes(), ee.ExitCode(), nil
		}
		if err != nil {
			return nil, -1, err
		}
		return out.Bytes(), 0, nil
	}
	proj := filepath.Join(work, "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	out, code, err := run("session", "create", "--id", "race", "--name", "race", "--worktree", proj)
	if err != nil || code != 0 {
		t.Fatalf("create: code %d, %v: %s", code, err, out)
	}
	var created sessions.Created
	if err := json.Unmarshal(out, &created); err != nil {
		t.Fatal(err)
	}

	const expanders = 16
	var wg sync.WaitGroup
	var done atomic.Bool
	var checks atomic.Int64
	for i := range expanders {
		wg.Go(func() {
			out, code, err := run("scope", "expand", "--branch-dir", created.BranchDir,
				"--read", fmt.Sprintf("/srv/n%d/**", i), "--allow-command", fmt.Sprintf("tool%d", i))
			if err != nil || code != 0 {
				t.Errorf("expander %d: code %d, %v: %s", i, code, err, out)
			}
		})
	}
	var checkers sync.WaitGroup
	for i := range 4 {
		checkers.Go(func() {
			call := fmt.Sprintf(`{"tool":"read_file","args":{"path":"/srv/n%d/file"}}`, i)
			for !done.Load() || checks.Load() < 8 {
				out, code, err := run("check", "--branch-dir", created.BranchDir, call)
				checks.Add(1)
				if err != nil || (code != exitOK && code != exitDenied) {
					t.Errorf("check: code %d, %v: %s", code, err, out)
					return
				}
				var d policy.Decision
				if err := json.Unmarshal(out, &d); err != nil {
					t.Errorf("check printed no decision: %v: %q", err, out)
					return
				}
				if d.Reason == policy.ReasonScopeInvalid || d.Reason == policy.ReasonScopeMissing {
					t.Errorf("check saw a torn scope: %s", out)
					return
				}
				if d.Allowed != (code == exitOK) {
					t.Errorf("exit code %d for %s", code, out)
				}
			}
		})
	}
	wg.Wait()
	done.Store(true)
	checkers.Wait()
	t.Logf("%d checks ran during the expansions", checks.Load())

	out, code, err = run("scope", "show", "--session", "race", "--json")
	if err != nil || code != 0 {
		t.Fatalf("scope show: code %d, %v: %s", code, err, out)
	}
	var doc policy.Document
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for i := range expanders {
		if !contains(doc.Paths.Read, fmt.Sprintf("/srv/n%d/**", i)) || !contains(doc.Shell.Allow, fmt.Sprintf("tool%d", i)) {
			t.Errorf("expansion %d lost: %+v", i, doc)
		}
	}
	for i := range 4 {
		out, code, _ := run("check", "--session", "race", fmt.Sprintf(`{"tool":"read_file","args":{"path":"/srv/n%d/file"}}`, i))
		if code != exitOK {
			t.Errorf("after the expansions /srv/n%d is still denied: %s", i, out)
		}
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// BenchmarkSessionListCommand runs `scopegate session list --json` in
// process over 10,000 sessions.
func BenchmarkSessionListCommand(b *testing.B) {
	root := filepath.Join(b.TempDir(), "sessions")
	if err := sessionstest.MakeFixture(root, 10000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main([]string{"--sessions-dir", root, "session", "list", "--json"}, nil, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkScopeShowBySession opens one branch by id among 10,000 sessions.
func BenchmarkScopeShowBySession(b *testing.B) {
	root := filepath.Join(b.TempDir(), "sessions")
	if err := sessionstest.MakeFixture(root, 10000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main([]string{"--sessions-dir", root, "scope", "show", "--session", "s-05000"}, nil, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
