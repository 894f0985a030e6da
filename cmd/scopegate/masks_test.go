package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// maskCanary is the secret planted in the denied files of the projects
// below.
const maskCanary = "MASK-CANARY-7303"

// maskProject writes, below proj, a project holding what the coding
// profile denies (a .env at the top and below, a key, a certificate, AWS
// credentials), a TODO, a script and a Makefile that read every one of
// them, a package in node_modules and a git repository; and, in the home
// directory, another project with a .env four levels down.
// leak.py opens every one of them, leakenv.py those a worktree scope
// denies too (.env files, .aws).
func maskProject(t *testing.T, proj, home string) {
	t.Helper()
	other := filepath.Join(home, "code", "other", "a", "b", ".env")
	deep := "gen/d3/d321/.env" // below the generated tree, when there is one
	secrets := []string{".env", "sub/.env", "certs/server.pem", "deploy/id_rsa", ".aws/credentials", other}
	// A script that opens the files it names itself, as project code does.
	script := func(paths ...string) string {
		var b strings.Builder
		b.WriteString("for p in [")
		for _, p := range paths {
			b.WriteString(strconv.Quote(p) + ", ")
		}
		b.WriteString("]:\n    try:\n        print(p, repr(open(p).read()))\n    except OSError as e:\n        print(p, e)\nprint('leak ran')\n")
		return b.String()
	}
	var mk strings.Builder
	mk.WriteString("show:\n\t@echo recipe ran\n")
	for _, s := range append(secrets, deep) {
		mk.WriteString("\t-@cat " + s + "\n")
	}
	files := map[string]string{
		"main.py":                   "# TODO: handle the empty case\nprint('main')\n",
		"leak.py":                   script(append(secrets, deep)...),
		"leakenv.py":                script(".env", "sub/.env", ".aws/credentials", deep),
		"Makefile":                  mk.String(),
		"node_modules/dep/index.js": "module.exports = { answer: () => 42 };\n",
		"use.js":                    "console.log('answer', require('dep').answer());\n",
		".gitignore":                "gen/\nnode_modules/\n",
	}
	for _, s := range secrets {
		files[s] = "TOKEN=" + maskCanary + "\n"
	}
	for rel, content := range files {
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(proj, rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.py", "leak.py", "leakenv.py", "Makefile", "use.js", ".gitignore"}, {"commit", "-qm", "first commit"}} {
		cmd := exec.Command("git", append([]string{"-C", proj, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// checkMasks runs, through `call` in the session, the programs of the
// project maskProject wrote, and requires that none shows a denied byte
// while each does its work; and that `check`, where the caller runs the
// command, still refuses the recursive reader.
func (s *codingSession) checkMasks(t *testing.T) {
	for _, tc := range []struct {
		command string
		want    string
	}{
		{"python3 leak.py", "leak ran"},
		{"make show", "recipe ran"},
		{"git status --short", "?? "},
		{"git log --oneline", "first commit"},
		{"node use.js", "answer 42"},
		{"grep -rn TODO .", "./main.py:1:# TODO: handle the empty case"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			s := s.on(t)
			res, r := s.shell(tc.command)
			out := toJSON(res)
			if r == nil || r["confinement"] != "namespaces+landlock" || !strings.Contains(fmtAny(r["stdout"]), tc.want) {
				t.Fatalf("want %q in stdout: %s", tc.want, out)
			}
			if strings.Contains(out, maskCanary) {
				t.Errorf("a denied byte reached the result: %s", out)
			}
			if strings.HasPrefix(tc.command, "python3") && r["exit_code"] != float64(0) {
				t.Errorf("the script failed: %s", out)
			}
		})
	}
	b, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": "grep -rn TODO ."}, "cwd": s.proj})
	var check map[string]any
	if err := json.Unmarshal(s.run("check", "--session", s.id, string(b)), &check); err != nil || check["allowed"] != false {
		t.Errorf("check grep -rn TODO .: %v (%v), want refused", check, err)
	}
}

// Under the built-in coding profile (a scope that reads /**), programs the
// scope allows read nothing paths.deny names: not in the project (a .env
// at the top and below, a key, a certificate, AWS credentials), not in
// another project of the home directory; a Makefile recipe neither; git
// and node keep .git and node_modules; grep -rn runs and finds the TODO.
func TestCodingProfileMasksProject(t *testing.T) {
	for _, p := range []string{"python3", "make", "git", "node", "grep"} {
		requireProgram(t, p)
	}
	s := newCodingSession(t, nil)
	maskProject(t, s.proj, s.home)
	s.checkMasks(t)
}

// changesWhileServing runs the session's calls through serve, which
// watches the project's directories between calls: once it has walked the
// project, new names are made in the project (a directory holding a .env,
// a hard link to a file outside it, a file renamed into place as a .env, a
// directory holding a .env renamed to elsewhere in the project), and a
// script that opens each of them reads none of their bytes. outside is a
// directory on the project's file system, outside the project.
func (s *codingSession) changesWhileServing(t *testing.T, outside string) {
	c := s.w.cmd("serve", "--listen", "127.0.0.1:0")
	c.Env = append(c.Env, s.env...)
	srv := startServeCmd(t, c)
	defer srv.stop()
	s.checkMasks(t)
	secret := "TOKEN=" + maskCanary + "\n"
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(s.proj, "gen", "d5", "d512", "newdir", ".env"))
	write(filepath.Join(outside, "elsewhere", "secret.txt"))
	mustDo(os.Link(filepath.Join(outside, "elsewhere", "secret.txt"), filepath.Join(s.proj, "gen", "d7", "d700", "linked.txt")))
	write(filepath.Join(s.proj, "staged.txt"))
	mustDo(os.Rename(filepath.Join(s.proj, "staged.txt"), filepath.Join(s.proj, "gen", "d9", "d900", ".env")))
	mustDo(os.Rename(filepath.Join(s.proj, "sub"), filepath.Join(s.proj, "gen", "d11", "d1100", "moved")))
	script := "for p in ['gen/d5/d512/newdir/.env', 'gen/d7/d700/linked.txt', 'gen/d9/d900/.env', 'gen/d11/d1100/moved/.env']:\n" +
		"    try:\n        print(p, repr(open(p).read()))\n    except OSError as e:\n        print(p, e)\nprint('leak ran')\n"
	if err := os.WriteFile(filepath.Join(s.proj, "changed.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res, r := s.shell("python3 changed.py")
	if r == nil || !strings.Contains(fmtAny(r["stdout"]), "leak ran") || strings.Contains(toJSON(res), maskCanary) {
		t.Errorf("after changes while serve was up: %s", toJSON(res))
	}
	if _, text := get(t, srv.url+"/metrics"); metricValue(t, text, "scopegate_tool_calls_total", `via="cli"`) < 7 {
		t.Errorf("the calls did not go through serve:\n%s", text)
	}
}

// memDir returns a fresh directory in /dev/shm, a tmpfs, where a tree of a
// million entries is made in seconds (on a disk file system, minutes):
// the walk then reads the same kernel caches it reads of a tree a disk
// holds once listed. It is removed, in parallel, after the test.
func memDir(t testing.TB) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		if os.Getenv("CI") == "true" {
			t.Fatalf("/dev/shm is not a tmpfs (%v): the big trees are made there", err)
		}
		t.Skipf("/dev/shm is not a tmpfs (%v)", err)
	}
	dir, err := os.MkdirTemp("/dev/shm", "scopegate-scale-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeParallel(dir) })
	return dir
}

// removeParallel removes dir, the directories three levels down in
// parallel.
func removeParallel(dir string) {
	level := []string{dir}
	for range 3 {
		var next []string
		for _, d := range level {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				if e.IsDir() {
					next = append(next, filepath.Join(d, e.Name()))
				}
			}
		}
		if len(next) == 0 {
			break
		}
		level = next
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, d := range level {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_ = os.RemoveAll(d)
		})
	}
	wg.Wait()
	_ = os.RemoveAll(dir)
}

// scaleTree fills dir with entries empty files and directories, in
// directories of perDir entries, made in parallel by mknodat: what a big
// project's tree costs the view, whatever its files hold.
func scaleTree(t testing.TB, dir string, entries, perDir int) {
	t.Helper()
	dirs := entries / perDir
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for d := range next {
				sub := filepath.Join(dir, "d"+strconv.Itoa(d/100), "d"+strconv.Itoa(d))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				fd, err := unix.Open(sub, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				for f := range perDir - 1 {
					if err := unix.Mknodat(fd, "f"+strconv.Itoa(f)+".txt", unix.S_IFREG|0o644, 0); err != nil {
						select {
						case errs <- err:
						default:
						}
						break
					}
				}
				unix.Close(fd)
			}
		})
	}
	for d := range dirs {
		next <- d
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// The coding profile and a worktree session keep their masks on projects
// of 150,000 files and of 1,000,000 entries: every denied file is masked
// below gen/ as at the top, and the same programs work.
func TestMasksAtScale(t *testing.T) {
	for _, p := range []string{"python3", "make", "git", "node", "grep"} {
		requireProgram(t, p)
	}
	for _, size := range []struct {
		name            string
		entries, perDir int
	}{{"150k files", 150_000, 50}, {"1M entries", 1_000_000, 50}} {
		t.Run(size.name, func(t *testing.T) {
			s := newCodingSessionAt(t, filepath.Join(memDir(t), "proj"), nil)
			maskProject(t, s.proj, s.home)
			start := time.Now()
			scaleTree(t, filepath.Join(s.proj, "gen"), size.entries, size.perDir)
			t.Logf("made %d entries in %v", size.entries, time.Since(start))
			deep := filepath.Join(s.proj, "gen", "d3", "d321", ".env")
			if err := os.WriteFile(deep, []byte("TOKEN="+maskCanary+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run("coding", func(t *testing.T) {
				s.on(t).checkMasks(t)
			})
			t.Run("worktree", func(t *testing.T) {
				s := s.on(t)
				var created struct {
					SessionID string `json:"session_id"`
				}
				if out := s.run("session", "create", "--name", "wt", "--worktree", s.proj); json.Unmarshal(out, &created) != nil || created.SessionID == "" {
					t.Fatalf("session create --worktree: %s", out)
				}
				s.id = created.SessionID
				// A worktree scope grants no toolchain outside the home
				// directory (pyenv's shims of another user): the system's.
				s.env = append(s.env, "PATH=/usr/local/bin:/usr/bin:/bin")
				for _, c := range []string{"python3", "make", "git", "node", "grep"} {
					s.run("scope", "expand", "--session", s.id, "--allow-command", c)
				}
				// The worktree scope's deny list names .env, .aws and node_modules, not
				// keys or certificates, which its programs may read.
				res, r := s.shell("python3 leakenv.py")
				if r == nil || strings.Contains(toJSON(res), maskCanary) || !strings.Contains(fmtAny(r["stdout"]), "leak ran") {
					t.Errorf("python3 leak.py: %s", toJSON(res))
				}
				for command, want := range map[string]string{
					"git log --oneline": "first commit",
					"node use.js":       "answer 42",
					"grep -rn TODO .":   "./main.py:1:# TODO",
				} {
					res, r := s.shell(command)
					if r == nil || !strings.Contains(fmtAny(r["stdout"]), want) || strings.Contains(toJSON(res), maskCanary) {
						t.Errorf("%s: %s", command, toJSON(res))
					}
				}
			})
			t.Run("serve", func(t *testing.T) {
				s.on(t).changesWhileServing(t, filepath.Dir(s.proj))
			})
		})
	}
}
