package exec

import (
	"errors"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
	"golang.org/x/sys/unix"
)

// The canary is in denied files (and a process's environment) only; the
// allowed marker is in an allowed file. Both contain the word the commands
// search for.
const (
	canary  = "CANARY-SECRET-0451"
	allowed = "CANARY-ALLOWED-7"
)

// requireNamespaces skips a test on hosts without unprivileged user
// namespaces, except under CI=true, where they are part of the platform.
func requireNamespaces(t testing.TB) {
	t.Helper()
	requireLandlock(t)
	if err := new(Host).namespacesOK(testHelper(t)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func testHelper(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// viewFixture is a worktree holding denied files and links out of it.
func viewFixture(t *testing.T) string {
	t.Helper()
	proj := realDir(t)
	writeFile(t, filepath.Join(proj, ".env"), "TOKEN="+canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "node_modules", "x", "secret.txt"), canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "sub", ".ENV"), canary+" (case folded)\n", 0o644)
	writeFile(t, filepath.Join(proj, "sub", "ok.txt"), allowed+"\n", 0o644)
	for name, target := range map[string]string{"link": "/etc", "shadowlink": "/etc/shadow"} {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	return proj
}

// homeOutsideTmp is a fresh home directory outside /tmp, which the view
// replaces (below /tmp a home is the private /tmp's business).
func homeOutsideTmp(t *testing.T) string {
	t.Helper()
	home, err := os.MkdirTemp("/var/tmp", "scopegate-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// hostSecretLines are lines of the host's secret files this process can
// read (all of them as root): none may reach a program.
func hostSecretLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range hostSecretPaths() {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue // a directory, a terminal
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if len(l) >= 8 && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestShellPrivateView(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	// A process outside the call whose environment holds the canary.
	outside := osexec.Command("sleep", "60")
	outside.Env = []string{"OUTSIDE_SECRET=" + canary}
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = outside.Process.Kill(); _ = outside.Wait() })
	hostTmp, err := os.CreateTemp("", "scopegate-host-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })

	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Deny: []string{"**/.env", "**/node_modules/**"}})
	if got := r.Confinement(); got != ConfinementNamespaces {
		t.Fatalf("confinement %q", got)
	}
	secrets := hostSecretLines(t)
	outsidePID := strconv.Itoa(outside.Process.Pid)
	script := strings.Join([]string{
		"#!/bin/sh",
		"grep -r CANARY .",
		"cat .env node_modules/x/secret.txt",
		"cat /proc/" + outsidePID + "/environ",
		"cat /proc/*/environ",
		"cat shadowlink /etc/shadow /etc/gshadow",
		"find -L . -type f -exec cat {} + 2>/dev/null | grep -a CANARY",
	}, "\n") + "\n"
	writeFile(t, filepath.Join(proj, "all.sh"), script, 0o755)

	tests := []struct {
		name, cmd string
		// want must be in stdout (the allowed content, when the command
		// reads it).
		want string
	}{
		{"grep -r", "grep -r CANARY .", allowed},
		{"grep -R follows links", "grep -R CANARY . 2>/dev/null", allowed},
		{"find -L and cat", "find -L . -type f -exec cat {} + 2>/dev/null | grep -a CANARY", allowed},
		{"tar through links", "tar -ch . 2>/dev/null | tar -xO | grep -a CANARY", allowed},
		{"cp -rL then read the copy", "cp -rL . $TMPDIR/x 2>/dev/null; grep -r CANARY $TMPDIR/x", allowed},
		{"denied files directly", "cat .env node_modules/x/secret.txt sub/.ENV; ls -A node_modules", ""},
		{"etc shadow", "cat /etc/shadow /etc/gshadow shadowlink link/shadow", ""},
		{"ssh host keys and sudoers", "cat /etc/ssh/*_key /etc/sudoers 2>&1; ls -A /etc/sudoers.d", ""},
		{"environ of a process outside", "cat /proc/" + outsidePID + "/environ 2>&1; sh -c 'cat /proc/*/environ' 2>&1 | tr '\\0' '\\n'", ""},
		{"script", "./all.sh 2>&1", allowed},
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		tests = append(tests, struct{ name, cmd, want string }{"python reads files",
			`/usr/bin/python3 -c 'import os
paths = [os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs]
for p in paths + ["link/shadow", "/etc/shadow", "/etc/gshadow"]:
    try: print(p, open(p, errors="replace").read())
    except OSError: pass'`, allowed})
	}
	if rg, err := osexec.LookPath("rg"); err == nil && !strings.HasPrefix(rg, os.Getenv("HOME")+"/") {
		tests = append(tests, struct{ name, cmd, want string }{"rg", rg + " -uuu -L CANARY .", allowed})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Confinement != ConfinementNamespaces {
				t.Errorf("confinement %q", res.Confinement)
			}
			out := res.Stdout + res.Stderr
			if strings.Contains(out, canary) || strings.Contains(out, "SECRET-0451") {
				t.Errorf("the canary leaked:\n%s", out)
			}
			for _, l := range secrets {
				if strings.Contains(out, l) {
					t.Errorf("a line of a host secret leaked: %q", l)
				}
			}
			if !strings.Contains(res.Stdout, tt.want) {
				t.Errorf("stdout lacks %q (exit %d):\n%s\nstderr:\n%s", tt.want, res.ExitCode, res.Stdout, res.Stderr)
			}
		})
	}

	t.Run("masks read as empty", func(t *testing.T) {
		// Programs see the masks (a redirect such as < .env is the
		// interpreter's, opened in the gateway and decided by the Checker).
		res, err := run(t, r, policy.ToolShell, shellArgs("wc -c .env /etc/shadow; ls -A node_modules | wc -l"), proj)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"0 .env", "0 /etc/shadow"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
			}
		}
		if !strings.HasSuffix(res.Stdout, "\n0\n") {
			t.Errorf("node_modules is not empty:\n%s", res.Stdout)
		}
	})

	t.Run("programs have no capabilities", func(t *testing.T) {
		res, err := run(t, r, policy.ToolShell, shellArgs("grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status"), proj)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("err %v result %+v", err, res)
		}
		for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			if strings.Trim(strings.Fields(l)[1], "0") != "" {
				t.Errorf("%s", l)
			}
		}
	})

	t.Run("private tmp", func(t *testing.T) {
		res, err := run(t, r, policy.ToolShell, shellArgs(`ls -A /tmp; sh -c 'echo data > "$TMPDIR/f"' && cat $TMPDIR/f`), proj)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("err %v result %+v", err, res)
		}
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		if lines[len(lines)-1] != "data" {
			t.Errorf("TMPDIR is not writable:\n%s%s", res.Stdout, res.Stderr)
		}
		// Only the first components of the roots carried in remain.
		var want []string
		for _, root := range []string{proj, r.opts.TempDir} {
			if rest, ok := strings.CutPrefix(root, "/tmp/"); ok {
				want = append(want, strings.SplitN(rest, "/", 2)[0])
			}
		}
		got := lines[:len(lines)-1]
		slices.Sort(got)
		want = slices.Compact(slices.Sorted(slices.Values(want)))
		if !slices.Equal(got, want) {
			t.Errorf("/tmp holds %q, want %q", got, want)
		}
		if strings.Contains(res.Stdout, filepath.Base(hostTmp.Name())) {
			t.Errorf("the host's /tmp is visible")
		}
	})

	t.Run("writes reach the worktree", func(t *testing.T) {
		res, err := run(t, r, policy.ToolShell, shellArgs("echo new > sub/new.txt && mkdir -p d/e && mv sub/new.txt d/e/"), proj)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("err %v result %+v", err, res)
		}
		if b, err := os.ReadFile(filepath.Join(proj, "d", "e", "new.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("d/e/new.txt = %q, %v", b, err)
		}
	})

	t.Run("masks cannot be removed or renamed", func(t *testing.T) {
		res, err := run(t, r, policy.ToolShell, shellArgs("umount .env; mv node_modules nm; rm -rf node_modules; sh -c 'echo x > .env'; cat .env"), proj)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Stdout, "x") {
			t.Errorf(".env was written through its mask:\n%s", res.Stdout)
		}
		if b, err := os.ReadFile(filepath.Join(proj, "node_modules", "x", "secret.txt")); err != nil || !strings.Contains(string(b), canary) {
			t.Errorf("node_modules changed on the host: %q %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(proj, ".env")); err != nil || !strings.Contains(string(b), canary) {
			t.Errorf(".env changed on the host: %q %v", b, err)
		}
	})
}

func TestShellPrivateViewExitAndSignals(t *testing.T) {
	requireNamespaces(t)
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, KillGrace: 200 * time.Millisecond})
	for _, tt := range []struct {
		cmd  string
		want int
	}{
		{"true", 0},
		{"sh -c 'exit 3'", 3},
		{"sh -c 'kill -TERM $$'", 128 + 15},
		{"/no/such/program", 127},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", res.ExitCode, tt.want, res.Stderr)
			}
		})
	}
	t.Run("timeout ends the program and what it left behind", func(t *testing.T) {
		// A program that traps SIGINT gets it (forwarded by the helper),
		// and a background child that outlives it dies with the namespace.
		res, err := run(t, r, policy.ToolShell, policy.ShellArgs{
			// The timeout leaves the program time to set its trap
			// even in a slow (race-detector, unprivileged) run.
			Command:   "sh -c 'trap \"echo got-int; exit 5\" INT; (sleep 4; echo late > late.txt) & sleep 30 & wait'",
			TimeoutMS: ptr[int64](2000)}, proj)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut {
			t.Errorf("not timed out: %+v", res)
		}
		if !strings.Contains(res.Stdout, "got-int") {
			t.Errorf("the program did not get SIGINT: %+v", res)
		}
		time.Sleep(2500 * time.Millisecond)
		if exists(filepath.Join(proj, "late.txt")) {
			t.Error("a background process outlived the call")
		}
	})
	t.Run("a program that ignores SIGINT is killed after the grace", func(t *testing.T) {
		// Were it not killed, the call would end after the sleep with
		// "survived" in its output.
		res, err := run(t, r, policy.ToolShell, policy.ShellArgs{
			Command:   "sh -c 'trap \"\" INT; sleep 30; echo survived'",
			TimeoutMS: ptr[int64](300)}, proj)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || strings.Contains(res.Stdout, "survived") {
			t.Errorf("want a timed-out call whose program did not go on: %+v", res)
		}
	})
}

func TestShellLandlockFallback(t *testing.T) {
	requireLandlock(t)
	proj := viewFixture(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Deny: []string{"**/.env", "**/node_modules/**"}, Namespaces: NamespacesOff, Network: hostNetwork})
	res, err := run(t, r, policy.ToolShell, shellArgs("cat sub/ok.txt; cat /etc/passwd >/dev/null && echo passwd-ok; cat /etc/shadow; cat /proc/1/environ; cat /proc/self/status >/dev/null && echo self-ok"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != ConfinementLandlock {
		t.Errorf("confinement %q, want %q", res.Confinement, ConfinementLandlock)
	}
	for _, want := range []string{allowed, "passwd-ok", "self-ok", "/etc/shadow: Permission denied", "/proc/1/environ: Permission denied"} {
		if !strings.Contains(res.Stdout+res.Stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
		}
	}
	for _, l := range hostSecretLines(t) {
		if strings.Contains(res.Stdout, l) {
			t.Errorf("a line of a host secret leaked: %q", l)
		}
	}
}

// A scope that reads the whole system (the coding profile) gets the
// private view of viewplan.go: its project walked and masked like any
// root, the home directory replaced by an empty one holding only what the
// view binds back (here the files the command names, themselves walked
// and masked), the host's secrets masked.
func TestShellPrivateViewWholeSystemRead(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	home := homeOutsideTmp(t)
	other := filepath.Join(home, "code", "a", "b", "c")
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), canary+"\n", 0o600)
	writeFile(t, filepath.Join(home, ".config", "gh", "hosts.yml"), "oauth_token: "+canary+"\n", 0o600)
	writeFile(t, filepath.Join(home, ".bash_history"), "export TOKEN="+canary+"\n", 0o600)
	writeFile(t, filepath.Join(home, "notes.txt"), allowed+"\n", 0o644)
	writeFile(t, filepath.Join(home, ".mozilla", "profile", "cookies.sqlite"), canary+" unnamed by any glob\n", 0o600)
	writeFile(t, filepath.Join(other, ".env"), "TOKEN="+canary+"\n", 0o600)
	writeFile(t, filepath.Join(other, "readme.txt"), allowed+" deep\n", 0o644)
	// The user's git configuration, a link into a dotfiles repository.
	writeFile(t, filepath.Join(home, "dotfiles", "gitconfig"), "[user]\n\tname = "+allowed+"\n", 0o644)
	if err := os.Symlink("dotfiles/gitconfig", filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Home: home,
		Deny: []string{"**/.env", "**/node_modules/**", "**/.ssh/**", "**/.config/gh/**", "**/.*_history"}})
	secrets := hostSecretLines(t)
	for _, tc := range []struct {
		cmd     string
		allowed int // lines with the allowed marker
	}{
		{"cat " + home + "/.ssh/id_ed25519 " + home + "/.config/gh/hosts.yml " +
			home + "/.bash_history /etc/shadow; cat " + home + "/notes.txt sub/ok.txt", 2},
		{"cat .env sub/.ENV node_modules/x/secret.txt", 0},
		{"cat " + other + "/.env " + other + "/readme.txt", 1},
		{"grep -r CANARY .", 1},
		{"grep -r CANARY " + home, 1}, // the git configuration, bound back
		{"find " + home + " -type f -exec cat {} +", 1},
		{"/bin/sh -c 'cat " + home + "/.mozilla/profile/cookies.sqlite; ls -a " + home + "'", 0},
		{"/bin/sh -c 'cat " + home + "/.gitconfig'", 1},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			res, err := run(t, r, policy.ToolShell, shellArgs(tc.cmd), proj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Confinement != ConfinementNamespaces {
				t.Errorf("confinement %q, want %q", res.Confinement, ConfinementNamespaces)
			}
			out := res.Stdout + res.Stderr
			if strings.Contains(out, canary) {
				t.Errorf("a denied or hidden file was read: %s", out)
			}
			for _, l := range secrets {
				if strings.Contains(out, l) {
					t.Errorf("a host secret was read: %q", l)
				}
			}
			if strings.Count(res.Stdout, allowed) != tc.allowed {
				t.Errorf("allowed files read %d times, want %d: %+v", strings.Count(res.Stdout, allowed), tc.allowed, res)
			}
			if strings.Contains(tc.cmd, "ls -a") && (strings.Contains(res.Stdout, ".mozilla") || strings.Contains(res.Stdout, "notes.txt") ||
				!strings.Contains(res.Stdout, ".gitconfig")) {
				t.Errorf("the home directory shows what no one bound back: %s", res.Stdout)
			}
		})
	}
}

// A program found below the home directory, outside the scope's roots,
// runs with read and execute on its toolchain root, where what the deny
// patterns match is masked; the result names the grant.
func TestShellToolchainUnderHome(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	home, err := os.MkdirTemp("/var/tmp", "scopegate-toolchain-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	app := filepath.Join(home, ".local", "share", "mytool")
	tool := filepath.Join(app, "bin", "mytool")
	writeFile(t, tool, "#!/bin/sh\necho tool ran\ncat "+filepath.Join(app, "share", "data.txt")+" "+
		filepath.Join(app, ".netrc")+"\ncat "+filepath.Join(home, "outside.txt")+"\n", 0o755)
	writeFile(t, filepath.Join(app, "share", "data.txt"), allowed+"\n", 0o644)
	writeFile(t, filepath.Join(app, ".netrc"), canary+"\n", 0o600)
	writeFile(t, filepath.Join(home, "outside.txt"), canary+" outside the toolchain\n", 0o644)
	c := checker{}
	r := newRunner(t, Options{Checker: pathChecker{c, []string{filepath.Dir(tool)}}, ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Home: home, Deny: []string{"**/.netrc"}})
	res, err := run(t, r, policy.ToolShell, shellArgs("mytool"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "tool ran") || !strings.Contains(res.Stdout, allowed) {
		t.Errorf("the toolchain program did not run or read its own files: %+v", res)
	}
	if strings.Contains(res.Stdout+res.Stderr, canary) {
		t.Errorf("a denied file or a file outside the toolchain root was read: %+v", res)
	}
	if want := []string{app}; !slices.Equal(res.Toolchains, want) {
		t.Errorf("toolchains %v, want %v", res.Toolchains, want)
	}
	// Under Landlock alone there is no grant: nothing would mask .netrc.
	r = newRunner(t, Options{Checker: pathChecker{c, []string{filepath.Dir(tool)}}, ReadRoots: []string{proj}, WriteRoots: []string{proj},
		Home: home, Deny: []string{"**/.netrc"}, Namespaces: NamespacesOff})
	res, err = run(t, r, policy.ToolShell, shellArgs("mytool"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "tool ran") || len(res.Toolchains) != 0 {
		t.Errorf("Landlock alone granted a toolchain: %+v", res)
	}
}

// pathChecker is checker with programs looked up on dirs.
type pathChecker struct {
	checker
	dirs []string
}

func (c pathChecker) LookPath(word, cwd string) (string, error) {
	var sc policy.Scope
	return sc.LookPath(word, cwd, policy.Env{Path: c.TrustedPath()})
}

func (c pathChecker) TrustedPath() []string {
	return append(slices.Clone(c.dirs), c.checker.TrustedPath()...)
}

// The runner tells the Checker, for each program, which trees its view
// masks whole: the roots of a scope it walked, with link-following readers
// too; for a scope reading the system, its walked roots and the hidden
// directories (which show only walked trees), not the system directories
// nor link-following readers; nothing under Landlock alone.
func TestShellReportsMaskedTrees(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	other := realDir(t)
	home, err := os.MkdirTemp("/var/tmp", "scopegate-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	for _, tc := range []struct {
		name     string
		opts     Options
		dir      string
		follow   bool
		want     bool
		wantConf string
	}{
		{"view, below a root", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}}, filepath.Join(proj, "sub"), false, true, ConfinementNamespaces},
		{"view, following links", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}}, proj, true, true, ConfinementNamespaces},
		{"view, outside the roots", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}}, other, false, false, ConfinementNamespaces},
		{"landlock alone", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Namespaces: NamespacesOff, Network: hostNetwork}, proj, false, false, ConfinementLandlock},
		{"scope reading the system, its project", Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}}, proj, false, true, ConfinementNamespaces},
		{"scope reading the system, following links", Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}}, proj, true, false, ConfinementNamespaces},
		{"scope reading the system, a hidden directory", Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Home: home}, filepath.Join(home, "code"), false, true, ConfinementNamespaces},
		{"scope reading the system, a system directory", Options{ReadRoots: []string{"/"}, WriteRoots: []string{proj}}, "/usr/share", false, false, ConfinementNamespaces},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *bool
			tc.opts.Deny = []string{"**/.env", "**/node_modules/**"}
			tc.opts.Checker = checker{view: func(vw View) {
				v := vw.Masked(tc.dir, tc.follow)
				got = &v
			}}
			r := newRunner(t, tc.opts)
			res, err := run(t, r, policy.ToolShell, shellArgs("/bin/true"), proj)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("err %v result %+v", err, res)
			}
			if res.Confinement != tc.wantConf {
				t.Errorf("confinement %q, want %q", res.Confinement, tc.wantConf)
			}
			if got == nil || *got != tc.want {
				t.Errorf("masked(%s, follow %v) = %v, want %v", tc.dir, tc.follow, got, tc.want)
			}
		})
	}
}

// git and node see their own data directories where the scope denies
// them; every other program finds them masked.
func TestShellProgramData(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	writeFile(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	rl := rules{View: &view{Masks: []string{filepath.Join(proj, ".git"), filepath.Join(proj, "node_modules"), filepath.Join(proj, ".env"),
		filepath.Join(proj, "a", "node_modules", "b", "x.json")}}}
	for prog, want := range map[string][]string{
		"/usr/bin/git":  {filepath.Join(proj, "node_modules"), filepath.Join(proj, ".env"), filepath.Join(proj, "a", "node_modules", "b", "x.json")},
		"/usr/bin/node": {filepath.Join(proj, ".git"), filepath.Join(proj, ".env")},
		"/usr/bin/cat":  rl.View.Masks,
	} {
		got := withProgramData(rl, programData(prog, nil, "")).View.Masks
		if !slices.Equal(got, want) {
			t.Errorf("%s: masks %v, want %v", prog, got, want)
		}
	}
	if len(rl.View.Masks) != 4 {
		t.Errorf("the call's view was changed: %v", rl.View.Masks)
	}
}

// A successful probe is remembered in the host's probe cache and trusted
// by the next process with the same key; a stale entry is probed again;
// an entry whose view then fails to build is forgotten, and the call
// fails closed.
func TestProbeCache(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	cache := filepath.Join(t.TempDir(), "cache", "namespace-probe")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	call := func(h *Host, helper string) Result {
		t.Helper()
		r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj},
			Deny: []string{"**/.env"}, Host: h, HelperPath: helper})
		res, err := run(t, r, policy.ToolShell, shellArgs("cat sub/ok.txt"), proj)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cached := func() string {
		b, err := os.ReadFile(cache)
		if err != nil {
			return ""
		}
		return string(b)
	}

	h := &Host{ProbeCache: cache}
	if res := call(h, exe); res.Confinement != ConfinementNamespaces || !strings.Contains(res.Stdout, allowed) || h.probeCached.Load() {
		t.Fatalf("first process: %+v, from cache %v", res, h.probeCached.Load())
	}
	if got, want := cached(), probeKey(exe); got != want || want == "" {
		t.Fatalf("cache holds %q, want %q", got, want)
	}

	h = &Host{ProbeCache: cache}
	if res := call(h, exe); res.Confinement != ConfinementNamespaces || !strings.Contains(res.Stdout, allowed) || !h.probeCached.Load() {
		t.Fatalf("second process: %+v, from cache %v", res, h.probeCached.Load())
	}

	if err := os.WriteFile(cache, []byte("scopegate namespace probe v2\nanother boot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h = &Host{ProbeCache: cache}
	if res := call(h, exe); res.Confinement != ConfinementNamespaces || h.probeCached.Load() || cached() != probeKey(exe) {
		t.Fatalf("stale entry: %+v, from cache %v, cache %q", res, h.probeCached.Load(), cached())
	}

	// A helper that cannot build the view (it exits 126 at once), trusted
	// from a remembered probe.
	broken := filepath.Join(t.TempDir(), "broken-helper")
	writeFile(t, broken, "#!/bin/sh\necho 'scopegate: confine: private view: refused' >&2\nexit 126\n", 0o755)
	if err := os.WriteFile(cache, []byte(probeKey(broken)), 0o600); err != nil {
		t.Fatal(err)
	}
	h = &Host{ProbeCache: cache}
	res := call(h, broken)
	if res.ExitCode != helperExitCode || strings.Contains(res.Stdout, allowed) || !h.probeCached.Load() {
		t.Fatalf("broken view: %+v, from cache %v", res, h.probeCached.Load())
	}
	if _, err := os.Stat(cache); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the entry of a view that failed is still there: %v", err)
	}
}

// Read roots that no write root holds are bound read-only in the view; the
// write roots inside them stay writable.
func TestShellPrivateViewReadOnlyBinds(t *testing.T) {
	requireNamespaces(t)
	base := realDir(t)
	ro, rw := filepath.Join(base, "ro"), filepath.Join(base, "ro", "work")
	writeFile(t, filepath.Join(ro, "a.txt"), "a\n", 0o644)
	writeFile(t, filepath.Join(rw, "b.txt"), "b\n", 0o644)
	r := newRunner(t, Options{ReadRoots: []string{ro}, WriteRoots: []string{rw}})
	res, err := run(t, r, policy.ToolShell, shellArgs("cat /proc/self/mountinfo; touch "+rw+"/new && echo rw-ok; touch "+ro+"/new || echo ro-refused"), rw)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != ConfinementNamespaces {
		t.Fatalf("confinement %q", res.Confinement)
	}
	opts := map[string]string{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			opts[f[4]] = f[5] // the last mount on a point wins
		}
	}
	if o := opts[ro]; !strings.HasPrefix(o, "ro") {
		t.Errorf("%s is mounted %q, want read-only", ro, o)
	}
	if o := opts[rw]; !strings.HasPrefix(o, "rw") {
		t.Errorf("%s is mounted %q, want writable", rw, o)
	}
	if !strings.Contains(res.Stdout, "rw-ok") || !strings.Contains(res.Stdout, "ro-refused") {
		t.Errorf("writes: %s\n%s", res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "Read-only file system") {
		t.Errorf("the write below the read-only root was not refused by the mount: %s", res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(rw, "new")); err != nil {
		t.Errorf("the write to the write root did not land: %v", err)
	}
}

// A read-only root may hold the private /tmp, where the masks are made,
// and the denied files below it stay masked.
func TestShellPrivateViewReadOnlyTmp(t *testing.T) {
	requireNamespaces(t)
	proj, err := os.MkdirTemp("/var/tmp", "scopegate-ro-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(proj) })
	writeFile(t, filepath.Join(proj, ".env"), canary+"\n", 0o644)
	writeFile(t, filepath.Join(proj, "ok.txt"), allowed+"\n", 0o644)
	// The deny pattern names the file, so the walk of /tmp (which may
	// hold anything, up to more entries than a view searches) skips it.
	r := newRunner(t, Options{ReadRoots: []string{privateTmp, proj}, WriteRoots: []string{filepath.Join(proj, "out")},
		Deny: []string{filepath.Join(proj, ".env")}})
	res, err := run(t, r, policy.ToolShell, shellArgs("cat ok.txt .env; touch new || echo ro-refused"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != ConfinementNamespaces || !strings.Contains(res.Stdout, allowed) ||
		strings.Contains(res.Stdout, canary) || !strings.Contains(res.Stdout, "ro-refused") {
		t.Fatalf("%+v", res)
	}
}

// The home walk of a scope reading /** goes deeper only on the way to a
// pattern's named directories.
// TestShellPrivateViewHelperOutOfReach checks that the program cannot
// reach the helper that supervises it, though both run as the same user
// in the same namespaces: not its pipes (through /proc/1/fd, to forge or
// hold back the status the gateway waits for), not its memory or
// environment, not a capability on any of its threads, and not its life
// (no signal from the program, sent or queued as a fault, ends it, so the
// status stays the program's own).
func TestShellPrivateViewHelperOutOfReach(t *testing.T) {
	requireNamespaces(t)
	proj := realDir(t)
	r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, KillGrace: 200 * time.Millisecond})
	script := `
for f in /proc/1/fd/* /proc/1/task/*/fd/*; do
  timeout 1 sh -c 'printf "x\052" > "$1"' _ "$f" 2>/dev/null && echo "wrote $f"
  timeout 1 sh -c ': < "$1"' _ "$f" 2>/dev/null && echo "opened $f"
done
cat /proc/1/environ >/dev/null 2>&1 && echo "read /proc/1/environ"
cat /proc/1/mem >/dev/null 2>&1 && echo "read /proc/1/mem"
for s in /proc/1/task/*/status; do
  grep -E '^Cap(Eff|Prm|Amb):' "$s" | grep -v '0000000000000000$' | sed "s|^|capability in $s: |"
done
for sig in $(seq 1 64); do [ $sig = 9 ] || [ $sig = 19 ] || kill -s $sig 1 2>/dev/null; done
for sig in SEGV BUS ILL FPE ABRT TRAP SYS; do /usr/bin/kill -q 1 -s $sig 1 2>/dev/null; done
sleep 0.2
echo still-here
exit 7`
	if err := os.WriteFile(filepath.Join(proj, "probe.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := run(t, r, policy.ToolShell, shellArgs("sh ./probe.sh"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != ConfinementNamespaces {
		t.Fatalf("confinement %q", res.Confinement)
	}
	if res.ExitCode != 7 || strings.TrimSpace(res.Stdout) != "still-here" {
		t.Errorf("want exit 7 and only still-here on stdout, got exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestShellInheritedDescriptorsClosed checks that a descriptor the
// gateway inherited without close-on-exec (an agent's open file or
// socket) does not reach a confined program, in the private view and
// under Landlock alone: Landlock checks opens, not descriptors a program
// already holds.
func TestShellInheritedDescriptorsClosed(t *testing.T) {
	requireLandlock(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(outside, syscall.O_RDONLY, 0) // no O_CLOEXEC: inherited by every child
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	proj := realDir(t)
	cmd := "ls /proc/self/fd"
	if fd < 10 { // sh redirects single-digit descriptors only
		cmd = "cat <&" + strconv.Itoa(fd) + " 2>/dev/null; " + cmd
	}
	for _, ns := range []NamespaceMode{NamespacesAuto, NamespacesOff} {
		r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Namespaces: ns, Network: hostNetwork})
		if ns == NamespacesAuto {
			requireNamespaces(t)
		}
		res, err := run(t, r, policy.ToolShell, shellArgs(cmd), proj)
		if err != nil {
			t.Fatal(err)
		}
		fds := strings.Fields(res.Stdout)
		if strings.Contains(res.Stdout, canary) || slices.Contains(fds, strconv.Itoa(fd)) || len(fds) > 4 {
			t.Errorf("%s: the program holds descriptors it did not open (fd %d inherited): %q", res.Confinement, fd, res.Stdout)
		}
	}
}

// TestShellSignalsScopedToCall checks that a confined program cannot
// signal a process of the same user outside its call: not the gateway
// (under Landlock alone its parent, which a SIGSTOP would keep from ever
// enforcing the timeout), not any other. It uses signal 0, which is
// checked like any signal and delivers none.
func TestShellSignalsScopedToCall(t *testing.T) {
	requireLandlock(t)
	if landlockABI() < 6 {
		t.Skip("Landlock scopes signals from ABI 6")
	}
	outside := osexec.Command("sleep", "60")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Process.Kill(); outside.Wait() })
	proj := realDir(t)
	other := "kill -0 " + strconv.Itoa(outside.Process.Pid) + " 2>/dev/null && echo reached-other; echo done"
	for _, tt := range []struct {
		ns  NamespaceMode
		cmd string
	}{
		// Under Landlock alone the program's parent is the gateway.
		{NamespacesOff, "sh -c '[ $PPID = " + strconv.Itoa(os.Getpid()) + " ] || echo parent-$PPID; kill -0 $PPID 2>/dev/null && echo reached-parent; " + other + "'"},
		// In the view the parent is the helper, PID 1 of the call's own
		// namespace (TestShellPrivateViewHelperOutOfReach); the gateway
		// is not in it.
		{NamespacesAuto, "sh -c '" + other + "'"},
	} {
		if tt.ns == NamespacesAuto {
			requireNamespaces(t)
		}
		r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Namespaces: tt.ns, Network: hostNetwork})
		res, err := run(t, r, policy.ToolShell, shellArgs(tt.cmd), proj)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(res.Stdout) != "done" {
			t.Errorf("%s: a signal left the call: %q (stderr %q)", res.Confinement, res.Stdout, res.Stderr)
		}
	}
}

// TestPrivateViewAsUnprivilegedUser runs the private-view tests again as a
// user with no capability on the host (uid and gid 1000), the way most
// gateways run: the helper maps its own ids, which only an unprivileged
// process's own-id rule allows. It needs root to start them.
func TestPrivateViewAsUnprivilegedUser(t *testing.T) {
	if os.Getenv("SCOPEGATE_TEST_UNPRIVILEGED") != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to start the tests as another user; they run as this user already")
	}
	requireNamespaces(t)
	// The test binary may sit in a directory only root can enter.
	dir, err := os.MkdirTemp("", "scopegate-unpriv-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "exec.test")
	data, err := os.ReadFile(testHelper(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"TestShellPrivateView", "TestShellPrivateViewReadOnlyBinds", "TestShellToolchainUnderHome", "TestProbeCache",
		"TestShellPrivateViewHelperOutOfReach", "TestShellInheritedDescriptorsClosed", "TestShellPrivateViewExitAndSignals"}
	cmd := osexec.Command(bin, "-test.run", "^("+strings.Join(names, "|")+")$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SCOPEGATE_TEST_UNPRIVILEGED=1", "CI=true", "HOME="+dir, "TMPDIR="+dir, "XDG_CACHE_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid 1000: %v\n%s", err, out)
	}
	for _, name := range names {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("as uid 1000, %s did not pass:\n%s", name, out)
		}
	}
}

// TestCloexecByProc checks the way the helper marks inherited descriptors
// close-on-exec where a seccomp filter refuses close_range.
func TestCloexecByProc(t *testing.T) {
	low, err := syscall.Dup(0) // without close-on-exec, below the first
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(low)
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	flags := func(fd int) int {
		v, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if flags(fd)&unix.FD_CLOEXEC != 0 {
		t.Fatal("the descriptor starts close-on-exec")
	}
	if err := cloexecByProc(fd); err != nil {
		t.Fatal(err)
	}
	if flags(fd)&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d is not close-on-exec", fd)
	}
	if flags(low)&unix.FD_CLOEXEC != 0 {
		t.Errorf("descriptor %d below the first was marked", low)
	}
}

// Single files granted below /tmp, for reading and for writing, are
// carried into the private /tmp: a confined program reads the one and
// writes the other, and sees nothing else of the directory they are in.
// Under Landlock alone the same grants hold.
func TestShellPrivateViewCarriesFiles(t *testing.T) {
	requireNamespaces(t)
	for _, tc := range []struct {
		ns   NamespaceMode
		conf string
	}{{NamespacesAuto, ConfinementNamespaces}, {NamespacesOff, ConfinementLandlock}} {
		t.Run(tc.conf, func(t *testing.T) { testCarriesFiles(t, tc.ns, tc.conf) })
	}
}

func testCarriesFiles(t *testing.T, ns NamespaceMode, conf string) {
	dir, err := os.MkdirTemp(privateTmp, "scopegate-carry-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	proj := filepath.Join(dir, "proj")
	ro, rw, other := filepath.Join(dir, "read.txt"), filepath.Join(dir, "deep", "write.txt"), filepath.Join(dir, "other.txt")
	writeFile(t, filepath.Join(proj, "a.txt"), allowed+"\n", 0o644)
	writeFile(t, ro, allowed+" read\n", 0o644)
	writeFile(t, rw, "old\n", 0o644)
	writeFile(t, other, canary+"\n", 0o644)
	r := newRunner(t, Options{ReadRoots: []string{proj, ro}, WriteRoots: []string{proj, rw}, Namespaces: ns, Network: hostNetwork})
	res, err := run(t, r, policy.ToolShell, shellArgs("cat a.txt "+ro+" && echo new >"+rw+" && cat "+rw+"; cat "+other+"; ls "+dir), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confinement != conf {
		t.Fatalf("confinement %q, want %q: %+v", res.Confinement, conf, res)
	}
	if want := allowed + "\n" + allowed + " read\nnew\n"; !strings.HasPrefix(res.Stdout, want) {
		t.Errorf("stdout %q, want it to start with %q; stderr %q", res.Stdout, want, res.Stderr)
	}
	if strings.Contains(res.Stdout+res.Stderr, canary) || strings.Contains(res.Stdout, "other.txt") {
		t.Errorf("a file beside the granted ones was seen: %+v", res)
	}
	if b, err := os.ReadFile(rw); err != nil || string(b) != "new\n" {
		t.Errorf("the granted file holds %q (%v), want the program's write", b, err)
	}
	// The file granted for reading stays read-only.
	res, err = run(t, r, policy.ToolShell, shellArgs("echo x >"+ro), proj)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Errorf("a file granted for reading was written: %+v", res)
	}
	if b, _ := os.ReadFile(ro); string(b) != allowed+" read\n" {
		t.Errorf("read-only file now holds %q", b)
	}
}

// A toolchain below a home directory that lies below /tmp is carried into
// the private /tmp with its masks.
func TestShellToolchainUnderHomeBelowTmp(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	home, err := os.MkdirTemp(privateTmp, "scopegate-toolchain-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	app := filepath.Join(home, ".local", "share", "hometool")
	tool := filepath.Join(app, "bin", "hometool")
	writeFile(t, tool, "#!/bin/sh\necho tool ran\ncat "+filepath.Join(app, "share", "data.txt")+" "+
		filepath.Join(app, ".netrc")+"\ncat "+filepath.Join(home, "outside.txt")+"\n", 0o755)
	writeFile(t, filepath.Join(app, "share", "data.txt"), allowed+"\n", 0o644)
	writeFile(t, filepath.Join(app, ".netrc"), canary+"\n", 0o600)
	writeFile(t, filepath.Join(home, "outside.txt"), canary+" outside the toolchain\n", 0o644)
	r := newRunner(t, Options{Checker: pathChecker{checker{}, []string{filepath.Dir(tool)}}, ReadRoots: []string{proj},
		WriteRoots: []string{proj}, Home: home, Deny: []string{"**/.netrc"}})
	res, err := run(t, r, policy.ToolShell, shellArgs("hometool"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "tool ran") || !strings.Contains(res.Stdout, allowed) {
		t.Errorf("the toolchain program did not run or read its own files: %+v", res)
	}
	if strings.Contains(res.Stdout+res.Stderr, canary) {
		t.Errorf("a denied file or a file outside the toolchain root was read: %+v", res)
	}
	if want := []string{app}; !slices.Equal(res.Toolchains, want) {
		t.Errorf("toolchains %v, want %v", res.Toolchains, want)
	}
}
