package load

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// replayConn answers every write with the same canned response.
type replayConn struct {
	memConn
	resp []byte
	rd   bytes.Reader
}

func (c *replayConn) Write(p []byte) (int, error) { c.rd.Reset(c.resp); return len(p), nil }
func (c *replayConn) Read(p []byte) (int, error)  { return c.rd.Read(p) }

// TestHTTPRequestPathAllocs: building a request, sending it, parsing the
// response (JSON or chunked SSE) and recording the outcome allocate nothing.
func TestHTTPRequestPathAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	sse := "data: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\n" +
		"data: " + `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"isError":false}}` + "\n\n"
	for name, resp := range map[string]string{
		"json":  resp("200 OK", "Content-Type: application/json\r\n", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"isError":false}}`),
		"sse":   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(sse, 50, 60),
		"error": resp("404 Not Found", "Content-Type: application/json\r\n", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			r := &run{cfg: Config{Timeout: time.Second}, t: &target{kind: "http", addr: "x", host: "x", path: "/mcp"}, base: time.Now()}
			r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("echo", []byte(`{"text":"hello world"}`)), true)}
			tool := "echo"
			r.tpls[0].head = httpHead(r.t, "tools/call", &tool, nil)
			w := r.newHTTPWorker(0)
			w.conn.attach(&replayConn{resp: []byte(resp)})
			rec := w.rec
			allocs := testing.AllocsPerRun(200, func() {
				w.tpl = r.pick(&w.pos)
				w.wantID = 1
				w.idBuf = strconv.AppendInt(w.idBuf[:0], w.wantID, 10)
				w.wbuf = w.tpl.appendHTTP(w.wbuf[:0], w.idBuf)
				out, code := w.do()
				if w.conn.nc == nil {
					t.Fatal("connection closed")
				}
				rec.finish(true, 0, 1000, out, code, w.progress)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per request", allocs)
			}
			if rec.requests == 0 || (name == "error") != (rec.errs.rpc[-32601] > 0) {
				t.Errorf("outcomes: %d requests, errors %v", rec.requests, rec.errs.rpc)
			}
		})
	}
}

// TestStreamResponsePathAllocs: a stream reader's work per response (Peek,
// slot lookup, classify, record) allocates nothing.
func TestStreamResponsePathAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	rec := newRecorder()
	msg := []byte(`{"jsonrpc":"2.0","id":65,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false}}`)
	var env codec.Envelope
	allocs := testing.AllocsPerRun(500, func() {
		if codec.Peek(msg, &env) != nil {
			t.Fatal("peek")
		}
		id, _ := parseInt(env.ID)
		out, code := classify(msg, &env, true)
		rec.finish(true, 0, id*1000, out, code, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response", allocs)
	}
}

// BenchmarkHTTPRequestPath is the generator's own work per HTTP request
// without the network: build, "send", parse the reply, classify, record.
func BenchmarkHTTPRequestPath(b *testing.B) {
	for name, reply := range map[string]string{
		"json": resp("200 OK", "Content-Type: application/json\r\n", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}`),
		"sse": "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunked("data: "+`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":2}}`+"\n\n"+
				"data: "+`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"slept"}],"isError":false}}`+"\n\n", 120),
	} {
		b.Run(name, func(b *testing.B) {
			r := &run{cfg: Config{Timeout: time.Second}, t: &target{kind: "http", addr: "x", host: "x", path: "/mcp"}, base: time.Now()}
			r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("echo", []byte(`{"text":"hello world"}`)), false)}
			tool := "echo"
			r.tpls[0].head = httpHead(r.t, "tools/call", &tool, nil)
			w := r.newHTTPWorker(0)
			w.conn.attach(&replayConn{resp: []byte(reply)})
			b.ReportAllocs()
			for b.Loop() {
				w.tpl = r.pick(&w.pos)
				w.wantID = 1
				w.idBuf = strconv.AppendInt(w.idBuf[:0], w.wantID, 10)
				w.wbuf = w.tpl.appendHTTP(w.wbuf[:0], w.idBuf)
				out, code := w.do()
				w.rec.finish(true, 0, 1000, out, code, w.progress)
			}
		})
	}
}
