package streamhttp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// wrkLike is the wrk request with another tool name (in the body and in
// Mcp-Name, or only in the header when hdrName is set), more header lines
// and its Content-Length to match.
func wrkLike(name, hdrName, more string) []byte {
	if hdrName == "" {
		hdrName = name
	}
	body := strings.Replace(wrkFixtureBody, `"name":"echo"`, `"name":"`+name+`"`, 1)
	return []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" + more +
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: " + hdrName + "\r\n\r\n" + body)
}

// serveConn serves eng with cfg on a loopback listener (fasthttp) and
// returns one client connection to it; all of it ends with the test.
func serveConn(t *testing.T, eng *engine.Server, cfg Config) (net.Conn, *bufio.Reader) {
	t.Helper()
	return serveConnOf(t, New(eng, cfg))
}

// serveConnOf is serveConn for a Server the caller made.
func serveConnOf(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	ln, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = s.Shutdown(context.Background())
		<-done
	})
	return c, bufio.NewReader(c)
}

// connRoundTrip writes req on c and reads the response.
func connRoundTrip(t *testing.T, c net.Conn, br *bufio.Reader, req []byte) (*http.Response, []byte) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestReplyInPlace: a reply made where the request was read goes straight
// into fasthttp's response body (Reply, quiet) and is sent from there by
// sendReplyOf; every other reply still goes through x.reply. One
// keep-alive connection takes, in turn, replies of both kinds and the
// answers around them (HTTP-06's empty 202, HTTP-07's JSON body, HVAL-01's
// 400 -32020 made by Fail where the request was read, HVAL-03's id), each
// checked byte for byte; a second server compresses the in-place reply
// (Config.Compression). It fails when sendReplyOf sends x.reply for a
// reply in place (empty bodies), when compression reads x.reply (an empty
// gzip stream) or leaves the uncompressed body in place, and when unref
// leaves inPlace set for the next exchange (TestReplyInPlaceReset holds
// that without the pool's luck).
func TestReplyInPlace(t *testing.T) {
	eng := typedEchoEngine(t)
	// A tool that is not Inline: with the fixture's progressToken it runs
	// on a worker (handOff), and its reply goes through x.reply.
	if err := engine.AddTool(eng, engine.Tool{Name: "echo2"},
		func(_ *engine.Call, in benchEchoArgs) (benchEchoResult, error) { return benchEchoResult(in), nil }); err != nil {
		t.Fatal(err)
	}
	c, br := serveConn(t, eng, Config{})
	mismatch := `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value 'ecko' does not match body value 'echo'"}}`
	note := []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 54\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\n\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, step := range []struct {
		req    []byte
		status int
		body   string
	}{
		{wrkRequest, 200, wrkEchoReply},               // in place
		{wrkLike("echo2", "", ""), 200, wrkEchoReply}, // on a worker: x.reply
		{wrkLike("echo", "ecko", ""), 400, mismatch},  // Fail where it was read: in place
		{note, 202, ""},
		{wrkLike("echo2", "", ""), 200, wrkEchoReply},
		{wrkRequest, 200, wrkEchoReply},
		{wrkLike("echo", "ecko", ""), 400, mismatch},
		{wrkLike("echo2", "", ""), 200, wrkEchoReply},
	} {
		resp, body := connRoundTrip(t, c, br, step.req)
		if resp.StatusCode != step.status || string(body) != step.body {
			t.Fatalf("step %d: %d %q, want %d %q", i, resp.StatusCode, body, step.status, step.body)
		}
		if ct := resp.Header.Get("Content-Type"); step.body != "" && ct != ctJSON {
			t.Fatalf("step %d: Content-Type %q", i, ct)
		}
	}

	// Compressed: the reply in place is what is compressed, and the
	// compressed bytes replace it.
	c, br = serveConn(t, eng, Config{Compression: true, CompressMinBytes: 1})
	for i, req := range [][]byte{wrkLike("echo", "", "Accept-Encoding: gzip\r\n"), wrkRequest, wrkLike("echo2", "", "Accept-Encoding: gzip\r\n")} {
		resp, body := connRoundTrip(t, c, br, req)
		if enc := resp.Header.Get("Content-Encoding"); enc == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("compressed %d: %v (%q)", i, err, body)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("compressed %d: %v", i, err)
			}
		} else if i != 1 {
			t.Fatalf("compressed %d: Content-Encoding %q", i, enc)
		}
		if resp.StatusCode != 200 || string(body) != wrkEchoReply {
			t.Fatalf("compressed %d: %d %q", i, resp.StatusCode, body)
		}
	}
}

// TestReplyInPlaceReset: an exchange replied in place goes back to the
// pool with inPlace cleared, so that the next request it serves, if its
// reply goes through x.reply (a worker's), is sent from there.
func TestReplyInPlaceReset(t *testing.T) {
	x, c, ctx := quietExchange(t) // c: a request for SwapReply to look at (the frame is not its own)
	if err := x.Reply(c, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), 200); err != nil {
		t.Fatal(err)
	}
	if !x.inPlace || len(x.reply) != 0 || string(ctx.Response.Body()) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("quiet reply: inPlace %v, x.reply %q, response body %q", x.inPlace, x.reply, ctx.Response.Body())
	}
	s := x.s
	x.unref()
	if x.inPlace {
		t.Fatal("inPlace left set in a pooled exchange")
	}
	// A status of 0, which sendReplyOf answers 499 without a body: never
	// in place, so that the body is not sent with the 499.
	x = s.acquireExchange()
	x.fw = fastWriter{ctx: ctx}
	x.quiet = true
	ctx.Response.ResetBody()
	if err := x.Reply(nil, []byte(`{}`), 0); err != nil {
		t.Fatal(err)
	}
	if x.inPlace || len(ctx.Response.Body()) != 0 {
		t.Fatalf("status 0: inPlace %v, response body %q", x.inPlace, ctx.Response.Body())
	}
	x.unref()
	// Not quiet (a worker's reply): x.reply, under the lock.
	x = s.acquireExchange()
	x.fw = fastWriter{ctx: ctx}
	ctx.Response.ResetBody()
	if err := x.Reply(nil, []byte(`{}`), 200); err != nil {
		t.Fatal(err)
	}
	if x.inPlace || string(x.reply) != `{}` || len(ctx.Response.Body()) != 0 {
		t.Fatalf("worker's reply: inPlace %v, x.reply %q, response body %q", x.inPlace, x.reply, ctx.Response.Body())
	}
	x.unref()
}
