package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
)

// startTracing turns `serve --trace` into engine hooks: spans (package
// observe/otelmcp) written as JSON lines by OpenTelemetry's stdout
// exporter to stdout or stderr. "" means off: no hooks, no cost. The
// returned stop flushes and shuts the exporter down.
func startTracing(spec string, stdio bool) (engine.Hooks, func(), error) {
	var w io.Writer
	switch spec {
	case "", "off":
		return engine.Hooks{}, func() {}, nil
	case "stderr":
		w = os.Stderr
	case "stdout":
		if stdio {
			return engine.Hooks{}, nil, errors.New("serve: --trace stdout would corrupt the --stdio protocol stream; use --trace stderr")
		}
		w = os.Stdout
	default:
		return engine.Hooks{}, nil, fmt.Errorf("serve: --trace %q: want stdout, stderr or off", spec)
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
	if err != nil {
		return engine.Hooks{}, nil, err
	}
	res := resource.NewSchemaless(semconv.ServiceName("mcpwire"), semconv.ServiceVersion(refserverVersion()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}
	return otelmcp.Hooks(otelmcp.Config{TracerProvider: tp}), stop, nil
}
