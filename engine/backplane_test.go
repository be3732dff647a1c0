package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
)

// fakeBroker is an in-process stand-in for a shared backplane: every
// replica's fakeBackplane delivers to every subscribed one, in order.
type fakeBroker struct {
	mu   sync.Mutex
	subs []*fakeBackplane
}

type fakeBackplane struct {
	b        *fakeBroker
	mu       sync.Mutex
	deliver  func(state.Cue)
	lost     func()
	restored func()
	down     bool
	failSub  error
	failPub  int // publishes still to fail (failPublishes)
	failErr  error
}

func (b *fakeBroker) replica() *fakeBackplane { return &fakeBackplane{b: b} }

func (f *fakeBackplane) Publish(ctx context.Context, c state.Cue) error {
	f.mu.Lock()
	down, fail, failErr := f.down, f.failPub > 0, f.failErr
	if fail {
		f.failPub--
	}
	f.mu.Unlock()
	if down {
		return state.ErrUnavailable
	}
	if fail {
		return failErr
	}
	f.b.mu.Lock()
	subs := append([]*fakeBackplane(nil), f.b.subs...)
	f.b.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		d, down := s.deliver, s.down
		s.mu.Unlock()
		if d != nil && !down {
			d(c)
		}
	}
	return nil
}

func (f *fakeBackplane) Subscribe(ctx context.Context, deliver func(state.Cue), lost, restored func()) error {
	if f.failSub != nil {
		return f.failSub
	}
	f.mu.Lock()
	f.deliver, f.lost, f.restored = deliver, lost, restored
	f.mu.Unlock()
	f.b.mu.Lock()
	f.b.subs = append(f.b.subs, f)
	f.b.mu.Unlock()
	return nil
}

func (f *fakeBackplane) Close() error { return nil }

func (f *fakeBackplane) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	lost, restored := f.lost, f.restored
	f.mu.Unlock()
	if down {
		lost()
	} else {
		restored()
	}
}

// streamRec is a listen stream's Replier: it records every frame.
type streamRec struct {
	mu     sync.Mutex
	frames [][]byte
	reply  []byte
	status int
	done   chan struct{}
}

func newStreamRec() *streamRec { return &streamRec{done: make(chan struct{})} }

func (r *streamRec) Notify(_ *Request, f []byte) error {
	r.mu.Lock()
	r.frames = append(r.frames, append([]byte(nil), f...))
	r.mu.Unlock()
	return nil
}
func (r *streamRec) Reply(_ *Request, f []byte, status int) error {
	r.mu.Lock()
	r.reply, r.status = append([]byte(nil), f...), status
	r.mu.Unlock()
	return nil
}
func (r *streamRec) Done(*Request) { close(r.done) }

// count returns how many frames contain sub.
func (r *streamRec) count(sub string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, f := range r.frames {
		if bytes.Contains(f, []byte(sub)) {
			n++
		}
	}
	return n
}

func (r *streamRec) waitCount(t *testing.T, sub string, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for r.count(sub) < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a second, duplicate delivery would land here
	if got := r.count(sub); got != want {
		t.Fatalf("%d frames with %s, want %d", got, sub, want)
	}
}

// dropRec is a streamRec whose transport drops streams (like HTTP).
type dropRec struct{ *streamRec }

func (dropRec) DropsOnCancel() {}

const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func newReplica(t *testing.T, bp state.Backplane) *Server {
	t.Helper()
	s := New(Config{Backplane: bp})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.AddResource(Resource{URI: "test://r", Name: "r", Handler: func(c *Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{})
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "touch", Handler: func(c *Call) error {
		if err := c.Server().ResourceUpdated("test://r"); err != nil {
			return err
		}
		c.Text("ok")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// send runs one request on s through rep.
func send(t *testing.T, s *Server, rep Replier, msg string) {
	t.Helper()
	b := []byte(msg)
	var env codec.Envelope
	if err := codec.Peek(b, &env); err != nil {
		t.Fatal(err)
	}
	r := NewScope(s, "").Begin(context.Background(), b, &env, rep, nil)
	if e := r.Check(); e != nil {
		r.Fail(e)
		return
	}
	r.Start()
}

func listenOn(t *testing.T, s *Server, rep Replier, id int) {
	t.Helper()
	send(t, s, rep, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://r"]},%s}}`, id, metaJSON))
}

// TestBackplaneDeliversOnce: an update made through either replica reaches
// a listener on the other once, and a replica's own update reaches its own
// listener once (through the backplane only, not also locally).
func TestBackplaneDeliversOnce(t *testing.T) {
	br := &fakeBroker{}
	a, b := newReplica(t, br.replica()), newReplica(t, br.replica())
	if a.BackplaneUp() {
		t.Fatal("backplane up before Start")
	}
	for _, s := range []*Server{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Start(context.Background()); err == nil {
		t.Fatal("a second Start subscribed again")
	}
	la, lb := newStreamRec(), newStreamRec()
	listenOn(t, a, la, 1)
	listenOn(t, b, lb, 2)
	la.waitCount(t, "acknowledged", 1)
	lb.waitCount(t, "acknowledged", 1)

	if err := b.ResourceUpdated("test://r"); err != nil {
		t.Fatal(err)
	}
	la.waitCount(t, "resources/updated", 1)
	lb.waitCount(t, "resources/updated", 1)
	if err := a.ResourceUpdated("test://r/sub"); err != nil {
		t.Fatal(err)
	}
	la.waitCount(t, "resources/updated", 2)
	lb.waitCount(t, "resources/updated", 2)
	if a.Stats().Published.Load() != 1 || b.Stats().Published.Load() != 1 {
		t.Fatalf("published a=%d b=%d", a.Stats().Published.Load(), b.Stats().Published.Load())
	}
}

// TestBackplaneLost: losing the backplane ends every listen stream (a drop
// where the transport can, an error response elsewhere), refuses new
// listens with 503 and fails publishing, all counted; once restored, both
// work again (E1).
func TestBackplaneLost(t *testing.T) {
	br := &fakeBroker{}
	bp := br.replica()
	a := newReplica(t, bp)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	line, drop := newStreamRec(), dropRec{newStreamRec()}
	listenOn(t, a, line, 1)
	listenOn(t, a, drop, 2)
	line.waitCount(t, "acknowledged", 1)
	drop.waitCount(t, "acknowledged", 1)

	bp.setDown(true)
	for _, r := range []*streamRec{line, drop.streamRec} {
		select {
		case <-r.done:
		case <-time.After(2 * time.Second):
			t.Fatal("listen stream not ended when the backplane was lost")
		}
	}
	if !bytes.Contains(line.reply, []byte(`"code":-32603`)) || !bytes.Contains(line.reply, []byte("listen again")) {
		t.Fatalf("line stream ended with %s", line.reply)
	}
	if drop.reply != nil {
		t.Fatalf("dropped stream got a response %s", drop.reply)
	}
	st := a.Stats()
	if st.BackplaneLost.Load() != 1 || st.ListenInterrupted.Load() != 2 || st.ListenStreams.Load() != 0 {
		t.Fatalf("lost=%d interrupted=%d open=%d", st.BackplaneLost.Load(), st.ListenInterrupted.Load(), st.ListenStreams.Load())
	}

	refused := newStreamRec()
	listenOn(t, a, refused, 3)
	<-refused.done
	if refused.status != 503 || !bytes.Contains(refused.reply, []byte(`"code":-32603`)) || refused.count("acknowledged") != 0 {
		t.Fatalf("listen while lost: %d %s", refused.status, refused.reply)
	}
	if err := a.ResourceUpdated("test://r"); !errors.Is(err, ErrBackplaneLost) || !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("publish while lost: %v", err)
	}
	call := newStreamRec()
	send(t, a, call, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"touch","arguments":{},`+metaJSON+`}}`)
	<-call.done
	if call.status != 503 || !bytes.Contains(call.reply, []byte(`"code":-32603`)) {
		t.Fatalf("tool publishing while lost: %d %s", call.status, call.reply)
	}
	if st.PublishErrors.Load() != 2 || st.ListenRefused.Load() != 1 || st.Unavailable.Load() != 1 {
		t.Fatalf("publishErrors=%d refused=%d unavailable=%d", st.PublishErrors.Load(), st.ListenRefused.Load(), st.Unavailable.Load())
	}

	bp.setDown(false)
	again := newStreamRec()
	listenOn(t, a, again, 5)
	again.waitCount(t, "acknowledged", 1)
	if err := a.ResourceUpdated("test://r"); err != nil {
		t.Fatal(err)
	}
	again.waitCount(t, "resources/updated", 1)
}

// TestBackplaneStartFails: a backplane that cannot subscribe fails Start;
// the server then refuses listens rather than acknowledge a stream no cue
// could reach.
func TestBackplaneStartFails(t *testing.T) {
	bp := (&fakeBroker{}).replica()
	bp.failSub = state.ErrUnavailable
	a := newReplica(t, bp)
	if err := a.Start(context.Background()); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Start: %v", err)
	}
	if err := a.Start(context.Background()); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Start again after a failure: %v", err)
	}
	r := newStreamRec()
	listenOn(t, a, r, 1)
	<-r.done
	if r.status != 503 {
		t.Fatalf("listen after a failed Start: %d %s", r.status, r.reply)
	}
}

// TestNoBackplaneDeliversLocally: without a backplane nothing changes.
func TestNoBackplaneDeliversLocally(t *testing.T) {
	a := newReplica(t, nil)
	if err := a.Start(context.Background()); err != nil || !a.BackplaneUp() {
		t.Fatal(err)
	}
	r := newStreamRec()
	listenOn(t, a, r, 1)
	r.waitCount(t, "acknowledged", 1)
	if err := a.ResourceUpdated("test://r"); err != nil {
		t.Fatal(err)
	}
	r.waitCount(t, "resources/updated", 1)
	if a.Stats().Published.Load() != 0 {
		t.Fatal("counted a publish without a backplane")
	}
}

// failPublishes makes the next n publishes of f fail with err while its
// subscription stays up (the cue reaches nobody).
func (f *fakeBackplane) failPublishes(n int, err error) {
	f.mu.Lock()
	f.failPub, f.failErr = n, err
	f.mu.Unlock()
}

// TestPublishFailedEndsAffectedStreams: a publish that fails or times out
// while the subscription stays up is not lost in silence (F9): the
// publisher's own listeners (local delivery is the echo) and the other
// replicas' listeners that would have received the cue are ended, so
// their clients re-listen; an unaffected stream stays; all counted.
func TestPublishFailedEndsAffectedStreams(t *testing.T) {
	br := &fakeBroker{}
	bpA := br.replica()
	a, b := newReplica(t, bpA), newReplica(t, br.replica())
	for _, s := range []*Server{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	la, lb := dropRec{newStreamRec()}, newStreamRec()
	listenOn(t, a, la, 1)
	listenOn(t, b, lb, 2)
	other := newStreamRec()
	send(t, b, other, `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+metaJSON+`}}`)
	for _, r := range []*streamRec{la.streamRec, lb, other} {
		r.waitCount(t, "acknowledged", 1)
	}
	bpA.failPublishes(2, context.DeadlineExceeded) // the cue, then the first CueMissed
	if err := a.ResourceUpdated("test://r"); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("failed publish: %v", err)
	}
	for i, r := range []*streamRec{la.streamRec, lb} {
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("stream %d not ended after a failed publish", i)
		}
	}
	if !bytes.Contains(lb.reply, []byte("listen again")) || la.reply != nil {
		t.Fatalf("ended with %s / %s", lb.reply, la.reply)
	}
	select {
	case <-other.done:
		t.Fatal("a stream the cue did not concern was ended")
	case <-time.After(50 * time.Millisecond):
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.PublishUncertain.Load() != 1 || sa.MissedSent.Load() != 1 || sb.MissedCues.Load() != 1 || sb.ListenInterrupted.Load() != 1 {
		t.Fatalf("uncertain=%d sent=%d missed(b)=%d interrupted(b)=%d", sa.PublishUncertain.Load(), sa.MissedSent.Load(),
			sb.MissedCues.Load(), sb.ListenInterrupted.Load())
	}
}

// TestStateLostAnswer: a handler whose lookup missed after the store lost
// its data (state.ErrLost) is answered 503 saying the state was lost, not
// as an unknown handle (F9).
func TestStateLostAnswer(t *testing.T) {
	s := New(Config{})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.AddTool(Tool{Name: "read", Handler: func(c *Call) error {
		return fmt.Errorf("read: %w", state.ErrLost)
	}}); err != nil {
		t.Fatal(err)
	}
	r := newStreamRec()
	send(t, s, r, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{},`+metaJSON+`}}`)
	<-r.done
	if r.status != 503 || !bytes.Contains(r.reply, []byte(`"code":-32603`)) || !bytes.Contains(r.reply, []byte("state was lost")) {
		t.Fatalf("lost state answered %d %s", r.status, r.reply)
	}
}

// TestPublishWhileLostEndsOtherReplicasStreams: a replica whose backplane
// is down cannot publish a cue (ErrBackplaneLost); its own streams were
// ended when it lost the backplane, but the other replicas' listeners
// would miss the cue in silence. They are ended once publishing works
// again, through the CueMissed the replica queued; an unrelated stream
// stays (F9).
func TestPublishWhileLostEndsOtherReplicasStreams(t *testing.T) {
	br := &fakeBroker{}
	bpA := br.replica()
	a, b := newReplica(t, bpA), newReplica(t, br.replica())
	for _, s := range []*Server{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	lb, other := newStreamRec(), newStreamRec()
	listenOn(t, b, lb, 1)
	send(t, b, other, `{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+metaJSON+`}}`)
	lb.waitCount(t, "acknowledged", 1)
	other.waitCount(t, "acknowledged", 1)

	bpA.setDown(true)
	if err := a.ResourceUpdated("test://r"); !errors.Is(err, ErrBackplaneLost) {
		t.Fatalf("publish while lost: %v", err)
	}
	bpA.setDown(false)
	select {
	case <-lb.done:
	case <-time.After(5 * time.Second):
		t.Fatal("a listener of another replica stayed open after a cue that could not be published")
	}
	if !bytes.Contains(lb.reply, []byte("listen again")) {
		t.Fatalf("ended with %s", lb.reply)
	}
	select {
	case <-other.done:
		t.Fatal("a stream the cue did not concern was ended")
	case <-time.After(50 * time.Millisecond):
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.MissedSent.Load() != 1 || sb.MissedCues.Load() != 1 || sb.ListenInterrupted.Load() != 1 || sa.MissedCues.Load() != 0 {
		t.Fatalf("sent=%d missed(b)=%d interrupted(b)=%d missed(a)=%d", sa.MissedSent.Load(), sb.MissedCues.Load(),
			sb.ListenInterrupted.Load(), sa.MissedCues.Load())
	}
}

// TestOwnMissedEchoSkipped: the publisher hears its own CueMissed back
// through the backplane; it ended its affected streams when the publish
// failed, so the echo must not end the streams that listened since (a
// re-listen too many for every client, each time). The other replica's
// stream is ended by it.
func TestOwnMissedEchoSkipped(t *testing.T) {
	br := &fakeBroker{}
	bpA := br.replica()
	a, b := newReplica(t, bpA), newReplica(t, br.replica())
	for _, s := range []*Server{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	la, lb := newStreamRec(), newStreamRec()
	listenOn(t, a, la, 1)
	listenOn(t, b, lb, 2)
	la.waitCount(t, "acknowledged", 1)
	lb.waitCount(t, "acknowledged", 1)

	bpA.failPublishes(1<<30, context.DeadlineExceeded) // the cue and every CueMissed until the stream below listens
	if err := a.ResourceUpdated("test://r"); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("failed publish: %v", err)
	}
	<-la.done // ended at once, on the publisher
	again := newStreamRec()
	listenOn(t, a, again, 3)
	again.waitCount(t, "acknowledged", 1)
	bpA.failPublishes(0, nil)
	select {
	case <-lb.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the other replica's listener was not ended by the CueMissed")
	}
	select {
	case <-again.done:
		t.Fatalf("the publisher's own CueMissed ended a stream that listened after the failure: %s", again.reply)
	case <-time.After(50 * time.Millisecond):
	}
	sa := a.Stats()
	if sa.MissedSent.Load() != 1 || sa.MissedCues.Load() != 0 || sa.ListenInterrupted.Load() != 1 {
		t.Fatalf("a: sent=%d missed=%d interrupted=%d", sa.MissedSent.Load(), sa.MissedCues.Load(), sa.ListenInterrupted.Load())
	}
}

// TestNoMissedQueuedAfterShutdown: once Shutdown began, a failed publish
// queues no CueMissed and starts no sender (its WaitGroup Add would race
// Shutdown's Wait).
func TestNoMissedQueuedAfterShutdown(t *testing.T) {
	bp := (&fakeBroker{}).replica()
	a := newReplica(t, bp)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	bp.failPublishes(1, context.DeadlineExceeded)
	if err := a.ResourceUpdated("test://r"); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("failed publish: %v", err)
	}
	a.missMu.Lock()
	running, owed := a.missRunning, len(a.missed)
	a.missMu.Unlock()
	if running || owed != 0 {
		t.Fatalf("after Shutdown: sender running=%v, %d CueMissed queued", running, owed)
	}
}
