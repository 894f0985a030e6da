package main

import (
	"os"
	"sync"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/gateway"
)

// This file is the export of audit events over OTLP that both builds share:
// whether it is configured. The default build exports in-process
// (export_full.go); the per-call build hands its events to the default
// build (export_lean.go), so that it never links the OpenTelemetry SDK.

// exportEventsCmd is the hidden command of the default build that exports
// the events handed to it by a per-call build.
const exportEventsCmd = "export-events"

// eventSink is the export of this process's audit events.
type eventSink interface {
	gateway.EventSink
	// close exports what is left, within a short bound.
	close()
}

// exportState is the app's event sink, made once.
type exportState struct {
	once sync.Once
	sink eventSink
}

// exportTarget is one export of audit events: where to, and whether it is
// the machine's managed policy's (fixed: nothing of the user's
// configuration or environment changes it).
type exportTarget struct {
	tc    config.Telemetry
	fixed bool
}

// exportTargets are the exports of this run: the managed policy's
// telemetry, which user configuration cannot turn off, and the user's own
// (config.yml's telemetry section, or the OTEL_ variables). An unreadable
// config.yml turns the user's export off (the commands that need
// config.yml report it).
func (a *app) exportTargets() []exportTarget {
	var out []exportTarget
	if m, err := a.managedPolicy(); err == nil && m != nil && m.File.Telemetry != nil {
		out = append(out, exportTarget{tc: *m.File.Telemetry, fixed: true})
	}
	env := os.Getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	cfg, err := config.Load(a.configDir)
	if err != nil {
		if env {
			warner(a.stderr)("telemetry: " + err.Error())
		}
		return out
	}
	if env || cfg.Telemetry.Endpoint != "" {
		out = append(out, exportTarget{tc: cfg.Telemetry})
	}
	return out
}

// events is the app's event sink for a gateway counting in obs; nil when
// export is off.
func (a *app) events(obs gateway.Observer) gateway.EventSink {
	if a.export == nil {
		a.export = &exportState{}
	}
	a.export.once.Do(func() {
		if ts := a.exportTargets(); len(ts) > 0 {
			a.export.sink = a.newEventSink(obs, ts)
		}
	})
	if a.export.sink == nil {
		return nil
	}
	return a.export.sink
}

// closeEvents ends the export of the app's events, if any.
func (a *app) closeEvents() {
	if a.export != nil && a.export.sink != nil {
		a.export.sink.close()
	}
}
