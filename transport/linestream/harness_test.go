package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// req builds a request line with full _meta.
func req(id any, method, params string) string {
	idj, _ := json.Marshal(id)
	p := "{" + testMeta + "}"
	if params != "" {
		p = "{" + params + "," + testMeta + "}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idj, method, p)
}

// sink collects frames written to a stream connection.
type sink struct {
	mu     sync.Mutex
	frames []string
	cond   *sync.Cond
	err    error // returned by WriteFrame when set
}

func newSink() *sink {
	s := &sink{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *sink) WriteFrame(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if strings.IndexByte(string(p), '\n') >= 0 {
		panic("frame with newline")
	}
	s.frames = append(s.frames, string(p))
	s.cond.Broadcast()
	return nil
}

func (s *sink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.frames...)
}

// wait blocks until a frame satisfying pred is present and returns it.
func (s *sink) wait(t *testing.T, what string, pred func(m wireMsg) bool) wireMsg {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	timer := time.AfterFunc(5*time.Second, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for _, f := range s.frames {
			m := decode(t, f)
			if pred(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; frames: %v", what, s.frames)
		}
		s.cond.Wait()
	}
}

// response waits for the response with the given raw id.
func (s *sink) response(t *testing.T, rawID string) wireMsg {
	t.Helper()
	return s.wait(t, "response "+rawID, func(m wireMsg) bool { return string(m.ID) == rawID && m.Method == "" })
}

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error,omitempty"`
	raw string
}

func decode(t *testing.T, f string) wireMsg {
	t.Helper()
	var m wireMsg
	if err := json.Unmarshal([]byte(f), &m); err != nil {
		t.Fatalf("server wrote invalid JSON %q: %v", f, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("missing jsonrpc 2.0 in %s", f)
	}
	m.raw = f
	return m
}

func (m wireMsg) code() int {
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

func (m wireMsg) text() string {
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(m.Result, &r)
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// testServer builds a server with a few tools used across the tests.
func testServer(t *testing.T, opt engine.Config) *engine.Server {
	t.Helper()
	s := engine.New(opt)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		b, ok := c.ArgBytes("text")
		if !ok {
			return fmt.Errorf("text is required")
		}
		c.TextBytes(b)
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
		<-c.Done()
		c.Text("unblocked")
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "stuck", Handler: func(c *engine.Call) error {
		// Ignores its context, as a buggy handler would (C13).
		time.Sleep(300 * time.Millisecond)
		c.Text("late")
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "panic", Handler: func(c *engine.Call) error {
		var m map[string]int
		//lint:ignore SA5000 a deliberate nil map write: the panic under test (C12)
		m["x"] = 1
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "sample", RequiredClientCapabilities: []string{"sampling"}, Handler: func(c *engine.Call) error {
		c.Text("sampled")
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "fail", Handler: func(c *engine.Call) error { return fmt.Errorf("disk on fire") }}))
	must(s.AddTool(engine.Tool{Name: "badutf8", Handler: func(c *engine.Call) error {
		c.Text("bad \xff\xfe and \xed\xa0\x80 surrogate")
		return nil
	}}))
	must(s.AddTool(engine.Tool{Name: "nothing", Handler: func(c *engine.Call) error { return nil }}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// leakCheck verifies that no goroutine outlives the test (after cleanups).
func leakCheck(t *testing.T) {
	t.Helper()
	base := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, base) })
}

// frameWriter receives the frames a connection writes, one at a time.
type frameWriter interface {
	WriteFrame(p []byte) error
}

// streamConn is a MemConn with the method names these tests were first
// written against (the blocking StreamConn of milestone 1).
type streamConn struct {
	*MemConn
	aborted <-chan struct{}
}

func newStreamConn(s *engine.Server, w frameWriter) *streamConn {
	return newStreamConnCfg(s, w, Config{})
}

func newStreamConnCfg(s *engine.Server, w frameWriter, cfg Config) *streamConn {
	m := NewMem(engine.NewScope(s, ""), w.WriteFrame, cfg, nil)
	return &streamConn{MemConn: m, aborted: m.Aborted()}
}

func (sc *streamConn) HandleFrame(frame []byte) error { return sc.Send(frame) }

func (sc *streamConn) InFlight() int { return sc.c.InFlight() }

func (sc *streamConn) Drain(ctx context.Context) error { return sc.c.Drain(ctx) }

func (sc *streamConn) CancelAll(why error) { sc.c.cancelAll(why) }

func (sc *streamConn) cancel(id []byte) { sc.c.cancel(id) }
