package engine

import (
	"context"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/cputime"
)

type benchEchoIn struct {
	Text string `json:"text"`
}

type benchEchoOut struct {
	Text string `json:"text"`
}

func (o benchEchoOut) AppendResultText(dst []byte) []byte { return append(dst, o.Text...) }

// quietReplier drops everything and writes nothing: safe on many
// goroutines at once without sharing a cache line between them.
type quietReplier struct{}

func (quietReplier) Notify(*Request, []byte) error     { return nil }
func (quietReplier) Reply(*Request, []byte, int) error { return nil }
func (quietReplier) Done(*Request)                     {}

// BenchmarkTypedEchoPrepared is the engine's part of one request of the
// HTTP wrk row: the standard fixture peeked into a prepared request
// (Prepare, BeginPrepared without a stamp, as streamhttp does), checked
// and run on the caller's goroutine by the reference server's kind of
// typed Inline echo (flat In and Out, Out with its own text). serial is
// one goroutine; parallel runs it on every P at once (b.RunParallel), as
// wrk's 64 connections do on the server's cores, so that every shared
// write per request (counters, histogram buckets, tracker and pool
// state) shows as the cache-line traffic it causes; its cpu-ns/op is the
// process's CPU time per request.
func BenchmarkTypedEchoPrepared(b *testing.B) {
	setup := func(b *testing.B) (*Server, *Scope) {
		s := New(Config{})
		if err := AddTool(s, Tool{Name: "echo", Inline: true}, func(c *Call, in benchEchoIn) (benchEchoOut, error) {
			return benchEchoOut(in), nil
		}); err != nil {
			b.Fatal(err)
		}
		return s, NewScope(s, "http")
	}
	one := func(sc *Scope, msg []byte) string {
		r := sc.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			return err.Error()
		}
		r = sc.BeginPrepared(r, context.Background(), msg, quietReplier{}, nil, 0)
		if e := r.Check(); e != nil {
			return e.Message
		}
		r.Run()
		return ""
	}
	b.Run("serial", func(b *testing.B) {
		s, sc := setup(b)
		defer func() { _ = s.Shutdown(context.Background()) }()
		msg := []byte(echoFixture)
		b.ReportAllocs()
		cpu0 := cputime.Process()
		for b.Loop() {
			if e := one(sc, msg); e != "" {
				b.Fatal(e)
			}
		}
		// As parallel's: the process's CPU time per request, which other
		// sessions' load moves less than the wall clock.
		b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	// serial's request peeked through one PeekMemo, as streamhttp peeks
	// (its work's memo): from the second request on, a template hit,
	// whose check the Call keeps (tmplCheck).
	b.Run("memo", func(b *testing.B) {
		s, sc := setup(b)
		defer func() { _ = s.Shutdown(context.Background()) }()
		msg := []byte(echoFixture)
		memo := new(codec.PeekMemo)
		b.ReportAllocs()
		for b.Loop() {
			r := sc.Prepare()
			if err := codec.PeekWith(msg, r.Envelope(), codec.PeekConfig{Memo: memo}); err != nil {
				b.Fatal(err)
			}
			r = sc.BeginPrepared(r, context.Background(), msg, quietReplier{}, nil, 0)
			if e := r.Check(); e != nil {
				b.Fatal(e.Message)
			}
			r.Run()
		}
	})
	// The same request with its arguments last (params' members in
	// another order, as some clients write them): the arguments end the
	// message, where Peek records them only through its recordTail.
	b.Run("argumentsLast", func(b *testing.B) {
		s, sc := setup(b)
		defer func() { _ = s.Shutdown(context.Background()) }()
		msg := []byte(echoArgumentsLast)
		b.ReportAllocs()
		cpu0 := cputime.Process()
		for b.Loop() {
			if e := one(sc, msg); e != "" {
				b.Fatal(e)
			}
		}
		b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("parallel", func(b *testing.B) {
		s, sc := setup(b)
		defer func() { _ = s.Shutdown(context.Background()) }()
		b.ReportAllocs()
		cpu0 := cputime.Process()
		b.RunParallel(func(pb *testing.PB) {
			msg := []byte(echoFixture) // each goroutine its own message, as each connection
			for pb.Next() {
				if e := one(sc, msg); e != "" {
					b.Error(e) // not Fatal: this is not the benchmark's goroutine
					return
				}
			}
		})
		// CPU time per request: wall-clock time per request on a shared
		// machine depends on what else runs; the cores' work per request
		// (what contention adds) does much less.
		b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// echoArgumentsLast is the standard fixture with params' members in
// another order: _meta first, arguments last.
const echoArgumentsLast = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1},"name":"echo","arguments":{"text":"hello world"}}}`

// BenchmarkRequestRef is what a transport pays for a RequestRef of a
// request it has begun (streamhttp and linestream take one per request).
func BenchmarkRequestRef(b *testing.B) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	r := NewScope(s, "http").Prepare()
	defer r.Discard()
	var ref RequestRef
	for b.Loop() {
		ref = r.Ref()
	}
	if !ref.Valid() {
		b.Fatal("no reference")
	}
}

// BenchmarkTypedArgs compares, in one binary, the two ways a typed echo's
// recorded arguments reach In: onePass is typedTool.checkDecode, twoStep
// the flat check into a Call's values (flatSchema.checkFrom with the
// envelope) and then the decode from them (decodeScanned), as before
// typed10. A time comparison across binaries moves with code layout
// (profiles/README.typed10.md); this one does not.
func BenchmarkTypedArgs(b *testing.B) {
	var env codec.Envelope
	if err := codec.Peek([]byte(echoFixture), &env); err != nil || env.PlainArguments() < 0 {
		b.Fatal("not recorded", err)
	}
	typ := reflect.TypeFor[benchEchoIn]()
	a := inputSchema(b, typ)
	tt := &typedTool{in: newFlatCodec(typ)}
	if !tt.fuse(a.flat) {
		b.Fatal("not fused")
	}
	m := tt.in.mapFrom(a.flat)
	c := new(Call) // the values live in the Call, as in callTool
	b.Run("onePass", func(b *testing.B) {
		for b.Loop() {
			var in benchEchoIn
			if !tt.checkDecode(&env, env.PlainArguments(), unsafe.Pointer(&in), &c.strs) || in.Text != "hello world" {
				b.Fatal("declined")
			}
		}
	})
	b.Run("twoStep", func(b *testing.B) {
		for b.Loop() {
			var in benchEchoIn
			if e, ok := a.flat.checkFrom(env.Arguments, &env, &c.flatVals); e != nil || !ok {
				b.Fatal("refused")
			}
			if !tt.in.decodeScanned(m, &c.flatVals, unsafe.Pointer(&in), &c.strs, true) || in.Text != "hello world" {
				b.Fatal("declined")
			}
		}
	})
}
