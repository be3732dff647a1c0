package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// TestCancelPassSparesNextRequest (RELIABILITY C13): Shutdown's cancel pass
// (tracker.refs, then Abort of each reference) runs while a batch is between
// two requests of one read. The reference it takes must not reach the
// batch's next request, which begins on the same pooled Call after the pass
// collected its references: that request is refused ("shutting down") or
// fails validation, and must still be answered, not cancelled silently.
func TestCancelPassSparesNextRequest(t *testing.T) {
	for _, second := range []string{"fast", "nosuch"} {
		t.Run(second, func(t *testing.T) {
			s, release := fastSlowServer()
			defer func() { _ = s.Shutdown(context.Background()) }()
			defer close(release)
			sc := NewScope(s, "tcp")
			rep := &keepReply{}
			b := sc.StartBatch()
			begin := func(id, tool string) *Request {
				r := b.Prepare()
				msg := batchMsg(id, tool)
				if err := codec.Peek(msg, r.Envelope()); err != nil {
					t.Fatal(err)
				}
				return sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
			}
			finish := func(r *Request) {
				if e := r.Check(); e != nil {
					r.Fail(e)
					return
				}
				r.Start()
			}
			finish(begin("1", "fast")) // ends inline: its Call stays cur (and spare)

			// Scope.Shutdown: flag set, grace period over: the cancel pass
			// takes its references ...
			s.tracker.closeScope(sc)
			refs := s.tracker.refs(sc)
			// ... the input side begins line 2 meanwhile ...
			r2 := begin("2", second)
			// ... and the pass aborts what it collected.
			for _, r := range refs {
				r.Abort(errShutdown)
			}
			finish(r2)
			b.End()
			got := rep.all()
			if len(got) != 2 || !strings.Contains(got[1], `"id":2`) {
				t.Fatalf("refs=%d; %d answers, want 2 (request 2 refused or invalid, with an answer): %q", len(refs), len(got), got)
			}
		})
	}
}

// TestReviewIdleRefRaces: Scope.Shutdown's passes (EndStream, then Abort)
// run against a batch whose cur names its idle spare at the *next*
// generation: RequestRef's gen check passes, and it reads fields that
// release (no Call.mu for a batch request since lines6) and beginCall
// write without the lock. -race reports it; on main it does not.
// refsInHandler is an Inline tool's handler that takes the tracker's
// references (what Shutdown's cancel pass aborts) while its request runs,
// aborts them, and notes whether its own request was cancelled.
type refsInHandler struct {
	s         *Server
	refs      []RequestRef
	cancelled bool
}

func (h *refsInHandler) handle(c *Call) error {
	h.refs = h.s.tracker.refs(nil)
	for _, r := range h.refs {
		r.Abort(errShutdown)
	}
	h.cancelled = c.Err() != nil
	c.Text("ok")
	return nil
}

// TestCancelPassFindsBatchRequests (RELIABILITY C13, engine8, reply10): the batch's
// cur names its Call across its requests (it is not cleared when one ends),
// and batchRef tells the running request from an ended one by its admission
// mark and generation. The cancel pass must find every admitted request of
// a batch while it runs — the first on a new Call, the later ones on the
// batch's spare, one on a Call that replaced the spare — and cancel it,
// and find nothing between two of them (TestCancelPassSparesNextRequest).
func TestCancelPassFindsBatchRequests(t *testing.T) {
	h := &refsInHandler{}
	s := New(Config{})
	h.s = s
	defer shutdownSoon(s) // a failed test leaves its batch listed
	_ = s.AddTool(Tool{Name: "probe", Inline: true, Handler: h.handle})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	run := func(r *Request, id string) {
		msg := batchMsg(id, "probe")
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		r.Start()
		if len(h.refs) != 1 {
			t.Fatalf("request %s: the pass took %d references, want its own", id, len(h.refs))
		}
		if !h.cancelled || len(rep.all()) != 0 {
			t.Fatalf("request %s was not cancelled by the pass (answers %q)", id, rep.all())
		}
		if refs := s.tracker.refs(nil); len(refs) != 0 {
			t.Fatalf("after request %s ended the pass took %d references", id, len(refs))
		}
	}
	run(b.Prepare(), "1")
	run(b.Prepare(), "2") // the spare: the same Call as cur
	// A prepared request that is not begun gives its Call back; the next
	// one is on another Call.
	b.Prepare().Discard()
	run(b.Prepare(), "3")
	b.End()
}

// TestBatchForgetsCallsItGivesAway (RELIABILITY C13, engine8, reply10): batchRef
// reads the batch's cur without the tracker's lock and trusts its
// admission mark: cur must never name a Call the batch no longer owns,
// which another batch may admit meanwhile (its mark would then name that
// batch's request, perhaps of another scope). A request that leaves for a
// worker and a discarded spare each clear it; after End it names nothing
// or the spare the batch keeps.
func TestBatchForgetsCallsItGivesAway(t *testing.T) {
	s, release := fastSlowServer()
	defer shutdownSoon(s) // a failed test leaves its batch listed
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	start := func(b *Batch, id, tool string) *Call {
		r := b.Prepare()
		msg := batchMsg(id, tool)
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
		c := r.c
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		r.Start()
		return c
	}
	b := sc.StartBatch()
	c := start(b, "1", "fast")
	if b.cur.Load() != c || b.spare != c {
		t.Fatal("the batch does not keep its Call after an inline request")
	}
	if start(b, "2", "slow") != c { // on the spare, leaves for a worker
		t.Fatal("the second request is not on the spare")
	}
	if b.cur.Load() != nil {
		t.Fatal("cur names a Call that left for a worker")
	}
	close(release)
	b.End()

	b = sc.StartBatch()
	c = start(b, "3", "fast")
	r := b.Prepare()
	if r.c != c {
		t.Fatal("Prepare did not hand out the spare")
	}
	r.Discard()
	if b.cur.Load() != nil {
		t.Fatal("cur names a discarded Call")
	}
	start(b, "4", "fast")
	b.End()
	// End keeps the spare, still the batch's, for its next read (line23):
	// cur may name it, and nothing else.
	if cur := b.cur.Load(); cur != nil && (cur != b.spare || cur.recycleTo != b) {
		t.Fatal("cur names a Call the batch no longer owns after End")
	}
}

// shutdownSoon shuts s down, giving up after a second (a test that failed
// may leave a batch listed).
func shutdownSoon(s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
}
