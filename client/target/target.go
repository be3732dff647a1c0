// Package target opens a client.Client from a target string, the syntax
// mcpwire load, probe and call share:
//
//	http://host:port/path     Streamable HTTP (https:// too)
//	stdio:'command args'      a spawned server (POSIX shell word splitting, no expansion)
//	tcp://host:port           line-framed JSON-RPC over TCP
//	unix:///path/to/socket    line-framed JSON-RPC over a Unix socket
package target

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/oauth"
	"github.com/mcpwire/mcpwire/client/socket"
	"github.com/mcpwire/mcpwire/client/stdio"
	"github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// Config tune Open.
type Config struct {
	Client client.Config
	// Line applies to stdio, tcp and unix targets.
	Line client.LineConfig
	// HTTP applies to http and https targets.
	HTTP streamhttp.Config
	// OAuth, for http and https targets, authorizes the requests with the
	// MCP authorization flow (package oauth): Open makes an
	// oauth.Authorizer of it for HTTP.Auth, with Resource set to the
	// target URL when empty and Logger to Logger when nil. Nil: none
	// (HTTP.Auth and HTTP.Header apply as they are).
	OAuth *oauth.Config
	// StopWait is the stdio stop sequence's CloseWait and TermWait.
	// Default 2 s each.
	StopWait time.Duration
	// Logger for the transport and a spawned server's stderr.
	Logger *slog.Logger
}

// Open parses s and returns a Client on it. Nothing is sent yet (the era
// probe runs on the first call, or on Client.Probe).
func Open(s string, o Config) (*client.Client, error) {
	if o.Logger != nil {
		if o.Client.Logger == nil {
			o.Client.Logger = o.Logger
		}
		if o.Line.Logger == nil {
			o.Line.Logger = o.Logger
		}
		if o.HTTP.Logger == nil {
			o.HTTP.Logger = o.Logger
		}
	}
	var t client.Transport
	switch {
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		if o.OAuth != nil {
			cfg := *o.OAuth
			if cfg.Resource == "" {
				cfg.Resource = s
			}
			if cfg.Logger == nil {
				cfg.Logger = o.Logger
			}
			a, err := oauth.New(cfg)
			if err != nil {
				return nil, err
			}
			o.HTTP.Auth = a
		}
		ht, err := streamhttp.Dial(s, o.HTTP)
		if err != nil {
			return nil, err
		}
		t = ht
	case strings.HasPrefix(s, "stdio:"):
		argv, err := netutil.SplitCommand(strings.TrimPrefix(s, "stdio:"))
		if err != nil {
			return nil, fmt.Errorf("target %q: %v", s, err)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("target %q: no command", s)
		}
		cmd := &stdio.Command{Path: argv[0], Args: argv[1:], Logger: o.Logger,
			CloseWait: o.StopWait, TermWait: o.StopWait}
		t = client.NewLineTransport(cmd.Dial, o.Line)
	case strings.HasPrefix(s, "tcp://"):
		addr := strings.TrimSuffix(strings.TrimPrefix(s, "tcp://"), "/")
		if addr == "" {
			return nil, fmt.Errorf("target %q: no address", s)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			// Found by FuzzOpen: "tcp://0" was taken and failed only at
			// the first call, with the dialer's error.
			return nil, fmt.Errorf("target %q: want tcp://host:port: %v", s, err)
		}
		t = client.NewLineTransport(socket.Dialer("tcp", addr, 0), o.Line)
	case strings.HasPrefix(s, "unix://"):
		p := strings.TrimPrefix(s, "unix://")
		if p == "" {
			return nil, fmt.Errorf("target %q: no socket path", s)
		}
		t = client.NewLineTransport(socket.Dialer("unix", p, 0), o.Line)
	default:
		return nil, fmt.Errorf("target %q: want http://host:port/path, stdio:'command args', tcp://host:port or unix:///path", s)
	}
	return client.New(t, o.Client), nil
}
