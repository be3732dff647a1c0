package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

const legacyPath = "/mcp-2025"

// leakCheck fails the test when goroutines started during it outlive it
// (registered first, so it runs after every other cleanup).
func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// Idle keep-alive connections of http.DefaultTransport's clones.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// newEngine is the engine every test serves: echo, a progress tool, an
// MRTR elicitation tool, a tool that waits until cancelled, a resource.
func newEngine(t *testing.T) *engine.Server {
	t.Helper()
	return newEngineWith(t, nil)
}

// newEngineWith is newEngine with a backplane (not started).
func newEngineWith(t *testing.T, bp state.Backplane) *engine.Server {
	t.Helper()
	eng := engine.New(engine.Config{Name: "legacy-test", Version: "1", Logging: true, Backplane: bp})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(eng.AddTool(engine.Tool{
		Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Handler: func(c *engine.Call) error {
			s, _ := c.ArgString("text")
			c.Text(s)
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name: "steps", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *engine.Call) error {
			c.Log("info", "steps", "starting")
			c.Progress(1, 2, "half")
			time.Sleep(60 * time.Millisecond)
			c.Progress(2, 2, "done")
			c.Text("stepped")
			return nil
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name: "ask_name", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *engine.Call) error {
			if raw, ok := c.ParamRaw("inputResponses"); ok {
				var in map[string]struct {
					Action  string `json:"action"`
					Content struct {
						Name string `json:"name"`
					} `json:"content"`
				}
				if err := json.Unmarshal(raw, &in); err != nil {
					return err
				}
				st, _ := c.ParamRaw("requestState")
				c.Text("hello " + in["n"].Content.Name + " state=" + string(st))
				return nil
			}
			return c.InputRequired(mcp.InputRequired{
				InputRequests: map[string]mcp.InputRequest{"n": {Method: "elicitation/create", Params: json.RawMessage(
					`{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)}},
				RequestState: "s1",
			})
		},
	}))
	must(eng.AddTool(engine.Tool{
		Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *engine.Call) error {
			<-c.Done()
			return c.Err()
		},
	}))
	must(eng.AddResource(engine.Resource{
		URI: "test://r", Name: "r", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "r"}}})
		},
	}))
	return eng
}

// rig is one server: the engine, the modern endpoint on /mcp and the
// legacy one mounted on /mcp-2025 of the same fasthttp listener.
type rig struct {
	eng    *engine.Server
	leg    *legacy.Server
	hs     *streamhttp.Server
	base   string
	client *http.Client
}

func startRig(t *testing.T, eng *engine.Server, cfg legacy.Config) *rig {
	t.Helper()
	return startRigHTTP(t, eng, cfg, streamhttp.Config{})
}

// startRigHTTP is startRig with the HTTP binding's configuration.
func startRigHTTP(t *testing.T, eng *engine.Server, cfg legacy.Config, hcfg streamhttp.Config) *rig {
	t.Helper()
	leg := legacy.New(eng, cfg)
	hcfg.Mounts = map[string]http.Handler{legacyPath: leg.Handler()}
	hs := streamhttp.New(eng, hcfg)
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	r := &rig{eng: eng, leg: leg, hs: hs, base: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := leg.Shutdown(ctx); err != nil {
			t.Errorf("legacy shutdown: %v", err)
		}
		if err := hs.Shutdown(ctx); err != nil {
			t.Errorf("http shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := eng.Shutdown(ctx); err != nil {
			t.Errorf("engine shutdown: %v", err)
		}
	})
	return r
}

// reply is one HTTP answer: status, headers and the JSON-RPC messages of
// its body (one for JSON, each event's data for SSE).
type reply struct {
	status int
	hdr    http.Header
	msgs   []map[string]any
	raw    string
}

func (r *reply) last() map[string]any {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func (rg *rig) do(t *testing.T, method, path, sid, body string, hdr ...string) *reply {
	t.Helper()
	req, err := http.NewRequest(method, rg.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(legacy.HeaderSession, sid)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := rg.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return parseReply(t, resp, b)
}

func parseReply(t *testing.T, resp *http.Response, b []byte) *reply {
	t.Helper()
	r := &reply{status: resp.StatusCode, hdr: resp.Header, raw: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				r.msgs = append(r.msgs, decode(t, d))
			}
		}
	} else if len(bytes.TrimSpace(b)) > 0 {
		r.msgs = append(r.msgs, decode(t, string(b)))
	}
	return r
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	return m
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// initialize opens a session and returns its id.
func (rg *rig) initialize(t *testing.T) string {
	t.Helper()
	r := rg.do(t, "POST", legacyPath, "", initBody)
	if r.status != 200 {
		t.Fatalf("initialize: %d %s", r.status, r.raw)
	}
	sid := r.hdr.Get(legacy.HeaderSession)
	if len(sid) != 22 {
		t.Fatalf("session id %q: want 22 characters (128 bits, base64url)", sid)
	}
	if rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).status != 202 {
		t.Fatal("notifications/initialized not accepted")
	}
	return sid
}

func call(id int, name, args string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": json.RawMessage(args)}})
	return string(b)
}

// textOf returns result.content[0].text of a tools/call response.
func textOf(t *testing.T, m map[string]any) string {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content in %v", m)
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// sseReader reads the events of a streamed response one by one.
type sseReader struct {
	body io.ReadCloser
	br   *bufio.Reader
	msgs chan map[string]any
}

func openStream(t *testing.T, resp *http.Response) *sseReader {
	t.Helper()
	s := &sseReader{body: resp.Body, br: bufio.NewReader(resp.Body), msgs: make(chan map[string]any, 64)}
	go func() {
		defer close(s.msgs)
		for {
			line, err := s.br.ReadString('\n')
			if err != nil {
				return
			}
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					s.msgs <- m
				}
			}
		}
	}()
	t.Cleanup(func() { s.body.Close() })
	return s
}

func (s *sseReader) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			t.Fatal("stream ended")
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return nil
}

// rawConn opens a TCP connection to the server (for clients that stop
// reading).
func (rg *rig) rawConn(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(rg.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
