// Command otelcol is the smallest OpenTelemetry Collector the end-to-end
// tests need: the collector's own OTLP receiver (gRPC and HTTP/protobuf),
// every logs request it accepts appended to a file as one line of OTLP
// JSON (the collector's own marshaler).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func main() {
	grpcAddr := flag.String("grpc", "127.0.0.1:4317", "OTLP/gRPC listen address")
	httpAddr := flag.String("http", "127.0.0.1:4318", "OTLP/HTTP listen address")
	out := flag.String("out", "logs.jsonl", "file the received logs are appended to")
	flag.Parse()
	if err := run(*grpcAddr, *httpAddr, *out); err != nil {
		fmt.Fprintln(os.Stderr, "otelcol:", err)
		os.Exit(1)
	}
}

func run(grpcAddr, httpAddr, out string) error {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	var m plog.JSONMarshaler
	next, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		b, err := m.MarshalLogs(ld)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		_, err = f.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	fac := otlpreceiver.NewFactory()
	cfg := fac.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	ctx := context.Background()
	rcv, err := fac.CreateLogs(ctx, receivertest.NewNopSettings(fac.Type()), cfg, next)
	if err != nil {
		return err
	}
	if err := rcv.Start(ctx, componenttest.NewNopHost()); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "otelcol: ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return rcv.Shutdown(ctx)
}
