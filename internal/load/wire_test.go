package load

import (
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// memConn is a net.Conn that reads a canned byte stream and discards what
// is written.
type memConn struct{ r io.Reader }

func (c *memConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// splitReader returns its parts one Read at a time (a Read never spans two
// parts), so a test controls where the transport splits the stream.
type splitReader struct{ parts [][]byte }

func (s *splitReader) Read(p []byte) (int, error) {
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

func splitAt(in string, ks ...int) io.Reader {
	var parts [][]byte
	prev := 0
	for _, k := range ks {
		parts = append(parts, []byte(in[prev:k]))
		prev = k
	}
	parts = append(parts, []byte(in[prev:]))
	return &splitReader{parts: parts}
}

type collector struct{ msgs []string }

func (c *collector) message(msg []byte) { c.msgs = append(c.msgs, string(msg)) }

// resp builds a response with a Content-Length body.
func resp(status, headers, body string) string {
	return fmt.Sprintf("HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s", status, headers, len(body), body)
}

// chunked encodes body in chunks of the given sizes (the rest in one last
// chunk), with a chunk extension on the first and a trailer.
func chunked(body string, sizes ...int) string {
	var b strings.Builder
	first := true
	for _, n := range append(sizes, len(body)) {
		n = min(n, len(body))
		if n == 0 {
			continue
		}
		ext := ""
		if first {
			ext, first = ";name=value", false
		}
		fmt.Fprintf(&b, "%x%s\r\n%s\r\n", n, ext, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\nX-Trailer: t\r\n\r\n")
	return b.String()
}

const (
	jsonOK   = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`
	progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
)

type wireResp struct {
	status int
	msgs   []string
}

type wireCase struct {
	name     string
	in       string
	want     []wireResp
	reusable bool // the connection survives the last response
	wantErr  bool // the last round trip fails
}

var wireCases = []wireCase{
	{
		name: "content-length json",
		in:   resp("200 OK", "Content-Type: application/json\r\n", jsonOK),
		want: []wireResp{{200, []string{jsonOK}}}, reusable: true,
	},
	{
		name: "chunked json with extension and trailer",
		in:   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(jsonOK, 5, 1, 17),
		want: []wireResp{{200, []string{jsonOK}}}, reusable: true,
	},
	{
		name: "chunked sse as the engine writes it",
		in: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunked("data: "+progress+"\n\ndata: "+progress+"\n\ndata: "+jsonOK+"\n\n", 40, 70, 3),
		want: []wireResp{{200, []string{progress, progress, jsonOK}}}, reusable: true,
	},
	{
		name: "sse: event lines, comments, CRLF, multi-line data, other event types, BOM",
		in: resp("200 OK", "Content-Type: text/event-stream; charset=utf-8\r\n",
			"\xef\xbb\xbf: keep-alive\r\n\r\n"+
				"event: message\r\ndata: "+progress+"\r\n\r\n"+
				"event: endpoint\ndata: /messages?x=1\n\n"+
				"id: 7\nretry: 10\ndata:{\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n"+
				"data\n\n"+
				": trailing comment\n"),
		want: []wireResp{{200, []string{progress, "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}"}}}, reusable: true,
	},
	{
		name: "sse with CR line ends, then a keep-alive response",
		in: resp("200 OK", "Content-Type: text/event-stream\r\n", "data: "+progress+"\r\rdata: "+jsonOK+"\r\r") +
			resp("200 OK", "Content-Type: application/json\r\n", jsonOK),
		want:     []wireResp{{200, []string{progress, jsonOK}}, {200, []string{jsonOK}}},
		reusable: true,
	},
	{
		name:     "sse delimited by close",
		in:       "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: " + progress + "\n\ndata: " + jsonOK + "\n\n",
		want:     []wireResp{{200, []string{progress, jsonOK}}},
		reusable: false,
	},
	{
		name:     "interim 100 continue",
		in:       "HTTP/1.1 100 Continue\r\n\r\n" + resp("200 OK", "", jsonOK),
		want:     []wireResp{{200, []string{jsonOK}}},
		reusable: true,
	},
	{
		name: "two keep-alive responses, the second without reason phrase",
		in:   resp("200 OK", "", jsonOK) + resp("200", "", "{}"),
		want: []wireResp{{200, []string{jsonOK}}, {200, []string{"{}"}}}, reusable: true,
	},
	{
		name: "503 with a text body",
		in:   resp("503 Service Unavailable", "Content-Type: text/plain\r\n", "busy"),
		want: []wireResp{{503, []string{"busy"}}}, reusable: true,
	},
	{
		name: "204 has no body",
		in:   "HTTP/1.1 204 No Content\r\n\r\n" + resp("200 OK", "", "{}"),
		want: []wireResp{{204, nil}, {200, []string{"{}"}}}, reusable: true,
	},
	{
		name: "Connection: close",
		in:   resp("200 OK", "Connection: close\r\n", jsonOK),
		want: []wireResp{{200, []string{jsonOK}}}, reusable: false,
	},
	{
		name: "HTTP/1.0",
		in:   "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		want: []wireResp{{200, []string{"{}"}}}, reusable: false,
	},
	{
		name: "header names and values in other cases",
		in:   "HTTP/1.1 200 OK\r\ncontent-type: Text/Event-Stream\r\nTRANSFER-ENCODING: Chunked\r\n\r\n" + chunked("data: "+jsonOK+"\n\n", 9),
		want: []wireResp{{200, []string{jsonOK}}}, reusable: true,
	},
	{
		name: "body larger than the read buffer",
		in:   resp("200 OK", "", `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 300)+`"}}`),
		want: []wireResp{{200, []string{`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 300) + `"}}`}}}, reusable: true,
	},
	{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", wantErr: true},
	{name: "chunk without CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", wantErr: true},
	{name: "truncated content-length body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\":", wantErr: true},
	{name: "truncated chunked body", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"a\":", wantErr: true},
	{name: "truncated head", in: "HTTP/1.1 200 OK\r\nContent-Le", wantErr: true},
	{name: "not HTTP/1.x", in: "HTTP/2 200 OK\r\n\r\n", wantErr: true},
	{name: "conflicting content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", wantErr: true},
}

// runWire reads the case's responses from rd; small selects a 64-byte read
// buffer (every line and body straddles reads).
func runWire(t *testing.T, tc wireCase, rd io.Reader, small bool, label string) {
	t.Helper()
	var in, out atomic.Int64
	c := httpConn{bufSize: 4096, in: &in, out: &out}
	c.attach(&memConn{r: rd})
	if small {
		c.br.Buf = make([]byte, 64)
	}
	for i := 0; ; i++ {
		var col collector
		status, err := c.roundTrip([]byte("GET / HTTP/1.1\r\n\r\n"), &col)
		if tc.wantErr {
			if err == nil && i >= len(tc.want) {
				t.Fatalf("%s: no error", label)
			}
			if err != nil {
				return
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: response %d: %v", label, i, err)
		}
		if got := (wireResp{status, col.msgs}); !reflect.DeepEqual(got, tc.want[i]) {
			t.Fatalf("%s: response %d:\n got %d %q\nwant %d %q", label, i, got.status, got.msgs, tc.want[i].status, tc.want[i].msgs)
		}
		if i == len(tc.want)-1 {
			if reusable := c.nc != nil; reusable != tc.reusable {
				t.Fatalf("%s: reusable = %v, want %v", label, reusable, tc.reusable)
			}
			return
		}
		if c.nc == nil {
			t.Fatalf("%s: connection closed after response %d", label, i)
		}
	}
}

// TestHTTPWireEverySplit parses each response with the byte stream split
// at every position, byte by byte, and with a tiny read buffer.
func TestHTTPWireEverySplit(t *testing.T) {
	for _, tc := range wireCases {
		t.Run(tc.name, func(t *testing.T) {
			for k := 0; k <= len(tc.in); k++ {
				runWire(t, tc, splitAt(tc.in, k), false, fmt.Sprintf("split at %d", k))
				runWire(t, tc, splitAt(tc.in, k), true, fmt.Sprintf("split at %d, small buffer", k))
			}
			runWire(t, tc, iotest.OneByteReader(strings.NewReader(tc.in)), false, "one byte at a time")
		})
	}
}

type wireOutcome struct {
	status int
	msgs   []string
	err    bool
	open   bool
}

// readAllWire reads responses from rd until an error, a closed connection
// or 8 responses.
func readAllWire(rd io.Reader) []wireOutcome {
	var in, out atomic.Int64
	c := httpConn{bufSize: 4096, in: &in, out: &out}
	c.attach(&memConn{r: rd})
	var res []wireOutcome
	for range 8 {
		var col collector
		status, err := c.roundTrip([]byte("x"), &col)
		res = append(res, wireOutcome{status, col.msgs, err != nil, c.nc != nil})
		if err != nil || c.nc == nil {
			break
		}
	}
	c.close()
	return res
}

// FuzzHTTPResponse: whatever the server sends, the parser neither panics
// nor hangs, where the stream is split never changes what it reads, and
// the push mode of the HTTP relay reads what the blocking client reads.
func FuzzHTTPResponse(f *testing.F) {
	for _, tc := range wireCases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, k uint16) {
		split := int(k) % (len(in) + 1)
		a := readAllWire(splitAt(string(in), split))
		b := readAllWire(iotest.OneByteReader(strings.NewReader(string(in))))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("split at %d: %+v\none byte at a time: %+v", split, a, b)
		}
		// The relay's push-mode parser reads the same (below the buffer
		// size, where a line too long for the blocking client's buffer
		// cannot occur; the push buffer grows instead).
		if len(in) < 4096 {
			if p := pushAllWire(splitAt(string(in), split), 64); !reflect.DeepEqual(p, a) {
				t.Fatalf("push mode, split at %d: %+v\npull mode: %+v", split, p, a)
			}
		}
	})
}
