package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// fakeStdioEnv makes the test binary act as a line-delimited MCP server on
// stdin/stdout (TestMain), so stdio targets can be tested without building
// the real server.
const fakeStdioEnv = "MCPWIRE_LOAD_FAKE_STDIO"

// fakeStderrEnv, when set, is what the fake stdio server writes to its
// stderr first.
const fakeStderrEnv = "MCPWIRE_LOAD_FAKE_STDERR"

func TestMain(m *testing.M) {
	if os.Getenv(fakeStdioEnv) == "1" {
		_, _ = os.Stderr.WriteString(os.Getenv(fakeStderrEnv))
		serveLines(os.Stdin, os.Stdout, os.Stderr)
		os.Exit(0)
	}
	// Every run must end its goroutines: senders, readers, sweepers,
	// listen streams and stdio children.
	goleak.VerifyTestMain(m)
}

// rpcMsg is what the fakes decode (tests only: encoding/json is fine here).
type rpcMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Cursor    string          `json:"cursor"`
		Arguments json.RawMessage `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
		Meta      map[string]any  `json:"_meta"`
		Notes     struct {
			Res []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	} `json:"params"`
}

// checkMeta reports what is wrong with a request's _meta (META-02).
func checkMeta(m *rpcMsg) string {
	if m.Params.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
		return "protocolVersion"
	}
	if _, ok := m.Params.Meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any); !ok {
		return "clientCapabilities"
	}
	return ""
}

func resultJSON(id json.RawMessage, text string) []byte {
	t, _ := json.Marshal(text)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":%s}],"isError":false}}`, id, t)
}

func errorJSON(id json.RawMessage, code int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"fake error"}}`, id, code)
}

// serveLines is a small line-delimited MCP server: tools echo, sleep
// (progress only, no waiting), touch (delivers to listen streams), hang
// (never answers); subscriptions/listen; notifications/cancelled. It
// handles one message at a time.
func serveLines(r io.Reader, w io.Writer, log io.Writer) {
	bw := bufio.NewWriter(w)
	var mu sync.Mutex
	write := func(b []byte) {
		mu.Lock()
		bw.Write(b)
		bw.WriteByte('\n')
		mu.Unlock()
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	listens := map[string]bool{} // raw ids
	var order []string
	for {
		if !sc.Scan() {
			mu.Lock()
			bw.Flush()
			mu.Unlock()
			return
		}
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			write([]byte(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`))
			continue
		}
		if m.ID == nil {
			if m.Method == "notifications/cancelled" {
				delete(listens, string(m.Params.RequestID))
				fmt.Fprintf(log, "cancelled %s\n", m.Params.RequestID)
			}
			continue
		}
		if bad := checkMeta(&m); bad != "" {
			write(errorJSON(m.ID, -32602))
			continue
		}
		switch {
		case m.Method == "subscriptions/listen":
			listens[string(m.ID)] = true
			order = append(order, string(m.ID))
			write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"resourceSubscriptions":["test://load"]}}}`, m.ID))
		case m.Method == "tools/call" && m.Params.Name == "echo":
			var a struct{ Text string }
			json.Unmarshal(m.Params.Arguments, &a)
			write(resultJSON(m.ID, a.Text))
		case m.Method == "tools/call" && m.Params.Name == "sleep":
			var a struct{ Steps int }
			json.Unmarshal(m.Params.Arguments, &a)
			if tok, ok := m.Params.Meta["progressToken"]; ok {
				tb, _ := json.Marshal(tok)
				for i := 1; i <= a.Steps; i++ {
					write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, tb, i, a.Steps))
				}
			}
			write(resultJSON(m.ID, "slept"))
		case m.Method == "tools/call" && m.Params.Name == "touch":
			for _, id := range order {
				if listens[id] {
					write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"uri":"test://load"}}`, id))
				}
			}
			write(resultJSON(m.ID, "touched"))
		case m.Method == "tools/call" && m.Params.Name == "hang":
			// never answered
		default:
			write(errorJSON(m.ID, -32601))
		}
		mu.Lock()
		bw.Flush()
		mu.Unlock()
	}
}

// serveLinesListener accepts connections and runs serveLines on each, with
// one subscription registry shared by all connections (a real server's hub).
type lineServer struct {
	ln  net.Listener
	wg  sync.WaitGroup
	hub *sharedHub
}

func startLineServer(t *testing.T, network, addr string) *lineServer {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	hub := newSharedHub()
	s := &lineServer{ln: ln, hub: hub}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				hub.serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// sharedHub is serveLines with listen streams shared across connections.
type sharedHub struct {
	mu      sync.Mutex
	subs    []*hubSub
	touches int
	// refuse, when set, answers touch n (from 0) with an error and
	// publishes nothing.
	refuse func(n int) bool
}

type hubSub struct {
	id    string
	write func([]byte)
	dead  bool
}

func newSharedHub() *sharedHub { return &sharedHub{} }

func (h *sharedHub) serve(c net.Conn) {
	var wmu sync.Mutex
	bw := bufio.NewWriter(c)
	write := func(b []byte) {
		wmu.Lock()
		bw.Write(b)
		bw.WriteByte('\n')
		bw.Flush()
		wmu.Unlock()
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var mine []*hubSub
	defer func() {
		h.mu.Lock()
		for _, s := range mine {
			s.dead = true
		}
		h.mu.Unlock()
	}()
	for sc.Scan() {
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.ID == nil {
			if m.Method == "notifications/cancelled" {
				h.mu.Lock()
				for _, s := range mine {
					if s.id == string(m.Params.RequestID) {
						s.dead = true
					}
				}
				h.mu.Unlock()
			}
			continue
		}
		switch {
		case m.Method == "subscriptions/listen":
			s := &hubSub{id: string(m.ID), write: write}
			write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{}}}`, m.ID))
			h.mu.Lock()
			h.subs = append(h.subs, s)
			mine = append(mine, s)
			h.mu.Unlock()
		case m.Method == "tools/call" && m.Params.Name == "touch":
			var a struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(m.Params.Arguments, &a)
			uri, _ := json.Marshal(a.URI)
			h.mu.Lock()
			n := h.touches
			h.touches++
			if h.refuse != nil && h.refuse(n) {
				h.mu.Unlock()
				write(errorJSON(m.ID, -32000))
				continue
			}
			for _, s := range h.subs {
				if !s.dead {
					s.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"uri":%s}}`, s.id, uri))
				}
			}
			h.mu.Unlock()
			write(resultJSON(m.ID, "touched"))
		case m.Method == "tools/call":
			write(resultJSON(m.ID, "ok"))
		default:
			write(errorJSON(m.ID, -32601))
		}
	}
}

// httpFake is an in-test MCP-shaped HTTP server.
type httpFake struct {
	t      *testing.T
	srv    *httptest.Server
	handle func(w http.ResponseWriter, req *http.Request, m *rpcMsg)
	mu     sync.Mutex
	bad    []string // header/body mismatches seen
}

func startHTTPFake(t *testing.T, handle func(w http.ResponseWriter, req *http.Request, m *rpcMsg)) *httpFake {
	t.Helper()
	f := &httpFake{t: t, handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *httpFake) url() string { return f.srv.URL + "/mcp" }

func (f *httpFake) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var m rpcMsg
	if req.Method != http.MethodPost || req.URL.Path != "/mcp" || json.Unmarshal(body, &m) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	// The mirrored headers must match the body (HDR-01..04).
	var bad []string
	if req.Header.Get("MCP-Protocol-Version") != "2026-07-28" {
		bad = append(bad, "MCP-Protocol-Version")
	}
	if req.Header.Get("Mcp-Method") != m.Method {
		bad = append(bad, "Mcp-Method")
	}
	switch m.Method {
	case "tools/call":
		if req.Header.Get("Mcp-Name") != m.Params.Name {
			bad = append(bad, "Mcp-Name")
		}
	default:
		if req.Header.Get("Mcp-Name") != "" {
			bad = append(bad, "Mcp-Name on "+m.Method)
		}
	}
	if !strings.Contains(req.Header.Get("Accept"), "text/event-stream") || !strings.Contains(req.Header.Get("Accept"), "application/json") {
		bad = append(bad, "Accept")
	}
	if e := checkMeta(&m); e != "" {
		bad = append(bad, e)
	}
	if len(bad) > 0 {
		f.mu.Lock()
		f.bad = append(f.bad, bad...)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(errorJSON(m.ID, -32020))
		return
	}
	f.handle(w, req, &m)
}

func (f *httpFake) mismatches() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bad...)
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// sseEvent writes one SSE event and flushes it.
func sseEvent(w http.ResponseWriter, data []byte) {
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// runLoad runs cfg with test defaults and fails the test on error.
func runLoad(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, _ := runLoadLog(t, cfg)
	return res
}

// runLoadLog is runLoad that also returns what the run logged (warnings,
// the stderr of stdio servers).
func runLoadLog(t *testing.T, cfg Config) (*Result, string) {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	var logBuf syncBuffer
	cfg.Log = &logBuf
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if s := logBuf.String(); s != "" {
		t.Logf("log: %s", s)
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var js bytes.Buffer
	res.WriteJSON(&js)
	t.Logf("%s", js.Bytes())
	return res, logBuf.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
