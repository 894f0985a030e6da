package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// selector is the branch selector of docs/reference.md, CLI: --branch-dir DIR, or
// --session ID [--branch NAME].
type selector struct {
	branchDir string
	session   string
	branch    string
}

func (s *selector) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.branchDir, "branch-dir", "", "branch directory")
	f.StringVar(&s.session, "session", "", "session id")
	f.StringVar(&s.branch, "branch", "", "branch name (default: where current points)")
}

// set reports whether any selector flag was given.
func (s *selector) set() bool { return s.branchDir != "" || s.session != "" || s.branch != "" }

// resolve returns the branch directory the selector names, after opening
// it (which migrates legacy sessions, with warnings on stderr). Bad ids and
// names, unknown sessions and branches are usage errors.
func (s *selector) resolve(a *app) (string, error) {
	switch {
	case s.branchDir != "" && (s.session != "" || s.branch != ""):
		return "", usageErr("give either --branch-dir DIR or --session ID [--branch NAME], not both")
	case s.branch != "" && s.session == "":
		return "", usageErr("--branch needs --session")
	case s.branchDir != "":
		dir, err := filepath.Abs(s.branchDir)
		if err != nil {
			return "", usageErr("--branch-dir: %v", err)
		}
		b, err := sessions.OpenBranch(dir, warner(a.stderr))
		if err != nil {
			return "", sessionErr(err)
		}
		return b.Dir, nil
	case s.session != "":
		dir, err := a.store().Resolve(s.session, s.branch)
		if err != nil {
			return "", sessionErr(err)
		}
		return dir, nil
	}
	return "", usageErr("no branch selected: give --branch-dir DIR or --session ID")
}

// store is the sessions root of the resolved global options.
func (a *app) store() *sessions.Store {
	return &sessions.Store{Root: a.sessionsDir, Warn: warner(a.stderr)}
}

// profileLoader finds profiles and presets: the config dir's, and gptel's
// preset files when config.yml names their directory. A config.yml that
// does not load leaves the gptel presets out, so such a preset is unknown;
// session create with a preset reports the config error first.
func (a *app) profileLoader() profiles.Loader {
	return profiles.Loader{ConfigDir: a.configDir, PresetsDir: a.presetsDir()}
}

// presetsDir is config.yml's gptel_presets_dir, "" when unset or when
// config.yml does not load.
func (a *app) presetsDir() string {
	cfg, err := config.Load(a.configDir)
	if err != nil {
		return ""
	}
	return cfg.GptelPresetsDir
}

// warner prints warnings on stderr, one line each.
func warner(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintln(w, "scopegate: warning: "+policy.OneLine(msg)) }
}

// sessionErr maps the errors of sessions and profiles to exit codes: what
// the user named wrongly is a usage error, the rest internal.
func sessionErr(err error) error {
	if err == nil {
		return nil
	}
	for _, target := range []error{sessions.ErrInvalidName, sessions.ErrNotFound, sessions.ErrExists, sessions.ErrInvalidOptions,
		sessions.ErrInvalidExpansion, policy.ErrInvalidScope, profiles.ErrNotFound, profiles.ErrInvalidName, gateway.ErrManagedRefused,
		profiles.ErrInvalid, profiles.ErrConflict} {
		if errors.Is(err, target) {
			return &exitError{code: exitUsage, err: err}
		}
	}
	return &exitError{code: exitInternal, err: err}
}

// printed is the selector as a command line names the branch dir: the
// session and branch when given by session, else the branch directory.
func (s *selector) printed(dir string) string {
	if s.session != "" {
		return "--session " + policy.ShellQuote(s.session) + " --branch " + policy.ShellQuote(filepath.Base(dir))
	}
	return "--branch-dir " + policy.ShellQuote(dir)
}
