package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// lendReply is a Replier and BatchReplier that lends buf's room to each
// request (Request.ReplyInto) and notes, for each answer given in the
// batch, whether it was encoded there.
type lendReply struct {
	keepReply
	buf     []byte
	took    []bool // ReplyInto's answer, per request
	inPlace []bool // the frame started at buf's room, per answer
}

func (r *lendReply) ReplyInBatch(_ *Request, f []byte) error {
	at := unsafe.SliceData(r.buf[len(r.buf) : len(r.buf)+1])
	r.inPlace = append(r.inPlace, unsafe.SliceData(f) == at)
	r.got = append(r.got, string(f))
	return nil
}

// run begins msg as a request of b, lends it r.buf's room when lend is
// set, and starts it (the same Call each time: the batch's spare).
func (r *lendReply) run(t *testing.T, sc *Scope, b *Batch, msg []byte, lend bool) *Call {
	t.Helper()
	req := b.Prepare()
	if err := codec.Peek(msg, req.Envelope()); err != nil {
		t.Fatal(err)
	}
	req = sc.BeginInBatch(req, b, context.Background(), msg, r, nil)
	c := req.c
	if e := req.Check(); e != nil {
		t.Fatal(e)
	}
	if lend {
		r.took = append(r.took, req.ReplyInto(r.buf))
	}
	req.Start()
	return c
}

// TestReplyInto (reply10): a request lent a transport's buffer encodes its
// response there, and the frame ReplyInBatch gets starts at the buffer's
// room; once answered, the Call writes its next responses into its own
// buffer again, never into the lent one. A response that does not fit is
// encoded elsewhere, and its buffer is kept for the Call's next responses;
// a room smaller than the Call's own buffer is declined.
func TestReplyInto(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	big := strings.Repeat("x", 600)
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	_ = s.AddTool(Tool{Name: "big", Inline: true, Handler: func(c *Call) error { c.Text(big); return nil }})
	sc := NewScope(s, "tcp")
	rep := &lendReply{buf: append(make([]byte, 0, 4096), "staged\n"...)}
	b := sc.StartBatch()
	b.SetReplier(rep)
	defer b.End()

	c := rep.run(t, sc, b, batchMsg("1", "fast"), true)
	if !rep.took[0] || !rep.inPlace[0] {
		t.Fatalf("lent room: taken %v, answer encoded there %v", rep.took[0], rep.inPlace[0])
	}
	if !strings.Contains(rep.got[0], `"id":1,`) || !strings.HasSuffix(rep.got[0], "}") {
		t.Fatalf("answer %q", rep.got[0])
	}
	if unsafe.SliceData(c.out) == unsafe.SliceData(rep.buf[len(rep.buf):len(rep.buf)+1]) {
		t.Fatal("after its answer the Call still writes into the lent buffer")
	}
	// The transport keeps the answer where it is; the next request, not
	// lent anything, must leave it alone.
	kept := len(rep.buf) + len(rep.got[0])
	rep.buf = append(rep.buf[:kept], '\n')
	snapshot := string(rep.buf[:cap(rep.buf)])
	if rep.run(t, sc, b, batchMsg("2", "fast"), false) != c {
		t.Fatal("the second request is not on the batch's spare")
	}
	if rep.inPlace[1] || string(rep.buf[:cap(rep.buf)]) != snapshot {
		t.Fatal("a request lent nothing wrote into the transport's buffer")
	}

	// A response larger than the room: encoded elsewhere, and that buffer
	// becomes the Call's own.
	rep.buf = append(make([]byte, 0, len("staged\n")+cap(c.out)), "staged\n"...)
	rep.run(t, sc, b, batchMsg("3", "big"), true)
	if !rep.took[1] || rep.inPlace[2] || !strings.Contains(rep.got[2], big) {
		t.Fatalf("a response over the room: taken %v, in place %v", rep.took[1], rep.inPlace[2])
	}
	if cap(c.out) < len(rep.got[2]) || cap(c.out) > maxKeep {
		t.Fatalf("the Call kept a %d-byte buffer after a %d-byte response", cap(c.out), len(rep.got[2]))
	}
	// Less room than the Call's own buffer: declined, answered as before.
	rep.buf = append(make([]byte, 0, 300), "staged\n"...)
	rep.run(t, sc, b, batchMsg("4", "fast"), true)
	if rep.took[2] || rep.inPlace[3] || !bytes.Contains([]byte(rep.got[3]), []byte(`"id":4,`)) {
		t.Fatalf("a room smaller than the Call's buffer: taken %v, in place %v", rep.took[2], rep.inPlace[3])
	}
}
