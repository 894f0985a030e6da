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

// telemetryConfig is the export configuration: config.yml's telemetry
// section, and whether export is on (an endpoint there or in the OTEL_
// variables). An unreadable config.yml turns export off (the commands that
// need config.yml report it).
func (a *app) telemetryConfig() (config.Telemetry, bool) {
	env := os.Getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	cfg, err := config.Load(a.configDir)
	if err != nil {
		if env {
			warner(a.stderr)("telemetry: " + err.Error())
		}
		return config.Telemetry{}, false
	}
	return cfg.Telemetry, env || cfg.Telemetry.Endpoint != ""
}

// events is the app's event sink for a gateway counting in obs; nil when
// export is off.
func (a *app) events(obs gateway.Observer) gateway.EventSink {
	if a.export == nil {
		a.export = &exportState{}
	}
	a.export.once.Do(func() {
		if tc, on := a.telemetryConfig(); on {
			a.export.sink = a.newEventSink(obs, tc)
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
