//go:build !lean

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/telemetry"
)

// maxHandedEvents bounds the JSON read by export-events.
const maxHandedEvents = 64 << 20

// fullSink exports in-process with the OpenTelemetry SDK, to every target.
type fullSink struct{ xs []*telemetry.Exporter }

func (s fullSink) Emit(ev audit.Event) {
	for _, x := range s.xs {
		x.Emit(ev)
	}
}

// close flushes within telemetry.DefaultFlushBound: what is not exported
// by then is dropped and counted.
func (s fullSink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.DefaultFlushBound)
	defer cancel()
	for _, x := range s.xs {
		_ = x.Shutdown(ctx)
	}
}

// newEventSink is the in-process exporter of every target, counting drops
// in obs when it can; nil when none can be used.
func (a *app) newEventSink(obs gateway.Observer, ts []exportTarget) eventSink {
	xs := a.newExporters(obs, ts)
	if len(xs) == 0 {
		return nil
	}
	return fullSink{xs: xs}
}

// newExporters are the exporters of the targets that can be used; each
// that cannot is a warning.
func (a *app) newExporters(obs gateway.Observer, ts []exportTarget) []*telemetry.Exporter {
	var xs []*telemetry.Exporter
	for _, t := range ts {
		x, err := a.newExporter(obs, t)
		if err != nil {
			warner(a.stderr)(err.Error())
			continue
		}
		xs = append(xs, x)
	}
	return xs
}

func (a *app) newExporter(obs gateway.Observer, t exportTarget) (*telemetry.Exporter, error) {
	o := telemetry.Options{Version: readVersion().Version, Fixed: t.fixed}
	if m, ok := obs.(interface{ ExportDropped(int) }); ok {
		o.Dropped = m.ExportDropped
	}
	tc := t.tc
	return telemetry.New(context.Background(), telemetry.Config{Endpoint: tc.Endpoint, Protocol: tc.Protocol, Headers: tc.Headers}, o)
}

// newExportEventsCmd is the hidden command the per-call build hands its
// audit events to: JSON lines of audit.Event on stdin, exported within
// telemetry.DefaultExportTimeout. Nobody waits for it.
func newExportEventsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    exportEventsCmd,
		Short:  "Export audit events read from stdin over OTLP (used by the per-call build)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ts := a.exportTargets()
			if len(ts) == 0 {
				return nil
			}
			xs := a.newExporters(nil, ts)
			if len(xs) == 0 {
				return &exitError{code: exitInternal, err: errors.New("export-events: no export can be used")}
			}
			x := fullSink{xs: xs}
			sc := bufio.NewScanner(io.LimitReader(a.stdin, maxHandedEvents))
			sc.Buffer(nil, maxHandedEvents)
			for sc.Scan() {
				var ev audit.Event
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					warner(a.stderr)(fmt.Sprintf("export-events: %v", err))
					continue
				}
				x.Emit(ev)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), telemetry.DefaultExportTimeout)
			defer cancel()
			var errs []error
			for _, x := range xs {
				errs = append(errs, x.Shutdown(ctx))
			}
			if err := errors.Join(errs...); err != nil {
				return &exitError{code: exitInternal, err: fmt.Errorf("export-events: %w", err)}
			}
			return nil
		},
	}
}
