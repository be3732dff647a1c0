package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/cputime"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// The standard fixture, as a 2025-11-25 client sends it to the legacy
// endpoint and as a 2026-07-28 client sends it to the modern one: a
// tools/call echo with its progressToken.
const (
	fixtureLegacy = `{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}`
	fixtureModern = `{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},` +
		`"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
)

// wireRig is one process serving both endpoints on one fasthttp listener
// (as `mcpwire serve --legacy-path` does), and one raw keep-alive client
// connection that allocates nothing per request, so that what
// testing.AllocsPerRun counts is the server's.
type wireRig struct {
	conn net.Conn
	br   *bufio.Reader
	sid  string
	body []byte // the response body of the last roundtrip
}

func startWireRig(tb testing.TB, eng *engine.Server) *wireRig {
	tb.Helper()
	leg := legacy.New(eng, legacy.Config{})
	hs := streamhttp.New(eng, streamhttp.Config{Mounts: map[string]http.Handler{legacyPath: leg.Handler()}})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	w := &wireRig{conn: c, br: bufio.NewReaderSize(c, 16<<10)}
	tb.Cleanup(func() {
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = leg.Shutdown(ctx)
		_ = hs.Shutdown(ctx)
		<-done
		_ = eng.Shutdown(ctx)
	})
	status, hdr := w.roundtrip(tb, w.request(legacyPath, "", initBody))
	if status != 200 || hdr[legacy.HeaderSession] == "" {
		tb.Fatalf("initialize: %d %s", status, w.body)
	}
	w.sid = hdr[legacy.HeaderSession]
	return w
}

// request is one HTTP/1.1 POST as bytes: the legacy endpoint's when path
// is legacyPath (with the session), the modern one's otherwise.
func (w *wireRig) request(path, sid, body string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", path)
	if path == legacyPath {
		b.WriteString("MCP-Protocol-Version: 2025-11-25\r\n")
		if sid != "" {
			fmt.Fprintf(&b, "Mcp-Session-Id: %s\r\n", sid)
		}
	} else {
		b.WriteString("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return b.Bytes()
}

// roundtrip writes req and reads one response; hdr is filled only when
// asked for (it allocates).
func (w *wireRig) roundtrip(tb testing.TB, req []byte) (int, map[string]string) {
	if _, err := w.conn.Write(req); err != nil {
		tb.Fatal(err)
	}
	status, n, hdr := 0, -1, map[string]string{}
	for first := true; ; first = false {
		line, err := w.br.ReadSlice('\n')
		if err != nil {
			tb.Fatal(err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		if first {
			status, _ = strconv.Atoi(string(line[9:12]))
			continue
		}
		k, v, _ := bytes.Cut(line, []byte(": "))
		if bytes.EqualFold(k, []byte("Content-Length")) {
			n, _ = strconv.Atoi(string(v))
		}
		if bytes.EqualFold(k, []byte(legacy.HeaderSession)) {
			hdr[legacy.HeaderSession] = string(v)
		}
	}
	if n < 0 {
		tb.Fatalf("status %d without Content-Length", status)
	}
	w.body = append(w.body[:0], make([]byte, n)...)
	if _, err := io.ReadFull(w.br, w.body); err != nil {
		tb.Fatal(err)
	}
	return status, hdr
}

// quick is roundtrip without the header map (and so without allocating).
func (w *wireRig) quick(tb testing.TB, req []byte) {
	if _, err := w.conn.Write(req); err != nil {
		tb.Fatal(err)
	}
	n := -1
	for {
		line, err := w.br.ReadSlice('\n')
		if err != nil {
			tb.Fatal(err)
		}
		if len(line) <= 2 {
			break
		}
		if len(line) > 16 && (line[0]|0x20) == 'c' && bytes.EqualFold(line[:15], []byte("Content-Length:")) {
			n = 0
			for _, c := range bytes.TrimSpace(line[15:]) {
				n = n*10 + int(c-'0')
			}
		}
	}
	if n < 0 {
		tb.Fatal("response without Content-Length")
	}
	if cap(w.body) < n {
		w.body = make([]byte, n)
	}
	w.body = w.body[:n]
	if _, err := io.ReadFull(w.br, w.body); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkWireCall is one tools/call echo with its progressToken through
// one process's fasthttp listener, over one loopback keep-alive
// connection: "modern" on the 2026-07-28 endpoint, "legacy" on the
// 2025-11-25 one inside a live session. Their ratio is the issue-21 goal
// (legacy at >= 0.85x the modern endpoint, <= 5 allocations per call).
// cpu-ns/op is the process's CPU time (client and server; the client's
// share is the same for both) per call: on a machine shared with other
// work it moves less than the wall time does.
func BenchmarkWireCall(b *testing.B) {
	for _, tc := range []struct{ name, path, body string }{
		{"modern", "/mcp", fixtureModern},
		{"legacy", legacyPath, fixtureLegacy},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := startWireRig(b, newInlineEngine(b))
			req := w.request(tc.path, w.sid, tc.body)
			if status, _ := w.roundtrip(b, req); status != 200 || !bytes.Contains(w.body, []byte("hello world")) {
				b.Fatalf("%d %s", status, w.body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process()
			for b.Loop() {
				w.quick(b, req)
			}
			if cpu := cputime.Process() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// newInlineEngine serves echo as `mcpwire serve` does: an Inline tool,
// run where the request was read.
func newInlineEngine(tb testing.TB) *engine.Server {
	tb.Helper()
	eng := engine.New(engine.Config{Name: "legacy-bench", Version: "1", Logging: true})
	err := eng.AddTool(engine.Tool{
		Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), Inline: true,
		Handler: func(c *engine.Call) error {
			s, _ := c.ArgString("text")
			c.Text(s)
			return nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return eng
}
