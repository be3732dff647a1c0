package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// refsInReply takes the tracker's references (what Shutdown's cancel pass
// aborts) while its request is being answered: completed, still listed.
type refsInReply struct {
	s    *Server
	refs []RequestRef
	c    *Call
	got  []string
}

func (r *refsInReply) Notify(*Request, []byte) error { return nil }
func (r *refsInReply) Reply(q *Request, f []byte, _ int) error {
	if r.c == nil {
		r.c = q.c
		r.refs = r.s.tracker.refs(nil)
	}
	r.got = append(r.got, string(f))
	return nil
}
func (r *refsInReply) Done(*Request) {}

// TestCancelPassSparesNextOwnRequest (RELIABILITY C13): a request on its own
// (HTTP: no Batch) moves its generation on when it completes, under the
// lock complete takes, and stays listed in the tracker until its end. The
// cancel pass's references taken in that window must not name the next
// request its Call serves: aborting them must leave that request answered.
func TestCancelPassSparesNextOwnRequest(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "http")
	// The pool (which drops Puts at random under the race detector) hands
	// the same Call back most of the time; try until it does.
	for attempt := 0; attempt < 50; attempt++ {
		first := &refsInReply{s: s}
		runChecked(t, sc, sc.Prepare(), batchMsg("1", "fast"), first)
		if first.c == nil || len(first.got) != 1 {
			t.Fatalf("first request: %q", first.got)
		}
		r2 := prepareOn(sc, first.c)
		if r2 == nil {
			continue
		}
		// The Call serves request 2; the pass aborts what it collected.
		second := &keepReply{}
		r2 = beginOn(t, sc, r2, batchMsg("2", "fast"), second)
		for _, ref := range first.refs {
			ref.Abort(errShutdown)
		}
		if e := r2.Check(); e != nil {
			t.Fatal(e)
		}
		r2.Run()
		got := second.all()
		if len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
			t.Fatalf("the next request on the Call: %d answers, want 1: %q (refs %d)", len(got), got, len(first.refs))
		}
		return
	}
	t.Skip("the pool never handed the Call back")
}

// TestStaleRefsAgainstReuse (RELIABILITY C13): references to ended requests
// (a transport's, kept after Done) are used while their Calls are recycled
// and serve the next requests, on another goroutine. A stale reference
// must never cancel a later request (each is answered), and under -race
// nothing that release and beginCall write without Call.mu may be read by
// a reference's use (complete moves the generation under the lock; release
// takes none for a request on its own).
func TestStaleRefsAgainstReuse(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "http")
	var last atomic.Pointer[RequestRef]
	var stop atomic.Bool
	var wg sync.WaitGroup
	var cancelled atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if p := last.Load(); p != nil {
					if p.Cancel(errShutdown) {
						cancelled.Add(1)
					}
					p.Abort(errShutdown)
					p.EndStream()
				}
			}
		}()
	}
	const n = 20000
	rep := &countReply{}
	msg := batchMsg("7", "fast")
	for i := 0; i < n; i++ {
		r := beginOn(t, sc, sc.Prepare(), msg, rep)
		ref := r.Ref()
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		r.Run()
		last.Store(&ref) // ended: from now on it must name nothing
	}
	stop.Store(true)
	wg.Wait()
	if got := rep.n.Load(); got != n || cancelled.Load() != 0 {
		t.Fatalf("%d answers of %d requests, %d cancelled by references to ended requests", got, n, cancelled.Load())
	}
}

type countReply struct{ n atomic.Int64 }

func (r *countReply) Notify(*Request, []byte) error     { return nil }
func (r *countReply) Reply(*Request, []byte, int) error { r.n.Add(1); return nil }
func (r *countReply) Done(*Request)                     {}

// TestBatchCancelPassInReply (RELIABILITY C13): the cancel pass runs
// while a Batch's request is being answered; the batch's next request runs
// on the same Call (the batch's spare). complete ends the request's
// generation under Call.mu, and Batch.cur keeps naming the Call, whose
// admission mark then names an older generation (reply10), so the pass
// finds no running request of the batch (there is nothing left to
// cancel), and it can never take a reference that names the next request:
// aborting what it took leaves that request answered. Before engine9, cur
// kept naming the answered request until end, and its generation moved on
// only in release, under a second lock pair.
func TestBatchCancelPassInReply(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "tcp")
	b := sc.StartBatch()
	first := &refsInReply{s: s}
	r := b.Prepare()
	msg := batchMsg("1", "fast")
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginInBatch(r, b, context.Background(), msg, first, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e)
	}
	r.Start()
	if len(first.got) != 1 || len(first.refs) != 0 {
		b.End()
		t.Fatalf("first request: %q, %d refs (want none: it has completed)", first.got, len(first.refs))
	}
	r2 := b.Prepare()
	if r2.c != first.c {
		t.Fatal("the batch's next request is not on its spare Call")
	}
	second := &keepReply{}
	msg2 := batchMsg("2", "fast")
	if err := codec.Peek(msg2, r2.Envelope()); err != nil {
		t.Fatal(err)
	}
	r2 = sc.BeginInBatch(r2, b, context.Background(), msg2, second, nil)
	for _, ref := range first.refs {
		ref.Abort(errShutdown)
	}
	if e := r2.Check(); e != nil {
		t.Fatal(e)
	}
	r2.Start()
	b.End()
	if got := second.all(); len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
		t.Fatalf("the batch's next request: %d answers, want 1: %q", len(got), got)
	}
}

// TestReleaseAgainstProgressTimer (PROG-07): a coalesced progress value
// arms a timer; when it fires as the request completes, progressTimer
// runs under Call.mu after complete has let the lock go, while the ending
// goroutine releases the Call. The timer belongs to its generation and
// returns at once when complete has moved it on, so release may reset the
// progress state without the lock (-race reports a timer that reads the
// state before comparing the generation).
func TestReleaseAgainstProgressTimer(t *testing.T) {
	s := New(Config{ProgressInterval: 20 * time.Microsecond})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var spin atomic.Int64
	if err := s.AddTool(Tool{Name: "prog", Inline: true, Handler: func(c *Call) error {
		c.Progress(1, 0, "")
		c.Progress(2, 0, "") // within the interval: pending, the timer armed
		// Busy-wait a varying time around the interval, so that the timer
		// fires just before, during or after complete.
		until := time.Now().Add(time.Duration(spin.Add(1)%40) * time.Microsecond)
		for time.Now().Before(until) {
		}
		c.Text("ok")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "http")
	rep := &countReply{}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"prog","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`)
	const n = 3000
	for i := 0; i < n; i++ {
		runChecked(t, sc, sc.Prepare(), msg, rep)
	}
	if got := rep.n.Load(); got != n {
		t.Fatalf("%d answers of %d requests", got, n)
	}
}

// TestReleaseAgainstDelivery (SUB-10): listen streams are cancelled, and
// their Calls recycled, while updates are published to them: a publisher's
// snapshot may name a stream that has just ended, and notifyKeyed reads
// the Call's subscription under Call.mu. release must clear it under the
// lock even though complete already moved the generation on (-race
// reports the lock-free variant).
func TestReleaseAgainstDelivery(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddResource(Resource{URI: "test://r", Name: "r", Handler: func(c *Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{})
	}}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "http")
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = s.ResourceUpdated("test://r")
			}
		}()
	}
	rep := &countReply{}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://r"]},` + metaJSON + `}}`)
	const n, open = 3000, 32 // streams begun; open at once, so that a publisher's snapshot is long
	var live []RequestRef
	for i := 0; i < n; i++ {
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		r := sc.Begin(context.Background(), msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		live = append(live, r.Ref())
		r.Start() // detaches: the stream lives on, subscribed
		if len(live) == open {
			if !live[0].Cancel(errShutdown) {
				t.Fatalf("stream %d: not running", i)
			}
			live = append(live[:0], live[1:]...)
		}
	}
	for _, ref := range live {
		ref.Cancel(errShutdown)
	}
	stop.Store(true)
	wg.Wait()
}

// TestDurationsAgainstScrapes: requests on their own, ones answered by
// validation and a Batch's requests end on several goroutines while scrapes
// read the histograms and the in-flight table: every request is counted
// exactly once (and -race finds no unsynchronized record).
func TestDurationsAgainstScrapes(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "http")
	lines := NewScope(s, "tcp")
	var stop atomic.Bool
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for !stop.Load() {
			s.RequestDurations(func(*DurationHistogram) {})
			_ = s.Load()
		}
	}()
	const workers, per = 4, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := &countReply{}
			ok, bad := batchMsg("1", "fast"), batchMsg("2", "nosuch")
			for i := range per {
				msg := ok
				if i%4 == 3 {
					msg = bad // answered by validation: never admitted
				}
				if w%2 == 0 {
					r := sc.Prepare()
					if err := codec.Peek(msg, r.Envelope()); err != nil {
						t.Error(err)
						return
					}
					r = sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
					if e := r.Check(); e != nil {
						r.Fail(e)
					} else {
						r.Run()
					}
					continue
				}
				b := lines.StartBatch()
				startInBatch(t, lines, b, msg, rep)
				b.End()
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	<-scraped
	var n uint64
	s.RequestDurations(func(h *DurationHistogram) { n += h.Count })
	if n != workers*per {
		t.Fatalf("%d requests recorded, want %d", n, workers*per)
	}
}

// prepareOn takes prepared requests from the pool until one is on Call c
// (nil after 64 others, which go back): the next request on the Call of
// one that has just ended.
func prepareOn(sc *Scope, c *Call) *Request {
	var aside []*Request
	defer func() {
		for _, q := range aside {
			q.Discard()
		}
	}()
	for range 64 {
		q := sc.Prepare()
		if q.c == c {
			return q
		}
		aside = append(aside, q)
	}
	return nil
}

// beginOn peeks msg into r, a prepared request, and begins it for rep.
func beginOn(t *testing.T, sc *Scope, r *Request, msg []byte, rep Replier) *Request {
	t.Helper()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	return sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
}

// runChecked begins msg on r for rep and runs it; it must pass its checks.
func runChecked(t *testing.T, sc *Scope, r *Request, msg []byte, rep Replier) {
	t.Helper()
	r = beginOn(t, sc, r, msg, rep)
	if e := r.Check(); e != nil {
		t.Fatal(e)
	}
	r.Run()
}
