package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestBatchCurLeavesWithItsCall: a batch's cur (what Shutdown's cancel
// pass reads, batchRef) is stored once per request and outlives the
// request's end, so it may name an idle Call kept by the batch; it must
// stop naming a Call as soon as that Call leaves the batch's hands, and a
// reference taken to the Call's idle generation must be dead by then.
// Otherwise Scope.Shutdown of this batch's scope could cancel a request of
// another scope that the pool handed the Call to (RELIABILITY C13).
func TestBatchCurLeavesWithItsCall(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	begin := func(t *testing.T, b *Batch, r *Request, msg []byte) {
		t.Helper()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Start()
	}
	// idle runs one inline request in b and returns its Call, now b's
	// spare and cur, with a reference to its idle generation as the
	// cancel pass would take it.
	idle := func(t *testing.T, b *Batch) (*Call, RequestRef) {
		t.Helper()
		r := b.Prepare()
		c := r.c
		begin(t, b, r, batchMsg("1", "fast"))
		if b.cur.Load() != c || b.spare != c {
			t.Fatal("the ended inline request's Call is not the batch's cur and spare")
		}
		ref, ok := batchRef(b.mark)
		if !ok || ref.c != c {
			t.Fatal("batchRef does not name the batch's idle Call")
		}
		return c, ref
	}
	gone := func(t *testing.T, what string, b *Batch, c *Call, ref RequestRef) {
		t.Helper()
		if b.cur.Load() == c {
			t.Fatalf("%s: cur still names a Call that left the batch", what)
		}
		if r, ok := batchRef(b.mark); ok && r.c == c {
			t.Fatalf("%s: batchRef names a Call that left the batch", what)
		}
		if ref.gen == c.gen {
			t.Fatalf("%s: a reference to the Call's idle generation is still live", what)
		}
	}

	t.Run("Request.Discard of a lent Call", func(t *testing.T) {
		b := sc.StartBatch()
		defer b.End()
		c, ref := idle(t, b)
		r := b.Prepare()
		r.Discard()
		gone(t, "Discard", b, c, ref)
	})
	t.Run("Batch.Discard with the spare taken", func(t *testing.T) {
		b := sc.StartBatch()
		defer b.End()
		c, ref := idle(t, b)
		r := b.Prepare()      // c, lent
		other := sc.Prepare() // from the pool
		b.Discard(other.c.req())
		if b.spare != other.c {
			t.Fatal("Batch.Discard did not keep the Call as the spare")
		}
		b.Discard(r) // the spare is taken: c goes to the pool
		gone(t, "Batch.Discard", b, c, ref)
	})
	t.Run("release with the spare taken", func(t *testing.T) {
		b := sc.StartBatch()
		defer b.End()
		c, ref := idle(t, b)
		r := b.Prepare()      // c, lent
		other := sc.Prepare() // becomes the spare
		b.Discard(other.c.req())
		begin(t, b, r, batchMsg("2", "fast")) // c ends with a spare in place
		if b.spare == c {
			t.Fatal("test setup: c became the spare")
		}
		gone(t, "release", b, c, RequestRef{c, c.gen - 1})
		_ = ref
	})
	t.Run("a request that leaves for a worker", func(t *testing.T) {
		b := sc.StartBatch()
		defer b.End()
		c, _ := idle(t, b)
		r := b.Prepare()
		begin(t, b, r, batchMsg("3", "slow"))
		if b.cur.Load() == c {
			t.Fatal("cur names a request that left the batch for a worker")
		}
	})
	t.Run("BeginPrepared outside the batch", func(t *testing.T) {
		b := sc.StartBatch()
		defer b.End()
		c, ref := idle(t, b)
		r := b.Prepare()
		msg := batchMsg("4", "fast")
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		gen := c.gen
		sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
		if b.cur.Load() == c || ref.gen == c.gen || c.gen != gen+1 {
			t.Fatal("a lent Call begun outside the batch is still its cur")
		}
		r.Fail(codec.ErrParse)
	})
	t.Run("End", func(t *testing.T) {
		b := sc.StartBatch()
		c, ref := idle(t, b)
		b.End()
		if ref.gen == c.gen {
			t.Fatal("End: a reference to the spare's idle generation is still live")
		}
		if b.cur.Load() != nil {
			t.Fatal("End left cur set on a pooled Batch")
		}
	})
}
