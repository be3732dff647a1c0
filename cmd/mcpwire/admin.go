package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/observe/admin"
	"github.com/mcpwire/mcpwire/observe/metrics"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// adminListener is serve's --admin listener; its methods do nothing on a
// nil receiver (no --admin).
type adminListener struct {
	a     *admin.Server
	done  chan error
	stdio atomic.Int64 // 1 while --stdio is being served
}

// adminSetup is what the admin listener reports on.
type adminSetup struct {
	addr             string
	allowNonLoopback bool
	srv              *engine.Server
	hs               *streamhttp.Server
	ss               *socket.Server
	ls               *legacy.Server // the 2025-11-25 endpoint: mcpwire_legacy_*
	shared           *sharedState
	stdio            bool
	queued           *stdio.Queued // the stdio connection's output queue (with stdio)
	mrtr             *mrtr.Signer  // the fixtures' requestState signer: mcpwire_mrtr_* counters
	oauth            *auth.Stats   // --oauth-*: mcpwire_oauth_* counters
	log              *slog.Logger
	hosts            []string // --admin-host
	token            string   // --admin-token-file's token
	pprof            bool     // --admin-pprof
}

// checkAdminAddr refuses, before anything listens, an --admin address that
// is not loopback without --admin-allow-non-loopback, or that is an MCP
// listener's address.
func checkAdminAddr(addr string, allowNonLoopback bool, mcpAddrs ...string) error {
	if addr == "" {
		return nil
	}
	if !allowNonLoopback && !netutil.IsLoopback(addr) {
		return fmt.Errorf("serve: --admin %s is not a loopback address; add --admin-allow-non-loopback to expose metrics and pprof", addr)
	}
	for _, m := range mcpAddrs {
		if m != "" && sameHostPort(m, addr) {
			return fmt.Errorf("serve: --admin %s is an MCP listener's address; give the admin listener its own", addr)
		}
	}
	return nil
}

// startAdmin serves /metrics, /healthz, /readyz and, with --admin-pprof,
// /debug/pprof/ on s.addr (checked by checkAdminAddr).
func startAdmin(s adminSetup) (*adminListener, error) {
	if s.addr == "" {
		return nil, nil
	}
	al := &adminListener{done: make(chan error, 1)}
	c := metrics.New(s.srv)
	checks := []admin.Check{admin.EngineCheck(s.srv)}
	if s.hs != nil {
		hs := s.hs
		c.AddStats("http", hs.Stats())
		c.AddGauge("open_connections", "Connections open now.", func() float64 { return float64(hs.Gauges().OpenConns) }, "transport", "http")
		c.AddGauge("queued_bytes", "Output bytes queued for a peer and not yet written.", func() float64 { return float64(hs.Gauges().QueuedBytes) }, "transport", "http")
	}
	if s.ss != nil {
		ss := s.ss
		c.AddStats("socket", ss.Stats())
		c.AddGauge("open_connections", "Connections open now.", func() float64 { return float64(ss.Gauges().OpenTCP) }, "transport", "tcp")
		c.AddGauge("open_connections", "Connections open now.", func() float64 { return float64(ss.Gauges().OpenUnix) }, "transport", "unix")
		c.AddGauge("queued_bytes", "Output bytes queued for a peer and not yet written.", func() float64 { return float64(ss.Gauges().QueuedBytes) }, "transport", "socket")
	}
	if s.stdio {
		c.AddGauge("open_connections", "Connections open now.", func() float64 { return float64(al.stdio.Load()) }, "transport", "stdio")
		if q := s.queued; q != nil {
			c.AddGauge("queued_bytes", "Output bytes queued for a peer and not yet written.", func() float64 { return float64(q.Bytes()) }, "transport", "stdio")
		}
	}
	if s.ls != nil {
		c.AddStats("legacy", s.ls.Stats())
	}
	if s.mrtr != nil {
		c.AddStats("mrtr", s.mrtr.Stats())
	}
	if s.oauth != nil {
		c.AddStats("oauth", s.oauth)
	}
	if s.ls != nil {
		// The legacy endpoint's per-caller session refusals join
		// mcpwire_limit_refused_total beside the engine's.
		st := s.ls.Stats()
		c.AddLimit("sessions_per_principal", st.RefusedPerPrincipal.Load)
		c.AddLimit("sessions_per_ip", st.RefusedPerIP.Load)
	}
	if s.shared != nil {
		if r, ok := s.shared.Store.(*redisstate.Store); ok {
			c.AddStats("redis", r.Stats())
			checks = append(checks, admin.Check{Name: "redis", Check: r.Ping})
		}
	}
	al.a = admin.New(admin.Config{
		Gatherer: metrics.Registry(c), Checks: checks,
		AllowNonLoopback: s.allowNonLoopback, Logger: s.log,
		AllowedHosts: s.hosts, Token: s.token, Pprof: s.pprof,
	})
	c.AddStats("admin", al.a.Stats())
	ln, err := al.a.Listen(s.addr)
	if err != nil {
		return nil, fmt.Errorf("serve: --admin: %w", err)
	}
	if !s.allowNonLoopback {
		s.log.Info("mcpwire admin listener", "url", "http://"+ln.Addr().String()+"/metrics")
	} else {
		s.log.Warn("mcpwire admin listener may be non-loopback (--admin-allow-non-loopback): metrics are exposed", "url", "http://"+ln.Addr().String()+"/metrics", "token", s.token != "", "pprof", s.pprof)
	}
	go func() { al.done <- al.a.Serve(ln) }()
	return al, nil
}

func sameHostPort(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	if pa != pb || pa == "0" {
		return false
	}
	norm := func(h string) string {
		if h == "localhost" {
			return "127.0.0.1"
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
			return ""
		}
		return h
	}
	ha, hb = norm(ha), norm(hb)
	return ha == hb || ha == "" || hb == ""
}

// serving marks stdio as open or closed for the connection gauge.
func (al *adminListener) serving(on bool) {
	if al == nil {
		return
	}
	if on {
		al.stdio.Store(1)
	} else {
		al.stdio.Store(0)
	}
}

// drain makes /readyz answer 503: shutdown has begun.
func (al *adminListener) drain() {
	if al != nil {
		al.a.Drain()
	}
}

// shutdown stops the listener last, once the engine has stopped.
func (al *adminListener) shutdown(ctx context.Context, log *slog.Logger) {
	if al == nil {
		return
	}
	if err := al.a.Shutdown(ctx); err != nil {
		log.Warn("admin listener shutdown", "err", err)
	}
	if err := <-al.done; err != nil {
		log.Warn("admin listener", "err", err)
	}
}
