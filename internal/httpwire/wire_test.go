package httpwire

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// splitReader returns its parts one Read at a time (a Read never spans two
// parts), so a test controls where the parser's input is split.
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

// outcome is what reading one response gave.
type outcome struct {
	status  int
	session string
	msgs    []string // the JSON body, or each event's data
	err     bool     // the response failed
	open    bool     // the connection can carry another request
}

type wireCase struct {
	name string
	in   string
	want []outcome
}

var wireCases = []wireCase{
	{
		name: "content-length json",
		in:   resp("200 OK", "Content-Type: application/json\r\n", jsonOK),
		want: []outcome{{status: 200, msgs: []string{jsonOK}, open: true}, {err: true}},
	},
	{
		name: "chunked json with extension and trailer",
		in:   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(jsonOK, 5, 1, 17),
		want: []outcome{{status: 200, msgs: []string{jsonOK}, open: true}, {err: true}},
	},
	{
		name: "chunked sse as the engine writes it",
		in: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunked("data: "+progress+"\n\ndata: "+progress+"\n\ndata: "+jsonOK+"\n\n", 40, 70, 3),
		want: []outcome{{status: 200, msgs: []string{progress, progress, jsonOK}, open: true}, {err: true}},
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
		want: []outcome{{status: 200, msgs: []string{progress, "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}", ""}, open: true}, {err: true}},
	},
	{
		name: "sse with CR line ends, then a keep-alive response",
		in: resp("200 OK", "Content-Type: text/event-stream\r\n", "data: "+progress+"\r\rdata: "+jsonOK+"\r\r") +
			resp("200 OK", "Content-Type: application/json\r\n", jsonOK),
		want: []outcome{{status: 200, msgs: []string{progress, jsonOK}, open: true}, {status: 200, msgs: []string{jsonOK}, open: true}, {err: true}},
	},
	{
		name: "sse delimited by close",
		in:   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: " + progress + "\n\ndata: " + jsonOK + "\n\n",
		want: []outcome{{status: 200, msgs: []string{progress, jsonOK}}},
	},
	{
		name: "interim 100 continue",
		in:   "HTTP/1.1 100 Continue\r\n\r\n" + resp("200 OK", "", jsonOK),
		want: []outcome{{status: 200, msgs: []string{jsonOK}, open: true}, {err: true}},
	},
	{
		name: "two keep-alive responses, the second without reason phrase",
		in:   resp("200 OK", "", jsonOK) + resp("200", "", "{}"),
		want: []outcome{{status: 200, msgs: []string{jsonOK}, open: true}, {status: 200, msgs: []string{"{}"}, open: true}, {err: true}},
	},
	{
		name: "503 with a text body",
		in:   resp("503 Service Unavailable", "Content-Type: text/plain\r\n", "busy"),
		want: []outcome{{status: 503, msgs: []string{"busy"}, open: true}, {err: true}},
	},
	{
		name: "204 has no body",
		in:   "HTTP/1.1 204 No Content\r\n\r\n" + resp("200 OK", "", "{}"),
		want: []outcome{{status: 204, open: true}, {status: 200, msgs: []string{"{}"}, open: true}, {err: true}},
	},
	{
		name: "Connection: close",
		in:   resp("200 OK", "Connection: close\r\n", jsonOK),
		want: []outcome{{status: 200, msgs: []string{jsonOK}}},
	},
	{
		name: "HTTP/1.0",
		in:   "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		want: []outcome{{status: 200, msgs: []string{"{}"}}},
	},
	{
		name: "HTTP/1.0 keep-alive",
		in:   "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n{}",
		want: []outcome{{status: 200, msgs: []string{"{}"}, open: true}, {err: true}},
	},
	{
		name: "header names and values in other cases",
		in:   "HTTP/1.1 200 OK\r\ncontent-type: Text/Event-Stream\r\nTRANSFER-ENCODING: Chunked\r\n\r\n" + chunked("data: "+jsonOK+"\n\n", 9),
		want: []outcome{{status: 200, msgs: []string{jsonOK}, open: true}, {err: true}},
	},
	{
		name: "Mcp-Session-Id of a 2025-era server",
		in:   resp("200 OK", "mcp-session-id:  abc-123 \r\n", jsonOK) + resp("202 Accepted", "", ""),
		want: []outcome{{status: 200, session: "abc-123", msgs: []string{jsonOK}, open: true}, {status: 202, open: true}, {err: true}},
	},
	{
		name: "body larger than the read buffer",
		in:   resp("200 OK", "", `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 300)+`"}}`),
		want: []outcome{{status: 200, msgs: []string{`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 300) + `"}}`}, open: true}, {err: true}},
	},
	{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", want: []outcome{{status: 200, err: true}}},
	{name: "chunk without CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", want: []outcome{{status: 200, err: true}}},
	{name: "truncated content-length body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\":", want: []outcome{{status: 200, err: true}}},
	{name: "truncated chunked body", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"a\":", want: []outcome{{status: 200, err: true}}},
	{name: "truncated head", in: "HTTP/1.1 200 OK\r\nContent-Le", want: []outcome{{err: true}}},
	{name: "not HTTP/1.x", in: "HTTP/2 200 OK\r\n\r\n", want: []outcome{{err: true}}},
	{name: "conflicting content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", want: []outcome{{err: true}}},
	{name: "negative content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n", want: []outcome{{err: true}}},
}

// readPull reads up to 8 responses from rd with a pull-mode Reader of
// bufSize bytes, the way a blocking client does.
func readPull(rd io.Reader, bufSize int) []outcome {
	var r Reader
	r.Reset(rd, make([]byte, bufSize))
	var h Head
	var body Body
	var sse SSEParser
	var scratch []byte
	var res []outcome
	for range 8 {
		if err := r.ReadHead(&h); err != nil {
			return append(res, outcome{err: true})
		}
		o := outcome{status: h.Status, session: h.Session}
		body.Reset(&r, &h)
		var err error
		if h.SSE {
			sse.Reset()
			for {
				seg, e := body.Next()
				if e != nil {
					if e != io.EOF {
						err = e
					}
					break
				}
				sse.Push(seg)
				for {
					d, ok := sse.Next()
					if !ok {
						break
					}
					o.msgs = append(o.msgs, string(d))
				}
			}
		} else {
			var b []byte
			b, err = body.ReadAll(&scratch)
			if err == nil && len(b) > 0 {
				o.msgs = append(o.msgs, string(b))
			}
		}
		o.err = err != nil
		o.open = err == nil && !h.Close && body.Reusable()
		res = append(res, o)
		if !o.open {
			return res
		}
	}
	return res
}

// readPush reads the same way from parts fed as a poller feeds a push-mode
// Reader: the parse stops at ErrNeedMore and resumes when more arrived
// (the head from its start, the body where it stopped).
func readPush(rd io.Reader, bufSize int) []outcome {
	var r Reader
	r.Reset(nil, make([]byte, bufSize))
	r.Push = true
	var h Head
	var body Body
	var sse SSEParser
	var scratch []byte
	var res []outcome
	more := func() {
		if err := r.Room(); err != nil {
			r.Err = err
			return
		}
		n, err := rd.Read(r.Buf[r.W:])
		r.W += n
		if n == 0 && err != nil {
			r.Err = err
		}
	}
	for len(res) < 8 {
		r0 := r.R
		err := r.ReadHead(&h)
		if err == ErrNeedMore {
			r.R = r0
			more()
			continue
		}
		if err != nil {
			return append(res, outcome{err: true})
		}
		o := outcome{status: h.Status, session: h.Session}
		body.Reset(&r, &h)
		if h.SSE {
			sse.Reset()
			for {
				seg, e := body.Next()
				if e == ErrNeedMore {
					more()
					continue
				}
				if e != nil {
					if e != io.EOF {
						err = e
					}
					break
				}
				sse.Push(seg)
				for {
					d, ok := sse.Next()
					if !ok {
						break
					}
					o.msgs = append(o.msgs, string(d))
				}
			}
		} else {
			for {
				b, e := body.ReadAll(&scratch)
				if e == ErrNeedMore {
					more()
					continue
				}
				err = e
				if e == nil && len(b) > 0 {
					o.msgs = append(o.msgs, string(b))
				}
				break
			}
		}
		o.err = err != nil
		o.open = err == nil && !h.Close && body.Reusable()
		res = append(res, o)
		if !o.open {
			return res
		}
	}
	return res
}

// TestWireEverySplit parses each case with the byte stream split at every
// position, one byte at a time, with a tiny read buffer (every line and
// body straddles reads), and in push mode.
func TestWireEverySplit(t *testing.T) {
	for i, tc := range wireCases {
		t.Run(fmt.Sprintf("%d/%s", i, tc.name), func(t *testing.T) {
			check := func(got []outcome, label string) {
				t.Helper()
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("%s:\n got %+v\nwant %+v", label, got, tc.want)
				}
			}
			for k := 0; k <= len(tc.in); k++ {
				check(readPull(splitAt(tc.in, k), 4096), fmt.Sprintf("split at %d", k))
				check(readPull(splitAt(tc.in, k), 64), fmt.Sprintf("split at %d, 64-byte buffer", k))
				check(readPush(splitAt(tc.in, k), 64), fmt.Sprintf("push, split at %d", k))
			}
			check(readPull(iotest.OneByteReader(strings.NewReader(tc.in)), 4096), "one byte at a time")
			check(readPush(iotest.OneByteReader(strings.NewReader(tc.in)), 64), "push, one byte at a time")
		})
	}
}

// TestHeadLineTooLong: a pull-mode Reader does not grow; a head line
// longer than its buffer fails with ErrLineTooLong. A push-mode one grows
// up to framing.TopClass.
func TestHeadLineTooLong(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 200) + "\r\n\r\n"
	var r Reader
	r.Reset(strings.NewReader(in), make([]byte, 64))
	var h Head
	if err := r.ReadHead(&h); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("pull: %v, want ErrLineTooLong", err)
	}
	if got := readPush(strings.NewReader(in+"\n"), 64); len(got) == 0 || got[0].status != 200 {
		t.Fatalf("push: %+v", got)
	}
}

// TestBodyTooBig: ReadAll stops at MaxBody.
func TestBodyTooBig(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunk := fmt.Sprintf("%x\r\n%s\r\n", 1<<20, strings.Repeat("x", 1<<20))
	rd := io.MultiReader(strings.NewReader(head), &repeatReader{s: chunk, n: MaxBody>>20 + 2})
	var r Reader
	r.Reset(rd, make([]byte, 16<<10))
	var h Head
	if err := r.ReadHead(&h); err != nil {
		t.Fatal(err)
	}
	var b Body
	b.Reset(&r, &h)
	var scratch []byte
	if _, err := b.ReadAll(&scratch); !errors.Is(err, ErrBodyTooBig) {
		t.Fatalf("ReadAll: %v, want ErrBodyTooBig", err)
	}
}

// repeatReader yields s n times.
type repeatReader struct {
	s   string
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.s[r.off:])
	r.off += k
	if r.off == len(r.s) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}
