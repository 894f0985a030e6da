package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/internal/atomicfile"
	"github.com/scopegate/scopegate/sessions"
)

// archiveDir is where archived sessions go, inside the sessions root (a
// hidden name, so no listing sees them as sessions).
const archiveDir = ".archive"

// gcOptions are the retention settings of one gc run.
type gcOptions struct {
	retention config.Retention
	apply     bool
	now       time.Time
}

func newGCCmd(a *app) *cobra.Command {
	var apply bool
	var auditDays, sessionDays int
	var action string
	cmd := &cobra.Command{
		Use: "gc [flags]",
		Example: `  scopegate gc --audit-days 90
  scopegate gc --apply --session-days 30 --session-action archive`,
		Short: "Prune old tools.org entries, archive or remove idle sessions, remove unused deny index files (dry run unless --apply)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(a.configDir)
			if err != nil {
				return usageErr("%v", err)
			}
			f := cmd.Flags()
			if f.Changed("audit-days") {
				cfg.Retention.AuditDays = auditDays
			}
			if f.Changed("session-days") {
				cfg.Retention.SessionDays = sessionDays
			}
			if f.Changed("session-action") {
				cfg.Retention.SessionAction = action
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("%v", err)
			}
			return gc(a, gcOptions{retention: cfg.Retention, apply: apply, now: time.Now()})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&apply, "apply", false, "change files (default: only say what would change)")
	f.IntVar(&auditDays, "audit-days", 0, "prune tools.org entries older than N days; 0 keeps all (default: retention.audit_days of config.yml)")
	f.IntVar(&sessionDays, "session-days", 0, "archive or remove sessions untouched for N days; 0 keeps all (default: retention.session_days)")
	f.StringVar(&action, "session-action", "", "what to do with idle sessions: archive (to <root>/.archive) or remove (default: retention.session_action)")
	return cmd
}

func gc(a *app, o gcOptions) error {
	verb := func(dry, done string) string {
		if o.apply {
			return done
		}
		return "would " + dry
	}
	ids, err := os.ReadDir(a.sessionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		ids = nil
	} else if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("list sessions: %w", err)}
	}
	r := o.retention
	var errs []error
	for _, d := range ids {
		id := d.Name()
		if !d.IsDir() || sessions.ValidateID(id) != nil {
			continue
		}
		dir := filepath.Join(a.sessionsDir, id)
		if r.SessionDays > 0 {
			last, err := lastTouched(dir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if idle := o.now.Sub(last); idle > time.Duration(r.SessionDays)*24*time.Hour {
				action := r.SessionAction
				if action == "" {
					action = config.ActionArchive
				}
				days := int(idle.Hours() / 24)
				if action == config.ActionRemove {
					fmt.Fprintf(a.stdout, "%s session %s (untouched for %d days)\n", verb("remove", "removed"), id, days)
					if o.apply {
						if err := os.RemoveAll(dir); err != nil {
							errs = append(errs, fmt.Errorf("remove session %s: %w", id, err))
						}
					}
				} else {
					fmt.Fprintf(a.stdout, "%s session %s to %s (untouched for %d days)\n", verb("archive", "archived"), id, archiveDir, days)
					if o.apply {
						if err := archive(a.sessionsDir, id, o.now); err != nil {
							errs = append(errs, err)
						}
					}
				}
				continue
			}
		}
		if r.AuditDays <= 0 {
			continue
		}
		cutoff := o.now.Add(-time.Duration(r.AuditDays) * 24 * time.Hour)
		logs, _ := filepath.Glob(filepath.Join(dir, "branches", "*", audit.LogFile))
		for _, path := range logs {
			pruned, kept, err := pruneAudit(path, cutoff, o.apply)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if pruned > 0 {
				fmt.Fprintf(a.stdout, "%s %d of %d entries older than %d days from %s\n", verb("prune", "pruned"), pruned, pruned+kept, r.AuditDays, path)
			}
		}
	}
	if err := gcIndex(a, o, verb); err != nil {
		errs = append(errs, err)
	}
	if !o.apply {
		fmt.Fprintln(a.stdout, "dry run: nothing changed (run with --apply)")
	}
	if err := errors.Join(errs...); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
}

// gcIndex removes the files of the private view's deny index
// (<root>/.scopegate-index) that no walk will use: a file whose tree is
// gone, one that no process read or wrote for retention.session_days, and
// what a write that did not finish left (a day on). A file removed in
// error costs the next call on its tree a walk of it, nothing more.
func gcIndex(a *app, o gcOptions, verb func(dry, done string) string) error {
	files, err := exec.IndexFiles(filepath.Join(a.sessionsDir, gateway.IndexDirName))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		idle := o.now.Sub(f.Used)
		var why string
		switch {
		case f.Tree != "" && gone(f.Tree):
			why = fmt.Sprintf("its tree %s is gone", f.Tree)
		case f.Tree == "" && atomicfile.IsTemp(filepath.Base(f.Path)) && idle > 24*time.Hour:
			why = "left by a write that did not finish"
		case o.retention.SessionDays > 0 && idle > time.Duration(o.retention.SessionDays)*24*time.Hour:
			why = fmt.Sprintf("not used for %d days", int(idle.Hours()/24))
		default:
			continue
		}
		fmt.Fprintf(a.stdout, "%s deny index file %s (%s)\n", verb("remove", "removed"), f.Path, why)
		if o.apply {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove deny index file: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// gone reports whether nothing is at path any more.
func gone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// lastTouched is the latest modification time of any file or directory
// in a session (every call, check, expansion or prompt change writes one).
func lastTouched(dir string) (time.Time, error) {
	var last time.Time
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // the current link: its time is when it was made
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.ModTime().After(last) {
			last = fi.ModTime()
		}
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("session %s: %w", dir, err)
	}
	return last, nil
}

// archive moves a session into <root>/.archive/, with a time suffix when
// an archived session of that id exists.
func archive(root, id string, now time.Time) error {
	dst := filepath.Join(root, archiveDir)
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("archive session %s: %w", id, err)
	}
	target := filepath.Join(dst, id)
	if _, err := os.Lstat(target); err == nil {
		target += "-" + now.UTC().Format("20060102150405")
	}
	if err := os.Rename(filepath.Join(root, id), target); err != nil {
		return fmt.Errorf("archive session %s: %w", id, err)
	}
	return nil
}

// pruneAudit drops the entries of a tools.org whose :TIME: is before
// cutoff. It holds the same exclusive flock as every appender and rewrites
// the file in place (appenders hold descriptors to this inode, so a rename
// would lose their entries); a copy of the result is written and synced
// first, as <path>.gc, and removed once the rewrite is on disk. Entries
// without a readable :TIME: are kept.
func pruneAudit(path string, cutoff time.Time, apply bool) (pruned, kept int, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w", path, err)
	}
	defer f.Close()
	if apply {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return 0, 0, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", path, err)
	}
	// The chain of tools.org stays whole: entries are dropped from its
	// start only (see audit.Prune).
	p := audit.Prune(buf.Bytes(), func(entry []byte) bool {
		t, ok := entryTime(entry)
		return ok && t.Before(cutoff)
	})
	pruned, kept = p.Dropped, p.Kept
	out := bytes.NewBuffer(p.Text)
	if !apply || pruned == 0 {
		return pruned, kept, nil
	}
	backup := path + ".gc"
	if err := writeSynced(backup, out.Bytes()); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w", path, err)
	}
	if _, err := f.WriteAt(out.Bytes(), 0); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w (the pruned content is in %s)", path, err, backup)
	}
	if err := f.Truncate(int64(out.Len())); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w (the pruned content is in %s)", path, err, backup)
	}
	if err := f.Sync(); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w (the pruned content is in %s)", path, err, backup)
	}
	if err := p.Rebase(path); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w", path, err)
	}
	if err := os.Remove(backup); err != nil {
		return pruned, kept, fmt.Errorf("prune %s: %w", path, err)
	}
	return pruned, kept, nil
}

// entryTime reads the :TIME: property of an entry.
func entryTime(entry []byte) (time.Time, bool) {
	if !bytes.HasPrefix(entry, []byte("* ")) {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(entry), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), ":TIME:"); ok {
			t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
			return t, err == nil
		}
		if strings.TrimSpace(line) == ":END:" {
			break
		}
	}
	return time.Time{}, false
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
