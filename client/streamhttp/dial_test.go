package streamhttp

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/engine"
)

// dtDial dials url and closes the transport at cleanup (before the leak
// check, which must be registered first).
func dtDial(t testing.TB, url string, opts Config) *transport {
	t.Helper()
	tr, err := Dial(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr.(*transport)
}

// dtCall builds a tools/call request; with a token it asks for progress.
func dtCall(id int, tool, args, token string) *mcpclient.Outgoing {
	ids := strconv.Itoa(id)
	body := fixture.ToolsCall(ids, tool, args)
	if token != "" {
		body = fixture.ToolsCallProgress(ids, tool, args, token)
	}
	o := &mcpclient.Outgoing{ID: []byte(ids), Method: "tools/call", Name: tool, HasName: true,
		Version: "2026-07-28", Body: []byte(body)}
	if token != "" {
		o.Token = []byte(token)
	}
	return o
}

// dtDrain reads an exchange to its end: the messages, and the error that
// ended it (nil for io.EOF after the response).
func dtDrain(ctx context.Context, x mcpclient.Exchange) ([]string, error) {
	var msgs []string
	for {
		m, err := x.Next(ctx)
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, string(m))
	}
}

func dtCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dtStatus(x mcpclient.Exchange) int {
	if s, ok := x.(interface{ Status() int }); ok {
		return s.Status()
	}
	return -1
}

// TestDialJSONReply: a tools/call answered with one JSON body, twice on
// the same keep-alive connection, against both front ends.
func TestDialJSONReply(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startServer(t, fe)
		tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
		ctx := dtCtx(t)
		for i := 1; i <= 3; i++ {
			x, err := tr.Open(ctx, dtCall(i, "echo", `{"text":"hi"}`, ""))
			if err != nil {
				t.Fatal(err)
			}
			if st := dtStatus(x); st != 200 {
				t.Fatalf("status %d", st)
			}
			msgs, err := dtDrain(ctx, x)
			if err != nil || len(msgs) != 1 {
				t.Fatalf("messages %q, err %v", msgs, err)
			}
			m := fixture.DecodeMsg(t, []byte(msgs[0]))
			if string(m.ID) != strconv.Itoa(i) || fixture.ToolText(t, m) != "hi" {
				t.Fatalf("reply %s", msgs[0])
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
		}
		tr.pool.mu.Lock()
		open, idle := tr.pool.open, len(tr.pool.idle)
		tr.pool.mu.Unlock()
		if open != 1 || idle != 1 {
			t.Fatalf("pool: %d open, %d idle; want one kept-alive connection", open, idle)
		}
	})
}

// TestDialSSEProgress: EXAMPLES §3: two progress notifications, then the
// result, on an event stream.
func TestDialSSEProgress(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	ctx := dtCtx(t)
	out := dtCall(3, "execute_sql", `{"region":"us-west1","query":"SELECT * FROM big"}`, `"tok-3"`)
	out.Headers = []mcpclient.Header{{Name: "Mcp-Param-Region", Value: "us-west1"}} // PARAM-05
	x, err := tr.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	msgs, err := dtDrain(ctx, x)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("messages %q, err %v", msgs, err)
	}
	for i, want := range []string{"0.25", "0.75"} {
		m := fixture.DecodeMsg(t, []byte(msgs[i]))
		if m.Method != "notifications/progress" || !strings.Contains(string(m.Params), `"progress":`+want) {
			t.Fatalf("message %d: %s", i, msgs[i])
		}
	}
	if m := fixture.DecodeMsg(t, []byte(msgs[2])); string(m.ID) != "3" || fixture.ToolText(t, m) != "1000 rows" {
		t.Fatalf("result %s", msgs[2])
	}
	if _, err := x.Next(ctx); err != io.EOF {
		t.Fatalf("after the response: %v, want io.EOF", err)
	}
}

// TestDialRPCErrorStatus: a JSON-RPC error with an HTTP error status is
// the exchange's message; Status reports the status (400 + -32022 for an
// unsupported version, 404 + -32601 for an unknown method).
func TestDialRPCErrorStatus(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	ctx := dtCtx(t)
	for _, tc := range []struct {
		out    *mcpclient.Outgoing
		status int
		code   int
	}{
		{&mcpclient.Outgoing{ID: []byte("7"), Method: "tools/list", Version: "2099-01-01", Body: []byte(fixture.Ex5bBody)}, 400, -32022},
		{&mcpclient.Outgoing{ID: []byte("9"), Method: "ping", Version: "2026-07-28", Body: []byte(fixture.Ex7Ping)}, 404, -32601},
	} {
		x, err := tr.Open(ctx, tc.out)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := dtDrain(ctx, x)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("%s: messages %q, err %v", tc.out.Method, msgs, err)
		}
		m := fixture.DecodeMsg(t, []byte(msgs[0]))
		if dtStatus(x) != tc.status || m.Error == nil || m.Error.Code != tc.code {
			t.Fatalf("%s: status %d, reply %s", tc.out.Method, dtStatus(x), msgs[0])
		}
	}
}

// TestDialNotify: a notification is accepted with 202 (HTTP-06).
func TestDialNotify(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	out := &mcpclient.Outgoing{Method: "notifications/cancelled", Version: "2026-07-28", Body: []byte(fixture.Ex4Body)}
	if err := tr.Notify(dtCtx(t), out); err != nil {
		t.Fatal(err)
	}
}

// TestDialCancelClosesStream: closing an exchange before its response
// closes the connection, which cancels the request on the server
// (HCAN-01); the same when its context ends (TMO-01).
func TestDialCancelClosesStream(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	ctx := dtCtx(t)
	x, err := tr.Open(ctx, dtCall(1, "block", `{}`, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := x.Next(ctx); err != nil || !strings.Contains(string(msgs), "notifications/progress") {
		t.Fatalf("first message %s, %v", msgs, err)
	}
	waitFor(t, h.fx.Started, "block", 5*time.Second)
	_ = x.Close()
	if !waitFor(t, h.fx.Cancelled, "block", 5*time.Second) {
		t.Fatal("the handler was not cancelled")
	}
	if _, err := x.Next(ctx); !errors.Is(err, mcpclient.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	x, err = tr.Open(cctx, dtCall(2, "block", `{}`, ""))
	if err == nil {
		_, err = x.Next(cctx)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out call: %v", err)
	}
	if !waitFor(t, h.fx.Cancelled, "block", 5*time.Second) {
		t.Fatal("the timed-out call was not cancelled")
	}
}

// TestDialListen: a subscriptions/listen stream delivers its
// acknowledgement and notifications with no deadline, and ends with the
// server's result at shutdown (SUB-10).
func TestDialListen(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	ctx := dtCtx(t)
	out := &mcpclient.Outgoing{ID: []byte(`"listen-1"`), Method: "subscriptions/listen", Version: "2026-07-28", Listen: true, Body: []byte(fixture.Ex8Body)}
	x, err := tr.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	next := func(want string) {
		t.Helper()
		m, err := x.Next(ctx)
		if err != nil || !fixture.JsonEqual(m, []byte(want)) {
			t.Fatalf("got %s, %v\nwant %s", m, err, want)
		}
	}
	next(fixture.Ex8Ack)
	if err := h.eng.AddTool(engine.Tool{Name: "late_tool", Handler: func(c *engine.Call) error { c.Text("x"); return nil }}); err != nil {
		t.Fatal(err)
	}
	next(fixture.Ex8List)
	go func() { _ = h.shutdown(5 * time.Second) }()
	next(fixture.Ex8Done)
	if _, err := x.Next(ctx); err != io.EOF {
		t.Fatalf("after the result: %v", err)
	}
}

// TestDialConcurrent: many goroutines share the transport (MaxConns 4);
// Close then ends the exchanges still open with ErrClosed.
func TestDialConcurrent(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{MaxConns: 4})
	ctx := dtCtx(t)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := g*1000 + i + 1
				token := ""
				if i%3 == 0 {
					token = strconv.Itoa(id)
				}
				x, err := tr.Open(ctx, dtCall(id, "quick", `{"steps":2}`, token))
				if err != nil {
					t.Error(err)
					failed.Add(1)
					return
				}
				msgs, err := dtDrain(ctx, x)
				_ = x.Close()
				if err != nil || len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1], `"id":`+strconv.Itoa(id)+`,`) {
					t.Errorf("call %d: %q, %v", id, msgs, err)
					failed.Add(1)
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return
	}
	tr.pool.mu.Lock()
	open := tr.pool.open
	tr.pool.mu.Unlock()
	if open > 4 {
		t.Fatalf("%d connections open, MaxConns 4", open)
	}

	// Exchanges open when the transport closes end with ErrClosed.
	var xs []mcpclient.Exchange
	for i := range 3 {
		x, err := tr.Open(ctx, dtCall(100+i, "block", `{}`, "1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Next(ctx); err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	errs := make(chan error, len(xs))
	for _, x := range xs[:2] {
		go func() {
			_, err := x.Next(ctx)
			errs <- err
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	_ = tr.Close() // idempotent
	for range 2 {
		if err := <-errs; !errors.Is(err, mcpclient.ErrClosed) {
			t.Fatalf("blocked Next after Close: %v", err)
		}
	}
	if _, err := xs[2].Next(ctx); !errors.Is(err, mcpclient.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	if _, err := tr.Open(ctx, dtCall(200, "echo", `{}`, "")); !errors.Is(err, mcpclient.ErrClosed) {
		t.Fatalf("Open after Close: %v", err)
	}
}

// dtServer is a hand-written HTTP/1.1 server: handle runs for each
// connection; connections and handlers end at cleanup.
type dtServer struct {
	ln    net.Listener
	url   string
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	n     atomic.Int64 // connections accepted
}

func newDTServer(t *testing.T, handle func(n int, c net.Conn, br *bufio.Reader)) *dtServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dtServer{ln: ln, url: "http://" + ln.Addr().String() + "/mcp"}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(s.n.Add(1))
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(n, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// dtRequest is one request as the server read it.
type dtRequest struct {
	line  string
	lines []string // header lines, verbatim
	hdr   textproto.MIMEHeader
	body  string
}

// dtRead reads one request (Content-Length bodies only).
func dtRead(br *bufio.Reader) (*dtRequest, error) {
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	r := &dtRequest{line: line, hdr: textproto.MIMEHeader{}}
	for {
		l, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		if l == "" {
			break
		}
		r.lines = append(r.lines, l)
		k, v, _ := strings.Cut(l, ":")
		r.hdr.Add(k, strings.TrimSpace(v))
	}
	if cl := r.hdr.Get("Content-Length"); cl != "" {
		n, _ := strconv.Atoi(cl)
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		r.body = string(b)
	}
	return r, nil
}

func dtJSON(status int, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}

const dtOK1 = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`

// TestDialHeaders: the exact request head: HTTP-03, HDR-01, HDR-03, the
// Base64 sentinel Mcp-Name of a non-ASCII tool name (B64-02), the
// Mcp-Param-* headers as given, the extra headers, Host and
// Content-Length; and the request body byte for byte.
func TestDialHeaders(t *testing.T) {
	leakCheck(t)
	got := make(chan *dtRequest, 1)
	srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		for {
			r, err := dtRead(br)
			if err != nil {
				return
			}
			got <- r
			_, _ = io.WriteString(c, dtJSON(200, dtOK1))
		}
	})
	tr := dtDial(t, srv.url+"?tenant=a", Config{Header: http.Header{"Authorization": {"Bearer t0k"}, "X-Trace": {"a", "b"}}})
	out := &mcpclient.Outgoing{ID: []byte("1"), Method: "tools/call", Name: "zürich_sql", HasName: true, Version: "2026-07-28",
		Headers: []mcpclient.Header{{Name: "Mcp-Param-Region", Value: "=?base64?WsO8cmljaA==?="}, {Name: "Mcp-Param-Priority", Value: "42"}},
		Body:    []byte(fixture.ToolsCall("1", "zürich_sql", `{"region":"Zürich","priority":42}`))}
	x, err := tr.Open(dtCtx(t), out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dtDrain(dtCtx(t), x); err != nil {
		t.Fatal(err)
	}
	r := <-got
	host := strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://")
	want := []string{
		"Host: " + host,
		"Content-Type: application/json",
		"Accept: application/json, text/event-stream",
		"MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: tools/call",
		"Mcp-Name: =?base64?" + base64.StdEncoding.EncodeToString([]byte("zürich_sql")) + "?=",
		"Mcp-Param-Region: =?base64?WsO8cmljaA==?=",
		"Mcp-Param-Priority: 42",
		"Authorization: Bearer t0k",
		"X-Trace: a",
		"X-Trace: b",
		"Content-Length: " + strconv.Itoa(len(out.Body)),
	}
	if r.line != "POST /mcp?tenant=a HTTP/1.1" {
		t.Errorf("request line %q", r.line)
	}
	if strings.Join(r.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("headers:\n%s\nwant:\n%s", strings.Join(r.lines, "\n"), strings.Join(want, "\n"))
	}
	if r.body != string(out.Body) {
		t.Errorf("body %q", r.body)
	}

	// A plain-safe name goes as it is; a method without Mcp-Name has none.
	for _, tc := range []struct {
		out  *mcpclient.Outgoing
		name string
	}{
		{dtCall(2, "execute_sql", `{}`, ""), "execute_sql"},
		{&mcpclient.Outgoing{ID: []byte("3"), Method: "tools/list", Version: "2026-07-28", Body: []byte(`{}`)}, ""},
	} {
		x, err := tr.Open(dtCtx(t), tc.out)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = dtDrain(dtCtx(t), x) // the canned reply's id is 1: a protocol error here
		r := <-got
		if n := r.hdr.Get("Mcp-Name"); n != tc.name || (tc.name == "") != (len(r.hdr.Values("Mcp-Name")) == 0) {
			t.Errorf("%s: Mcp-Name %q, want %q", tc.out.Method, n, tc.name)
		}
	}
}

// TestDialOptionsChecked: Dial refuses bad URLs and headers it writes
// itself; Open refuses values that would break the request head.
func TestDialOptionsChecked(t *testing.T) {
	for i, tc := range []struct {
		url     string
		hdr     http.Header
		wantErr string
	}{
		{"ftp://x/mcp", nil, "scheme"},
		{"http:///mcp", nil, "no host"},
		{"http://u:p@h/mcp", nil, "credentials"},
		{"http://h/mcp", http.Header{"Mcp-Session-Id": {"x"}}, "written by the transport"},
		{"http://h/mcp", http.Header{"mcp-param-region": {"x"}}, "written by the transport"},
		{"http://h/mcp", http.Header{"Bad Name": {"x"}}, "bad header name"},
		{"http://h/mcp", http.Header{"X-A": {"a\r\nX-B: b"}}, "bad value"},
	} {
		_, err := Dial(tc.url, Config{Header: tc.hdr})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%d: %v, want %q", i, err, tc.wantErr)
		}
	}
	tr := dtDial(t, "http://127.0.0.1:1/mcp", Config{})
	bad := []*mcpclient.Outgoing{
		{ID: []byte("1"), Method: "tools/list\r\nX: y", Body: []byte(`{}`)},
		{ID: []byte("1"), Method: "tools/list", Version: "2026\n", Body: []byte(`{}`)},
		{ID: []byte("1"), Method: "tools/list", Headers: []mcpclient.Header{{Name: "Mcp-Param-A", Value: "x\ny"}}, Body: []byte(`{}`)},
		{Method: "tools/list", Body: []byte(`{}`)},
	}
	for i, out := range bad {
		if _, err := tr.Open(context.Background(), out); err == nil || errors.Is(err, mcpclient.ErrNotDelivered) {
			t.Errorf("%d: Open = %v, want a refusal", i, err)
		}
	}
}
