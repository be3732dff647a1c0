package engine

import (
	"context"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// swapReplier calls SwapReply from Reply: with the frame it was handed, or
// with another (foreign), or with the Call's buffer marked as a batch's
// stage (staged); it records what it saw.
type swapReplier struct {
	foreign, staged bool
	buf             []byte
	ok              bool
	sent            string // the frame, as Reply got it
	outIsBuf        bool   // after SwapReply, the Call's buffer is buf's array, empty
	outIsFrame      bool   // after SwapReply, the Call's buffer is still the frame's
	done            chan struct{}
}

func (*swapReplier) Notify(*Request, []byte) error { return nil }
func (w *swapReplier) Reply(r *Request, frame []byte, _ int) error {
	w.sent = string(frame)
	f := frame
	if w.foreign {
		f = []byte(w.sent)
	}
	c := r.c
	if w.staged {
		c.stagedCap = cap(c.out)
	}
	w.ok = r.SwapReply(f, w.buf)
	if w.staged {
		c.stagedCap = 0
	}
	w.outIsBuf = len(c.out) == 0 && unsafe.SliceData(c.out) == unsafe.SliceData(w.buf)
	w.outIsFrame = unsafe.SliceData(c.out) == unsafe.SliceData(frame) && len(c.out) == len(frame)
	return nil
}
func (w *swapReplier) Done(*Request) { close(w.done) }

// TestSwapReply: SwapReply gives the transport the Call's own response
// buffer and puts buf in its place; it refuses a frame that is not that
// buffer, and a buffer that is a batch's stage. Mutants it kills: the
// data-pointer test dropped (a foreign frame swapped), the stage test
// dropped, the buffer not replaced (the engine would go on writing in
// the array the transport now sends).
func TestSwapReply(t *testing.T) {
	s := New(Config{Name: "t", Version: "1"})
	if err := AddTool(s, Tool{Name: "echo", Inline: true}, func(_ *Call, in struct {
		Text string `json:"text"`
	}) (struct {
		Text string `json:"text"`
	}, error) {
		return in, nil
	}); err != nil {
		t.Fatal(err)
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	run := func(w *swapReplier) {
		t.Helper()
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		w.done = make(chan struct{})
		r := NewScope(s, "").Begin(context.Background(), msg, &env, w, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Run()
		<-w.done
	}
	w := &swapReplier{buf: make([]byte, 7, 600)}
	run(w)
	if !w.ok || !w.outIsBuf || w.outIsFrame {
		t.Fatalf("own frame: ok %v, buffer is buf %v, still the frame %v", w.ok, w.outIsBuf, w.outIsFrame)
	}
	for _, w := range []*swapReplier{{foreign: true}, {staged: true}} {
		w.buf = make([]byte, 0, 600)
		run(w)
		if w.ok || w.outIsBuf || !w.outIsFrame {
			t.Fatalf("foreign %v, staged %v: ok %v, buffer is buf %v, still the frame %v", w.foreign, w.staged, w.ok, w.outIsBuf, w.outIsFrame)
		}
	}
}
