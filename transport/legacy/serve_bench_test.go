package legacy_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/cputime"
	"github.com/mcpwire/mcpwire/internal/replayconn"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// BenchmarkServeCall is BenchmarkWireCall without the client and the
// socket: the server's side of one call, fasthttp's connection loop
// reading the request from an in-memory connection and writing the
// response to it, so cpu-ns/op is the server's CPU alone (the wire
// benchmark's also holds its client's and two system calls a side, where
// a 100 ns change is lost in the noise). "legacy" on the 2025-11-25
// endpoint inside a live session, "modern" on the 2026-07-28 one of the
// same server: their ratio is the issue-21 goal's (legacy at >= 0.85x the
// modern endpoint) for the server's own work.
func BenchmarkServeCall(b *testing.B) {
	eng := newInlineEngine(b)
	leg := legacy.New(eng, legacy.Config{})
	hs := streamhttp.New(eng, streamhttp.Config{Mounts: map[string]http.Handler{legacyPath: leg.Handler()}})
	ln := &chanListener{ch: make(chan net.Conn), closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	b.Cleanup(func() {
		close(ln.closed)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = leg.Shutdown(ctx)
		_ = hs.Shutdown(ctx)
		<-done
		_ = eng.Shutdown(ctx)
	})
	var rig wireRig // only its request builder
	init := ln.serve(rig.request(legacyPath, "", initBody), 1)
	_, rest, _ := bytes.Cut(init.First, []byte("\r\n"+legacy.HeaderSession+": "))
	sid, _, _ := bytes.Cut(rest, []byte("\r\n"))
	if len(sid) == 0 {
		b.Fatalf("initialize: %q", init.First)
	}
	for _, tc := range []struct{ name, path, body string }{
		{"modern", "/mcp", fixtureModern},
		{"legacy", legacyPath, fixtureLegacy},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := rig.request(tc.path, string(sid), tc.body)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process()
			rc := ln.serve(req, b.N+100)
			cpu = cputime.Process() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N+100), "cpu-ns/op")
			if !bytes.HasPrefix(rc.First, []byte("HTTP/1.1 200")) || !bytes.Contains(rc.First, []byte("hello world")) {
				b.Fatalf("response %q", rc.First)
			}
			if rc.Done != b.N+100 {
				b.Fatalf("%d responses to %d requests", rc.Done, b.N+100)
			}
		})
	}
}

// chanListener hands the server the connections sent on ch.
type chanListener struct {
	ch     chan net.Conn
	closed chan struct{}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *chanListener) Close() error   { return nil }
func (l *chanListener) Addr() net.Addr { return replayconn.Addr }

// serve has the server read req n times from one in-memory connection
// and returns the connection once the server has closed it.
func (l *chanListener) serve(req []byte, n int) *replayconn.Conn {
	c := replayconn.New(req, n)
	l.ch <- c
	<-c.Finished
	return c
}
