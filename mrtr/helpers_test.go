package mrtr_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newEngine returns a server shut down after the test.
func newEngine(t *testing.T) *engine.Server {
	t.Helper()
	srv := engine.New(engine.Config{Name: "mrtr-test", Version: "1"})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// conn is one in-memory connection to a server, as principal.
type conn struct {
	t   *testing.T
	mc  *linestream.MemConn
	mu  sync.Mutex
	out map[string]chan reply
}

type reply struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func dial(t *testing.T, srv *engine.Server, principal any) *conn {
	t.Helper()
	c := &conn{t: t, out: map[string]chan reply{}}
	c.mc = linestream.NewMem(engine.NewScope(srv, ""), func(frame []byte) error {
		var m struct {
			ID json.RawMessage `json:"id"`
			reply
		}
		if json.Unmarshal(frame, &m) != nil || m.ID == nil {
			return nil // notifications
		}
		c.ch(string(m.ID)) <- m.reply
		return nil
	}, linestream.Config{}, principal)
	t.Cleanup(c.mc.Close)
	return c
}

func (c *conn) ch(id string) chan reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.out[id]
	if !ok {
		ch = make(chan reply, 1)
		c.out[id] = ch
	}
	return ch
}

var nextID atomic.Int64

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

// do sends method with params (a JSON object without _meta) and waits.
func (c *conn) do(method, params string) reply {
	c.t.Helper()
	return c.doCaps(method, params, allCaps)
}

// doCaps is do with the clientCapabilities caps.
func (c *conn) doCaps(method, params, caps string) reply {
	c.t.Helper()
	id := strconv.FormatInt(nextID.Add(1), 10)
	p := params[:len(params)-1]
	if len(p) > 1 {
		p += ","
	}
	p += `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + "}}"
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + p + `}`
	if err := c.mc.Send([]byte(msg)); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	select {
	case r := <-c.ch(id):
		return r
	case <-time.After(5 * time.Second):
		c.t.Fatalf("no reply to %s", msg)
	}
	return reply{}
}

// text returns the text of a complete tool result, failing otherwise.
func (r reply) text(t *testing.T) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d %s", r.Error.Code, r.Error.Message)
	}
	var rt string
	_ = json.Unmarshal(r.Result["resultType"], &rt)
	if rt != "complete" {
		t.Fatalf("resultType %q, want complete: %v", rt, r.Result)
	}
	var content []struct{ Text string }
	_ = json.Unmarshal(r.Result["content"], &content)
	if len(content) == 0 {
		var msgs []struct{ Content struct{ Text string } }
		_ = json.Unmarshal(r.Result["messages"], &msgs)
		if len(msgs) > 0 {
			return msgs[0].Content.Text
		}
		var cs []struct{ Text string }
		_ = json.Unmarshal(r.Result["contents"], &cs)
		if len(cs) > 0 {
			return cs[0].Text
		}
		t.Fatalf("no text in %v", r.Result)
	}
	return content[0].Text
}

// state returns the requestState of an input_required result.
func (r reply) state(t *testing.T) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d %s", r.Error.Code, r.Error.Message)
	}
	var rt, st string
	_ = json.Unmarshal(r.Result["resultType"], &rt)
	_ = json.Unmarshal(r.Result["requestState"], &st)
	if rt != "input_required" || st == "" {
		t.Fatalf("want input_required with requestState, got %v", r.Result)
	}
	return st
}

// fails checks a -32602 answer whose message contains want.
func (r reply) fails(t *testing.T, want string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, want) {
		t.Fatalf("want -32602 %q, got %+v %v", want, r.Error, r.Result)
	}
}
