package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// stageReply is a BatchReplier that takes a batch's answers the way a line
// transport does with Batch.SetStage: a frame found at the stage's end is
// taken in place, any other is copied there; answers given elsewhere
// (Reply) are kept apart.
type stageReply struct {
	stage   []byte
	inPlace int
	mu      sync.Mutex
	other   []string
}

func (r *stageReply) Notify(*Request, []byte) error { return nil }
func (r *stageReply) Reply(_ *Request, f []byte, _ int) error {
	r.mu.Lock()
	r.other = append(r.other, string(f))
	r.mu.Unlock()
	return nil
}
func (r *stageReply) Done(*Request) {}
func (r *stageReply) ReplyInBatch(_ *Request, f []byte) error {
	n := len(r.stage)
	if len(f) != 0 && n+len(f) < cap(r.stage) && &r.stage[:n+1][n] == &f[0] {
		r.inPlace++
		r.stage = append(r.stage[:n+len(f)], '\n')
		return nil
	}
	if n+len(f) < cap(r.stage) {
		r.stage = append(append(r.stage, f...), '\n')
	} // else dropped: the tests that need it keep a stage with room
	return nil
}

// TestStageDetachedInline: a request run inline whose handler detaches
// (a listen stream: its answer is written and sent later, from another
// goroutine) stops writing in the batch's stage when it detaches, so the
// transport may fill the stage's room with the read's next answers. The
// inline request before it is answered in place. Without unstage at the
// detach, the stream's final answer is written over the stage's room.
func TestStageDetachedInline(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	// An Inline tool that detaches as subscriptions/listen does.
	_ = s.AddTool(Tool{Name: "stream", Inline: true, Handler: listen})
	sc := NewScope(s, "tcp")
	// Room for any buffer a pooled Call may keep (maxKeep): stageOut
	// takes the stage only when its room is at least the Call's own
	// buffer, and the Call this test gets may come from one with a
	// large answer.
	rep := &stageReply{stage: make([]byte, 0, maxKeep+4096)}
	b := sc.StartBatch()
	defer b.End()
	b.SetReplier(rep)
	b.SetStage(&rep.stage)
	begin := func(msg []byte) *Request {
		r := b.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatalf("check: %v", e.Message)
		}
		return r
	}
	if !begin(batchMsg("1", "fast")).StartInline() {
		t.Fatal("fast did not run inline")
	}
	if rep.inPlace != 1 {
		t.Fatalf("%d answers taken in place, want 1", rep.inPlace)
	}
	msg := []byte(strings.Replace(string(batchMsg("2", "stream")), `"arguments":{}`, `"arguments":{},"notifications":{}`, 1))
	r := begin(msg)
	ref := r.Ref()
	if !r.StartInline() {
		t.Fatal("stream did not run inline")
	}
	// The transport goes on with the read: its next answers fill the
	// stage's room.
	st := rep.stage
	room := st[len(st):cap(st)]
	for i := range room {
		room[i] = 'y'
	}
	// The stream's final answer, from here (a transport's goroutine):
	// written in a buffer of the Call's own, not found in the stage.
	if !ref.EndStream() {
		t.Fatal("the stream was not open")
	}
	if rep.inPlace != 1 {
		t.Fatalf("%d answers taken in place, want 1: the detached stream wrote its answer in the stage's room", rep.inPlace)
	}
	rep.mu.Lock()
	other := append([]string(nil), rep.other...)
	rep.mu.Unlock()
	want := `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2,` + string(s.serverMeta[1:]) + `}}`
	if got := string(rep.stage[len(st):]) + strings.Join(other, "\n"); !strings.Contains(got, want) {
		t.Fatalf("the stream's final answer: %q, want %q", got, want)
	}
}

// doneCount is a BatchReplier that counts Done calls by transport data.
type doneCount struct {
	keepReply
	withData, without int
}

func (r *doneCount) ReplyInBatch(_ *Request, f []byte) error { return r.Reply(nil, f, 200) }
func (r *doneCount) Done(q *Request) {
	if q.TransportData() != nil {
		r.withData++
	} else {
		r.without++
	}
}

// TestBatchDoneNeedsData: with SetDoneNeedsData, a request of the batch
// that ends on its goroutine reaches Done only when it has transport data;
// without it, every request does. Each is answered either way.
func TestBatchDoneNeedsData(t *testing.T) {
	s, release := fastSlowServer()
	close(release)
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "tcp")
	for _, needs := range []bool{false, true} {
		rep := &doneCount{}
		b := sc.StartBatch()
		b.SetReplier(rep)
		if needs {
			b.SetDoneNeedsData()
		}
		for i, data := range []bool{true, false, true} {
			msg := batchMsg(string(rune('1'+i)), "fast")
			r := b.Prepare()
			if err := codec.Peek(msg, r.Envelope()); err != nil {
				t.Fatal(err)
			}
			r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
			if data {
				r.SetTransportData(i)
			}
			if e := r.Check(); e != nil {
				t.Fatal(e.Message)
			}
			if !r.StartInline() {
				t.Fatal("not inline")
			}
		}
		b.End()
		wantWithout := 1
		if needs {
			wantWithout = 0
		}
		if rep.withData != 2 || rep.without != wantWithout || len(rep.all()) != 3 {
			t.Fatalf("needs data %v: Done %d with data, %d without, %d answers; want 2, %d, 3", needs, rep.withData, rep.without, len(rep.all()), wantWithout)
		}
	}
}

// TestBatchParentBound: a request begun with BeginBound is cancelled with
// the parent bound by SetParent when that parent can be cancelled, and
// BeginInBatch binds each request's own parent: one that can be cancelled
// after one that cannot, in the same batch, and the other way round.
func TestBatchParentBound(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var saw []bool
	_ = s.AddTool(Tool{Name: "wait", Inline: true, Handler: func(c *Call) error {
		select {
		case <-c.Done():
			saw = append(saw, true)
		case <-time.After(200 * time.Millisecond):
			saw = append(saw, false)
		}
		c.Text("ok")
		return nil
	}})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	defer b.End()
	b.SetReplier(&doneCount{})
	run := func(id string, parent context.Context) {
		msg := batchMsg(id, "wait")
		r := b.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		if parent != nil {
			r = sc.BeginInBatch(r, b, parent, msg, rep, nil)
		} else {
			r = sc.BeginBound(r, b, msg, nil)
		}
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		if !r.StartInline() {
			t.Fatal("not inline")
		}
	}
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		return ctx
	}
	run("1", context.Background())
	run("2", nil) // bound: Background
	run("3", cancelled())
	run("4", context.Background())
	b.SetParent(cancelled(), rep)
	run("5", nil)
	if want := []bool{false, false, true, false, true}; fmt.Sprint(saw) != fmt.Sprint(want) {
		t.Fatalf("cancelled with the parent: %v, want %v", saw, want)
	}
}
