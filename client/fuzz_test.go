package client

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// captureRWC is a connection that records what the client writes.
type captureRWC struct{ out bytes.Buffer }

func (c *captureRWC) Read([]byte) (int, error)    { return 0, io.EOF }
func (c *captureRWC) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *captureRWC) Close() error                { return nil }

// queued returns what ex's Inbox holds and how it ended (nil: open).
func queued(ex *lineExchange) ([][]byte, error) {
	ex.in.mu.Lock()
	defer ex.in.mu.Unlock()
	return append([][]byte(nil), ex.in.q[ex.in.head:]...), ex.in.end
}

// FuzzRoute feeds one line from the server to the client's JSON-RPC
// routing (STD-08) with a call (id 1, progress token "tok") and a listen
// stream (id 2) open. Whatever the line, exactly one thing happens: it is
// skipped as stray, counted as unmatched, logged (notifications/message),
// answered (a server request), or handed to one exchange, as a copy of the
// line. A call gets its final message only from a response whose id is 1
// as encoding/json reads the line too (no differential on duplicate or
// case-variant members, D5), and is then no longer routable: the same id
// again is unmatched, never a second result.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":"1","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
		`{"jsonrpc":"2.0","ID":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok2","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}`,
		`banner: server starting`, `{"jsonrpc":"2.0","id":1,"result":`, `[]`, "\xff",
	} {
		f.Add(s)
	}
	discard := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, line string) {
		rwc := &captureRWC{}
		lt := NewLineTransport(nil, LineConfig{Logger: discard})
		c := &lineConn{t: lt, rwc: rwc, byID: map[string]*lineExchange{}, byToken: map[string]*lineExchange{}, done: make(chan struct{})}
		call := &lineExchange{c: c, id: "1", token: `"tok"`}
		listen := &lineExchange{c: c, id: "2", listen: true}
		c.register(call)
		c.register(listen)

		buf := []byte(line)
		var env codec.Envelope
		c.route(buf, &env)
		for i := range buf {
			buf[i] = 'x' // the routed message must be a copy
		}

		st := lt.Stats()
		cm, cend := queued(call)
		lm, lend := queued(listen)
		outcomes := int(st.StrayLines + st.Unmatched)
		if rwc.out.Len() > 0 {
			outcomes++
			if !json.Valid(bytes.TrimSuffix(rwc.out.Bytes(), []byte("\n"))) {
				t.Fatalf("line %q: the client answered with invalid JSON %q", line, rwc.out.Bytes())
			}
		}
		outcomes += len(cm) + len(lm)
		if outcomes > 1 {
			t.Fatalf("line %q: %d outcomes (stats %+v, answer %q, call got %d, listen got %d)", line, outcomes, st, rwc.out.Bytes(), len(cm), len(lm))
		}
		for _, m := range append(cm, lm...) {
			if string(m) != line {
				t.Fatalf("line %q: an exchange got %q", line, m)
			}
		}
		if outcomes == 0 { // logged: a server log message for no request
			if codec.PeekWith([]byte(line), &env, peekOpts) != nil || env.Method.String() != "notifications/message" {
				t.Fatalf("line %q: dropped without a count", line)
			}
		}
		if cend != nil {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if len(cm) != 1 || json.Unmarshal([]byte(line), &m) != nil || string(m.ID) != "1" {
				t.Fatalf("line %q ended the call (id 1); encoding/json reads its id as %s", line, m.ID)
			}
			// The same response again finds no call: counted, dropped.
			before := lt.Stats().Unmatched
			c.route([]byte(line), &env)
			if lt.Stats().Unmatched != before+1 {
				t.Fatalf("line %q routed twice: the second copy was not counted as unmatched", line)
			}
			if cm2, _ := queued(call); len(cm2) != 1 {
				t.Fatalf("line %q routed twice: the call got %d messages", line, len(cm2))
			}
		}
		if lend != nil && len(lm) != 1 {
			t.Fatalf("line %q ended the listen stream without its message", line)
		}
	})
}
