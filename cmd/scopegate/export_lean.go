//go:build lean

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
)

// The per-call build does not link the OpenTelemetry SDK. With export
// configured, its events are kept in memory and, at the end of the run,
// handed to fullBinary's export-events, started detached: the run does not
// wait for the collector at all, only for the start of that process and
// the write of the events (bounded by handBound).

// Bounds of the hand-over.
const (
	maxSpooled = 1024
	handBound  = 200 * time.Millisecond
)

// spool keeps the events of one run.
type spool struct {
	a      *app
	mu     sync.Mutex
	events []audit.Event
}

// newEventSink is the spool of this run.
func (a *app) newEventSink(gateway.Observer, []exportTarget) eventSink { return &spool{a: a} }

// Emit keeps ev (up to maxSpooled events a run).
func (s *spool) Emit(ev audit.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) < maxSpooled {
		s.events = append(s.events, ev)
	}
}

// close hands the events to fullBinary export-events; a missing
// fullBinary is a warning, never an error of the run.
func (s *spool) close() {
	s.mu.Lock()
	events := s.events
	s.events = nil
	s.mu.Unlock()
	if len(events) == 0 {
		return
	}
	warn := warner(s.a.stderr)
	self, err := os.Executable()
	if err != nil {
		warn("telemetry: locate the scopegate binary: " + err.Error())
		return
	}
	full := filepath.Join(filepath.Dir(self), fullBinary)
	r, w, err := os.Pipe()
	if err != nil {
		warn("telemetry: " + err.Error())
		return
	}
	defer w.Close()
	cmd := exec.Command(full, "--config-dir", s.a.configDir, exportEventsCmd)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		warn("telemetry: export needs " + full + " next to this per-call build: " + err.Error())
		return
	}
	_ = cmd.Process.Release()
	_ = w.SetWriteDeadline(time.Now().Add(handBound))
	enc := json.NewEncoder(w)
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			warn("telemetry: hand events to " + full + ": " + err.Error())
			return
		}
	}
}

// newExportEventsCmd runs fullBinary's export-events.
func newExportEventsCmd(a *app) *cobra.Command {
	return fullCmd(a, &cobra.Command{Use: exportEventsCmd, Hidden: true})
}
