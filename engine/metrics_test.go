package engine

import (
	"context"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// nopReply is a Replier that keeps nothing: it allocates nothing.
type nopReply struct{ n int }

func (r *nopReply) Notify(*Request, []byte) error     { return nil }
func (r *nopReply) Reply(*Request, []byte, int) error { r.n++; return nil }
func (r *nopReply) Done(*Request)                     {}

func callMsg(name string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
}

// serve runs msg through sc to its end on the caller's goroutine.
func serve(t testing.TB, sc *Scope, msg []byte, rep Replier) {
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	r := sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		r.Fail(e)
		return
	}
	r.Run()
}

func histOf(s *Server, method, transport string) *DurationHistogram {
	var out *DurationHistogram
	s.RequestDurations(func(h *DurationHistogram) {
		if h.Method == method && h.Transport == transport {
			c := *h
			c.Counts = append([]uint64(nil), h.Counts...)
			out = &c
		}
	})
	return out
}

// TestRequestDurations: each request lands in the histogram of its method
// and its scope's transport label, in the bucket of its duration; a request
// answered before routing is counted under method "other".
func TestRequestDurations(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	_ = s.AddTool(Tool{Name: "slow", Handler: func(c *Call) error {
		time.Sleep(3 * time.Millisecond)
		c.Text("ok")
		return nil
	}})
	a, b := NewScope(s, "stdio"), NewScope(s, "http")
	if a.Transport() != "stdio" || NewScope(s, "").Transport() != "other" {
		t.Fatalf("labels: %q %q", a.Transport(), NewScope(s, "").Transport())
	}
	rep := &nopReply{}
	for range 5 {
		serve(t, a, callMsg("fast"), rep)
	}
	serve(t, b, callMsg("slow"), rep)
	serve(t, b, []byte(`{"jsonrpc":"2.0","id":2,"method":"nope","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), rep)
	if rep.n != 7 {
		t.Fatalf("%d replies, want 7", rep.n)
	}

	h := histOf(s, "tools/call", "stdio")
	if h == nil || h.Count != 5 {
		t.Fatalf("tools/call over stdio: %+v, want 5 requests", h)
	}
	h = histOf(s, "tools/call", "http")
	if h == nil || h.Count != 1 || h.Sum < 3*time.Millisecond {
		t.Fatalf("tools/call over http: %+v, want 1 request of at least 3 ms", h)
	}
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		if i < len(durBounds) && durBounds[i] < 3*time.Millisecond {
			t.Fatalf("a 3 ms request in the bucket up to %v", durBounds[i])
		}
	}
	if h := histOf(s, "other", "http"); h == nil || h.Count != 1 {
		t.Fatalf("unknown method: %+v, want 1 under method other", h)
	}
	if h := histOf(s, "tools/call", "other"); h != nil {
		t.Fatalf("nothing ran on an unlabelled scope, got %+v", h)
	}
	if got, want := len(DurationBounds())+1, len(h.Counts); got != want {
		t.Fatalf("%d buckets for %d bounds", want, got-1)
	}
}

// TestLoad: Load counts the requests in flight per transport label, and the
// listen streams among them, and forgets them once they end.
func TestLoad(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	gate := make(chan struct{})
	started := make(chan struct{}, 2)
	_ = s.AddTool(Tool{Name: "block", Handler: func(c *Call) error {
		started <- struct{}{}
		<-gate
		c.Text("ok")
		return nil
	}})
	sc := NewScope(s, "tcp")
	done := make(chan struct{}, 3)
	for range 2 {
		go func() { serve(t, sc, callMsg("block"), &nopReply{}); done <- struct{}{} }()
	}
	<-started
	<-started
	listen := newListenReplier()
	var env codec.Envelope
	lmsg := []byte(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if err := codec.Peek(lmsg, &env); err != nil {
		t.Fatal(err)
	}
	r := NewScope(s, "unix").Begin(context.Background(), lmsg, &env, listen, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	ref := r.Ref()
	r.Start()
	<-listen.acked

	got := map[string]TransportLoad{}
	for _, l := range s.Load() {
		got[l.Transport] = l
	}
	if l := got["tcp"]; l.InFlight != 2 || l.Listens != 0 {
		t.Fatalf("tcp: %+v, want 2 in flight", l)
	}
	if l := got["unix"]; l.InFlight != 1 || l.Listens != 1 {
		t.Fatalf("unix: %+v, want 1 listen stream", l)
	}
	close(gate)
	<-done
	<-done
	ref.Abort(context.Canceled)
	<-listen.done
	for _, l := range s.Load() {
		if l.InFlight != 0 || l.Listens != 0 {
			t.Fatalf("after the end: %+v, want nothing in flight", l)
		}
	}
}

// listenReplier signals the acknowledgement of a listen stream and its end.
type listenReplier struct {
	acked, done chan struct{}
	once        bool
}

func newListenReplier() *listenReplier {
	return &listenReplier{acked: make(chan struct{}), done: make(chan struct{})}
}

func (r *listenReplier) Notify(*Request, []byte) error {
	if !r.once {
		r.once = true
		close(r.acked)
	}
	return nil
}
func (r *listenReplier) Reply(*Request, []byte, int) error { return nil }
func (r *listenReplier) Done(*Request)                     { close(r.done) }

// BenchmarkObserve is the cost recording adds per request: a clock read
// and the bucket's and the sum's atomic adds (the start's clock read is
// the same again).
func BenchmarkObserve(b *testing.B) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	h := &s.durs.row(0, 1)[methods["tools/call"].slot]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t0 := durNow()
			h.observe(time.Duration(durNow() - t0))
		}
	})
}

// BenchmarkInlineRequest is a whole inline request (begin, checks, the
// tool, the reply) with the duration histograms on and off, in one
// process, alternating: what recording costs a request.
// durations=stamped is "on" with one Scope.Now per 64 requests, as the
// line transports take it per read (BeginBorrowedAt); durations=prepared
// is "stamped" with the message peeked straight into the request's
// envelope (Prepare, BeginPrepared: no envelope copy), as the line
// transports do; durations=batched is "prepared" with the requests of
// each 64 in one Batch (one registration for Shutdown, one clock reading
// at its end), as the line transports do now.
func BenchmarkInlineRequest(b *testing.B) {
	for _, mode := range []string{"on", "stamped", "prepared", "batched", "off"} {
		on, stamped, prepared := mode != "off", mode == "stamped" || mode == "prepared", mode == "prepared" || mode == "batched"
		batched := mode == "batched"
		b.Run("durations="+mode, func(b *testing.B) {
			s := New(Config{NoRequestDurations: !on})
			defer func() { _ = s.Shutdown(context.Background()) }()
			_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
			sc := NewScope(s, "stdio")
			msg := callMsg("fast")
			var env codec.Envelope
			rep := &nopReply{}
			b.ReportAllocs()
			var at Stamp
			var bt *Batch
			n := 0
			for b.Loop() {
				if !prepared {
					if err := codec.Peek(msg, &env); err != nil {
						b.Fatal(err)
					}
				}
				var r *Request
				if stamped && n%64 == 0 {
					at = sc.Now()
				}
				if batched && n%64 == 0 {
					if bt != nil {
						bt.End()
					}
					bt = sc.StartBatch()
				}
				n++
				switch {
				case batched:
					r = bt.Prepare()
					if err := codec.Peek(msg, r.Envelope()); err != nil {
						b.Fatal(err)
					}
					r = sc.BeginInBatch(r, bt, context.Background(), msg, rep, nil)
				case prepared:
					r = sc.Prepare()
					if err := codec.Peek(msg, r.Envelope()); err != nil {
						b.Fatal(err)
					}
					r = sc.BeginPrepared(r, context.Background(), msg, rep, nil, at)
				case stamped:
					r = sc.BeginBorrowedAt(context.Background(), msg, &env, rep, nil, at)
				default:
					r = sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
				}
				if e := r.Check(); e != nil {
					b.Fatal(e.Message)
				}
				r.Run()
			}
			if bt != nil {
				bt.End()
			}
		})
	}
}

// TestNoRequestDurations: with the option set nothing is recorded and no
// clock is read for it.
func TestNoRequestDurations(t *testing.T) {
	s := New(Config{NoRequestDurations: true})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	rep := &nopReply{}
	serve(t, NewScope(s, "stdio"), callMsg("fast"), rep)
	if rep.n != 1 {
		t.Fatalf("%d replies", rep.n)
	}
	n := 0
	s.RequestDurations(func(*DurationHistogram) { n++ })
	if n != 0 || s.durStart() != 0 {
		t.Fatalf("%d histograms, start %d: want none recorded", n, s.durStart())
	}
	if s.Stats().Requests.Load() != 1 {
		t.Fatal("the request was not counted")
	}
}

// TestBeginBorrowedAtStartsAtStamp: a request begun with a Stamp counts its
// duration from that reading, not from Begin (the line transports take one
// reading per read for every request it delivered). The stamp is set two
// seconds in the past, so the recorded sum is at least that whatever the
// machine's speed.
func TestBeginBorrowedAtStartsAtStamp(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	sc := NewScope(s, "tcp")
	at := sc.Now()
	if at == 0 {
		t.Fatal("Now read no clock with the histograms on")
	}
	at -= Stamp(2 * time.Second)
	msg := callMsg("fast")
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	rep := &nopReply{}
	r := sc.BeginBorrowedAt(context.Background(), msg, &env, rep, nil, at)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run()
	var sum time.Duration
	var n uint64
	s.RequestDurations(func(h *DurationHistogram) { sum += h.Sum; n += h.Count })
	if n != 1 || sum < 2*time.Second {
		t.Fatalf("%d requests, sum %v: want 1 request counted from the stamp (>= 2s)", n, sum)
	}
	off := New(Config{NoRequestDurations: true})
	defer func() { _ = off.Shutdown(context.Background()) }()
	if NewScope(off, "tcp").Now() != 0 {
		t.Fatal("Now read the clock with the histograms off")
	}
}

// TestRequestsCounterParts: Stats.Requests counts the requests of Calls
// of every tracker shard (each adds to its shard's part of the Counter),
// and Load sums the parts.
func TestRequestsCounterParts(t *testing.T) {
	var c Counter
	for shard := range uint8(trackShards) {
		c.addAt(shard, uint64(shard)+1)
	}
	c.Add(100)
	if got, want := c.Load(), uint64(trackShards*(trackShards+1)/2+100); got != want {
		t.Fatalf("Load %d, want %d", got, want)
	}
}
