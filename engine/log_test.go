package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

func TestLogLimitTake(t *testing.T) {
	var l logLimit
	t0 := time.Unix(1000, 0)
	const iv = 10 * time.Millisecond
	for i := 0; i < 3; i++ {
		if !l.take(t0, iv, 3) {
			t.Fatalf("burst message %d dropped", i)
		}
	}
	if l.take(t0, iv, 3) || l.take(t0.Add(iv/2), iv, 3) {
		t.Fatal("a message beyond the burst was taken")
	}
	if !l.take(t0.Add(iv+iv/2), iv, 3) { // one token back after one interval (from the burst's start)
		t.Fatal("no token after an interval")
	}
	if l.take(t0.Add(iv+iv/2), iv, 3) {
		t.Fatal("two tokens after one interval")
	}
	n := 0
	for l.take(t0.Add(time.Hour), iv, 3) {
		n++
	}
	if n != 3 {
		t.Fatalf("after an hour %d tokens, want the burst (3)", n)
	}
	if l.dropped != 4 {
		t.Fatalf("dropped %d, want 4", l.dropped)
	}
	var free logLimit
	for i := 0; i < 1000; i++ {
		if !free.take(t0, 0, 1) {
			t.Fatal("interval 0 limits")
		}
	}
}

// notes is a Replier that keeps every frame in order.
type notes struct {
	mu     sync.Mutex
	frames []string
	done   chan struct{}
}

func (n *notes) Notify(_ *Request, f []byte) error {
	n.mu.Lock()
	n.frames = append(n.frames, string(f))
	n.mu.Unlock()
	return nil
}
func (n *notes) Reply(_ *Request, f []byte, _ int) error { return n.Notify(nil, f) }
func (n *notes) Done(*Request)                           { close(n.done) }

// TestLogRateLimited: beyond the burst, Log drops and counts; the client
// hears how many were dropped in one warning just before the response, and
// only when its logLevel lets warnings through.
func TestLogRateLimited(t *testing.T) {
	s := New(Config{Logging: true, LogInterval: time.Hour, LogBurst: 3})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var sent []bool
	if err := s.AddTool(Tool{Name: "chatty", Handler: func(c *Call) error {
		sent = sent[:0]
		level, _ := c.ArgString("level")
		for i := 0; i < 10; i++ {
			sent = append(sent, c.Log(level, "t", i))
		}
		c.Text("done")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	run := func(logLevel, level string) []string {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","arguments":{"level":"` + level +
			`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"` + logLevel + `"}}}`)
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		rep := &notes{done: make(chan struct{})}
		r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Run()
		<-rep.done
		return rep.frames
	}

	frames := run("debug", "info")
	if len(frames) != 5 {
		t.Fatalf("frames %q", frames)
	}
	for i := 0; i < 3; i++ {
		if !strings.Contains(frames[i], `"level":"info"`) || !sent[i] {
			t.Errorf("frame %d %s (sent %v)", i, frames[i], sent[i])
		}
	}
	for i := 3; i < 10; i++ {
		if sent[i] {
			t.Errorf("Log %d reported sent beyond the burst", i)
		}
	}
	if want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"mcpwire","data":{"droppedLogMessages":7}}}`; frames[3] != want {
		t.Errorf("summary %s, want %s", frames[3], want)
	}
	if !strings.Contains(frames[4], `"result"`) {
		t.Errorf("last frame %s is not the response", frames[4])
	}
	if d, n := s.Stats().LogsDropped.Load(), s.Stats().LogsSent.Load(); d != 7 || n != 3 {
		t.Errorf("LogsDropped %d LogsSent %d, want 7 and 3", d, n)
	}

	// A client that asked for errors only hears no warning about drops;
	// they are still counted.
	frames = run("error", "error")
	if len(frames) != 4 || strings.Contains(strings.Join(frames, ""), "droppedLogMessages") {
		t.Fatalf("frames %q", frames)
	}
	if d := s.Stats().LogsDropped.Load(); d != 14 {
		t.Errorf("LogsDropped %d, want 14", d)
	}
}
