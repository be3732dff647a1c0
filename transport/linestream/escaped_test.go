package linestream

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestRawNewlineNeverReachesTheWire (STD-02: a message holds no raw
// newline): the newline scan of a response is skipped only for those the
// engine vouches for (Request.ReplyEscaped); a response holding a raw
// newline — a handler's raw JSON kept by the encoder, after a Text that
// the engine had vouched for — is still dropped, as before, whether it ends
// on the input side (the stage) or on a worker (the queue), and the
// connection goes on. It fails when ReplyInBatch skips the scan for every
// frame.
func TestRawNewlineNeverReachesTheWire(t *testing.T) {
	leakCheck(t)
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	raw := func(c *engine.Call) error {
		c.Text("vouched for, then replaced")
		return c.Return(map[string]any{"content": []any{}, "raw": json.RawMessage("[\n1]")})
	}
	for _, tool := range []engine.Tool{
		{Name: "rawInline", Inline: true, Handler: raw},
		{Name: "rawWorker", Handler: raw},
		{Name: "ok", Inline: true, Handler: func(c *engine.Call) error { c.Text("a\nb"); return nil }},
		{Name: "okWorker", Handler: func(c *engine.Call) error { c.Text("w\nx"); return nil }},
	} {
		if err := s.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var frames []string
	m := NewMem(engine.NewScope(s, ""), func(f []byte) error {
		mu.Lock()
		frames = append(frames, string(f))
		mu.Unlock()
		return nil
	}, Config{}, nil)
	defer m.Close()
	var in strings.Builder
	for i, tool := range []string{"rawInline", "ok", "rawWorker", "rawInline", "okWorker", "ok"} {
		in.WriteString(strings.TrimSuffix(callLine(string(rune('1'+i)), tool), "\n"))
		in.WriteByte('\n')
	}
	// One read: the inline answers go through the stage.
	m.Conn().Feed([]byte(in.String()))
	// Wait until every request has ended (the workers' too): no frame can
	// come later.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(frames)
		mu.Unlock()
		if n >= 3 && m.Conn().InFlight() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %d frames, %d in flight", n, m.Conn().InFlight())
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var ids []string
	for _, f := range frames {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(f), &msg); err != nil {
			t.Fatalf("a line on the wire is no JSON message (a raw newline broke a frame): %q; all: %q", f, frames)
		}
		ids = append(ids, string(msg.ID))
	}
	// ok (2), ok (6) and okWorker (5) are answered; the raw ones are
	// dropped.
	if len(ids) != 3 || !strings.Contains(strings.Join(ids, ","), "2") || !strings.Contains(strings.Join(ids, ","), "5") || !strings.Contains(strings.Join(ids, ","), "6") {
		t.Fatalf("answers %v, want those of 2, 5 and 6 only", ids)
	}
	if err := m.Conn().Err(); err != nil {
		t.Fatalf("connection failed: %v", err)
	}
}
