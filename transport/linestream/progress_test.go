package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"
)

type progressNote struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    float64         `json:"total"`
	Message  string          `json:"message"`
}

func progressOf(t *testing.T, frames []string) (notes []progressNote, resultAt int) {
	resultAt = -1
	for i, f := range frames {
		m := decode(t, f)
		switch {
		case m.Method == "notifications/progress":
			var p progressNote
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, p)
			if resultAt >= 0 {
				t.Fatalf("progress after the result (PROG-07): %s", f)
			}
		case m.Method == "" && resultAt < 0 && string(m.ID) != "2":
			resultAt = i
		}
	}
	return notes, resultAt
}

// TestProgressLimiter covers PROG-03, PROG-07, PROG-08, C9 and C10 with
// fake time (testing/synctest).
func TestProgressLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := engine.New(engine.Config{ProgressInterval: 50 * time.Millisecond})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(engine.Tool{Name: "work", Handler: func(c *engine.Call) error {
			c.Progress(1, 100, "start")  // sent at once
			for i := 2; i <= 1000; i++ { // a burst: coalesced, latest wins
				c.Progress(float64(i), 1000, "")
			}
			c.Progress(5, 1000, "")           // not increasing: dropped
			time.Sleep(60 * time.Millisecond) // the coalesced 1000 goes out by timer
			c.Progress(1000, 1000, "")        // equal: dropped
			c.Progress(1001, 2000, "late")    // pending when the result is set: flushed before it
			c.Text("done")
			return nil
		}})
		_ = s.AddTool(engine.Tool{Name: "notoken", Handler: func(c *engine.Call) error {
			c.Progress(1, 2, "")
			c.Text("ok")
			return nil
		}})
		out := newSink()
		sc := newStreamConn(s, out)
		defer sc.Close()
		line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok"}}}`
		if err := sc.HandleFrame([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if err := sc.HandleFrame([]byte(req(2, "tools/call", `"name":"notoken","arguments":{}`))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		frames := out.all()
		notes, resultAt := progressOf(t, frames)
		want := []float64{1, 1000, 1001}
		if len(notes) != len(want) {
			t.Fatalf("progress values %v, want %v (frames %v)", notes, want, frames)
		}
		for i, n := range notes {
			if n.Progress != want[i] || string(n.Token) != `"tok"` {
				t.Fatalf("note %d = %+v, want progress %v token \"tok\"", i, n, want[i])
			}
		}
		if notes[2].Message != "late" || notes[0].Message != "start" {
			t.Fatalf("messages: %+v", notes)
		}
		if resultAt < 0 {
			t.Fatal("no result")
		}
		if s.Stats().ProgressCoalesce.Load() == 0 || s.Stats().ProgressDropped.Load() < 3 {
			t.Fatalf("counters: coalesced %d dropped %d", s.Stats().ProgressCoalesce.Load(), s.Stats().ProgressDropped.Load())
		}
		// A request without progressToken never gets progress (PROG-06, C10).
		for _, f := range frames {
			if m := decode(t, f); m.Method == "notifications/progress" && string(m.Params) != "" && json.Valid(m.Params) {
				var p progressNote
				_ = json.Unmarshal(m.Params, &p)
				if string(p.Token) != `"tok"` {
					t.Fatalf("progress for a token the client never gave: %s", f)
				}
			}
		}
	})
}

// TestProgressAfterCancel: nothing is emitted for a cancelled request.
func TestProgressAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := engine.New(engine.Config{ProgressInterval: 50 * time.Millisecond})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(engine.Tool{Name: "w", Handler: func(c *engine.Call) error {
			for i := 1; ; i++ {
				c.Progress(float64(i), 0, "")
				select {
				case <-c.Done():
					c.Progress(float64(i+1), 0, "after cancel")
					c.Text("after cancel")
					return nil
				case <-time.After(10 * time.Millisecond):
				}
			}
		}})
		out := newSink()
		sc := newStreamConn(s, out)
		defer sc.Close()
		line := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"w","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":9}}}`
		_ = sc.HandleFrame([]byte(line))
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		before := len(out.all())
		_ = sc.HandleFrame([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`))
		time.Sleep(time.Second)
		synctest.Wait()
		after := out.all()
		if len(after) != before {
			t.Fatalf("frames written after cancellation: %v", after[before:])
		}
		if before < 3 || before > 6 {
			t.Fatalf("rate limit: %d progress notifications in 200ms at 50ms interval", before)
		}
	})
}
