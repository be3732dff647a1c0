package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

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

func leakCheck(t *testing.T) { fixture.LeakCheck(t) }

// harness is one Server behind one front end, on a loopback listener.
type harness struct {
	t    *testing.T
	fe   frontEnd
	eng  *engine.Server
	srv  *Server
	fx   *fixture.Fixture
	addr string // host:port the clients dial
	port int
	hs   *http.Server
	done chan error // the serve goroutine's result
	stop sync.Once
}

func defaultOptions() engine.Config {
	return engine.Config{Name: "ExampleServer", Version: "1.0.0"}
}

// plainAdapter makes the net/http front end serve without NetListener and
// ConnContext (what the adapter guarantees on its own).
var plainAdapter bool

// startHarness starts a Server for cfg over a fresh engine (opt) behind fe.
// Shutdown runs at cleanup.
func startHarness(t *testing.T, fe frontEnd, cfg Config, opt engine.Config) *harness {
	t.Helper()
	eng := engine.New(opt)
	h := &harness{t: t, fe: fe, eng: eng, fx: fixture.Add(t, eng), done: make(chan error, 1)}
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
		h.fx.ReleaseAll()
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

// fixture.RpcMsg is one decoded JSON-RPC message.
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

func waitFor(t *testing.T, ch chan string, want string, d time.Duration) bool {
	t.Helper()
	return fixture.WaitFor(t, ch, want, d)
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
