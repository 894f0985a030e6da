package exec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
	"golang.org/x/sys/unix"
)

// deepDir makes a chain of directories below dir whose absolute path is
// longer than the kernel takes (PATH_MAX), made step by step relative to
// each other, with a denied file at the bottom: a tree the deny walk
// cannot finish.
func deepDir(t *testing.T, dir string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 250)
	for range 20 {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, ".env", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(f, []byte(canary))
	unix.Close(f)
}

// Where the view's masks cannot all be found, programs do not run (exit
// 126, with the reason and what to do), never under Landlock alone and
// never with a word of the network namespace; --confine best-effort runs
// them and the result names what is not masked.
func TestShellMasksFailClosed(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	deepDir(t, proj)
	for _, tc := range []struct {
		confine ConfineMode
		code    int
	}{{ConfineRequired, ExitRefused}, {ConfineAllowUnconfined, 0}} {
		r := newRunner(t, Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Deny: []string{"**/.env"}, Confine: tc.confine})
		res, err := run(t, r, policy.ToolShell, shellArgs("cat sub/ok.txt; touch ran"), proj)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != tc.code {
			t.Fatalf("confine %d: exit %d, want %d: %+v", tc.confine, res.ExitCode, tc.code, res)
		}
		if strings.Contains(res.Stderr, "network namespace") {
			t.Errorf("the reason blames the network namespace: %q", res.Stderr)
		}
		switch tc.confine {
		case ConfineRequired:
			for _, want := range []string{"cannot tell which files below " + proj + " to mask", "file name too long", "--confine best-effort"} {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("stderr lacks %q: %q", want, res.Stderr)
				}
			}
			if strings.Contains(res.Stdout, allowed) || exists(filepath.Join(proj, "ran")) {
				t.Errorf("a program ran: %+v", res)
			}
		default:
			if !strings.Contains(res.Stdout, allowed) || res.Confinement != ConfinementNamespaces ||
				len(res.Unmasked) != 1 || !strings.HasPrefix(res.Unmasked[0], proj+": ") {
				t.Errorf("best effort: %+v", res)
			}
		}
	}
}

// Where the host gives programs no private view, Landlock alone runs
// them only when it leaves nothing denied readable: not over a tree
// holding denied files, not for a scope reading the whole system, unless
// --confine best-effort.
func TestShellNoViewFailsClosed(t *testing.T) {
	requireLandlock(t)
	proj := viewFixture(t)
	clean := realDir(t)
	writeFile(t, filepath.Join(clean, "ok.txt"), allowed+"\n", 0o644)
	noNamespaces := func() *Host {
		h := new(Host)
		h.probeOnce.Do(func() { h.probeErr = errors.New("user namespaces are off on this host") })
		h.probeDone.Store(true)
		return h
	}
	for _, tc := range []struct {
		name    string
		opts    Options
		cwd     string
		refused string
	}{
		{"denied files below", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}}, proj, "would be readable although paths.deny names it"},
		{"the whole system", Options{ReadRoots: []string{"/"}, WriteRoots: []string{clean}}, clean, "leaves every file of the home directory readable"},
		{"nothing denied", Options{ReadRoots: []string{clean}, WriteRoots: []string{clean}}, clean, ""},
		{"best effort", Options{ReadRoots: []string{proj}, WriteRoots: []string{proj}, Confine: ConfineAllowUnconfined}, proj, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Host, tc.opts.Deny, tc.opts.Network = noNamespaces(), []string{"**/.env"}, hostNetwork
			r := newRunner(t, tc.opts)
			res, err := run(t, r, policy.ToolShell, shellArgs("cat ok.txt sub/ok.txt 2>/dev/null; echo ran"), tc.cwd)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refused == "" {
				if res.ExitCode != 0 || !strings.Contains(res.Stdout, "ran") || res.Confinement != ConfinementLandlock {
					t.Errorf("not run under Landlock alone: %+v", res)
				}
				return
			}
			if res.ExitCode != ExitRefused || strings.Contains(res.Stdout, "ran") ||
				!strings.Contains(res.Stderr, "user namespaces are off on this host") || !strings.Contains(res.Stderr, tc.refused) {
				t.Errorf("want refused (%s): %+v", tc.refused, res)
			}
		})
	}
}
