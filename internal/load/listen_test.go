package load

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// sseHub is the listen side of a fake Streamable HTTP server: each
// subscriptions/listen POST becomes an SSE stream; tools/call touch
// delivers notifications/resources/updated to every stream before it is
// answered.
type sseHub struct {
	mu      sync.Mutex
	subs    map[chan []byte]string
	touches int
	// skip, when set, leaves out the delivery of touch n (from 0) to the
	// stream whose subscription id is id.
	skip func(id string, n int) bool
	// uris collects the touched URIs.
	uris []string
	// refuse, when set, answers touch n with an error and publishes nothing.
	refuse func(n int) bool
	// ackDelay, when set, delays the acknowledgement of stream id.
	ackDelay func(id string) time.Duration
	// hangup, when set, publishes touch n and then closes its connection
	// without an answer (a keep-alive connection broken at the wrong time).
	hangup func(n int) bool
}

func startListenFake(t *testing.T) (*httpFake, *sseHub) {
	h := &sseHub{subs: map[chan []byte]string{}}
	f := startHTTPFake(t, func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		switch {
		case m.Method == "subscriptions/listen":
			if len(m.Params.Notes.Res) != 1 || m.Params.Notes.Res[0] != "test://load" {
				writeJSON(w, 200, errorJSON(m.ID, -32602))
				return
			}
			if h.ackDelay != nil {
				time.Sleep(h.ackDelay(string(m.ID)))
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			ch := make(chan []byte, 4096)
			// Subscribed before the acknowledgement is written (SUB-03, as
			// the engine does): a touch answered after the client read the
			// ack is delivered on this stream. (Subscribed after it, a
			// touch in between was missed and the run reported a delivery
			// lost, once in a while on a loaded machine.)
			h.mu.Lock()
			h.subs[ch] = string(m.ID)
			h.mu.Unlock()
			sseEvent(w, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"resourceSubscriptions":["test://load"]}}}`, m.ID))
			fmt.Fprint(w, ": keep-alive\n\n")
			defer func() {
				h.mu.Lock()
				delete(h.subs, ch)
				h.mu.Unlock()
			}()
			for {
				select {
				case b := <-ch:
					sseEvent(w, b)
				case <-req.Context().Done():
					return
				}
			}
		case m.Method == "tools/call" && m.Params.Name == "touch":
			var a struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(m.Params.Arguments, &a)
			uri, _ := json.Marshal(a.URI)
			h.mu.Lock()
			n := h.touches
			h.touches++
			h.uris = append(h.uris, a.URI)
			if h.refuse != nil && h.refuse(n) {
				h.mu.Unlock()
				writeJSON(w, 200, errorJSON(m.ID, -32000))
				return
			}
			for ch, id := range h.subs {
				if h.skip != nil && h.skip(id, n) {
					continue
				}
				ch <- fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"uri":%s}}`, id, uri)
			}
			hangup := h.hangup != nil && h.hangup(n)
			h.mu.Unlock()
			if hangup {
				if nc, _, err := http.NewResponseController(w).Hijack(); err == nil {
					nc.Close()
				}
				return
			}
			writeJSON(w, 200, resultJSON(m.ID, "touched"))
		default:
			writeJSON(w, 404, errorJSON(m.ID, -32601))
		}
	})
	return f, h
}

func (h *sseHub) open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// TestListenHTTP opens 20 SSE listen streams, publishes at 50/s for 1 s and
// expects every publish delivered on every stream, timed from its send.
func TestListenHTTP(t *testing.T) {
	f, hub := startListenFake(t)
	res := runLoad(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 20, PublishRate: 50,
		Duration: time.Second, Warmup: 200 * time.Millisecond,
	})
	if bad := f.mismatches(); len(bad) > 0 {
		t.Fatalf("header/body mismatches: %v", bad)
	}
	if len(res.Errors) != 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	if res.acked != 20 || res.Connections != 21 {
		t.Fatalf("acked %d, connections %d", res.acked, res.Connections)
	}
	// At most the rate allows (50/s for 1 s); how many a loaded machine
	// manages is not this test's business (no timed asserts).
	if res.Requests < 1 || res.Requests > 50 {
		t.Errorf("publishes = %d, want 1..50", res.Requests)
	}
	if res.Deliveries != 20*res.Requests || res.Deliveries != res.expected {
		t.Errorf("deliveries = %d, want 20 per publish (%d) = expected %d", res.Deliveries, 20*res.Requests, res.expected)
	}
	if d := res.DeliveryLatencyUs; d.P50 <= 0 || d.Max < d.P50 {
		t.Errorf("delivery latency %+v", d)
	}
	if res.DeliveriesPerS <= 0 {
		t.Errorf("deliveries/s = %.1f", res.DeliveriesPerS)
	}
	// The streams were closed at the end (client-side end = close, SUB-09).
	deadline := time.Now().Add(5 * time.Second)
	for hub.open() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := hub.open(); n != 0 {
		t.Errorf("%d listen streams still open at the server", n)
	}
}

// TestListenUniqueURIs: with -unique-uris the k-th touch names test://load/k
// (a sub-resource of the subscribed URI, SUB-06) and every stream receives
// every one: nothing lost, no duplicates, the run passes its check.
func TestListenUniqueURIs(t *testing.T) {
	f, hub := startListenFake(t)
	res := runLoad(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 10, PublishRate: 50, UniqueURIs: true,
		Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond,
	})
	if len(res.Errors) != 0 || res.Loss == nil || *res.Loss != (Loss{}) {
		t.Fatalf("errors %v, loss %+v", res.Errors, res.Loss)
	}
	if err := res.Check(DefaultMaxErrorShare); err != nil {
		t.Fatalf("check: %v", err)
	}
	hub.mu.Lock()
	uris := append([]string(nil), hub.uris...)
	hub.mu.Unlock()
	if len(uris) < 2 {
		t.Fatalf("%d touches", len(uris))
	}
	for k, u := range uris {
		if want := fmt.Sprintf("test://load/%d", k); u != want {
			t.Fatalf("touch %d named %q, want %q", k, u, want)
		}
	}
	if res.Deliveries != 10*res.Requests {
		t.Errorf("deliveries = %d, want 10 per measured publish (%d)", res.Deliveries, res.Requests)
	}
}

// TestListenUniqueURIsLoss: a server that leaves one publish out on one
// stream fails the run with that delivery counted as lost.
func TestListenUniqueURIsLoss(t *testing.T) {
	f, hub := startListenFake(t)
	hub.mu.Lock()
	hub.skip = func(id string, n int) bool { return id == `"listen-3"` && n == 1 }
	hub.mu.Unlock()
	res := runLoad(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 5, PublishRate: 50, UniqueURIs: true,
		Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeout: time.Second,
	})
	if res.Loss == nil || res.Loss.Lost != 1 || res.Loss.Streams != 1 {
		t.Fatalf("loss %+v, want 1 on 1 stream", res.Loss)
	}
	if err := res.Check(1); err == nil || !contains(err.Error(), "1 deliveries lost on 1 streams") {
		t.Fatalf("check = %v, want the loss reported", err)
	}
}

// TestListenHTTPRefused counts listen requests the server refuses.
func TestListenHTTPRefused(t *testing.T) {
	f, _ := startListenFake(t)
	_, err := Run(t.Context(), Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 3, URI: "test://other",
		Duration: 100 * time.Millisecond, Timeout: 2 * time.Second,
	})
	if err == nil || !contains(err.Error(), "rpc_-32602=3") {
		t.Fatalf("err = %v, want every stream refused with -32602", err)
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestUniqueURIsRefusedTouchIsNotALoss: a touch the server refuses (an
// error reply: nothing was published) is no publish any stream must
// receive, so it is not counted as lost on every stream.
func TestUniqueURIsRefusedTouchIsNotALoss(t *testing.T) {
	f, hub := startListenFake(t)
	hub.mu.Lock()
	hub.refuse = func(n int) bool { return n == 1 }
	hub.mu.Unlock()
	res := runLoad(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 5, PublishRate: 50, UniqueURIs: true,
		Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeout: time.Second,
	})
	hub.mu.Lock()
	touches := hub.touches
	hub.mu.Unlock()
	if touches < 2 {
		t.Fatalf("%d touches: the refused one was never sent", touches)
	}
	if res.Loss == nil || res.Loss.Lost != 0 || res.Loss.Duplicates != 0 {
		t.Fatalf("loss %+v: a refused touch (nothing published) counted as lost deliveries", res.Loss)
	}
}

// TestUniqueURIsLateAckIsNotALoss: a stream acknowledged after openListens
// stopped waiting joins the run midway; the publishes sent before its
// acknowledgement are not charged to it as lost.
func TestUniqueURIsLateAckIsNotALoss(t *testing.T) {
	f, hub := startListenFake(t)
	hub.mu.Lock()
	hub.ackDelay = func(id string) time.Duration {
		if id == `"listen-3"` {
			return 1300 * time.Millisecond
		}
		return 0
	}
	hub.mu.Unlock()
	res, log := runLoadLog(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 5, PublishRate: 50, UniqueURIs: true,
		Duration: 1500 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeout: time.Second,
	})
	if !contains(log, "4 of 5 listen streams acknowledged in time") {
		t.Fatalf("log %q: listen-3 was not acknowledged late", log)
	}
	if res.Loss == nil || res.Loss.Lost != 0 || res.Loss.Duplicates != 0 {
		t.Fatalf("loss %+v: a stream acknowledged late reported as losing the publishes sent before it joined", res.Loss)
	}
	if res.expected > res.Deliveries {
		t.Fatalf("expected %d deliveries, got %d: the late stream charged for publishes before it joined", res.expected, res.Deliveries)
	}
}

// TestUniqueURIsSeenBounded: a stream's duplicate check holds one bit per
// publish sent so far, not the whole run's publish capacity (up to 1 MiB
// per stream at 5,000 streams), and still finds duplicates after growing,
// out of order too.
func TestUniqueURIsSeenBounded(t *testing.T) {
	r := &run{seqPrefix: seqURI("test://load")}
	pub := newPubLog(8 << 20) // a long run's capacity
	s := &listenStream{pub: pub}
	var env codec.Envelope
	deliver := func(k int64) bool {
		msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://load/%d"}}`, k)
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		_, ok := r.seqOf(s, &env)
		return ok
	}
	const n = 1000
	if s.pending() {
		t.Fatal("pending before any publish")
	}
	for k := range int64(n) {
		pub.add(1, true)
		if k%2 == 1 { // out of order: k-1 after k
			if !deliver(k) || !deliver(k-1) {
				t.Fatalf("publish %d or %d refused", k, k-1)
			}
		}
		if p := s.seen.Load(); p != nil && len(*p) > int(pub.n.Load())/64+1 {
			c := len(*p)
			t.Fatalf("after %d publishes the bitmap holds %d words, want at most %d", pub.n.Load(), c, pub.n.Load()/64+1)
		}
	}
	if s.count.Load() != n || r.dups.Load() != 0 {
		t.Fatalf("count %d, dups %d", s.count.Load(), r.dups.Load())
	}
	for _, k := range []int64{0, 63, 64, n - 1} {
		if deliver(k) {
			t.Fatalf("duplicate of %d accepted", k)
		}
	}
	if r.dups.Load() != 4 {
		t.Fatalf("dups %d, want 4", r.dups.Load())
	}
	if deliver(n) {
		t.Fatal("an update beyond the publishes sent accepted")
	}
}

// TestUniqueURIsDrainWaitsPastFailedDelivery: a touch that failed but was
// published anyway (a timeout, a broken connection) and delivered does not
// stand in for a publish that succeeded and is still on its way: the drain
// keeps waiting for it, so the stream is not closed before it arrives.
func TestUniqueURIsDrainWaitsPastFailedDelivery(t *testing.T) {
	r := &run{seqPrefix: seqURI("test://load")}
	pub := newPubLog(64)
	s := &listenStream{pub: pub}
	var env codec.Envelope
	deliver := func(k int64) {
		msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://load/%d"}}`, k)
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.seqOf(s, &env); !ok {
			t.Fatalf("delivery %d refused", k)
		}
	}
	for range 3 {
		pub.add(1, true)
	}
	deliver(0)
	deliver(1) // delivered, then its touch timed out
	pub.fail(1)
	if !s.pending() {
		t.Fatal("publish 2 is on its way, but the stream is not pending")
	}
	if l := s.lost(); l != 1 {
		t.Fatalf("lost %d, want 1 (publish 2)", l)
	}
	deliver(2)
	if s.pending() || s.lost() != 0 || r.dups.Load() != 0 {
		t.Fatalf("pending %v, lost %d, dups %d after every publish arrived", s.pending(), s.lost(), r.dups.Load())
	}
}

// TestUniqueURIsBrokenTouchNotResent: a touch whose keep-alive connection
// breaks before any of the answer arrived may have been published (here
// it was): it is not sent again, which would publish its URI twice, but
// counted as failed; its delivery is neither a duplicate nor a loss.
func TestUniqueURIsBrokenTouchNotResent(t *testing.T) {
	f, hub := startListenFake(t)
	hub.mu.Lock()
	hub.hangup = func(n int) bool { return n == 2 }
	hub.mu.Unlock()
	res := runLoad(t, Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 5, PublishRate: 50, UniqueURIs: true,
		Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeout: time.Second,
	})
	hub.mu.Lock()
	uris := append([]string(nil), hub.uris...)
	hub.mu.Unlock()
	if len(uris) < 3 {
		t.Fatalf("%d touches: the broken one was never sent", len(uris))
	}
	for k, u := range uris {
		if want := fmt.Sprintf("test://load/%d", k); u != want {
			t.Fatalf("touch %d named %q, want %q: a touch was sent again", k, u, want)
		}
	}
	if res.Loss == nil || *res.Loss != (Loss{}) {
		t.Fatalf("loss %+v", res.Loss)
	}
}

// TestUniqueURIsRefusesHeaderBoundURI: a touch tool that mirrors its uri
// argument into an Mcp-Param header (x-mcp-header, PARAM-01) cannot run
// with -unique-uris: the header is built once from -uri while each touch
// names its own URI, and a server must refuse the mismatch (PARAM-05). The
// run stops at setup with an error that says so.
func TestUniqueURIsRefusesHeaderBoundURI(t *testing.T) {
	var touches int
	var mu sync.Mutex
	f := startHTTPFake(t, func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		switch m.Method {
		case "tools/list":
			writeJSON(w, 200, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"touch","inputSchema":{"type":"object","properties":{"uri":{"type":"string","x-mcp-header":"Uri"}}}}],"ttlMs":0,"cacheScope":"public"}}`, m.ID))
		default:
			mu.Lock()
			touches++
			mu.Unlock()
			writeJSON(w, 404, errorJSON(m.ID, -32601))
		}
	})
	_, err := Run(t.Context(), Config{
		Target: f.url(), Workload: WorkloadListen, Listeners: 2, PublishRate: 50, UniqueURIs: true,
		Duration: 100 * time.Millisecond, Timeout: time.Second,
	})
	if err == nil || !contains(err.Error(), "-unique-uris") || !contains(err.Error(), "Mcp-Param-Uri") {
		t.Fatalf("err = %v, want -unique-uris refused for the header-bound uri", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if touches != 0 {
		t.Fatalf("%d requests besides tools/list: the run went on", touches)
	}
}
