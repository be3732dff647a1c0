package linestream

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestStagedAnswerPastMaxPendingStopsTheRead: an answer that takes the
// stage past MaxPending ends the connection at once, so the read's later
// lines are not run, even while the stage's buffer has room for them (its
// 4 KiB is more than MaxPending here). It fails when ReplyInBatch's in-place
// path does not compare the stage with MaxPending: all 20 handlers run and
// the queue fails only at the end of the read.
func TestStagedAnswerPastMaxPendingStopsTheRead(t *testing.T) { // A18
	leakCheck(t)
	s := engine.New(engine.Config{ProgressInterval: -1})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	var runs atomic.Int32
	text := strings.Repeat("x", 150)
	if err := s.AddTool(engine.Tool{Name: "fast", Inline: true, Handler: func(c *engine.Call) error {
		runs.Add(1)
		c.Text(text)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	out, m := memOn(t, s, Config{MaxPending: 1000})
	lines := make([]string, 20) // 20 answers of ~250 bytes
	for i := range lines {
		lines[i] = callLine(fmt.Sprint(i+1), "fast")
	}
	_ = m.Send([]byte(strings.Join(lines, "\n")))
	if err := m.Err(); err != ErrSlowConsumer {
		t.Fatalf("abort reason %v, want ErrSlowConsumer", err)
	}
	// 1000 bytes hold three answers; the fourth or fifth passes the bound.
	if n := runs.Load(); n > 6 {
		t.Fatalf("%d of the read's 20 handlers ran; the connection should have ended at the answer past MaxPending", n)
	}
	if n := s.Stats().SlowConsumers.Load(); n != 1 {
		t.Fatalf("SlowConsumers = %d, want 1", n)
	}
	if len(out.all()) != 0 {
		t.Fatalf("%d answers written past the bound", len(out.all()))
	}
}

// logSink keeps the messages of the records it is handed.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

// TestAnswerAfterCloseNotStaged: an inline request whose connection is
// closed while it runs, after an earlier answer of its read made the stage, gets ErrClosed from ReplyInBatch (the engine logs
// the answer as not delivered): it is not staged. It fails when
// ReplyInBatch's in-place path does not look at closed.
func TestAnswerAfterCloseNotStaged(t *testing.T) {
	leakCheck(t)
	logs := &logSink{}
	s := engine.New(engine.Config{ProgressInterval: -1, Logger: slog.New(logs)})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	var conn *Conn
	if err := s.AddTool(engine.Tool{Name: "fast", Inline: true, Handler: func(c *engine.Call) error {
		c.Text("before close")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(engine.Tool{Name: "closer", Inline: true, Handler: func(c *engine.Call) error {
		conn.Close(nil)
		c.Text("after close")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	out, m := memOn(t, s, Config{})
	conn = m.Conn()
	// The first answer makes the stage, so that the second one has room.
	_ = m.Send([]byte(callLine("1", "fast") + "\n" + callLine("2", "closer")))
	if len(out.all()) != 0 {
		t.Fatalf("answers written after Close: %q", out.all())
	}
	if st := conn.stage; len(st) != 0 {
		t.Fatalf("the answer was staged after Close: %q", st)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.msgs {
		if strings.Contains(l, "reply not delivered") && strings.Contains(l, ErrClosed.Error()) {
			return
		}
	}
	t.Fatalf("no 'reply not delivered' with %v logged: %q", ErrClosed, logs.msgs)
}
