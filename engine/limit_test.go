package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/codec"
)

// limReply records what one request got: its notifications (a listen
// stream's acknowledgement), its reply and its end.
type limReply struct {
	notes  chan string
	status int
	frame  string
	retry  int
	done   chan struct{}
}

func newLimReply() *limReply {
	return &limReply{notes: make(chan string, 8), done: make(chan struct{})}
}

func (r *limReply) Notify(_ *Request, f []byte) error { r.notes <- string(f); return nil }
func (r *limReply) Reply(q *Request, f []byte, status int) error {
	r.status, r.frame, r.retry = status, string(f), q.RetryAfter()
	return nil
}
func (r *limReply) Done(*Request) { close(r.done) }

const limMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func limCall(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},%s}}`, id, tool, limMeta)
}

func listenMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, id, limMeta)
}

// limStart begins msg for principal p (an anonymous one named key when p
// is nil), checks it and starts it.
func limStart(t *testing.T, sc *Scope, msg string, p any, key string) (*limReply, RequestRef) {
	t.Helper()
	var env codec.Envelope
	if err := codec.Peek([]byte(msg), &env); err != nil {
		t.Fatal(err)
	}
	rep := newLimReply()
	r := sc.Begin(context.Background(), []byte(msg), &env, rep, p)
	r.SetLimitKey(key)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	ref := r.Ref()
	r.Start()
	return rep, ref
}

// wantRefused waits for rep's end and checks it is the refusal of limit:
// -32603, HTTP 429, data naming the limit and retryAfter, RetryAfter set.
func wantRefused(t *testing.T, rep *limReply, limit string, retry int) {
	t.Helper()
	select {
	case <-rep.done:
	case <-time.After(10 * time.Second): // a guard, not a speed goal
		t.Fatalf("not refused: still running (want the %s refusal)", limit)
	}
	want := fmt.Sprintf(`"data":{"limit":%q,"retryAfter":%d}`, limit, retry)
	if rep.status != 429 || !strings.Contains(rep.frame, `"code":-32603`) || !strings.Contains(rep.frame, want) || rep.retry != retry {
		t.Fatalf("got %d %s (retry %d); want 429 with %s", rep.status, rep.frame, rep.retry, want)
	}
}

// blockingServer has a worker tool "block" that waits for release (the
// second result, safe to call more than once) and an inline tool "fast";
// the third result releases and shuts the server down.
func blockingServer(t *testing.T, cfg Config) (*Server, func(), func()) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(ch) }) }
	s := New(cfg)
	if err := s.AddTool(Tool{Name: "block", Handler: func(c *Call) error {
		<-ch
		c.Text("ok")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	return s, release, func() { release(); _ = s.Shutdown(context.Background()) }
}

// TestF5InFlightPerPrincipal: past MaxInFlightPerPrincipal one principal
// is refused (429, counted once) while another, and the anonymous client
// of another IP, are still served; the slots come back when the calls
// end and no state is left.
func TestF5InFlightPerPrincipal(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, release, stop := blockingServer(t, Config{MaxInFlightPerPrincipal: 2})
	defer stop()
	sc := NewScope(s, "tcp")
	var held []*limReply
	for i := range 2 {
		rep, _ := limStart(t, sc, limCall(i, "block"), "alice", "")
		held = append(held, rep)
	}
	rep, _ := limStart(t, sc, limCall(9, "block"), "alice", "")
	wantRefused(t, rep, LimitInFlightPerPrincipal, 1)
	// Inline calls are not counted: alice's "fast" is served.
	rep, _ = limStart(t, sc, limCall(10, "fast"), "alice", "")
	if <-rep.done; rep.status != 200 {
		t.Fatalf("alice's inline call: %d %s", rep.status, rep.frame)
	}
	// Another principal, and anonymous callers named by their IP (the
	// same string as a principal, kept apart), are served.
	for _, who := range []struct {
		p   any
		key string
	}{{"bob", ""}, {"bob", ""}, {nil, "alice"}, {nil, "alice"}} {
		held = append(held, func() *limReply { r, _ := limStart(t, sc, limCall(20, "block"), who.p, who.key); return r }())
	}
	// An anonymous caller without a key is not limited per caller.
	for range 3 {
		rep, _ := limStart(t, sc, limCall(30, "block"), nil, "")
		held = append(held, rep)
	}
	if n := s.LimitStats().InFlightPerPrincipal.Load(); n != 1 {
		t.Fatalf("InFlightPerPrincipal = %d, want 1", n)
	}
	release()
	for _, r := range held {
		if <-r.done; r.status != 200 {
			t.Fatalf("held call: %d %s", r.status, r.frame)
		}
	}
	if n := s.lim.entries(); n != 0 {
		t.Fatalf("%d limiter entries left after every call ended", n)
	}
	rep, _ = limStart(t, sc, limCall(40, "block"), "alice", "")
	if <-rep.done; rep.status != 200 {
		t.Fatalf("alice after her calls ended: %d %s", rep.status, rep.frame)
	}
	if n := s.LimitStats().InFlightPerPrincipal.Load(); n != 1 {
		t.Fatalf("InFlightPerPrincipal = %d, want 1", n)
	}
}

// TestF5ListensPerPrincipal: past MaxListensPerPrincipal a principal's
// listen is refused (429, counted once) while another principal opens
// one; ending the streams frees the slots and leaves no state.
func TestF5ListensPerPrincipal(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, _, stop := blockingServer(t, Config{MaxListensPerPrincipal: 2})
	defer stop()
	sc := NewScope(s, "tcp")
	var open []RequestRef
	var reps []*limReply
	listen := func(p any) *limReply {
		rep, ref := limStart(t, sc, listenMsg(len(reps)+1), p, "")
		reps = append(reps, rep)
		open = append(open, ref)
		return rep
	}
	for range 2 {
		if ack := <-listen("alice").notes; !strings.Contains(ack, "subscriptions/acknowledged") {
			t.Fatalf("ack %s", ack)
		}
	}
	wantRefused(t, listen("alice"), LimitListenPerPrincipal, 1)
	if ack := <-listen("bob").notes; !strings.Contains(ack, "subscriptions/acknowledged") {
		t.Fatalf("bob's ack %s", ack)
	}
	if n := s.LimitStats().ListenPerPrincipal.Load(); n != 1 {
		t.Fatalf("ListenPerPrincipal = %d, want 1", n)
	}
	for _, ref := range open {
		ref.EndStream()
	}
	for _, r := range reps {
		<-r.done
	}
	if n := s.lim.entries(); n != 0 {
		t.Fatalf("%d limiter entries left after every stream ended", n)
	}
	if ack := <-listen("alice").notes; !strings.Contains(ack, "subscriptions/acknowledged") {
		t.Fatalf("alice after her streams ended: %s", ack)
	}
	open[len(open)-1].EndStream()
	<-reps[len(reps)-1].done
}

// TestF5RatePerPrincipal: a token bucket per principal (a clock of the
// test's own): past the burst a principal is refused with the seconds
// until its next token, another is served, and the bucket refills.
func TestF5RatePerPrincipal(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, _, stop := blockingServer(t, Config{RatePerPrincipal: 0.5, RateBurst: 2})
	defer stop()
	var now atomic.Int64
	s.lim.now = now.Load
	sc := NewScope(s, "tcp")
	call := func(p any) *limReply {
		rep, _ := limStart(t, sc, limCall(1, "fast"), p, "")
		<-rep.done
		return rep
	}
	for range 2 {
		if r := call("alice"); r.status != 200 {
			t.Fatalf("alice within her burst: %d %s", r.status, r.frame)
		}
	}
	wantRefused(t, call("alice"), LimitRatePerPrincipal, 2) // one token per 2 s
	if r := call("bob"); r.status != 200 {
		t.Fatalf("bob: %d %s", r.status, r.frame)
	}
	now.Add(1.5e9)
	wantRefused(t, call("alice"), LimitRatePerPrincipal, 1) // 0.75 of a token there
	now.Add(0.5e9)
	if r := call("alice"); r.status != 200 {
		t.Fatalf("alice after 2 s: %d %s", r.status, r.frame)
	}
	if n := s.LimitStats().RatePerPrincipal.Load(); n != 2 {
		t.Fatalf("RatePerPrincipal = %d, want 2", n)
	}
}

// TestF5RateStateBounded: rate buckets expire. Callers seen once leave an
// entry until their bucket is full again; later insertions sweep them,
// so the state tracks the callers of the last burst/rate seconds.
func TestF5RateStateBounded(t *testing.T) {
	s, _, stop := blockingServer(t, Config{RatePerPrincipal: 1, RateBurst: 1})
	defer stop()
	var now atomic.Int64
	s.lim.now = now.Load
	sc := NewScope(s, "tcp")
	const n = 2000
	for round := range 3 {
		for i := range n {
			rep, _ := limStart(t, sc, limCall(1, "fast"), fmt.Sprint("p", round, "-", i), "")
			<-rep.done
		}
		now.Add(2e9) // every bucket so far is full again
	}
	// Without expiry 3n entries would be left; the last round's n (not
	// yet swept) and at most one sweep threshold per shard may be.
	if got := s.lim.entries(); got > n+limitShards*64 {
		t.Fatalf("%d limiter entries after %d callers: buckets do not expire", got, 3*n)
	}
}

// TestF5PrincipalKey: principals of other types are keyed by their
// printed value, so two equal pointers from two authentications are one
// caller.
func TestF5PrincipalKey(t *testing.T) {
	type claims struct{ Sub string }
	s, release, stop := blockingServer(t, Config{MaxInFlightPerPrincipal: 1})
	defer stop()
	sc := NewScope(s, "tcp")
	held, _ := limStart(t, sc, limCall(1, "block"), &claims{"alice"}, "")
	wantRefused(t, func() *limReply { r, _ := limStart(t, sc, limCall(2, "block"), &claims{"alice"}, ""); return r }(), LimitInFlightPerPrincipal, 1)
	other, _ := limStart(t, sc, limCall(3, "block"), &claims{"bob"}, "")
	release()
	<-held.done
	if <-other.done; other.status != 200 {
		t.Fatalf("bob: %d %s", other.status, other.frame)
	}
}

// TestLimitsOff: negative values turn every per-caller limit off: a
// principal's requests then leave no state; 0 selects the defaults.
func TestLimitsOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, release, stop := blockingServer(t, Config{MaxListensPerPrincipal: -1, MaxInFlightPerPrincipal: -1, RatePerPrincipal: -1})
	defer stop()
	if l := s.lim; l.maxListens != noLimitCount || l.maxInFlight != noLimitCount || l.rate != 0 {
		t.Fatalf("limiter %+v with every limit off", l)
	}
	sc := NewScope(s, "tcp")
	var held []*limReply
	for i := range 3 {
		rep, _ := limStart(t, sc, limCall(i, "block"), "alice", "")
		held = append(held, rep)
	}
	if n := s.lim.entries(); n != 0 {
		t.Fatalf("%d entries with every limit off", n)
	}
	release()
	for _, r := range held {
		if <-r.done; r.status != 200 {
			t.Fatalf("%d %s", r.status, r.frame)
		}
	}
	d := New(Config{})
	defer func() { _ = d.Shutdown(context.Background()) }()
	if c := d.Config(); c.MaxListensPerPrincipal != DefaultMaxListensPerPrincipal ||
		c.MaxInFlightPerPrincipal != DefaultMaxInFlightPerPrincipal || c.RatePerPrincipal != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	r := New(Config{RatePerPrincipal: 2.5})
	defer func() { _ = r.Shutdown(context.Background()) }()
	if c := r.Config(); c.RateBurst != 3 {
		t.Fatalf("default burst of 2.5/s = %d, want 3", c.RateBurst)
	}
}

// TestF5ToolRatePerPrincipal: a tool's own rate per caller: past it the
// caller is refused for that tool only (another tool, another caller
// served), counted once; a call refused by the caller's in-flight bound
// gives its tool token back.
func TestF5ToolRatePerPrincipal(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, release, stop := blockingServer(t, Config{MaxInFlightPerPrincipal: 1})
	defer stop()
	var now atomic.Int64
	s.lim.now = now.Load
	if err := s.AddTool(Tool{Name: "costly", Inline: true, RatePerPrincipal: 0.1, RateBurst: 2,
		Handler: func(c *Call) error { c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "costly_worker", RatePerPrincipal: 0.1, RateBurst: 1,
		Handler: func(c *Call) error { c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "tcp")
	call := func(tool string, p any) *limReply {
		rep, _ := limStart(t, sc, limCall(1, tool), p, "")
		<-rep.done
		return rep
	}
	for range 2 {
		if r := call("costly", "alice"); r.status != 200 {
			t.Fatalf("alice within the tool's burst: %d %s", r.status, r.frame)
		}
	}
	wantRefused(t, call("costly", "alice"), LimitToolRatePerPrincipal, 10)
	for _, c := range []struct {
		tool string
		p    any
	}{{"fast", "alice"}, {"costly", "bob"}} {
		if r := call(c.tool, c.p); r.status != 200 {
			t.Fatalf("%v %s: %d %s", c.p, c.tool, r.status, r.frame)
		}
	}
	// alice holds her one in-flight slot: costly_worker is refused by the
	// in-flight bound, and its tool token is given back.
	held, _ := limStart(t, sc, limCall(2, "block"), "alice", "")
	wantRefused(t, call("costly_worker", "alice"), LimitInFlightPerPrincipal, 1)
	release()
	<-held.done
	if r := call("costly_worker", "alice"); r.status != 200 {
		t.Fatalf("costly_worker after the refusal: %d %s (its token was spent)", r.status, r.frame)
	}
	st := s.LimitStats()
	if st.ToolRatePerPrincipal.Load() != 1 || st.InFlightPerPrincipal.Load() != 1 || st.RatePerPrincipal.Load() != 0 {
		t.Fatalf("tool %d, in flight %d, rate %d; want 1, 1, 0",
			st.ToolRatePerPrincipal.Load(), st.InFlightPerPrincipal.Load(), st.RatePerPrincipal.Load())
	}
	now.Add(100e9) // every bucket full again
	if r := call("fast", "carol"); r.status != 200 {
		t.Fatal(r.frame)
	}
	s.lim.sweepAll()
	if n := s.lim.entries(); n != 0 {
		t.Fatalf("%d entries once every bucket is full again", n)
	}
}

// nilStringer panics in String on a nil receiver.
type nilStringer struct{ name string }

func (n *nilStringer) String() string { return n.name }

// TestPrincipalString: strings as they are, Stringers by String (one
// that panics is printed, not raised), others by type and value.
func TestPrincipalString(t *testing.T) {
	type claims struct{ Sub string }
	for i, tc := range []struct {
		p    any
		want string
	}{
		{"alice", "alice"},
		{&nilStringer{"bob"}, "bob"},
		{&claims{"carol"}, "*engine.claims:&{carol}"},
		{42, "int:42"},
	} {
		if got := principalString(tc.p); got != tc.want {
			t.Errorf("%d: principalString(%#v) = %q, want %q", i, tc.p, got, tc.want)
		}
	}
	// A typed nil has no identity (no panic either): "", anonymous to
	// acquire, not one "<nil>" key all typed nils share.
	if got := principalString((*nilStringer)(nil)); got != "" {
		t.Errorf("a typed nil Stringer: %q, want \"\"", got)
	}
	if got := principalString((*claims)(nil)); got != "" {
		t.Errorf("a typed nil: %q, want \"\"", got)
	}
}

// TestTypedNilPrincipalIsAnonymous: requests whose principal is a typed
// nil (or a Stringer with an empty String) are not one caller: each is
// limited as an anonymous request by its own key, so such callers of
// different keys do not share MaxInFlightPerPrincipal, and each is still
// limited by its key.
func TestTypedNilPrincipalIsAnonymous(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, release, stop := blockingServer(t, Config{MaxInFlightPerPrincipal: 1})
	defer stop()
	sc := NewScope(s, "tcp")
	var held []*limReply
	for i, who := range []struct {
		p   any
		key string
	}{{(*nilStringer)(nil), "10.0.0.1"}, {(*nilStringer)(nil), "10.0.0.2"}, {&nilStringer{""}, "10.0.0.3"}} {
		r, _ := limStart(t, sc, limCall(i, "block"), who.p, who.key)
		held = append(held, r)
	}
	r, _ := limStart(t, sc, limCall(8, "block"), (*nilStringer)(nil), "10.0.0.1")
	wantRefused(t, r, LimitInFlightPerPrincipal, 1)
	r, _ = limStart(t, sc, limCall(9, "block"), &nilStringer{""}, "10.0.0.3")
	wantRefused(t, r, LimitInFlightPerPrincipal, 1)
	release()
	for i, r := range held {
		<-r.done
		if r.status != 200 {
			t.Errorf("caller %d: %d %s, want served", i, r.status, r.frame)
		}
	}
}
