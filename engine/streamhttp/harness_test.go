package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
)

// Test vectors of /work/shared/spec/EXAMPLES.md, byte for byte (the
// Content-Length values printed there are checked in
// TestExampleVectorsVerbatim).
const (
	exMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

	// §2
	ex2Body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1"},` + exMeta + `}}`
	// §2b
	ex2bBody = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"Zürich","query":"SELECT 1"},` + exMeta + `}}`
	// §2d
	ex2dBody = `{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{"uri":"file:///projects/app/config.json",` + exMeta + `}}`
	// §3
	ex3Body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","query":"SELECT * FROM big"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok-3"}}}`
	// §4
	ex4Body = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user aborted"}}`
	// §5
	ex5Body = `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bar","arguments":{},` + exMeta + `}}`
	// §5b
	ex5bBody = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §6
	ex6Body = `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §7
	ex7Ping   = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{` + exMeta + `}}`
	ex7NoMeta = `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}}`
	ex7Caps   = `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"ask_user","arguments":{},` + exMeta + `}}`
	ex7Legacy = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"LegacyClient","version":"1.0.0"}}}`
	// §8
	ex8Body = `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{` + exMeta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}`
	ex8Ack  = `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}`
	ex8List = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}`
	ex8Upd  = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"uri":"file:///project/config.json"}}`
	ex8Done = `{"jsonrpc":"2.0","id":"listen-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1","io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`

	// The execute_sql tool of EXAMPLES.md (its inputSchema).
	executeSQLSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"dry_run":{"type":"boolean","x-mcp-header":"DryRun"},"query":{"type":"string"}},"required":["region","query"]}`
)

// toolsCall builds a tools/call body with the EXAMPLES _meta.
func toolsCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + exMeta + `}}`
}

// toolsCallProgress is toolsCall with a progressToken (the SSE path).
func toolsCallProgress(id, name, args, token string) string {
	meta := strings.TrimSuffix(exMeta, "}") + `,"progressToken":` + token + `}`
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
}

// Header blocks. Lines are written verbatim; "{addr}" and "{port}" are
// replaced by the server's address and port.
var baseHdr = []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"}

func mcpHdr(method string, more ...string) []string {
	h := append([]string{}, baseHdr...)
	h = append(h, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: "+method)
	return append(h, more...)
}

// ex2Hdr are the request headers of EXAMPLES §2.
func ex2Hdr(more ...string) []string {
	return mcpHdr("tools/call", append([]string{"Mcp-Name: execute_sql", "Mcp-Param-Region: us-west1", "Mcp-Param-Priority: 42", "Mcp-Param-DryRun: false"}, more...)...)
}

// setHdr replaces every line of header name (case-insensitive) with line,
// or removes them when line is "".
func setHdr(hdr []string, name, line string) []string {
	out := make([]string, 0, len(hdr)+1)
	done := false
	for _, l := range hdr {
		k, _, _ := strings.Cut(l, ":")
		if strings.EqualFold(strings.TrimSpace(k), name) {
			if line != "" && !done {
				out = append(out, line)
				done = true
			}
			continue
		}
		out = append(out, l)
	}
	if line != "" && !done {
		out = append(out, line)
	}
	return out
}

// frontEnd names one of the binding's two HTTP front ends.
type frontEnd string

const (
	fastFE frontEnd = "fasthttp" // Server.Serve on a TCP listener
	netFE  frontEnd = "nethttp"  // Server.Handler behind an http.Server
)

var frontEnds = []frontEnd{fastFE, netFE}

// leakCheck fails the test when goroutines started during it are still
// alive at its very end (registered first, so it runs after every other
// cleanup, the server's Shutdown included).
func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		// fasthttp's worker-pool cleaner sleeps MaxIdleWorkerDuration
		// (10 s) between checks of its stop channel: it outlives
		// Shutdown by up to that long, then exits by itself.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		// fasthttp's process-wide Date header refresher (started once).
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// fixture is the engine of every HTTP test: the EXAMPLES execute_sql tool
// (with a run counter), plus tools that block, ignore their context,
// panic or flood, and the EXAMPLES resource.
type fixture struct {
	sqlRuns   atomic.Int64
	started   chan string // a blocking handler began
	cancelled chan string // a handler saw its context end
	release   chan struct{}
	relOnce   sync.Once
}

func (f *fixture) releaseAll() { f.relOnce.Do(func() { close(f.release) }) }

func newFixture(t *testing.T, eng *engine.Server) *fixture {
	t.Helper()
	f := &fixture{started: make(chan string, 64), cancelled: make(chan string, 64), release: make(chan struct{})}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(eng.AddTool(engine.Tool{
		Name:        "execute_sql",
		Description: "Run SQL in a region",
		InputSchema: json.RawMessage(executeSQLSchema),
		Handler: func(c *engine.Call) error {
			f.sqlRuns.Add(1)
			if c.ProgressToken() != nil { // EXAMPLES §3
				c.Progress(0.25, 1, "scanning")
				c.Progress(0.75, 1, "")
				c.Text("1000 rows")
				return nil
			}
			c.Text("1 row")
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Handler: func(c *engine.Call) error {
			s, _ := c.ArgBytes("text")
			c.TextBytes(s)
			return nil
		},
	}))
	// quick is Inline: it runs where the request was read, and reports
	// progress only when asked to (issue 8: a progressToken costs nothing
	// until the handler uses it).
	must(eng.AddTool(engine.Tool{
		Name:   "quick",
		Inline: true,
		Handler: func(c *engine.Call) error {
			var a struct {
				Steps int `json:"steps"`
			}
			if err := c.Bind(&a); err != nil {
				return err
			}
			for i := 1; i <= a.Steps; i++ {
				c.Progress(float64(i), float64(a.Steps), "")
			}
			c.Text("quick done")
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name:                       "ask_user",
		RequiredClientCapabilities: []string{"elicitation"},
		Handler:                    func(c *engine.Call) error { c.Text("never"); return nil },
	}))
	// block waits for its context (C6); with a progressToken it first
	// sends one progress notification, so the SSE stream has begun.
	must(eng.AddTool(engine.Tool{
		Name: "block",
		Handler: func(c *engine.Call) error {
			if c.ProgressToken() != nil {
				c.Progress(1, 0, "started")
			}
			f.started <- "block"
			select {
			case <-c.Done():
				f.cancelled <- "block"
				return nil
			case <-f.release:
				c.Text("released")
				return nil
			}
		},
	}))
	// stubborn ignores its context (C13).
	must(eng.AddTool(engine.Tool{
		Name: "stubborn",
		Handler: func(c *engine.Call) error {
			f.started <- "stubborn"
			<-f.release
			c.Text("late")
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name: "boom",
		Handler: func(c *engine.Call) error {
			var m map[string]int
			//lint:ignore SA5000 a deliberate nil map write: the panic under test (C12)
			m["x"] = 1
			return nil
		},
	}))
	// flood emits 4 KiB progress notifications at about 16 MB/s (a pace
	// a reading loopback client follows easily) for at most 3 s, until
	// its context ends (C5).
	must(eng.AddTool(engine.Tool{
		Name: "flood",
		Handler: func(c *engine.Call) error {
			msg := strings.Repeat("x", 4<<10)
			f.started <- "flood"
			deadline := time.Now().Add(3 * time.Second)
			for i := 1; time.Now().Before(deadline); i++ {
				select {
				case <-c.Done():
					f.cancelled <- "flood"
					return nil
				case <-f.release:
					c.Text("released")
					return nil
				default:
				}
				c.Progress(float64(i), 0, msg)
				if i%4 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			c.Text("flood done")
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name: "whoami",
		Handler: func(c *engine.Call) error {
			c.Text(fmt.Sprint(c.Principal()))
			return nil
		},
	}))
	must(eng.AddResource(engine.Resource{
		URI:      "file:///projects/app/config.json",
		Name:     "config",
		MimeType: "application/json",
		Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(engine.ReadResourceResult{Contents: []engine.ResourceContents{{URI: uri, MimeType: "application/json", Text: `{"debug":false}`}}})
		},
	}))
	return f
}

// harness is one Server behind one front end, on a loopback listener.
type harness struct {
	t    *testing.T
	fe   frontEnd
	eng  *engine.Server
	srv  *Server
	fx   *fixture
	addr string // host:port the clients dial
	port int
	hs   *http.Server
	done chan error // the serve goroutine's result
	stop sync.Once
}

func defaultOptions() engine.Options {
	return engine.Options{Name: "ExampleServer", Version: "1.0.0"}
}

// plainAdapter makes the net/http front end serve without NetListener and
// ConnContext (what the adapter guarantees on its own).
var plainAdapter bool

// startHarness starts a Server for cfg over a fresh engine (opt) behind fe.
// Shutdown runs at cleanup.
func startHarness(t *testing.T, fe frontEnd, cfg Config, opt engine.Options) *harness {
	t.Helper()
	eng := engine.New(opt)
	h := &harness{t: t, fe: fe, eng: eng, fx: newFixture(t, eng), done: make(chan error, 1)}
	h.srv = New(eng, cfg)
	switch fe {
	case fastFE:
		ln, err := h.srv.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h.addr = ln.Addr().String()
		go func() { h.done <- h.srv.Serve(ln) }()
		// Serve publishes its fasthttp.Server before serving; wait for it
		// so that Shutdown always finds it.
		for deadline := time.Now().Add(5 * time.Second); ; {
			h.srv.mu.Lock()
			ok := h.srv.fast != nil
			h.srv.mu.Unlock()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Serve did not start")
			}
			time.Sleep(time.Millisecond)
		}
	case netFE:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h.addr = ln.Addr().String()
		hd, err := h.srv.Handler(h.addr)
		if err != nil {
			t.Fatal(err)
		}
		// An http.Handler cannot bound what net/http reads before calling
		// it, so the http.Server is configured from the same Config the
		// way an embedder would: header size (431 from net/http itself),
		// header and request read timeouts, idle timeout. No WriteTimeout:
		// Config has no absolute write deadline (C3).
		c := h.srv.cfg
		h.hs = &http.Server{
			Handler:           hd,
			MaxHeaderBytes:    c.MaxHeaderBytes,
			ReadHeaderTimeout: c.ReadTimeout,
			ReadTimeout:       c.ReadTimeout,
			IdleTimeout:       c.IdleTimeout,
			ErrorLog:          log.New(io.Discard, "", 0),
			// As the package documentation recommends: connection limits
			// (C11) and Content-Length+Transfer-Encoding refusal (B5).
			ConnContext: h.srv.ConnContext,
		}
		nl := h.srv.NetListener(ln)
		if plainAdapter {
			nl, h.hs.ConnContext = ln, nil
		}
		go func() {
			err := h.hs.Serve(nl)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			h.done <- err
		}()
	}
	_, p, _ := net.SplitHostPort(h.addr)
	h.port, _ = strconv.Atoi(p)
	t.Cleanup(func() { h.shutdown(5 * time.Second) })
	return h
}

// shutdown releases blocked handlers, shuts the Server down and waits for
// the serve goroutine. It returns Server.Shutdown's error.
func (h *harness) shutdown(d time.Duration) (err error) {
	h.stop.Do(func() {
		h.fx.releaseAll()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		err = h.srv.Shutdown(ctx)
		if h.hs != nil {
			_ = h.hs.Shutdown(ctx)
			_ = h.hs.Close()
		}
		// The transport stopped itself only; the harness created the
		// engine, so it shuts it down.
		if e := h.eng.Shutdown(ctx); e != nil && err == nil {
			err = e
		}
		select {
		case e := <-h.done:
			if e != nil {
				h.t.Errorf("%s: serve returned %v", h.fe, e)
			}
		case <-time.After(d + time.Second):
			h.t.Errorf("%s: serve goroutine did not return after Shutdown", h.fe)
		}
	})
	return err
}

// request is one raw HTTP/1.1 request. Header lines are written verbatim,
// so tests control case, whitespace, duplicates and framing exactly (a
// net/http client would canonicalise and trim them).
type request struct {
	method  string   // default POST
	path    string   // default /mcp
	host    string   // default the server's address; "-" for none
	hdr     []string // verbatim header lines
	body    string
	chunked bool // Transfer-Encoding: chunked, 64 KiB chunks
	noCL    bool // no Content-Length (and not chunked)
}

func (h *harness) expand(s string) string {
	s = strings.ReplaceAll(s, "{addr}", h.addr)
	return strings.ReplaceAll(s, "{port}", strconv.Itoa(h.port))
}

func (h *harness) raw(r request) []byte {
	var b bytes.Buffer
	method, path, host := r.method, r.path, r.host
	if method == "" {
		method = "POST"
	}
	if path == "" {
		path = "/mcp"
	}
	if host == "" {
		host = h.addr
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, path)
	if host != "-" {
		b.WriteString("Host: " + h.expand(host) + "\r\n")
	}
	for _, l := range r.hdr {
		b.WriteString(h.expand(l) + "\r\n")
	}
	switch {
	case r.chunked:
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := r.body; len(rest) > 0; {
			n := min(len(rest), 64<<10)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
		return b.Bytes()
	case !r.noCL && (r.body != "" || method == "POST"):
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("\r\n")
	b.WriteString(r.body)
	return b.Bytes()
}

// client is one raw TCP connection to the server.
type client struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func (h *harness) dial(t *testing.T) *client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", h.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, br: bufio.NewReaderSize(conn, 64<<10)}
}

// write sends p; large writes run in the background (the server may answer
// and close before reading everything, B1-B4), and their errors are
// ignored.
func (c *client) write(p []byte) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if len(p) <= 64<<10 {
		if _, err := c.conn.Write(p); err != nil {
			c.t.Fatalf("write: %v", err)
		}
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.conn.Write(p)
	}()
	c.t.Cleanup(func() { c.conn.Close(); <-done })
}

// readResponse reads one response head within d; the body is left to the
// caller.
func (c *client) readResponse(d time.Duration) (*http.Response, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(c.br, nil)
	_ = c.conn.SetReadDeadline(time.Time{})
	return resp, err
}

// readAll reads a non-streamed response body (bounded).
func (c *client) readAll(resp *http.Response) []byte {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.conn.SetReadDeadline(time.Time{})
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		// A server that refuses a request it has not read to the end
		// (431, 413) and closes may have its close turn into a reset
		// while the rest of the request is still arriving: the status
		// came, the body is lost with the connection.
		if resp.Close && resp.StatusCode >= 400 && errors.Is(err, syscall.ECONNRESET) {
			return b
		}
		c.t.Fatalf("reading the response body: %v", err)
	}
	return b
}

// roundTrip sends r and reads the complete response.
func (c *client) roundTrip(h *harness, r request) (*http.Response, []byte) {
	c.t.Helper()
	c.write(h.raw(r))
	resp, err := c.readResponse(10 * time.Second)
	if err != nil {
		c.t.Fatalf("%s: reading the response: %v", h.fe, err)
	}
	return resp, c.readAll(resp)
}

// closedByServer reports whether the server closed the connection (EOF or
// reset) within d, after the response that was read.
func (c *client) closedByServer(d time.Duration) bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	defer c.conn.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	for {
		_, err := c.br.Read(buf)
		if err == nil {
			continue // leftovers of a response the server abandoned
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// do is dial + roundTrip.
func (h *harness) do(t *testing.T, r request) (*http.Response, []byte) {
	t.Helper()
	return h.dial(t).roundTrip(h, r)
}

// rpcMsg is one decoded JSON-RPC message.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	hasID   bool
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeMsg(t *testing.T, b []byte) *rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %q", err, trunc(b))
	}
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(b, &probe)
	_, m.hasID = probe["id"]
	if m.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q in %q", m.JSONRPC, trunc(b))
	}
	return &m
}

// jsonEqual compares two JSON texts semantically.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// toolText returns result.content[0].text of a tools/call result.
func toolText(t *testing.T, m *rpcMsg) string {
	t.Helper()
	var r struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tool result: %s", m.Result)
	}
	return r.Content[0].Text
}

// sse reads a text/event-stream response in the background.
type sse struct {
	t     *testing.T
	items chan sseItem
}

type sseItem struct {
	lines   []string // raw lines of one event, or the comment line
	data    string   // the joined data: lines
	comment bool
	err     error // end of stream (io.EOF when clean)
}

func readSSE(t *testing.T, c *client, resp *http.Response) *sse {
	s := &sse{t: t, items: make(chan sseItem, 1024)}
	go func() {
		br := bufio.NewReader(resp.Body)
		var ev sseItem
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				s.items <- sseItem{err: err}
				close(s.items)
				return
			}
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
			switch {
			case line == "":
				if len(ev.lines) > 0 {
					s.items <- ev
				}
				ev = sseItem{}
			case strings.HasPrefix(line, ":"):
				s.items <- sseItem{lines: []string{line}, comment: true}
			default:
				ev.lines = append(ev.lines, line)
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					if ev.data != "" {
						ev.data += "\n"
					}
					ev.data += strings.TrimPrefix(v, " ")
				}
			}
		}
	}()
	return s
}

// next returns the next event (comments included), or fails after d.
func (s *sse) next(d time.Duration) sseItem {
	s.t.Helper()
	select {
	case it, ok := <-s.items:
		if !ok {
			return sseItem{err: io.EOF}
		}
		return it
	case <-time.After(d):
		s.t.Fatalf("no SSE event within %v", d)
		return sseItem{}
	}
}

// nextEvent skips comments.
func (s *sse) nextEvent(d time.Duration) sseItem {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		it := s.next(time.Until(deadline))
		if !it.comment {
			return it
		}
	}
}

// waitFor receives a name from ch within d.
func waitFor(t *testing.T, ch chan string, want string, d time.Duration) bool {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case got := <-ch:
			if got == want {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

// forEachFrontEnd runs f as one subtest per front end, each with its own
// leak check.
func forEachFrontEnd(t *testing.T, f func(t *testing.T, fe frontEnd)) {
	for _, fe := range frontEnds {
		t.Run(string(fe), func(t *testing.T) {
			leakCheck(t)
			f(t, fe)
		})
	}
}
