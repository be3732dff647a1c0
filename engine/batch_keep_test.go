package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestBatchKeepsSpare: End keeps the Call of the batch's last inline
// request (its spare) with the batch, owned by it and unbound, so that the
// next read that takes the batch prepares its first request without a
// round trip through the Call pool, and the next read's first request on
// the same Batch runs on it.
func TestBatchKeepsSpare(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	sc := NewScope(s, "tcp")
	rep := &stageReply{stage: make([]byte, 0, 4096)}
	run := func(b *Batch, id string) *Call { return runInlineInBatch(t, sc, b, rep, id, nil) }
	b := sc.StartBatch()
	c := run(b, "1")
	b.End()
	if b.spare != c {
		t.Fatalf("End kept spare %p, want the request's Call %p", b.spare, c)
	}
	if c.recycleTo != b {
		t.Fatal("the kept spare is not owned by its batch (recycleTo)")
	}
	if c.srv != nil || c.scope != nil || c.rep != nil || c.parent != nil {
		t.Fatal("the kept spare is still bound to its last request")
	}
	// The next read: the pool usually gives the goroutine back the Batch
	// it put (not always: it may drop it, as under the race detector).
	b2 := sc.StartBatch()
	c2 := run(b2, "2")
	if b2 == b && c2 != c {
		t.Fatalf("the next read's first request took Call %p, not the kept spare %p", c2, c)
	}
	b2.End()
	if got := s.Stats().Requests.Load(); got != 2 {
		t.Fatalf("Stats.Requests %d after two reads, want 2", got)
	}
	if n := bytes.Count(rep.stage, []byte("\n")); n != 2 {
		t.Fatalf("answers in the stage %d, want 2: %q", n, rep.stage)
	}
}

// TestBatchKeepsMemo: a batch gives the same peek memo on every call, and
// keeps it through End for the reads that take the batch next.
func TestBatchKeepsMemo(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	b := NewScope(s, "tcp").StartBatch()
	m := b.PeekMemo()
	if m == nil || b.PeekMemo() != m {
		t.Fatal("PeekMemo is not one memo for the batch")
	}
	b.End()
	if b.memo != m {
		t.Fatal("End dropped the batch's memo")
	}
}

// TestBatchKeepsCur: End leaves cur naming the spare it keeps (the next
// read's first admit need not store it), and clears it when it names a
// Call the batch does not keep.
func TestBatchKeepsCur(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	sc := NewScope(s, "tcp")
	rep := &stageReply{stage: make([]byte, 0, 4096)}
	for _, keep := range []bool{true, false} {
		b := sc.StartBatch()
		c := runInlineInBatch(t, sc, b, rep, "1", nil)
		if b.cur.Load() != c || b.spare != c {
			t.Fatal("the request's Call is not the batch's cur and spare")
		}
		if !keep {
			// The Call taken from the batch behind its back: End must not
			// leave cur naming a Call it does not keep.
			b.spare, c.recycleTo = nil, nil
		}
		b.End()
		if keep && b.cur.Load() != c {
			t.Fatal("End cleared cur, which names its spare")
		}
		if !keep && b.cur.Load() != nil {
			t.Fatal("End left cur naming a Call the batch does not keep")
		}
	}
}

// TestBatchEndRecordsEverySlot: End records the counts of every method
// slot, the first and second of each word it tests included, each in its
// own histogram with its own count.
func TestBatchEndRecordsEverySlot(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "tcp")
	for _, only := range []int{-1, 0, 1, 6, 7, nMethodSlots - 1} {
		b := sc.StartBatch()
		if b.at == 0 {
			t.Fatal("the batch read no clock with the histograms on")
		}
		row := s.durs.row(b.mark.shard, sc.slot)
		before := make([]uint64, nMethodSlots)
		for m := range nMethodSlots {
			for i := range row[m].counts {
				before[m] += row[m].counts[i].Load()
			}
		}
		for m := range nMethodSlots {
			if only < 0 || m == only {
				b.n[m] = uint32(m + 1)
			}
		}
		b.recorded = true
		b.End()
		for m := range nMethodSlots {
			got := -before[m]
			for i := range row[m].counts {
				got += row[m].counts[i].Load()
			}
			want := uint64(0)
			if only < 0 || m == only {
				want = uint64(m + 1)
			}
			if got != want {
				t.Errorf("only %d: slot %d recorded %d, want %d", only, m, got, want)
			}
		}
	}
}

// runInlineInBatch runs one inline request of the tool "fast" as b's
// request, with rep as its Replier, BatchReplier and parent, for
// principal, and returns its Call (ended, kept by b as its spare).
func runInlineInBatch(t *testing.T, sc *Scope, b *Batch, rep *stageReply, id string, principal any) *Call {
	t.Helper()
	b.SetReplier(rep)
	b.SetParent(context.Background(), rep)
	msg := batchMsg(id, "fast")
	r := b.Prepare()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginBound(r, b, msg, principal)
	if e := r.Check(); e != nil {
		t.Fatalf("check: %v", e.Message)
	}
	if !r.StartInline() {
		t.Fatal("fast did not run inline")
	}
	return r.c
}
