package engine

import (
	"context"
	"strings"
	"testing"

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
