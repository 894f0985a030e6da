package gateway_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// TestBranchFilesReadOnce: one call reads each file of its branch at most
// once, whatever its way through the gateway: a call and a check that need
// the project root for their cwd and the session's start for git, a hook's
// decision, an observed call, approved calls and the run of a call
// approved in a hook. The opens are counted by the kernel (inotify), for
// a gateway that has cached nothing, as a process that starts for one call.
func TestBranchFilesReadOnce(t *testing.T) {
	p := newGitProject(t)
	ctx := context.Background()
	gitStatus := call("shell", map[string]any{"command": "git status --short"}, "")
	readOutside := call("read_file", map[string]any{"path": p.outside}, "")
	for _, tc := range []struct {
		name string
		mode string
		// scopeReads is how often scope.yml may be opened: once, and once
		// more where the call rewrites it (a session approval), which reads
		// it again under the branch's lock.
		scopeReads int
		do         func(t *testing.T, g *gateway.Gateway, id, dir string)
	}{
		{name: "call", mode: sessions.ModeEnforce, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			res, err := g.Call(ctx, gateway.Target{BranchDir: dir}, gitStatus)
			if err != nil {
				t.Fatal(err)
			}
			confined(t, res)
		}},
		{name: "check", mode: sessions.ModeEnforce, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			res, err := g.Check(ctx, gateway.Target{BranchDir: dir, Via: gateway.ViaHook}, gitStatus)
			if err != nil || !res.Decision.Allowed {
				t.Fatalf("check: %+v %v", res, err)
			}
		}},
		{name: "hook", mode: sessions.ModeEnforce, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			in, _ := json.Marshal(map[string]any{"session_id": id, "cwd": p.proj, "hook_event_name": "PreToolUse",
				"tool_name": "Bash", "tool_input": map[string]any{"command": "git status --short"}})
			ans := g.Hook(ctx, agents.ClaudeCode, in, gateway.HookOptions{ExecCommand: func(s, b, c, _ string) string { return "exec " + c }})
			if !strings.Contains(string(ans.Stdout), `"allow"`) {
				t.Fatalf("hook: %s %s", ans.Stdout, ans.Stderr)
			}
		}},
		{name: "observed", mode: sessions.ModeObserve, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			res, err := g.Call(ctx, gateway.Target{BranchDir: dir}, readOutside)
			if err != nil || res.Decision.Observed == nil {
				t.Fatalf("observed call: %+v %v", res, err)
			}
		}},
		{name: "approved once", mode: sessions.ModeEnforce, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			res, err := g.Call(ctx, gateway.Target{BranchDir: dir, Ask: &answering{answer: gateway.AnswerOnce}}, readOutside)
			if err != nil || !res.Decision.Allowed {
				t.Fatalf("approved call: %+v %v", res, err)
			}
		}},
		{name: "approved for the session", mode: sessions.ModeEnforce, scopeReads: 2, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			res, err := g.Call(ctx, gateway.Target{BranchDir: dir, Ask: &answering{answer: gateway.AnswerSession}}, readOutside)
			if err != nil || !res.Decision.Allowed {
				t.Fatalf("approved call: %+v %v", res, err)
			}
		}},
		{name: "exec approved in a hook", mode: sessions.ModeEnforce, do: func(t *testing.T, g *gateway.Gateway, id, dir string) {
			callID := audit.NewCallID(time.Now())
			c := call("shell", map[string]any{"command": "cat " + p.outside}, "")
			if err := gateway.StoreCall(dir, callID, c); err != nil {
				t.Fatal(err)
			}
			if err := gateway.StoreGrant(dir, gateway.Grant{CallID: callID, Call: gateway.CallSum(c), Channel: gateway.ChannelHookAsk,
				Widenings: []policy.Widening{{Flag: "--read", Value: p.outside}}}); err != nil {
				t.Fatal(err)
			}
			res, err := g.Exec(ctx, gateway.Target{BranchDir: dir}, callID, "", io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			confined(t, res)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, dir := p.newBranch(t, tc.mode)
			g := p.newGateway(t, helperPath(t))
			opens := opensIn(t, dir, func() { tc.do(t, g, id, dir) })
			limits := map[string]int{sessions.ScopeFile: max(tc.scopeReads, 1), sessions.MetadataFile: 1, sessions.ModeFile: 1}
			for name, most := range limits {
				if opens[name] > most {
					t.Errorf("%s opened %d times, want at most %d (all opens: %v)", name, opens[name], most, opens)
				}
			}
		})
	}
}

// opensIn returns how often each file of dir was opened while fn ran, by
// this process and by every process it started, as inotify tells.
func opensIn(t *testing.T, dir string, fn func()) map[string]int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	defer f.Close()
	// The closes are watched too, only so that two opens of a file are
	// never one event: the kernel merges an event into the same one queued
	// just before it.
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_OPEN|syscall.IN_CLOSE); err != nil {
		t.Fatalf("watch %s: %v", dir, err)
	}
	fn()
	// The kernel queues the events in order: once the open of the mark is
	// read, every open made before it has been.
	const mark = ".opens-mark"
	if err := os.WriteFile(filepath.Join(dir, mark), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	opens := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if err != nil {
			t.Fatalf("read the opens of %s: %v", dir, err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+size]), "\x00")
			off += syscall.SizeofInotifyEvent + size
			if mask&syscall.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflow")
			}
			if name == mark {
				return opens
			}
			if name != "" && mask&syscall.IN_OPEN != 0 {
				opens[name]++
			}
		}
	}
}

// gitProject is a project holding a git repository, the sessions root of
// its sessions and a file outside their scope.
type gitProject struct {
	root, proj, outside, sessions string
	scope                         policy.Document
}

// newGitProject makes a gitProject, whose sessions let programs run git
// and cat and write the project.
func newGitProject(t *testing.T) *gitProject {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &gitProject{root: root, proj: filepath.Join(root, "proj"), outside: filepath.Join(root, "outside", "notes.txt"),
		sessions: filepath.Join(root, "sessions")}
	for _, f := range []string{filepath.Join(p.proj, "a.txt"), p.outside} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("text\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := osexec.Command("git", "-C", p.proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// git runs on a repository the scope lets programs write only when it
	// has not changed since the session began, which metadata.yml records
	// to the second.
	time.Sleep(1100 * time.Millisecond)
	p.scope, err = policy.ParseDocument([]byte(fmt.Sprintf("paths:\n  read: [%q, /usr/**, /etc/**]\n  write: [%q]\nshell_commands:\n  allow: [git, cat]\n",
		p.proj+"/**", p.proj+"/**")))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newBranch makes a session named after the test, its branch in mode, and
// returns the session id and the branch directory.
func (p *gitProject) newBranch(t *testing.T, mode string) (string, string) {
	t.Helper()
	id := strings.ReplaceAll(t.Name()[strings.LastIndex(t.Name(), "/")+1:], "_", "-")
	c, err := (&sessions.Store{Root: p.sessions}).Create(context.Background(), sessions.CreateOptions{ID: id, ProjectRoot: p.proj, Scope: p.scope})
	if err != nil {
		t.Fatal(err)
	}
	// A mode file, so that its reads are counted in enforce mode too.
	if _, err := sessions.WriteMode(c.BranchDir, mode); err != nil {
		t.Fatal(err)
	}
	return id, c.BranchDir
}

// newGateway returns a gateway over the project's sessions whose helper
// is helper.
func (p *gitProject) newGateway(t *testing.T, helper string) *gateway.Gateway {
	return gateway.New(gateway.Options{SessionsDir: p.sessions, Home: filepath.Join(p.root, "home"),
		Confine: exec.ConfineAllowUnconfined, HelperPath: helper})
}

// confined requires the shell call of res to have been allowed and run in
// the private view, where git's decision needs the session's start.
func confined(t *testing.T, res gateway.CallResult) {
	t.Helper()
	if !res.Decision.Allowed {
		t.Fatalf("denied: %+v", res.Decision)
	}
	if r, ok := res.Result.(exec.Result); !ok || r.Confinement != exec.ConfinementNamespaces {
		if os.Getenv("CI") == "true" {
			t.Fatalf("not run in the private view: %#v", res.Result)
		}
		t.Skipf("not run in the private view: %#v", res.Result)
	}
}
