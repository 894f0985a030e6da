//go:build !lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/watch"
	"github.com/scopegate/scopegate/metrics"
	"github.com/scopegate/scopegate/server"
)

// keepAuditOpen is how many branches' tools.org files serve keeps open
// with their chain heads (two descriptors each): more than the branches in
// use at once.
const keepAuditOpen = 256

// serveMain is `scopegate serve`: Open takes the sessions root's serve
// lock and the listeners, Run serves until the context ends, Close lets
// everything go.
type serveMain struct {
	a *app

	listen    string
	listenSet bool
	unix      string
	tokenFile string
	logLevel  string
	grace     time.Duration

	// socket is the private socket in the sessions root.
	socket string

	log  *slog.Logger
	lock *server.Lock
	lns  []net.Listener
	srv  *server.Server
	// watcher tells the gateway when the files it caches change; dirs
	// when the directories the private view's walk looked at change.
	watcher *watch.Watcher
	dirs    *watch.Dirs
}

func newServeCmd(a *app) *cobra.Command {
	m := &serveMain{a: a}
	cmd := serveCmdDoc()
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		m.listenSet = cmd.Flags().Changed("listen")
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := m.Open(ctx); err != nil {
			m.Close()
			return err
		}
		defer m.Close()
		if err := m.Run(ctx); err != nil {
			return &exitError{code: exitInternal, err: err}
		}
		return nil
	}
	f := cmd.Flags()
	f.StringVar(&m.listen, "listen", "", "TCP address (default: serve.listen of config.yml, else "+config.DefaultListen+")")
	f.StringVar(&m.unix, "unix", "", "also (or, without --listen, only) listen on this Unix socket, created 0600")
	f.StringVar(&m.tokenFile, "token-file", "", "file holding the bearer token every /v1/ request must carry")
	f.StringVar(&m.logLevel, "log-level", "info", "log level: debug (every request), info, warn, error")
	f.DurationVar(&m.grace, "shutdown-grace", server.DefaultShutdownGrace, "how long in-flight calls may finish on SIGINT/SIGTERM before they are interrupted")
	return cmd
}

// Open validates the options, takes the serve lock, opens the listeners and
// recovers interrupted calls of every branch.
func (m *serveMain) Open(ctx context.Context) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(m.logLevel)); err != nil {
		return usageErr("--log-level %q: %v", m.logLevel, err)
	}
	m.log = slog.New(slog.NewJSONHandler(m.a.stderr, &slog.HandlerOptions{Level: level}))

	if m.listenSet {
		if err := checkListenAddr(m.listen); err != nil {
			return usageErr("%v", err)
		}
	}
	cfg, err := config.Load(m.a.configDir)
	if err != nil {
		return usageErr("%v", err)
	}
	if !m.listenSet {
		m.listen = cfg.Serve.Listen
	}
	if m.tokenFile == "" {
		m.tokenFile = cfg.Serve.TokenFile
	}
	token, err := readToken(m.tokenFile)
	if err != nil {
		return usageErr("%v", err)
	}
	useTCP := m.unix == "" || m.listenSet
	if useTCP {
		if err := checkListenAddr(m.listen); err != nil {
			return usageErr("%v", err)
		}
	}
	if useTCP && token == "" && !loopbackAddr(m.listen) {
		return usageErr("refusing to listen on non-loopback address %s without --token-file", m.listen)
	}

	if m.lock, err = server.AcquireLock(m.a.sessionsDir); err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("serve %s: %w", m.a.sessionsDir, err)}
	}
	if useTCP {
		ln, err := net.Listen("tcp", m.listen)
		if errors.Is(err, syscall.EADDRINUSE) {
			return &exitError{code: exitInternal, err: fmt.Errorf("listen on %s: the address is already in use: another program listens there (is a scopegate serve already running?); choose a free address with --listen HOST:PORT", m.listen)}
		}
		if err != nil {
			return &exitError{code: exitInternal, err: fmt.Errorf("listen: %w", err)}
		}
		m.lns = append(m.lns, ln)
	}
	if err := os.MkdirAll(m.a.sessionsDir, 0o700); err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("sessions root: %w", err)}
	}
	m.socket = filepath.Join(m.a.sessionsDir, server.SocketName)
	ln, err := listenUnix(m.socket)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	m.lns = append(m.lns, ln)
	if m.unix != "" {
		ln, err := listenUnix(m.unix)
		if err != nil {
			return &exitError{code: exitInternal, err: err}
		}
		m.lns = append(m.lns, ln)
	}

	met := metrics.New(metrics.Options{})
	met.Registry().MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gopts := m.a.gatewayOptions(met, func(msg string) { m.log.Warn(msg) }, nil)
	// Every audited event also goes to the page's feed.
	feed := server.NewFeed()
	if gopts.Events != nil {
		gopts.Events = sinks{gopts.Events, feed}
	} else {
		gopts.Events = feed
	}
	m.watcher, err = watch.New()
	if err != nil {
		m.log.Warn("file changes are not watched: scope files are checked with a stat per decision", "err", err)
	}
	gopts.Watcher = m.watcher
	m.dirs, err = watch.NewDirs(watch.DirsOptions{})
	if err != nil {
		m.log.Warn("directories are not watched: the private view's walk stats each directory per call", "err", err)
	}
	gopts.Dirs = m.dirs
	// The tools.org files of the branches in use and their chain heads stay
	// open between appends.
	gopts.KeepAuditOpen = keepAuditOpen
	gw := gateway.New(gopts)
	hooks, err := m.a.hookOptions(agents.ClaudeCode, cfg.Hooks)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	// Each hook request names its own project and, from the CLI's hook,
	// its agent's environment; an agent's own HTTP hook gets the user's
	// home only. Approvals are config.yml's, read for every call.
	hooks.ProjectDir = ""
	hooks.Agent = agents.Env{Home: hooks.Agent.Home}
	listen := ""
	if useTCP {
		listen = m.listen
	}
	cfgs := &config.Cache{Dir: m.a.configDir}
	m.srv, err = server.New(server.Options{Gateway: gw, SessionsDir: m.a.sessionsDir, ConfigDir: m.a.configDir, PresetsDir: cfg.GptelPresetsDir,
		Metrics: met, Token: token, ShutdownGrace: m.grace, Logger: m.log, Hooks: hooks, TrustedSocket: m.socket,
		Version: readVersion().Version, Approvals: approvalSettings(cfgs, func(msg string) { m.log.Warn(msg) }),
		Feed: feed, Listen: listen})
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	n, err := m.srv.RecoverAll(ctx)
	if err != nil {
		m.log.Warn("recovering interrupted calls", "err", err)
	}
	m.log.Info("started", "pid", os.Getpid(), "sessions_dir", m.a.sessionsDir, "recovered_interrupted", n,
		"auth", token != "")
	return nil
}

// Run serves until ctx ends, then shuts down gracefully.
func (m *serveMain) Run(ctx context.Context) error {
	return m.srv.Serve(ctx, m.lns...)
}

// Close releases the listeners, the Unix socket file and the lock.
func (m *serveMain) Close() error {
	var errs []error
	for _, ln := range m.lns {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	m.lns = nil
	if m.watcher != nil {
		m.watcher.Close()
	}
	if m.dirs != nil {
		m.dirs.Close()
	}
	if err := m.lock.Release(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// readToken reads the bearer token; no file means no token.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("--token-file %s: want one token on one line", path)
	}
	return token, nil
}

// loopbackAddr reports whether a listen address is on loopback only.
// checkListenAddr checks that addr is HOST:PORT with a port from 0 to 65535.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: invalid address: want HOST:PORT, such as %s", addr, config.DefaultListen)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("--listen %q: invalid address: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenUnix listens on a Unix socket created 0600. A stale socket (nobody
// answers on it) is replaced; anything else at the path is an error.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("--unix %s: exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("--unix %s: another process is listening on it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--unix %s: remove stale socket: %w", path, err)
		}
	}
	old := syscall.Umask(0o177) // the socket is born 0600: no window where others may connect
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return ln, nil
}

// sinks hands every event to each of its sinks.
type sinks []gateway.EventSink

func (s sinks) Emit(ev audit.Event) {
	for _, sink := range s {
		sink.Emit(ev)
	}
}
