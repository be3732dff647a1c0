// Command mcpwire runs the mcpwire reference server and its tools.
//
//	mcpwire serve --stdio        the reference server on stdin/stdout
//	mcpwire probe TARGET         what a server is (era, revision, info, capabilities, tools, resources, prompts)
//	mcpwire call TARGET TOOL '{"arg":1}'   one call
//	mcpwire demo                 start the reference server, exercise it end to end, run a short load, stop it
//	mcpwire version
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/internal/demo"
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
	case "load":
		err = runLoad(ctx, os.Args[2:])
	case "probe":
		err = runProbe(ctx, os.Args[2:])
	case "call":
		err = runCall(ctx, os.Args[2:])
	case "conformance-client": // hidden: the official suite's client leg runs it (.ci/conformance-client.sh)
		err = runConformanceClient(ctx, os.Args[2:])
	case "version":
		fmt.Println("mcpwire", refserverVersion())
	case "-h", "--help", "help":
		usage()
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpwire:", errorText(err))
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  mcpwire serve --stdio [flags]   run the reference server on stdin/stdout
  mcpwire serve --http ADDR       run it on Streamable HTTP (combinable with --stdio)
                [--tls-cert FILE --tls-key FILE]   over TLS (HTTPS); reloaded when the files change (and on SIGHUP, not on Windows)
  mcpwire serve --tcp ADDR | --unix PATH   line-framed JSON-RPC on sockets
  mcpwire serve --http ADDR --state redis://HOST:PORT/DB --state-key-file FILE [--state-password-file FILE] [--trusted-proxy CIDR]
                                  a replica sharing drafts and change cues (deploy/, make cluster)
  mcpwire demo [flags]            run the reference server, exercise it, run a short load, stop it
  mcpwire load [flags] TARGET     load generator against an HTTP, stdio, tcp or unix target (load --help)
  mcpwire probe [--json] TARGET   era, revision, server info, capabilities, tools, resources, templates and prompts of any MCP server
  mcpwire call [flags] TARGET METHOD|TOOL [JSON]   one call: result on stdout, progress and errors on stderr
                [--input KEY=JSON|KEY=@FILE] [--inputs FILE]   answers to the server's input requests (MRTR)
                [--resend]                      send the call once more if the connection is lost (it may run twice)
  mcpwire version
`)
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
	return demo.Run(ctx, demo.Config{
		Server: []string{self, "serve", "--stdio", "--log-level", "warn"},
		Load:   *load, Window: *window, Out: os.Stdout,
	})
}
