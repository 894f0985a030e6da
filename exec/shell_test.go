package exec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

func shellArgs(cmd string) policy.ShellArgs { return policy.ShellArgs{Command: cmd} }

// A program the interpreter cannot see into writes files itself: only
// Landlock stands between it and the rest of the disk.
func TestShellLandlockConfinesPrograms(t *testing.T) {
	requireLandlock(t)
	proj, outside := realDir(t), realDir(t)
	protected := filepath.Join(proj, ".sessions")
	for _, d := range []string{protected, filepath.Join(proj, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(proj, "w.sh"), "#!/bin/sh\necho data > \"$1\"\n", 0o755)
	confined := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Protected: []string{protected}})
	open := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Protected: []string{protected}, Confine: ConfineOff})
	tests := []struct {
		name   string
		target string
		runner *Runner
		want   bool // whether the file gets written
	}{
		{"inside write root", filepath.Join(proj, "sub", "f"), confined, true},
		{"other directory", filepath.Join(outside, "f"), confined, false},
		{"protected dir inside write root", filepath.Join(protected, "f"), confined, false},
		{"other directory unconfined (control)", filepath.Join(outside, "g"), open, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, tt.runner, policy.ToolShell, shellArgs("./w.sh "+tt.target), proj)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("stderr: %s", res.Stderr)
			if got := exists(tt.target); got != tt.want {
				t.Fatalf("%s written = %v, want %v (result %+v)", tt.target, got, tt.want, res)
			}
			if ok := res.ExitCode == 0; ok != tt.want {
				t.Errorf("exit code %d, stderr %q", res.ExitCode, res.Stderr)
			}
			wantConf := ConfinementNone
			if tt.runner != open {
				wantConf = confined.Confinement()
				if wantConf != ConfinementNamespaces && wantConf != ConfinementLandlock {
					t.Fatalf("confined runner reports %q", wantConf)
				}
			}
			if res.Confinement != wantConf {
				t.Errorf("confinement %q, want %q", res.Confinement, wantConf)
			}
		})
	}
}

func TestShellLandlockWholeWriteRoot(t *testing.T) {
	requireLandlock(t)
	proj := realDir(t)
	writeFile(t, filepath.Join(proj, "w.sh"), "#!/bin/sh\nmkdir -p d/e && echo data > d/e/f && mv d/e/f g\n", 0o755)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}})
	res, err := run(t, r, policy.ToolShell, shellArgs("./w.sh"), proj)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "g")); err != nil || string(b) != "data\n" {
		t.Fatalf("g = %q, %v", b, err)
	}
}

func TestShellRedirectRefused(t *testing.T) {
	proj, outside := realDir(t), realDir(t)
	protected := filepath.Join(proj, ".sessions")
	if err := os.Mkdir(protected, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(outside, "secret"), "s3cret\n", 0o644)
	tests := []struct {
		name    string
		checker checker
		cmd     string
		target  string
	}{
		{"write denied by checker", checker{path: denyBelow(outside)}, "echo hi > " + outside + "/f", outside + "/f"},
		{"append denied by checker", checker{path: denyBelow(outside)}, "echo hi >> " + outside + "/f", outside + "/f"},
		{"read denied by checker", checker{path: denyBelow(outside)}, "cat < " + outside + "/secret", ""},
		{"write outside the roots", checker{}, "echo hi > " + outside + "/f", outside + "/f"},
		{"write into a protected root", checker{}, "echo hi > " + protected + "/f", protected + "/f"},
		{"write through variable", checker{path: denyBelow(outside)}, "d=" + outside + "; echo hi > $d/f", outside + "/f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(t, Options{Checker: tt.checker, ReadRoots: []string{proj}, WriteRoots: []string{proj},
				Protected: []string{protected}, Confine: ConfineAllowUnconfined})
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd+"; echo after"), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != ExitRefused || len(res.Refused) == 0 {
				t.Errorf("exit %d, refused %v; want %d and a refusal", res.ExitCode, res.Refused, ExitRefused)
			}
			if !strings.Contains(res.Stderr, "scopegate: denied: ") {
				t.Errorf("stderr %q lacks the denial", res.Stderr)
			}
			if strings.Contains(res.Stdout, "after") || strings.Contains(res.Stdout, "s3cret") {
				t.Errorf("the call went on after the refusal: stdout %q", res.Stdout)
			}
			if tt.target != "" && exists(tt.target) {
				t.Errorf("%s was created", tt.target)
			}
		})
	}
}

func TestShellRedirectAllowed(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Confine: ConfineAllowUnconfined})
	res, err := run(t, r, policy.ToolShell, shellArgs("echo hi > out; echo more >> out; cat < out; echo e >/dev/null; echo x >/dev/stderr"), proj)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if res.Stdout != "hi\nmore\n" || res.Stderr != "x\n" {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func TestShellCommandRefusedAfterExpansion(t *testing.T) {
	tests := []struct {
		name, cmd string
	}{
		{"variable", "x=rm; $x -rf d"},
		{"command substitution", "$(echo rm) -rf d"},
		{"through a function", "f() { \"$@\"; }; f rm -rf d"},
		{"in a pipeline", "echo | rm -rf d"},
		{"in a subshell", "(x=rm; $x -rf d)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := realDir(t)
			writeFile(t, filepath.Join(proj, "d", "keep"), "x", 0o644)
			r := newRunner(t, Options{Checker: checker{exec: denyProgram("rm")}, ReadRoots: []string{proj},
				WriteRoots: []string{proj}, Confine: ConfineAllowUnconfined})
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd+"; echo after"), proj)
			if err != nil {
				t.Fatal(err)
			}
			if !exists(filepath.Join(proj, "d", "keep")) {
				t.Fatal("d was deleted")
			}
			if res.ExitCode != ExitRefused || len(res.Refused) == 0 || res.Refused[0].Resource != "rm" {
				t.Errorf("exit %d refused %+v", res.ExitCode, res.Refused)
			}
			if !strings.Contains(res.Stderr, "scopegate: denied: rm is not in shell_commands.allow") {
				t.Errorf("stderr %q", res.Stderr)
			}
			if strings.Contains(res.Stdout, "after") {
				t.Errorf("the call went on after the refusal")
			}
		})
	}
}

func TestShellCdChecked(t *testing.T) {
	proj, outside := realDir(t), realDir(t)
	r := newRunner(t, Options{Checker: checker{path: denyBelow(outside)}, ReadRoots: []string{proj},
		Confine: ConfineAllowUnconfined})
	for _, cmd := range []string{"cd " + outside, "pushd " + outside, "d=" + outside + "; cd -- $d", ". " + outside + "/x"} {
		t.Run(cmd, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(cmd+"; pwd"), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != ExitRefused || strings.Contains(res.Stdout, outside) {
				t.Errorf("exit %d stdout %q", res.ExitCode, res.Stdout)
			}
		})
	}
}

func TestShellExitCodes(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, Confine: ConfineAllowUnconfined})
	tests := []struct {
		cmd  string
		want int
	}{
		{"true", 0},
		{"false", 1},
		{"exit 7", 7},
		{"sh -c 'exit 3'", 3},
		{"sh -c 'kill -TERM $$'", 128 + 15},
		{"no-such-program-here", 127},
		{"false; true", 0},
		{"/bin/false", 1},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", res.ExitCode, tt.want, res.Stderr)
			}
		})
	}
}

func TestShellTimeoutKillsGroup(t *testing.T) {
	proj := realDir(t)
	var pids []int
	// Without namespaces, so that the pid a program records is one this
	// test can look up (TestShellPrivateViewExitAndSignals covers them).
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Confine: ConfineAllowUnconfined,
		Namespaces: NamespacesOff, KillGrace: 200 * time.Millisecond, OnStart: func(pid int) { pids = append(pids, pid) }})
	tests := []struct {
		name, cmd string
	}{
		{"sleep", "sleep 30"},
		{"background child", "sh -c 'sleep 30 & echo $! > bg.pid; sleep 30'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pids = nil
			os.Remove(filepath.Join(proj, "bg.pid"))
			res, err := run(t, r, policy.ToolShell, policy.ShellArgs{Command: tt.cmd, TimeoutMS: ptr[int64](1500)}, proj)
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.ExitCode != ExitTimedOut {
				t.Errorf("timed out %v exit %d", res.TimedOut, res.ExitCode)
			}
			if len(pids) != 1 {
				t.Fatalf("OnStart saw %v", pids)
			}
			check := []int{pids[0]}
			if b, err := os.ReadFile(filepath.Join(proj, "bg.pid")); err == nil {
				bg, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				check = append(check, bg)
			} else if strings.Contains(tt.cmd, "bg.pid") {
				t.Fatalf("background pid not recorded: %v", err)
			}
			for _, pid := range check {
				waitGone(t, pid)
			}
		})
	}
}

// waitGone fails unless pid is gone or a zombie; an orphan is reaped by
// whoever adopts it, so this waits for that (not for speed).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d still runs", pid)
}

func TestShellOutputCap(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, Confine: ConfineAllowUnconfined, MaxOutput: 1000})
	tests := []struct {
		name, cmd     string
		stdout, trunc bool
	}{
		{"program stdout", "yes | head -n 5000", true, true},
		{"builtin stderr", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 >&2; done", false, true},
		{"small", "echo hi", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd), proj)
			if err != nil {
				t.Fatal(err)
			}
			out := res.Stderr
			if tt.stdout {
				out = res.Stdout
			}
			if res.Truncated != tt.trunc || len(out) > 1000 || (tt.trunc && len(out) != 1000) {
				t.Errorf("truncated %v, %d bytes", res.Truncated, len(out))
			}
		})
	}
}

func TestShellEnvironmentScrubbed(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, Confine: ConfineAllowUnconfined,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/x", "LD_PRELOAD=/evil.so", "BASH_ENV=/evil.sh",
			"GIT_SSH_COMMAND=evil", "PAGER=evil", "SECRET_TOKEN=t0k3n", "TMPDIR=/shared/tmp", "LC_ALL=C"}})
	res, err := run(t, r, policy.ToolShell, shellArgs("export LD_LIBRARY_PATH=/evil NODE_OPTIONS=--evil OK_VAR=1; env"), proj)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("err %v result %+v", err, res)
	}
	for _, bad := range []string{"LD_PRELOAD", "BASH_ENV", "GIT_SSH_COMMAND", "PAGER", "SECRET_TOKEN", "LD_LIBRARY_PATH", "NODE_OPTIONS", "/shared/tmp"} {
		if strings.Contains(res.Stdout, bad) {
			t.Errorf("%s reached the program:\n%s", bad, res.Stdout)
		}
	}
	for _, good := range []string{"HOME=/home/x", "LC_ALL=C", "OK_VAR=1", "TMPDIR=" + r.opts.TempDir + "/scopegate-"} {
		if !strings.Contains(res.Stdout, good) {
			t.Errorf("%s missing:\n%s", good, res.Stdout)
		}
	}
}

func TestShellStdin(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, Confine: ConfineAllowUnconfined})
	res, err := run(t, r, policy.ToolShell, policy.ShellArgs{Command: "cat; read x; echo ${x:-empty}", Stdin: ptr("hello\n")}, proj)
	if err != nil || res.Stdout != "hello\nempty\n" {
		t.Fatalf("err %v stdout %q", err, res.Stdout)
	}
}

func TestShellConfinementModes(t *testing.T) {
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, Confine: ConfineOff})
	res, err := run(t, r, policy.ToolShell, shellArgs("true"), proj)
	if err != nil || res.Confinement != ConfinementNone {
		t.Fatalf("err %v confinement %q", err, res.Confinement)
	}
	if landlockABI() == 0 {
		r := newRunner(t, Options{ReadRoots: []string{proj}})
		if _, err := run(t, r, policy.ToolShell, shellArgs("true"), proj); !errors.Is(err, ErrNoLandlock) {
			t.Fatalf("err %v, want ErrNoLandlock", err)
		}
	}
}

func TestRunUnsupportedTool(t *testing.T) {
	r := newRunner(t, Options{})
	if _, err := run(t, r, policy.ToolRoamReadNode, policy.RoamReadNodeArgs{NodeID: "x"}, "/"); !errors.Is(err, ErrUnsupportedTool) {
		t.Fatalf("err %v", err)
	}
}

func TestShellWaitsForBackgroundJobs(t *testing.T) {
	proj := realDir(t)
	var seen []string
	c := checker{exec: func(argv []string, _ string) []policy.Violation {
		seen = append(seen, argv[0])
		if argv[0] == "wait" {
			return []policy.Violation{{Reason: policy.ReasonCommandNotAllowed, Resource: "wait"}}
		}
		return nil
	}}
	r := newRunner(t, Options{Checker: c, ReadRoots: []string{proj}, WriteRoots: []string{proj}, Confine: ConfineAllowUnconfined})
	res, err := run(t, r, policy.ToolShell, shellArgs("{ sleep 0.2; echo bg; } &"), proj)
	if err != nil || res.ExitCode != 0 || res.Stdout != "bg\n" {
		t.Fatalf("err %v result %+v (checked %v)", err, res, seen)
	}
}
