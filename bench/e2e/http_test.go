package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// minHTTPConns is the least number of keep-alive connections of
// BenchmarkHTTPEcho; there are more when GOMAXPROCS is not a divisor of it.
const minHTTPConns = 8

// startHTTP serves eng over Streamable HTTP on a loopback port. stop shuts
// the binding (and so the engine) down and waits for Serve to return.
func startHTTP(b *testing.B, eng *engine.Server) (addr string, stop func()) {
	b.Helper()
	hs := streamhttp.New(eng, streamhttp.Config{})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	wait := goServe(func() error { return hs.Serve(ln) })
	var once sync.Once
	return ln.Addr().String(), func() {
		once.Do(func() {
			shutdownEngine(b, hs.Shutdown)
			if err := wait(); err != nil {
				b.Errorf("streamhttp.Serve: %v", err)
			}
		})
	}
}

// httpHead writes the request line and headers of a POST to /mcp with every
// header a 2026-07-28 client sends; name is the Mcp-Name value ("" for
// none).
func httpHead(addr, method, name string, bodyLen int) string {
	h := "POST /mcp HTTP/1.1\r\nHost: " + addr +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
		"\r\nMCP-Protocol-Version: " + protocolVersion +
		"\r\nMcp-Method: " + method + "\r\n"
	if name != "" {
		h += "Mcp-Name: " + name + "\r\n"
	}
	return h + "Content-Length: " + strconv.Itoa(bodyLen) + "\r\n\r\n"
}

// httpClient sends echo calls on one keep-alive connection. The request is
// built once; each call rewrites the digits of its fixed-width string id in
// place, so a call allocates nothing.
type httpClient struct {
	conn   net.Conn
	br     *bufio.Reader
	req    []byte
	id     []byte // the quoted id inside req, as the reply must carry it
	digits []byte // the counter digits inside id
	body   []byte // reply body, reused
}

func dialHTTP(addr string, worker int) (*httpClient, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf(`"w%03d-%010d"`, worker, 0)
	body := echoPrefix + id + echoSuffix
	head := httpHead(addr, "tools/call", "echo", len(body))
	req := []byte(head + body)
	at := len(head) + len(echoPrefix)
	quoted := req[at : at+len(id)]
	return &httpClient{
		conn:   conn,
		br:     bufio.NewReaderSize(conn, 4096),
		req:    req,
		id:     quoted,
		digits: quoted[len(quoted)-11 : len(quoted)-1],
		body:   make([]byte, 0, 1024),
	}, nil
}

// call sends request number seq and checks its reply: 200 with a JSON body
// that carries the id and the echoed text.
func (c *httpClient) call(seq uint64) error {
	for i := len(c.digits) - 1; i >= 0; i-- {
		c.digits[i] = byte('0' + seq%10)
		seq /= 10
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return err
	}
	status, n, err := readHead(c.br)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("reply %d without Content-Length", status)
	}
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	c.body = c.body[:n]
	if _, err := io.ReadFull(c.br, c.body); err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("status %d: %.300s", status, c.body)
	}
	if !bytes.Contains(c.body, c.id) || !bytes.Contains(c.body, echoQuoted) {
		return fmt.Errorf("reply without id %s or the echoed text: %.300s", c.id, c.body)
	}
	return nil
}

var (
	headerContentLength    = []byte("Content-Length")
	headerTransferEncoding = []byte("Transfer-Encoding")
)

// readHead reads a response's status line and headers. It returns the
// status and the Content-Length, -1 when there is none (a close-delimited
// stream). Chunked replies are refused: the server never sends them here.
func readHead(br *bufio.Reader) (status, contentLength int, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("reading the status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	status, ok := atoi(line[9:12])
	if !ok {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	contentLength = -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("reading headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return status, contentLength, nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return 0, 0, fmt.Errorf("bad header line %q", line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, headerContentLength):
			if contentLength, ok = atoi(value); !ok {
				return 0, 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, headerTransferEncoding):
			return 0, 0, fmt.Errorf("unexpected Transfer-Encoding %q", value)
		}
	}
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// BenchmarkHTTPEcho: tools/call echo over loopback TCP to the fasthttp
// front end, one request in flight on each of at least 8 keep-alive
// connections (b.RunParallel, one connection per goroutine), every request
// a complete 2026-07-28 POST with its mirrored headers and _meta.
func BenchmarkHTTPEcho(b *testing.B) {
	eng := newEngine(b)
	addr, stop := startHTTP(b, eng)
	defer stop()

	procs := runtime.GOMAXPROCS(0)
	par := (minHTTPConns + procs - 1) / procs
	clients := make([]*httpClient, par*procs) // RunParallel's goroutine count
	for i := range clients {
		c, err := dialHTTP(addr, i)
		if err != nil {
			b.Fatal(err)
		}
		defer c.conn.Close()
		clients[i] = c
	}
	// A stalled server must not hang the run: closing the connections
	// makes every blocked read fail.
	watchdog := time.AfterFunc(stallTimeout, func() {
		for _, c := range clients {
			_ = c.conn.Close()
		}
	})
	defer watchdog.Stop()

	var next atomic.Int32
	b.SetParallelism(par)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := clients[next.Add(1)-1]
		var seq uint64
		for pb.Next() {
			seq++
			if err := c.call(seq); err != nil {
				b.Errorf("connection %s: %v", c.id, err)
				return
			}
		}
	})
	b.StopTimer()
	reportRate(b, b.N, "req/s")
}

// fanStreams is the number of listen streams of BenchmarkHTTPListenFanout.
const fanStreams = 100

const fanURI = "test://fan"

var updatedMethod = []byte(`"method":"notifications/resources/updated"`)

// sseStream is one subscriptions/listen stream, read by its own goroutine.
type sseStream struct {
	conn net.Conn
	br   *bufio.Reader
	data []byte // the last event's data, reused
	want []byte // the uri the next update must name, reused
}

// openListen posts subscriptions/listen for fanURI and its children and
// reads the response head and the acknowledgement.
func openListen(addr string, id int) (*sseStream, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) +
		`,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["` + fanURI + `"]},` + meta + `}}`
	s := &sseStream{conn: conn, br: bufio.NewReaderSize(conn, 4096)}
	if _, err := io.WriteString(conn, httpHead(addr, "subscriptions/listen", "", len(body))+body); err != nil {
		conn.Close()
		return nil, err
	}
	status, _, err := readHead(s.br)
	if err == nil && status != 200 {
		err = fmt.Errorf("listen %d: status %d", id, status)
	}
	if err == nil {
		var ev []byte
		if ev, err = s.next(); err == nil && !bytes.Contains(ev, []byte(`"notifications/subscriptions/acknowledged"`)) {
			err = fmt.Errorf("listen %d: first event is not the acknowledgement: %.300s", id, ev)
		}
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// next returns the data of the next SSE event (each event here is one
// data line), skipping comments (keep-alives).
func (s *sseStream) next() ([]byte, error) {
	s.data = s.data[:0]
	have := false
	for {
		line, err := s.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, fmt.Errorf("SSE line longer than %d bytes", s.br.Size())
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if have {
				return s.data, nil
			}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("data:")):
			line = bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if have {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, line...)
			have = true
		}
	}
}

// consume reads update after update; the k-th must name fanURI/k. It
// counts each one down in remaining and signals done at zero. It ends at
// the first read error, which it reports on failed unless stopping.
func (s *sseStream) consume(remaining *atomic.Int32, done chan<- struct{}, failed chan<- error, stopping *atomic.Bool) {
	for k := 0; ; {
		ev, err := s.next()
		if err != nil {
			if !stopping.Load() {
				failed <- fmt.Errorf("listen stream: %w", err)
			}
			return
		}
		if !bytes.Contains(ev, updatedMethod) {
			continue // the final result at shutdown
		}
		s.want = append(s.want[:0], `"uri":"`+fanURI+"/"...)
		s.want = strconv.AppendInt(s.want, int64(k), 10)
		s.want = append(s.want, '"')
		if !bytes.Contains(ev, s.want) {
			failed <- fmt.Errorf("missing %s in %.300s", s.want, ev)
			return
		}
		k++
		if remaining.Add(-1) == 0 {
			done <- struct{}{}
		}
	}
}

// BenchmarkHTTPListenFanout: 100 subscriptions/listen streams over
// loopback HTTP, all subscribed to test://fan. One op is one
// ResourceUpdated("test://fan/i") and the wait until every stream has read
// that notification; deliveries/s counts notifications read by clients.
func BenchmarkHTTPListenFanout(b *testing.B) {
	eng := newEngine(b)
	err := eng.AddResource(engine.Resource{URI: fanURI, Name: "fan", MimeType: "text/plain",
		Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "fan"}}})
		}})
	if err != nil {
		b.Fatal(err)
	}
	addr, stop := startHTTP(b, eng)
	defer stop()

	streams := make([]*sseStream, 0, fanStreams)
	defer func() {
		for _, s := range streams {
			_ = s.conn.Close()
		}
	}()
	for i := range fanStreams {
		s, err := openListen(addr, i+1)
		if err != nil {
			b.Fatal(err)
		}
		streams = append(streams, s)
	}
	// A stream joins the hub just after its acknowledgement is written:
	// wait until all of them have, or an update could miss one.
	for deadline := time.Now().Add(10 * time.Second); eng.Stats().ListenStreams.Load() < fanStreams; {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d listen streams registered", eng.Stats().ListenStreams.Load(), fanStreams)
		}
		time.Sleep(time.Millisecond)
	}
	uris := make([]string, b.N)
	for i := range uris {
		uris[i] = fanURI + "/" + strconv.Itoa(i)
	}

	var (
		remaining atomic.Int32
		stopping  atomic.Bool
		wg        sync.WaitGroup
		done      = make(chan struct{}, 1)
		failed    = make(chan error, fanStreams)
	)
	for _, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.consume(&remaining, done, failed, &stopping)
		}()
	}
	// Shut the server down (listen streams get their final result), then
	// close the client ends and wait for the readers.
	defer func() {
		stopping.Store(true)
		stop()
		for _, s := range streams {
			_ = s.conn.Close()
		}
		wg.Wait()
	}()
	watchdog := time.AfterFunc(stallTimeout, func() {
		for _, s := range streams {
			_ = s.conn.Close()
		}
	})
	defer watchdog.Stop()

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		remaining.Store(fanStreams)
		eng.ResourceUpdated(uris[i])
		select {
		case <-done:
		case err := <-failed:
			b.Fatalf("update %d: %v", i, err)
		}
	}
	b.StopTimer()
	reportRate(b, b.N*fanStreams, "deliveries/s")
}
