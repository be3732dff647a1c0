// Command mcpwire runs the mcpwire reference server and its tools.
//
//	mcpwire serve --stdio        the reference server on stdin/stdout
//	mcpwire demo                 start the reference server, exercise it end to end, run a short load, stop it
//	mcpwire version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine/stdio"
	"github.com/mcpwire/mcpwire/internal/demo"
	"github.com/mcpwire/mcpwire/internal/refserver"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "demo":
		err = runDemo(ctx, os.Args[2:])
	case "version":
		fmt.Println("mcpwire", refserverVersion())
	case "-h", "--help", "help":
		usage()
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpwire:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  mcpwire serve --stdio [flags]   run the reference server on stdin/stdout
  mcpwire demo [flags]            run the reference server, exercise it, run a short load, stop it
  mcpwire version
`)
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	useStdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout")
	grace := fs.Duration("grace", stdio.DefaultGrace, "how long in-flight requests may finish after stdin ends")
	maxLine := fs.Int("max-line", 0, "largest accepted message in bytes (0: 4 MiB)")
	progress := fs.Duration("progress-interval", 0, "minimum time between progress notifications of one request (0: 50ms)")
	logLevel := fs.String("log-level", "info", "stderr log level: debug, info, warn, error")
	_ = fs.Parse(args)
	if !*useStdio {
		return errors.New("serve: choose a transport: --stdio")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	srv, err := refserver.New(refserver.Options{Logger: log, ProgressInterval: *progress})
	if err != nil {
		return err
	}
	log.Info("mcpwire serving on stdio")
	err = stdio.Serve(ctx, srv, stdio.Options{Grace: *grace, MaxLine: *maxLine, Logger: log})
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	switch {
	case errors.Is(err, stdio.ErrOutputClosed):
		log.Info("stdout closed by the client; exiting")
		return nil
	case errors.Is(err, context.Canceled):
		log.Info("signal received; exiting")
		return nil
	}
	return err
}

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	load := fs.Duration("load", 2*time.Second, "duration of the closing load run")
	window := fs.Int("window", 32, "requests kept in flight during the load run")
	_ = fs.Parse(args)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return demo.Run(ctx, demo.Options{
		Server: []string{self, "serve", "--stdio", "--log-level", "warn"},
		Load:   *load, Window: *window, Out: os.Stdout,
	})
}
