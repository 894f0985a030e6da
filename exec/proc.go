package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scopegate/scopegate/policy"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// exec is the interpreter's final exec handler: it finds the program as the
// decision did (Checker.LookPath: the trusted PATH, never the current
// directory or a directory the scope makes writable) and starts it under the Landlock helper (when confined), in its own
// process group, with the scrubbed environment. On cancellation the group
// gets SIGINT, then SIGKILL after the grace period; when the program ends,
// whatever is left of its group is killed, so no call leaves processes
// behind (short of ones that left the group on purpose).
func (sh *shell) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	path, err := sh.r.opts.Checker.LookPath(args[0], hc.Dir)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "scopegate: %v\n", err)
		return interp.ExitStatus(127)
	}
	// The confinement, the network included, is known before the
	// program's environment is made.
	if err := sh.prepare(); err != nil {
		return fmt.Errorf("confine %s: %w", args[0], err)
	}
	if sh.viewErr != nil {
		return sh.refuseView(args[0], sh.viewErr)
	}
	if sh.net.err != nil {
		fmt.Fprintf(hc.Stderr, "scopegate: %s: %v\n", args[0], sh.net.err)
		return interp.ExitStatus(126)
	}
	sh.net.warnOnce.Do(func() {
		if sh.net.warn != "" {
			fmt.Fprintln(hc.Stderr, sh.net.warn)
		}
	})
	cmd := &osexec.Cmd{
		Path:        path,
		Args:        args,
		Env:         sh.programEnv(hc.Env),
		Dir:         hc.Dir,
		Stdin:       hc.Stdin,
		Stdout:      hc.Stdout,
		Stderr:      hc.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		// Bounds the wait for output pipes held by processes that left
		// the group.
		WaitDelay: sh.r.opts.KillGrace,
	}
	rl := sh.rules
	if sh.r.abi > 0 {
		if rl, err = sh.programRules(ctx, path, args, hc.Dir, hc.Stderr); err != nil {
			return sh.refuseView(args[0], err)
		}
		rl = withProgramData(rl, programData(path, sh.r.opts.Environ, sh.r.home()))
		argv, err := helperArgv(sh.r.helper, rl, path, args)
		if err != nil {
			return err
		}
		cmd.Path, cmd.Args = sh.r.helper, argv
	}
	var vc *viewConn // the gateway's end of a private view's helper
	// interrupt asks the program to stop: SIGINT to its group, or through
	// the helper of a private view, which is not the program (supervise).
	interrupt := func(pid int) { _ = syscall.Kill(-pid, syscall.SIGINT) }
	if rl.View != nil {
		if vc, err = startView(cmd, rl.View); err != nil {
			return err
		}
		defer vc.close()
		interrupt = func(int) { vc.interrupt() }
	}
	err = cmd.Start()
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		// A concurrently forked process may briefly hold the file open
		// for writing (go.dev/issue/22315).
		time.Sleep(delay)
		cmd.Process, cmd.ProcessState = nil, nil
		err = cmd.Start()
	}
	if err != nil {
		if vc != nil {
			sh.r.host.forgetProbe()
		}
		fmt.Fprintf(hc.Stderr, "scopegate: %s: %v\n", args[0], err)
		if errors.Is(err, syscall.ENOEXEC) {
			fmt.Fprintf(hc.Stderr, "scopegate: %s: scripts need a #! line\n", args[0])
		}
		return interp.ExitStatus(126)
	}
	pid := cmd.Process.Pid
	if sh.r.opts.OnStart != nil {
		sh.r.opts.OnStart(pid)
	}
	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(sh.r.opts.KillGrace)
		defer t.Stop()
		interrupt(pid)
		select {
		case <-exited:
		case <-t.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
	built, code := false, -1
	if vc != nil && vc.netSock != nil {
		// A helper that fails before it sends them says why on its
		// status pipe: nothing to add here.
		if files, err := vc.listeners(nsListenerCount + len(sh.rules.View.Forward)); err == nil {
			if err := sh.net.serve(files); err != nil {
				fmt.Fprintf(hc.Stderr, "scopegate: %s: %v\n", args[0], err)
				interrupt(pid)
			}
		}
	}
	if vc != nil {
		built, code = vc.wait()
	}
	if code < 0 {
		// Wait for the leader without reaping it, so its pid (the group
		// id) cannot be reused before the rest of the group is killed.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	close(exited)
	if code >= 0 && !copies(cmd) {
		// The program and everything it started are gone and reaped;
		// the helper, alone in its namespaces, is exiting. Its exit and
		// the namespaces' teardown are reaped on the side.
		go cmd.Wait()
		return exitStatus(code)
	}
	err = cmd.Wait()
	if code >= 0 {
		return exitStatus(code)
	}
	if vc != nil && !built && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == helperExitCode {
		sh.r.host.forgetProbe()
	}
	var ee *osexec.ExitError
	switch {
	case err == nil, errors.Is(err, osexec.ErrWaitDelay):
		return nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return interp.ExitStatus(128 + int(ws.Signal()))
		}
		return interp.ExitStatus(ee.ExitCode())
	default:
		return fmt.Errorf("wait for %s: %w", args[0], err)
	}
}

// copies reports whether cmd copies its standard streams through
// goroutines, which cmd.Wait must see finish: only for streams that are
// not files.
func copies(cmd *osexec.Cmd) bool {
	isFile := func(v any) bool {
		_, ok := v.(*os.File)
		return v == nil || ok
	}
	return !isFile(cmd.Stdin) || !isFile(cmd.Stdout) || !isFile(cmd.Stderr)
}

// exitStatus is the handler's answer for a program's status.
func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return interp.ExitStatus(code)
}

// programEnv is the environment a program gets: the interpreter's exported
// variables minus those that must never pass, with TMPDIR fixed to the
// call's private directory.
func (sh *shell) programEnv(env expand.Environ) []string {
	out := make([]string, 0, 32)
	idx := make(map[string]int, 32)
	env.Each(func(name string, vr expand.Variable) bool {
		if i, ok := idx[name]; ok && !vr.IsSet() {
			out[i] = ""
		}
		if !vr.Exported || vr.Kind != expand.String || neverPass(name) || name == "PATH" ||
			strings.IndexByte(vr.Str, 0) >= 0 {
			return true
		}
		if i, ok := idx[name]; ok {
			out[i] = name + "=" + vr.Str
			return true
		}
		idx[name] = len(out)
		out = append(out, name+"="+vr.Str)
		return true
	})
	out = append(out, "TMPDIR="+sh.tmp)
	if sh.net.mode != NetworkHost {
		// The way out is scopegate's, or there is none: no proxy of
		// the caller's.
		for i, kv := range out {
			if name, _, _ := strings.Cut(kv, "="); isProxyVar(name) {
				out[i] = ""
			}
		}
	}
	if sh.net.mode == NetworkProxy {
		out = append(out, proxyEnv()...)
	}
	// Programs that start programs (env, xargs, make) look them up where
	// the decision did: the trusted PATH.
	out = append(out, "PATH="+strings.Join(sh.r.opts.Checker.TrustedPath(), ":"))
	n := 0
	for _, kv := range out {
		if kv != "" {
			out[n] = kv
			n++
		}
	}
	return out[:n]
}

// capture collects one output stream of a shell call through a pipe, so
// programs write to it directly, keeping at most max bytes; everything read
// is also copied to tee, when set, as it comes.
type capture struct {
	w, rd     *os.File
	max       int
	tee       io.Writer
	buf       bytes.Buffer
	truncated bool
	done      chan struct{}
	once      sync.Once
}

func newCapture(max int, tee io.Writer) (*capture, error) {
	rd, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("make output pipe: %w", err)
	}
	c := &capture{w: w, rd: rd, max: max, tee: tee, done: make(chan struct{})}
	go c.drain()
	return c, nil
}

func (c *capture) drain() {
	defer close(c.done)
	b := make([]byte, 32<<10)
	for {
		n, err := c.rd.Read(b)
		if n > 0 && c.tee != nil {
			if _, werr := c.tee.Write(b[:n]); werr != nil {
				c.tee = nil // a reader that went away stops the copy, not the call
			}
		}
		if n > 0 {
			keep := min(n, c.max-c.buf.Len())
			c.buf.Write(b[:keep])
			if keep < n {
				c.truncated = true
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.truncated = true
			}
			return
		}
	}
}

// finish closes the write end and returns what was read. Processes that
// escaped the group may still hold the pipe: after grace the read end is
// closed and their output is dropped.
func (c *capture) finish(grace time.Duration) (string, bool) {
	c.once.Do(func() { c.w.Close() })
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.rd.Close()
		<-c.done
	}
	c.rd.Close()
	return c.buf.String(), c.truncated
}

// abort releases the pipe on early returns.
func (c *capture) abort() {
	c.once.Do(func() { c.w.Close() })
	c.rd.Close()
}

// toolchainRoots are the directories below the home directory that hold a
// toolchain, by the first element of a program's path below home: the
// directory itself, or for version managers the version's own directory
// (~/.nvm/versions/node/v22.1.0), or below ~/.local the directory of
// programs (~/.local/bin) or the application's (~/.local/share/pipx), and
// below ~/.config the application's (~/.config/composer), below ~/go its
// bin and pkg (not src, the checkouts of other projects), below a visible
// directory (~/code/tools/bin) the directory holding the bin directory,
// plus the roots it runs programs from (cargo's proxies run rustup's
// toolchains).
func toolchainRoots(home, program string) []string {
	rel, err := filepath.Rel(home, program)
	if err != nil || rel == "." || strings.HasPrefix(rel, "../") || !strings.Contains(rel, "/") {
		return nil
	}
	parts := strings.Split(rel, "/")
	root := filepath.Join(home, parts[0])
	switch {
	case parts[0] == ".nvm" && len(parts) > 4 && parts[1] == "versions":
		root = filepath.Join(home, ".nvm", "versions", parts[2], parts[3])
	case parts[0] == ".cargo":
		return []string{root, filepath.Join(home, ".rustup")}
	case parts[0] == ".local":
		// Not a toolchain: ~/.local/share is the user's data (keys,
		// keyrings, container volumes), masked only toolchainDepth
		// levels deep. The root is the directory of programs it holds
		// (~/.local/bin, ~/.local/lib), or the application's own below
		// share (~/.local/share/pipx, whose venvs ~/.local/bin links to).
		switch {
		case len(parts) > 3 && parts[1] == "share":
			root = filepath.Join(home, ".local", "share", parts[2])
		case len(parts) > 2 && parts[1] != "share":
			root = filepath.Join(home, ".local", parts[1])
		default:
			root = program
		}
	case parts[0] == "go" && len(parts) > 2:
		// GOPATH: its src holds checkouts of other projects (their .env
		// deep below), not the toolchain: bin, and pkg, Go's module
		// cache, which its programs (gopls) read.
		if parts[1] != "bin" {
			return []string{filepath.Join(home, "go", parts[1])}
		}
		return []string{filepath.Join(home, "go", "bin"), filepath.Join(home, "go", "pkg")}
	case parts[0] == ".config":
		// Nor is ~/.config, the user's settings and tokens: the root is
		// the application's directory (composer's vendor/bin lies there).
		root = program
		if len(parts) > 2 {
			root = filepath.Join(home, ".config", parts[1])
		}
	case !strings.HasPrefix(parts[0], "."):
		// A visible directory is the user's (~/code, ~/src: projects
		// with their .env deep below), not a tool's own: the root is the
		// directory holding the program's bin directory, as outside the
		// home directory, or the program's own directory.
		root = filepath.Dir(program)
		if n := len(parts); n > 2 && parts[n-2] == "bin" {
			root = filepath.Join(home, filepath.Join(parts[:n-2]...))
		}
	}
	return []string{root}
}

// ownData is where a program keeps data of its own that it cannot work
// without (programData).
type ownData struct {
	// names are directory names, wherever they are (.git, node_modules).
	names []string
	// dirs are directories (the Go module cache).
	dirs []string
}

// programData names, for a program, the directories it keeps its own data
// in and cannot work without: git its repository, node and the JavaScript
// package managers the installed packages, Python its site-packages, go
// its module cache, cargo and rustc the crates they fetched (environ and
// home tell where those caches are). Where the deny globs match in them (a
// denied directory name, runtime; a certificate bundle, *.pem), the view
// still masks them from every other program; a scope that lets the program
// run lets it use them. The decision still checks what the program is
// asked to do with them (git's operands, the files git runs).
func programData(program string, environ []string, home string) ownData {
	base := filepath.Base(program)
	switch {
	case base == "git":
		return ownData{names: []string{".git"}}
	case slices.Contains([]string{"node", "npm", "npx", "yarn", "pnpm", "corepack"}, base):
		return ownData{names: []string{"node_modules"}}
	case strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pip"):
		return ownData{names: []string{"site-packages", "dist-packages"}}
	case base == "go":
		cache := lookupEnv(environ, "GOMODCACHE")
		if cache == "" {
			gopath, _, _ := strings.Cut(lookupEnv(environ, "GOPATH"), ":")
			if gopath == "" && home != "" {
				gopath = filepath.Join(home, "go")
			}
			if gopath != "" {
				cache = filepath.Join(gopath, "pkg", "mod")
			}
		}
		return ownData{dirs: absOnly(cache)}
	case base == "cargo" || base == "rustc" || base == "rustdoc":
		ch := lookupEnv(environ, "CARGO_HOME")
		if ch == "" && home != "" {
			ch = filepath.Join(home, ".cargo")
		}
		if ch == "" {
			return ownData{}
		}
		return ownData{dirs: absOnly(filepath.Join(ch, "registry"), filepath.Join(ch, "git"))}
	}
	return ownData{}
}

// lookupEnv returns a variable's value in environ ("" when unset).
func lookupEnv(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// absOnly returns the absolute paths among ps, cleaned, with their links
// resolved where they exist.
func absOnly(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if !filepath.IsAbs(p) {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// withProgramData returns rl without the masks in a program's own data
// (programData) and of what lies in them.
func withProgramData(rl rules, data ownData) rules {
	if rl.View == nil || len(data.names)+len(data.dirs) == 0 {
		return rl
	}
	v := *rl.View
	v.Masks = slices.DeleteFunc(slices.Clone(v.Masks), func(m string) bool {
		if slices.ContainsFunc(data.dirs, func(d string) bool { return within(m, d) }) {
			return true
		}
		for _, part := range strings.Split(m, "/") {
			if slices.Contains(data.names, part) {
				return true
			}
		}
		return false
	})
	rl.View = &v
	return rl
}

// programRules are the call's rules for one program about to run in dir
// with args (args[0] its name): the call's view, plus what this program
// needs in it, each tree walked and masked like any root (a toolchain
// root toolchainDepth levels deep).
//
// A scope that reads the whole system (viewplan.go) binds back into its
// hidden directories the toolchain roots of the program, of the file it
// links to and of the interpreter its #! line names, the program's
// working directory, and the existing paths its arguments name (up to
// maxNamedTrees) that the scope lets it read: a program run there finds
// them as the decision did. Other scopes grant a program found below the
// home directory, outside every root of the scope, read and execute on
// its toolchain root (toolchainRoots).
//
// A tree whose masks cannot all be found fails the program, unless
// --confine best-effort: the tree is then left out of its view (the
// program finds it missing, or Landlock refuses it).
func (sh *shell) programRules(ctx context.Context, program string, args []string, dir string, stderr io.Writer) (rules, error) {
	r := sh.r
	v := sh.rules.View
	if v == nil {
		return sh.rules, nil
	}
	var named, tools, grants []string
	if r.broad() {
		named, tools = sh.named(program, args, dir)
	} else if home := r.home(); home != "" && within(program, home) &&
		!slices.ContainsFunc(append(slices.Clone(r.readRts), r.writeRts...), func(root string) bool { return within(program, root) }) {
		tools = toolchainRoots(home, program)
		grants = tools
	}
	if len(named)+len(tools) == 0 {
		return sh.rules, nil
	}
	var p viewPlan
	p.add(named, v.inHide, false)
	p.add(tools, v.inHide, true)
	results, save := r.walk(ctx, p)
	sh.saving.Go(save)
	nv := *v
	nv.Masks = slices.Clone(v.Masks)
	var left []string // trees left out: their masks are not all known
	for _, res := range results {
		if res.err != nil {
			if r.opts.Confine == ConfineRequired {
				return rules{}, &maskError{tree: res.root, err: res.err}
			}
			left = append(left, res.root)
			fmt.Fprintf(stderr, "scopegate: %s: %s is left out of its view: %v\n", args[0], res.root, res.err)
			continue
		}
		nv.Masks = append(nv.Masks, res.masks...)
	}
	out := func(t string) bool {
		return slices.ContainsFunc(left, func(l string) bool { return within(t, l) || within(l, t) })
	}
	grants = slices.DeleteFunc(grants, out)
	nv.Bind = outermost(append(slices.Clone(v.Bind), slices.DeleteFunc(p.bind, out)...))
	nv.Carry = outermost(append(slices.Clone(v.Carry), slices.DeleteFunc(p.carry, out)...))
	nv.Links = slices.Clone(v.Links)
	for _, l := range p.links {
		if !slices.Contains(nv.Links, l) {
			nv.Links = append(nv.Links, l)
		}
	}
	rl := sh.rules
	rl.View = &nv
	if len(grants) > 0 {
		rl.RO = append(slices.Clone(rl.RO), grants...)
		sh.grant(grants)
	}
	return rl, nil
}

// maxNamedTrees bounds the paths of one program's arguments bound into
// its view.
const maxNamedTrees = 32

// named returns what a program of a scope reading the whole system needs
// from its view's hidden directories (programRules): its working directory
// and the paths its arguments name, then its toolchain roots.
func (sh *shell) named(program string, args []string, dir string) (named, tools []string) {
	r := sh.r
	v := sh.rules.View
	home := r.home()
	want := func(p string) bool {
		return v.inHide(p) && !v.shows(p) && !slices.Contains(v.Hide, p) && p != home && p != filepath.Dir(home)
	}
	for _, p := range programFiles(program) {
		if v.inHide(p) && !v.shows(p) {
			tools = append(tools, r.toolchainOf(p, v.Hide)...)
		}
	}
	var out []string
	if want(dir) {
		out = append(out, dir)
	}
	n := 0
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			_, val, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = val
		}
		if a == "" || strings.IndexByte(a, 0) >= 0 {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if !want(p) {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if vs := r.opts.Checker.CheckPath(a, policy.AccessRead, dir); len(vs) > 0 {
			continue
		}
		out = append(out, p)
		if n++; n == maxNamedTrees {
			break
		}
	}
	return out, tools
}

// programFiles are the files that starting a program reads: the program,
// the file it links to, and the interpreter an absolute #! line names.
func programFiles(program string) []string {
	out := []string{program}
	if real, err := filepath.EvalSymlinks(program); err == nil && real != program {
		out = append(out, real)
	}
	if head := fileHead(program); len(head) > 2 && string(head[:2]) == "#!" {
		line, _, _ := strings.Cut(string(head[2:]), "\n")
		if f := strings.Fields(line); len(f) > 0 && filepath.IsAbs(f[0]) {
			out = append(out, filepath.Clean(f[0]))
			if real, err := filepath.EvalSymlinks(f[0]); err == nil && real != f[0] {
				out = append(out, real)
			}
		}
	}
	return out
}

// fileHead returns the first 256 bytes of a regular file (nil for
// anything else: a FIFO named as a program must not block the gateway).
func fileHead(name string) []byte {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	b := make([]byte, 256)
	n, _ := unix.Read(fd, b)
	return b[:max(n, 0)]
}
