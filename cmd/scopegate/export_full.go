//go:build !lean

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/telemetry"
)

// maxHandedEvents bounds the JSON read by export-events.
const maxHandedEvents = 64 << 20

// fullSink exports in-process with the OpenTelemetry SDK.
type fullSink struct{ x *telemetry.Exporter }

func (s fullSink) Emit(ev audit.Event) { s.x.Emit(ev) }

// close flushes within telemetry.DefaultFlushBound: what is not exported
// by then is dropped and counted.
func (s fullSink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.DefaultFlushBound)
	defer cancel()
	_ = s.x.Shutdown(ctx)
}

// newEventSink is the in-process exporter of tc, counting drops in obs
// when it can; nil (and a warning) when tc cannot be used.
func (a *app) newEventSink(obs gateway.Observer, tc config.Telemetry) eventSink {
	x, err := a.newExporter(obs, tc)
	if err != nil {
		warner(a.stderr)(err.Error())
		return nil
	}
	return fullSink{x: x}
}

func (a *app) newExporter(obs gateway.Observer, tc config.Telemetry) (*telemetry.Exporter, error) {
	o := telemetry.Options{Version: readVersion().Version}
	if m, ok := obs.(interface{ ExportDropped(int) }); ok {
		o.Dropped = m.ExportDropped
	}
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
			tc, on := a.telemetryConfig()
			if !on {
				return nil
			}
			x, err := a.newExporter(nil, tc)
			if err != nil {
				return &exitError{code: exitInternal, err: err}
			}
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
			if err := x.Shutdown(ctx); err != nil {
				return &exitError{code: exitInternal, err: fmt.Errorf("export-events: %w", err)}
			}
			return nil
		},
	}
}
