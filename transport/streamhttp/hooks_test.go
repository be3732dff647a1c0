package streamhttp

import (
	"errors"
	"fmt"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// hookLog records the engine hooks an HTTP front end drives.
type hookLog struct {
	mu       sync.Mutex
	conns    map[*engine.ConnInfo]string
	outcomes map[string]engine.Outcome // by request id
	ended    chan struct{}
}

func (l *hookLog) hooks() engine.Hooks {
	return engine.Hooks{
		ConnStart: func(ci *engine.ConnInfo) {
			l.mu.Lock()
			l.conns[ci] = "open " + ci.Transport
			l.mu.Unlock()
		},
		ConnEnd: func(ci *engine.ConnInfo, err error) {
			l.mu.Lock()
			l.conns[ci] = "closed " + ci.Transport
			l.mu.Unlock()
		},
		CallEnd: func(c *engine.Call, o engine.Outcome) {
			l.mu.Lock()
			l.outcomes[string(c.ID())] = o
			l.mu.Unlock()
			l.ended <- struct{}{}
		},
	}
}

func (l *hookLog) outcome(t *testing.T, id string) engine.Outcome {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		l.mu.Lock()
		o, ok := l.outcomes[id]
		l.mu.Unlock()
		if ok {
			return o
		}
		select {
		case <-l.ended:
		case <-deadline:
			t.Fatalf("no CallEnd for %s", id)
		}
	}
}

// TestHandlerHeadersAndHooks: on both front ends a handler reads the
// request's headers (also after the request's goroutine has moved on, in
// an SSE reply), its transport and connection; connections and calls are
// reported to the hooks, and a client that goes away ends its call as a
// disconnect.
func TestHandlerHeadersAndHooks(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		l := &hookLog{conns: map[*engine.ConnInfo]string{}, outcomes: map[string]engine.Outcome{}, ended: make(chan struct{}, 64)}
		opt := defaultOptions()
		opt.Hooks = l.hooks()
		h := startHarness(t, fe, Config{}, opt)
		show := func(c *engine.Call) string {
			var names []string
			c.VisitHeaders(func(k, v []byte) bool {
				if strings.HasPrefix(strings.ToLower(string(k)), "x-") {
					names = append(names, strings.ToLower(string(k))+"="+string(v))
				}
				return true
			})
			v, ok := c.HeaderBytes("x-TENANT")
			_, none := c.HeaderBytes("X-Absent")
			remote := c.Conn() != nil && c.Conn().RemoteAddr != ""
			return fmt.Sprintf("%s %v %s|%s|%v|%s", v, ok, c.Header("x-trace"), c.Transport(), remote && !none, strings.Join(names, ","))
		}
		if err := h.eng.AddTool(engine.Tool{Name: "hdr", Handler: func(c *engine.Call) error {
			if c.ProgressToken() != nil {
				c.Progress(1, 2, "") // SSE: the request's goroutine moves on
				time.Sleep(50 * time.Millisecond)
			}
			c.Text(show(c))
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		want := "acme true t-1|http|true|x-tenant=acme,x-trace=t-1"
		hdr := mcpHdr("tools/call", "Mcp-Name: hdr", "X-Tenant: acme", "X-Trace: t-1")

		_, body := h.do(t, request{hdr: hdr, body: fixture.ToolsCall("1", "hdr", "{}")})
		if got := fixture.ToolText(t, fixture.DecodeMsg(t, body)); !sortedEqual(got, want) {
			t.Errorf("JSON reply: %q, want %q", got, want)
		}
		c := h.dial(t)
		c.write(h.raw(request{hdr: hdr, body: fixture.ToolsCallProgress("2", "hdr", "{}", `"p"`)}))
		resp, err := c.readResponse(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		s := readSSE(t, c, resp)
		var final string
		for i := 0; i < 3 && final == ""; i++ {
			it := s.nextEvent(5 * time.Second)
			if m := fixture.DecodeMsg(t, []byte(it.data)); m.Result != nil {
				final = fixture.ToolText(t, m)
			}
		}
		if !sortedEqual(final, want) {
			t.Errorf("SSE reply: %q, want %q", final, want)
		}
		if o := l.outcome(t, "1"); o.Reason != engine.EndOK || o.ResultType != "complete" {
			t.Errorf("outcome 1 %+v", o)
		}

		// A client that goes away: the call ends as a disconnect.
		c3 := h.dial(t)
		c3.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: block"), body: fixture.ToolsCallProgress("3", "block", "{}", `"q"`)}))
		waitFor(t, h.fx.Started, "block", 5*time.Second)
		c3.conn.Close()
		if o := l.outcome(t, "3"); o.Reason != engine.EndDisconnect || !errors.Is(o.Cause, engine.ErrDisconnected) {
			t.Errorf("outcome 3 %+v", o)
		}
		if err := h.shutdown(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.conns) < 3 {
			t.Errorf("%d connections reported, want >= 3", len(l.conns))
		}
		for _, st := range l.conns {
			if st != "closed http" {
				t.Errorf("connection state %q after shutdown", st)
			}
		}
	})
}

// sortedEqual compares "a|b|c|x=1,y=2" strings with the header list in
// any order (net/http's Header map has none).
func sortedEqual(got, want string) bool {
	norm := func(s string) string {
		i := strings.LastIndexByte(s, '|')
		if i < 0 {
			return s
		}
		parts := strings.Split(s[i+1:], ",")
		for a := range parts {
			for b := a + 1; b < len(parts); b++ {
				if parts[b] < parts[a] {
					parts[a], parts[b] = parts[b], parts[a]
				}
			}
		}
		return s[:i+1] + strings.Join(parts, ",")
	}
	return norm(got) == norm(want)
}
