package streamhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// dtConn is a net.Conn that reads a scripted byte stream and discards
// what is written.
type dtConn struct {
	r      io.Reader
	closed atomic.Bool
}

func (c *dtConn) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.r.Read(p)
}
func (c *dtConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *dtConn) Close() error                     { c.closed.Store(true); return nil }
func (c *dtConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *dtConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *dtConn) SetDeadline(time.Time) error      { return nil }
func (c *dtConn) SetReadDeadline(time.Time) error  { return nil }
func (c *dtConn) SetWriteDeadline(time.Time) error { return nil }

// dtSplit returns its parts one Read at a time (a Read never spans two).
type dtSplit struct{ parts [][]byte }

func (s *dtSplit) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

func dtSplitAt(in string, k int) io.Reader {
	return &dtSplit{parts: [][]byte{[]byte(in[:k]), []byte(in[k:])}}
}

// dtChunked encodes body in chunks of n bytes.
func dtChunked(body string, n int) string {
	var b strings.Builder
	for len(body) > 0 {
		k := min(n, len(body))
		fmt.Fprintf(&b, "%x\r\n%s\r\n", k, body[:k])
		body = body[k:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

const (
	dtProg   = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	dtPing   = `{"jsonrpc":"2.0","id":"s1","method":"ping"}`
	dtNoID   = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`
	dt32022  = `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`
	dtSSEHdr = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
)

// dtReplyCases: replies to a request with id 1, as the exchange reads
// them: the messages, then how it ends ("" the response; "bad":
// ErrBadReply; "dropped": client.ErrDropped; "status N": a StatusError).
var dtReplyCases = []struct {
	name   string
	in     string
	msgs   []string
	end    string
	status int
}{
	{name: "json", in: dtJSON(200, dtOK1), msgs: []string{dtOK1}, status: 200},
	{name: "json chunked", in: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + dtChunked(dtOK1, 7), msgs: []string{dtOK1}, status: 200},
	{
		name: "sse: comments, priming event, server request, CRLF, CR, multi-line data",
		in: dtSSEHdr + "Transfer-Encoding: chunked\r\n\r\n" + dtChunked(": keep-alive\r\n\r\nid: 0\r\ndata:\r\n\r\nevent: message\r\ndata: "+dtProg+
			"\r\n\r\ndata: "+dtPing+"\n\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\r\r: after\n\n", 11),
		msgs: []string{dtProg, "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}"}, status: 200,
	},
	{name: "sse close-delimited", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: " + dtOK1 + "\n\n", msgs: []string{dtProg, dtOK1}, status: 200},
	{name: "sse: response with another id, then the request's (D5)", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\ndata: " + dtOK1 + "\n\n", msgs: []string{dtProg, dtOK1}, status: 200},
	{name: "sse: response with another id, then the end (D5)", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", msgs: []string{dtProg}, end: "dropped", status: 200},
	{name: "sse: result without id", in: dtSSEHdr + "\r\ndata: {\"jsonrpc\":\"2.0\",\"result\":{}}\n\n", end: "bad", status: 200},
	{name: "sse: event not JSON-RPC", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: hello\n\n", msgs: []string{dtProg}, end: "bad", status: 200},
	{name: "sse cut mid-event", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res", msgs: []string{dtProg}, end: "dropped", status: 200},
	{name: "sse ends without the response", in: dtSSEHdr + "Transfer-Encoding: chunked\r\n\r\n" + dtChunked("data: "+dtProg+"\n\n", 64), msgs: []string{dtProg}, end: "dropped", status: 200},
	{name: "sse cut inside a UTF-8 character (D4)", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"caf\xc3", msgs: []string{dtProg}, end: "dropped", status: 200},
	{name: "sse cut inside the data: prefix (D4)", in: dtSSEHdr + "\r\ndata: " + dtProg + "\n\nda", msgs: []string{dtProg}, end: "dropped", status: 200},
	{name: "sse cut inside a chunk", in: dtSSEHdr + "Transfer-Encoding: chunked\r\n\r\n40\r\ndata: " + dtProg[:10], end: "dropped", status: 200},
	{name: "400 with a JSON-RPC error", in: dtJSON(400, dt32022), msgs: []string{dt32022}, status: 400},
	{name: "400 parse error without id", in: dtJSON(400, dtNoID), msgs: []string{dtNoID}, status: 400},
	{name: "json response with another id", in: dtJSON(200, `{"jsonrpc":"2.0","id":2,"result":{}}`), end: "bad", status: 200},
	{name: "html 404", in: "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 22\r\n\r\n<html>not found</html>", end: "status 404", status: 404},
	{name: "empty 405", in: "HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n", end: "status 405", status: 405},
	{name: "401 close-delimited text", in: "HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\nno token", end: "status 401", status: 401},
	{name: "200 json that is a notification", in: dtJSON(200, dtProg), end: "status 200", status: 200},
	{name: "202 to a request", in: "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", end: "status 202", status: 202},
	{name: "truncated json body", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", end: "dropped", status: 200},
	{name: "bad chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", end: "bad", status: 200},
	{name: "not HTTP/1.x", in: "HTTP/2 200 OK\r\n\r\n", end: "bad"},
	{name: "nothing", in: "", end: "dropped"},
}

// dtRunReply reads one reply from rd through an exchange, with a read
// buffer of bufSize bytes. tr's pool must be closed (see dtNoPool).
func dtRunReply(tr *transport, rd io.Reader, bufSize int) ([]string, int, error) {
	c := newWconn(nil, &dtConn{r: rd}, false)
	if bufSize != dialReadBuf {
		c.br.Reset(c.nc, make([]byte, bufSize))
	}
	x := &dialExchange{t: tr, c: c, id: []byte("1")}
	c.begin()
	if err := c.br.ReadHead(&c.h); err != nil {
		return nil, 0, x.failOpen(err, false)
	}
	if err := x.start(nil); err != nil {
		return nil, x.status, err
	}
	msgs, err := dtDrain(context.Background(), x)
	_ = x.Close()
	return msgs, x.status, err
}

// dtNoPool closes tr's pool: connections given back are closed, not kept.
func dtNoPool(tr *transport) *transport {
	tr.pool.mu.Lock()
	tr.pool.closed = true
	tr.pool.mu.Unlock()
	return tr
}

func dtEnd(err error) string {
	var se *mcpclient.StatusError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBadReply):
		return "bad"
	case errors.Is(err, mcpclient.ErrDropped):
		return "dropped"
	case errors.As(err, &se):
		return fmt.Sprintf("status %d", se.Status)
	}
	return err.Error()
}

// TestDialReplyEverySplit reads each reply with the byte stream split at
// every position, one byte at a time, and with a 64-byte read buffer.
func TestDialReplyEverySplit(t *testing.T) {
	tr := dtNoPool(dtDial(t, "http://127.0.0.1:1/mcp", Config{}))
	for i, tc := range dtReplyCases {
		t.Run(fmt.Sprintf("%d/%s", i, tc.name), func(t *testing.T) {
			check := func(msgs []string, err error, status int, label string) {
				t.Helper()
				if strings.Join(msgs, "\x00") != strings.Join(tc.msgs, "\x00") || dtEnd(err) != tc.end || status != tc.status {
					t.Fatalf("%s:\n got %q, end %q (%v), status %d\nwant %q, end %q, status %d",
						label, msgs, dtEnd(err), err, status, tc.msgs, tc.end, tc.status)
				}
			}
			for k := 0; k <= len(tc.in); k++ {
				m, st, err := dtRunReply(tr, dtSplitAt(tc.in, k), dialReadBuf)
				check(m, err, st, fmt.Sprintf("split at %d", k))
				m, st, err = dtRunReply(tr, dtSplitAt(tc.in, k), 64)
				check(m, err, st, fmt.Sprintf("split at %d, 64-byte buffer", k))
			}
			m, st, err := dtRunReply(tr, iotest.OneByteReader(strings.NewReader(tc.in)), dialReadBuf)
			check(m, err, st, "one byte at a time")
		})
	}
}

// TestDialStatusErrorBody: a StatusError keeps at most 512 bytes of the
// body.
func TestDialStatusErrorBody(t *testing.T) {
	tr := dtNoPool(dtDial(t, "http://127.0.0.1:1/mcp", Config{}))
	body := strings.Repeat("<p>", 1000)
	_, _, err := dtRunReply(tr, strings.NewReader(fmt.Sprintf("HTTP/1.1 503 Busy\r\nContent-Length: %d\r\n\r\n%s", len(body), body)), dialReadBuf)
	var se *mcpclient.StatusError
	if !errors.As(err, &se) || se.Status != 503 || string(se.Body) != body[:512] {
		t.Fatalf("%v", err)
	}
}

// TestDialStaleKeepAlive: a kept-alive connection the server closed while
// it was idle fails before a byte of the reply: ErrNotDelivered (the
// request can be sent again); the next request opens a new connection. A
// connection idle for longer than dialProbeIdle is checked first and not
// used at all.
func TestDialStaleKeepAlive(t *testing.T) {
	leakCheck(t)
	closed := make(chan int, 8)
	srv := newDTServer(t, func(n int, c net.Conn, br *bufio.Reader) {
		if _, err := dtRead(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, dtJSON(200, dtOK1)) // keep-alive, then closed: an idle timeout
		_ = c.Close()
		closed <- n
	})
	tr := dtDial(t, srv.url, Config{})
	ctx := dtCtx(t)
	call := func() error {
		x, err := tr.Open(ctx, dtCall(1, "echo", `{}`, ""))
		if err != nil {
			return err
		}
		_, err = dtDrain(ctx, x)
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	<-closed
	time.Sleep(20 * time.Millisecond) // the FIN arrives
	if err := call(); !errors.Is(err, mcpclient.ErrNotDelivered) {
		t.Fatalf("on the stale connection: %v, want ErrNotDelivered", err)
	}
	if err := call(); err != nil {
		t.Fatalf("on a new connection: %v", err)
	}
	<-closed
	time.Sleep(20 * time.Millisecond)
	old := dialProbeIdle
	dialProbeIdle = 0
	defer func() { dialProbeIdle = old }()
	if err := call(); err != nil {
		t.Fatalf("after the idle probe: %v", err)
	}
	if n := srv.n.Load(); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
}

// TestDialFreshConnDrop: a new connection that took the request and
// closed without a byte may have run it: ErrDropped. A failed connect is
// ErrNotDelivered.
func TestDialFreshConnDrop(t *testing.T) {
	leakCheck(t)
	srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) { _, _ = dtRead(br) })
	tr := dtDial(t, srv.url, Config{})
	_, err := tr.Open(dtCtx(t), dtCall(1, "echo", `{}`, ""))
	if !errors.Is(err, mcpclient.ErrDropped) || errors.Is(err, mcpclient.ErrNotDelivered) {
		t.Fatalf("Open = %v, want ErrDropped", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	tr2 := dtDial(t, "http://"+addr+"/mcp", Config{})
	if _, err := tr2.Open(dtCtx(t), dtCall(1, "echo", `{}`, "")); !errors.Is(err, mcpclient.ErrNotDelivered) {
		t.Fatalf("Open on a closed port = %v, want ErrNotDelivered", err)
	}
	if err := tr2.Notify(dtCtx(t), &mcpclient.Outgoing{Method: "notifications/x", Body: []byte(`{}`)}); !errors.Is(err, mcpclient.ErrNotDelivered) {
		t.Fatalf("Notify on a closed port = %v, want ErrNotDelivered", err)
	}
}

// TestDialEndlessStreamClose: closing an exchange whose event stream
// never ends closes its connection; the server sees the disconnect.
func TestDialEndlessStreamClose(t *testing.T) {
	leakCheck(t)
	gone := make(chan struct{})
	srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if _, err := dtRead(br); err != nil {
			return
		}
		if _, err := io.WriteString(c, dtSSEHdr+"Transfer-Encoding: chunked\r\n\r\n"); err != nil {
			return
		}
		ev := "data: " + dtProg + "\n\n"
		chunk := fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev)
		for {
			if _, err := io.WriteString(c, chunk); err != nil {
				close(gone)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	tr := dtDial(t, srv.url, Config{})
	ctx := dtCtx(t)
	x, err := tr.Open(ctx, dtCall(1, "echo", `{}`, "1"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if m, err := x.Next(ctx); err != nil || string(m) != dtProg {
			t.Fatalf("%s, %v", m, err)
		}
	}
	_ = x.Close()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the disconnect")
	}
	tr.pool.mu.Lock()
	open := tr.pool.open
	tr.pool.mu.Unlock()
	if open != 0 {
		t.Fatalf("%d connections still open", open)
	}
}

// TestDialTooLarge: a message over MaxMessage fails with ErrTooLarge and
// its connection is closed, with memory bounded by a few MaxMessage
// whatever the server sends (announced 2 GiB, endless chunked JSON, one
// endless event line, endless data lines); an error status says what it
// can in a StatusError instead.
func TestDialTooLarge(t *testing.T) {
	leakCheck(t)
	const limit = 1 << 20
	const offer = 64 << 20 // what the server sends at most
	fill := []byte(strings.Repeat("x", 32<<10))
	cases := []struct {
		name, head string
		chunked    bool
		prefix     string
		line       string // repeated instead of fill
		want       string
	}{
		{name: "content-length 2 GiB", head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n", want: "large"},
		{name: "endless chunked json", head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", chunked: true, want: "large"},
		{name: "endless event line", head: dtSSEHdr + "\r\n", prefix: "data: " + dtProg + "\n\ndata: ", want: "large"},
		{name: "endless data lines", head: dtSSEHdr + "Transfer-Encoding: chunked\r\n\r\n", chunked: true, line: "data: " + strings.Repeat("y", 1000) + "\n", want: "large"},
		{name: "404 of 2 GiB", head: "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 2147483648\r\n\r\n", want: "status 404"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
				if _, err := dtRead(br); err != nil {
					return
				}
				w := bufio.NewWriterSize(c, 64<<10)
				_, _ = w.WriteString(tc.head)
				_, _ = w.WriteString(tc.prefix)
				part := fill
				if tc.line != "" {
					part = []byte(strings.Repeat(tc.line, 32))
				}
				for sent := 0; sent < offer; sent += len(part) {
					if tc.chunked {
						fmt.Fprintf(w, "%x\r\n", len(part))
					}
					if _, err := w.Write(part); err != nil {
						return
					}
					if tc.chunked {
						_, _ = w.WriteString("\r\n")
					}
				}
				_ = w.Flush()
			})
			tr := dtDial(t, srv.url, Config{MaxMessage: limit})
			ctx := dtCtx(t)
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			x, err := tr.Open(ctx, dtCall(1, "echo", `{}`, ""))
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := dtDrain(ctx, x)
			runtime.ReadMemStats(&ms)
			used := ms.TotalAlloc - before
			got := dtEnd(err)
			if errors.Is(err, mcpclient.ErrTooLarge) {
				got = "large"
			}
			if got != tc.want {
				t.Fatalf("end %v (messages %d)", err, len(msgs))
			}
			if used > 6*limit {
				t.Fatalf("%d bytes allocated, limit %d", used, limit)
			}
			tr.pool.mu.Lock()
			open := tr.pool.open
			tr.pool.mu.Unlock()
			if open != 0 {
				t.Fatalf("%d connections open after ErrTooLarge", open)
			}
		})
	}
}

// FuzzDialReply: whatever the server answers, the exchange neither panics
// nor hangs, and where the reply is split never changes what it reads.
// (Kept here rather than in fuzz_test.go, beside the cases it starts from.)
func FuzzDialReply(f *testing.F) {
	for _, tc := range dtReplyCases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/2))
	}
	tr := dtNoPool(dtDial(f, "http://127.0.0.1:1/mcp", Config{}))
	f.Fuzz(func(t *testing.T, in []byte, k uint16) {
		s := string(in)
		split := int(k) % (len(s) + 1)
		m1, st1, err1 := dtRunReply(tr, dtSplitAt(s, split), dialReadBuf)
		m2, st2, err2 := dtRunReply(tr, iotest.OneByteReader(strings.NewReader(s)), dialReadBuf)
		if strings.Join(m1, "\x00") != strings.Join(m2, "\x00") || st1 != st2 || dtEnd(err1) != dtEnd(err2) {
			t.Fatalf("split at %d: %q %d %v\none byte at a time: %q %d %v", split, m1, st1, err1, m2, st2, err2)
		}
	})
}
