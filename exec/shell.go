package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/scopegate/scopegate/policy"
)

// Exit codes of shell calls that did not come from a program.
const (
	// ExitRefused is the exit code of a shell call stopped because a
	// command, cd target or redirect was refused at run time.
	ExitRefused = 126
	// ExitTimedOut is the exit code of a shell call that ran out of time,
	// as timeout(1) reports it.
	ExitTimedOut = 124
)

// shell is the state of one shell call, shared by its handlers.
type shell struct {
	r     *Runner
	tmp   string
	rules rules
	// granted are the toolchain roots granted to programs of this call
	// (guarded by mu).
	granted []string
	stop    context.CancelCauseFunc
	// waiting is set while the call waits for its background jobs with
	// a plain `wait` of its own, which needs no check.
	waiting atomic.Bool
	mu      sync.Mutex
	refused []policy.Violation
	// funcs are the functions the top-level script defines: a call to one
	// is not a program run (each command of its body is checked as it runs).
	funcs func() map[string]*syntax.Stmt
	// prepared, conf and prepErr: the confinement of the call's programs,
	// made ready when the first program is about to start (a call of
	// builtins alone does not pay for probing the host or walking the
	// roots).
	prepared sync.Once
	conf     string
	prepErr  error
	// net is the network of the call's programs, planned with their
	// confinement; its proxy serves until netCtx ends, with the call.
	net    callNet
	netCtx context.Context
	// ctx bounds the deny walks of the call's views (the call's time).
	ctx context.Context
	// viewErr, when set, keeps every program from running (exit 126):
	// the view's masks could not all be found, or no view can be made
	// where one is needed. viewFailed says a program was refused for it.
	viewErr    error
	viewFailed atomic.Bool
	// saving writes the deny walk's index files beside the call.
	saving sync.WaitGroup
	// stderr is the call's own standard error.
	stderr io.Writer
}

// prepare makes the confinement of the call's programs ready, once: the
// Landlock rules and, where the host allows, the private view.
func (sh *shell) prepare() error {
	sh.prepared.Do(func() {
		defer func() {
			if sh.prepErr == nil {
				sh.r.socketRules(&sh.rules)
				sh.planNetwork()
				sh.planSockets()
			}
		}()
		r := sh.r
		sh.conf = r.Confinement()
		if r.abi == 0 {
			return
		}
		ns := sh.conf == ConfinementNamespaces
		read, write := r.grantRoots()
		if sh.rules, sh.prepErr = buildRules(r.abi, read, write, r.protect, sh.tmp, ns); sh.prepErr != nil {
			return
		}
		if !ns {
			sh.viewErr = sh.withoutView()
			return
		}
		v, save, err := r.view(sh.ctx, sh.tmp, r.opts.Confine != ConfineRequired)
		sh.saving.Go(save)
		switch {
		case errors.Is(err, ErrMasks):
			// Never Landlock alone with the denied files readable.
			sh.viewErr = err
		case err != nil:
			sh.prepErr = err
		default:
			sh.rules.View = v
		}
	})
	return sh.prepErr
}

// withoutView says why programs may not run under Landlock alone where
// the host gives them no private view: the scope reads the whole system
// (the home directory would be readable whole), or denied files lie below
// its roots. Nil when nothing denied would be readable, when namespaces
// are off by choice (NamespacesOff), or with --confine best-effort.
func (sh *shell) withoutView() error {
	r := sh.r
	if r.opts.Namespaces != NamespacesAuto || r.opts.Confine != ConfineRequired {
		return nil
	}
	_, probeErr := r.host.probed()
	what := "allow unprivileged user namespaces, or run with --confine best-effort to run programs under Landlock alone"
	if r.broad() {
		return fmt.Errorf("this host gives programs no private view (%v), and under Landlock alone a scope reading the whole system leaves every file of the home directory readable, whatever paths.deny says: %s", probeErr, what)
	}
	results, save := r.walk(sh.ctx, r.plan(sh.tmp))
	sh.saving.Go(save)
	for _, res := range results {
		switch {
		case res.err != nil:
			return &maskError{tree: res.root, err: res.err}
		case len(res.masks) > 0:
			return fmt.Errorf("this host gives programs no private view (%v), and under Landlock alone %s (and %d more) would be readable although paths.deny names it: %s", probeErr, res.masks[0], len(res.masks)-1, what)
		}
	}
	return nil
}

// refuseView refuses a program whose view cannot be made (viewErr) and
// stops the call: exit 126, with the reason on the call's stderr (not
// the command's, which may be redirected away).
func (sh *shell) refuseView(name string, err error) error {
	fmt.Fprintf(sh.stderr, "scopegate: %s: %v\n", name, err)
	sh.viewFailed.Store(true)
	sh.stop(err)
	return interp.ExitStatus(ExitRefused)
}

// confinement is what the call's programs ran under; for a call that
// started none, what they would have got, as far as known without
// probing the host.
func (sh *shell) confinement() string {
	sh.prepared.Do(func() { sh.conf = sh.r.expectedConfinement() })
	return sh.conf
}

func (r *Runner) runShell(ctx context.Context, a policy.ShellArgs, cwd string) (res Result, err error) {
	if r.abi == 0 && r.opts.Confine == ConfineRequired {
		res.Confinement = ConfinementNone
		return res, ErrNoLandlock
	}
	if !filepath.IsAbs(cwd) {
		return res, fmt.Errorf("%w: working directory %q is not absolute", ErrInvalidArgs, cwd)
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(a.Command), "")
	if err != nil {
		return res, fmt.Errorf("%w: parse command: %v", ErrInvalidArgs, err)
	}
	tmp, err := os.MkdirTemp(r.opts.TempDir, "scopegate-")
	if err != nil {
		return res, fmt.Errorf("make private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	netCtx, endNet := context.WithCancel(ctx)
	sh := &shell{r: r, tmp: tmp, netCtx: netCtx, ctx: ctx}
	defer sh.saving.Wait()
	defer func() { res.Confinement = sh.confinement() }()
	defer func() {
		endNet()
		res.Network, res.NetworkMode = sh.network()
	}()
	r.makeHomeWriteRoots()

	runCtx := ctx
	var cancelTimeout context.CancelFunc = func() {}
	if a.TimeoutMS != nil && *a.TimeoutMS > 0 {
		runCtx, cancelTimeout = context.WithTimeout(ctx, time.Duration(*a.TimeoutMS)*time.Millisecond)
	}
	defer cancelTimeout()
	runCtx, sh.stop = context.WithCancelCause(runCtx)
	defer sh.stop(nil)
	sh.ctx = runCtx

	stdout, err := newCapture(r.opts.MaxOutput, r.opts.Stdout)
	if err != nil {
		return res, err
	}
	defer stdout.abort()
	stderrTee := r.opts.Stderr
	if stderrTee == nil {
		stderrTee = r.opts.Progress
	}
	stderr, err := newCapture(r.opts.MaxOutput, stderrTee)
	if err != nil {
		return res, err
	}
	defer stderr.abort()
	sh.stderr = stderr.w
	var stdin io.Reader = strings.NewReader("")
	if a.Stdin != nil {
		stdin = strings.NewReader(*a.Stdin)
	}
	env := append(append([]string(nil), r.baseEnv...), "TMPDIR="+tmp)
	in, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(cwd),
		interp.StdIO(stdin, stdout.w, stderr.w),
		interp.CallHandler(sh.call),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return sh.exec }),
		interp.OpenHandler(sh.open),
	)
	if err != nil {
		return res, fmt.Errorf("start interpreter: %w", err)
	}
	sh.funcs = func() map[string]*syntax.Stmt { return in.Funcs }
	runErr := in.Run(runCtx, file)
	if !in.Exited() && runCtx.Err() == nil {
		// Let background jobs end before the call does.
		sh.waiting.Store(true)
		_ = in.Run(runCtx, &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: "wait"}}}}})
	}
	res.Stdout, res.Truncated = stdout.finish(r.opts.KillGrace)
	var errTrunc bool
	res.Stderr, errTrunc = stderr.finish(r.opts.KillGrace)
	res.Truncated = res.Truncated || errTrunc

	sh.mu.Lock()
	res.Refused = sh.refused
	res.Toolchains = sh.granted
	sh.mu.Unlock()
	if sh.rules.View != nil {
		res.Unmasked = sh.rules.View.unmasked
	}
	switch {
	case sh.viewFailed.Load():
		res.ExitCode = ExitRefused
	case len(res.Refused) > 0:
		res.ExitCode = ExitRefused
	case errors.Is(context.Cause(runCtx), context.DeadlineExceeded) && ctx.Err() == nil:
		res.TimedOut = true
		res.ExitCode = ExitTimedOut
	case ctx.Err() != nil:
		return res, fmt.Errorf("shell interrupted: %w", context.Cause(ctx))
	case runErr == nil:
		res.ExitCode = 0
	default:
		code, ok := errors.AsType[interp.ExitStatus](runErr)
		if !ok {
			return res, fmt.Errorf("shell: %w", runErr)
		}
		res.ExitCode = int(code)
	}
	return res, nil
}

// deny records a run-time refusal, says so on the shell's stderr and stops
// the whole call.
func (sh *shell) deny(hc interp.HandlerContext, vs []policy.Violation) error {
	sh.mu.Lock()
	sh.refused = append(sh.refused, vs...)
	sh.mu.Unlock()
	err := &DeniedError{Violations: vs}
	fmt.Fprintf(hc.Stderr, "scopegate: %v\n", err)
	sh.stop(err)
	return err
}

// call re-checks every simple command after expansion, builtins and
// functions included, and the directories cd and pushd would enter and the
// files source would read.
func (sh *shell) call(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if len(args) == 1 && args[0] == "wait" && sh.waiting.Load() {
		return args, nil
	}
	if sh.funcs != nil {
		if _, ok := sh.funcs()[args[0]]; ok {
			return args, nil
		}
	}
	if vs := sh.r.opts.Checker.CheckExec(args, hc.Dir, sh); len(vs) > 0 {
		return nil, sh.deny(hc, vs)
	}
	var target string
	switch args[0] {
	case "cd", "pushd":
		rest := args[1:]
		for len(rest) > 0 && len(rest[0]) > 1 && rest[0][0] == '-' && rest[0] != "--" && !isStackIndex(rest[0]) {
			rest = rest[1:]
		}
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		switch {
		case len(rest) == 0 && args[0] == "cd":
			target = hc.Env.Get("HOME").String()
		case len(rest) == 0 || isStackIndex(rest[0]):
			// pushd swapping or rotating the stack enters directories
			// that were checked when they were pushed.
		case rest[0] == "-":
			target = hc.Env.Get("OLDPWD").String()
		default:
			target = rest[0]
		}
	case "source", ".":
		if len(args) > 1 {
			target = args[1]
		}
	}
	if target != "" {
		if vs := sh.r.opts.Checker.CheckPath(target, policy.AccessRead, hc.Dir); len(vs) > 0 {
			return nil, sh.deny(hc, vs)
		}
	}
	return args, nil
}

func isStackIndex(s string) bool {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return false
	}
	return strings.Trim(s[1:], "0123456789") == ""
}

// nopCloser keeps the interpreter from closing the call's own streams.
type nopCloser struct {
	io.Reader
	io.Writer
}

func (nopCloser) Close() error { return nil }

// open checks every redirect: reads need read scope, anything that may
// write needs write scope and must be outside the protected roots. The
// file is opened through an os.Root at its scope root, like the file tools.
func (sh *shell) open(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	switch path {
	case "/dev/null":
		return os.OpenFile(path, flag, perm)
	case "/dev/stdin", "/dev/fd/0":
		return nopCloser{Reader: hc.Stdin}, nil
	case "/dev/stdout", "/dev/fd/1":
		return nopCloser{Writer: hc.Stdout}, nil
	case "/dev/stderr", "/dev/fd/2":
		return nopCloser{Writer: hc.Stderr}, nil
	}
	access := policy.AccessRead
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
		access = policy.AccessWrite
	}
	if vs := sh.r.opts.Checker.CheckPath(path, access, hc.Dir); len(vs) > 0 {
		return nil, sh.deny(hc, vs)
	}
	t, err := sh.r.resolve(path, hc.Dir, access)
	if err != nil {
		if errors.Is(err, ErrDenied) || errors.Is(err, ErrNotInRoots) || errors.Is(err, ErrProtected) {
			return nil, sh.deny(hc, []policy.Violation{violationFor(path, access, err)})
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	root, err := os.OpenRoot(t.root)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer root.Close()
	f, err := root.OpenFile(t.rel, flag, perm)
	if err != nil {
		return nil, err // an *os.PathError: printed, status 1
	}
	return f, nil
}

// violationFor describes a refusal by an invariant of this package.
func violationFor(path string, access policy.Access, err error) policy.Violation {
	reason := policy.ReasonPathNotInScope
	if errors.Is(err, ErrProtected) {
		reason = policy.ReasonPathDenied
	}
	what := "read"
	if access == policy.AccessWrite {
		what = "write"
	}
	return policy.Violation{
		Reason:   reason,
		Resource: path,
		Rule:     "exec",
		Message:  fmt.Sprintf("%s of %s refused: %v", what, path, err),
	}
}

// grant records toolchain roots granted to a program of the call.
func (sh *shell) grant(roots []string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, r := range roots {
		if !slices.Contains(sh.granted, r) {
			sh.granted = append(sh.granted, r)
		}
	}
}
