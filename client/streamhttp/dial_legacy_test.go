package streamhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// dtMsg is the part of a request body the fake servers read.
type dtMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

func dtLegacyOut(id, method, token string, handshake bool) *mcpclient.Outgoing {
	meta := ""
	if token != "" {
		meta = `"_meta":{"progressToken":` + token + `}`
	}
	idm := ""
	if id != "" {
		idm = `"id":` + id + `,`
	}
	o := &mcpclient.Outgoing{Method: method, Handshake: handshake, Version: "2025-11-25",
		Body: []byte(`{"jsonrpc":"2.0",` + idm + `"method":"` + method + `","params":{` + meta + `}}`)}
	if id != "" {
		o.ID = []byte(id)
	}
	if token != "" {
		o.Token = []byte(token)
	}
	return o
}

// dt2025 is a 2025-11-25 Streamable HTTP server with sessions: initialize
// mints one (Mcp-Session-Id), other requests must carry the current one
// (404 otherwise: expired), DELETE ends it.
type dt2025 struct {
	mu       sync.Mutex
	n        int
	current  string
	seen     []string // "method session version" of each POST
	deleted  []string
	tools    atomic.Int64
	notified atomic.Int64
}

func (s *dt2025) handle(_ int, c net.Conn, br *bufio.Reader) {
	for {
		r, err := dtRead(br)
		if err != nil {
			return
		}
		sid := r.hdr.Get("Mcp-Session-Id")
		if strings.HasPrefix(r.line, "DELETE ") {
			s.mu.Lock()
			s.deleted = append(s.deleted, sid)
			s.mu.Unlock()
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			continue
		}
		var m dtMsg
		_ = json.Unmarshal([]byte(r.body), &m)
		s.mu.Lock()
		s.seen = append(s.seen, m.Method+" "+sid+" "+r.hdr.Get("MCP-Protocol-Version"))
		cur := s.current
		if m.Method == "initialize" {
			s.n++
			s.current = fmt.Sprintf("sess-%d", s.n)
			cur = s.current
		}
		s.mu.Unlock()
		switch {
		case m.Method == "initialize":
			body := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s", cur, len(body), body)
		case sid != cur || cur == "":
			_, _ = io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		case m.ID == nil:
			s.notified.Add(1)
			_, _ = io.WriteString(c, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
		default:
			s.tools.Add(1)
			// An SSE reply as 2025-era servers write them: a priming
			// event with an id, a server request (ignored), the response.
			ev := "id: e0\ndata:\n\nid: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\"}\n\n" +
				"id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + string(m.ID) + ",\"result\":{\"tools\":[]}}\n\n"
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(ev), ev)
		}
	}
}

// expire forgets the current session (as a restarted server would).
func (s *dt2025) expire() {
	s.mu.Lock()
	s.current = ""
	s.mu.Unlock()
}

func (s *dt2025) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[len(s.seen)-1]
}

// TestDialEra2025Session: the Mcp-Session-Id of the initialize reply is
// sent on every later request; a 404 to a request that carried it means
// the session expired (COMPAT-07): ErrNotDelivered, the connect hook runs (a
// new initialize, Handshake) while other requests wait, and the new id is
// used from then on. Close ends the session with a DELETE.
func TestDialEra2025Session(t *testing.T) {
	leakCheck(t)
	fake := &dt2025{}
	srv := newDTServer(t, fake.handle)
	tr := dtDial(t, srv.url, Config{})
	ctx := dtCtx(t)
	if err := tr.SwitchEra(ctx, mcpclient.Era2025); err != nil {
		t.Fatal(err)
	}
	initialize := func(handshake bool) error {
		x, err := tr.Open(ctx, dtLegacyOut("0", "initialize", "", handshake))
		if err != nil {
			return err
		}
		if _, err := dtDrain(ctx, x); err != nil {
			return err
		}
		return tr.Notify(ctx, dtLegacyOut("", "notifications/initialized", "", handshake))
	}
	if err := initialize(false); err != nil {
		t.Fatal(err)
	}
	if got := fake.last(); got != "notifications/initialized sess-1 2025-11-25" {
		t.Fatalf("notification: %q", got)
	}
	list := func(id string) ([]string, error) {
		x, err := tr.Open(ctx, dtLegacyOut(id, "tools/list", "", false))
		if err != nil {
			return nil, err
		}
		return dtDrain(ctx, x)
	}
	msgs, err := list("1")
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0], `"id":1,`) {
		t.Fatalf("tools/list: %q, %v", msgs, err)
	}
	if got := fake.last(); got != "tools/list sess-1 2025-11-25" {
		t.Fatalf("tools/list: %q", got)
	}

	hooked := make(chan error, 1)
	tr.SetConnectHook(func(ctx context.Context) error {
		err := initialize(true)
		hooked <- err
		return err
	})
	fake.expire()
	if _, err := list("2"); !errors.Is(err, mcpclient.ErrNotDelivered) {
		t.Fatalf("on an expired session: %v, want ErrNotDelivered", err)
	}
	msgs, err = list("3") // waits for the hook
	if err != nil || len(msgs) != 1 {
		t.Fatalf("after the hook: %q, %v", msgs, err)
	}
	select {
	case err := <-hooked:
		if err != nil {
			t.Fatalf("hook: %v", err)
		}
	default:
		t.Fatal("the hook did not run before the next request")
	}
	if got := fake.last(); got != "tools/list sess-2 2025-11-25" {
		t.Fatalf("after the hook: %q", got)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	deleted := fake.deleted
	fake.mu.Unlock()
	if len(deleted) != 1 || deleted[0] != "sess-2" {
		t.Fatalf("DELETE %q, want sess-2", deleted)
	}
}

// dt2024 is a 2024-11-05 HTTP+SSE server: GET opens the stream whose
// first event names the POST endpoint; replies and notifications go on
// the stream.
type dt2024 struct {
	mu       sync.Mutex
	streams  map[string]chan string
	n        int
	stop     chan struct{}
	kill     chan struct{} // ends the current stream
	cancels  atomic.Int64
	absolute bool // the endpoint event carries an absolute URI on another origin
}

func (s *dt2024) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/mcp":
		if r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "want SSE", http.StatusNotAcceptable)
			return
		}
		s.mu.Lock()
		s.n++
		sid := fmt.Sprintf("s%d", s.n)
		ch := make(chan string, 256)
		s.streams[sid] = ch
		kill := s.kill
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ep := "/messages?sessionId=" + sid
		if s.absolute {
			ep = "http://other.example" + ep
		}
		fmt.Fprintf(w, ": hello\n\nevent: endpoint\ndata: %s\n\n", ep)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-ch:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			case <-s.stop:
				return
			case <-kill:
				return
			}
		}
	case r.Method == "POST" && r.URL.Path == "/messages":
		s.mu.Lock()
		ch := s.streams[r.URL.Query().Get("sessionId")]
		s.mu.Unlock()
		if ch == nil {
			http.Error(w, "no session", http.StatusNotFound)
			return
		}
		var m dtMsg
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			ch <- `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"older","version":"1"}}}`
		case "tools/call":
			if tok := m.Params.Meta.Token; tok != nil {
				ch <- `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(tok) + `,"progress":1}}`
				ch <- `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":1}}`
			}
			ch <- `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"done"}]}}`
		case "x/listen":
			ch <- `{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`
			ch <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
		case "flood":
			for i := range 10 {
				ch <- fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, m.Params.Meta.Token, i+1)
			}
		case "notifications/cancelled":
			s.cancels.Add(1)
		case "bad":
			http.Error(w, "<html>no</html>", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "Accepted")
	default:
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}
}

func newDT2024(t *testing.T) (*dt2024, string) {
	t.Helper()
	s := &dt2024{streams: map[string]chan string{}, stop: make(chan struct{}), kill: make(chan struct{})}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		close(s.stop)
		hs.Close()
	})
	return s, hs.URL + "/mcp"
}

// TestDialEra2024 walks the HTTP+SSE transport (COMPAT-04): the endpoint
// event, a call whose progress (by progressToken) and response (by id)
// come on the stream, server requests ignored, other notifications to a
// Listen exchange, a slow consumer, a lost stream (ErrDropped, then a new
// stream and the connect hook), a refused POST.
func TestDialEra2024(t *testing.T) {
	leakCheck(t)
	fake, url := newDT2024(t)
	tr := dtDial(t, url, Config{MaxQueued: 4})
	ctx := dtCtx(t)
	if err := tr.SwitchEra(ctx, mcpclient.Era2024); err != nil {
		t.Fatal(err)
	}
	x, err := tr.Open(ctx, dtLegacyOut("5", "tools/call", "5", false))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := dtDrain(ctx, x)
	if err != nil || len(msgs) != 2 || !strings.Contains(msgs[0], `"progressToken":5`) || !strings.Contains(msgs[1], `"id":5,`) {
		t.Fatalf("call: %q, %v", msgs, err)
	}
	if st := dtStatus(x); st != 202 {
		t.Fatalf("status %d, want 202 (the POST's)", st)
	}

	// A Listen exchange gets the notifications that belong to no request.
	lx, err := tr.Open(ctx, func() *mcpclient.Outgoing {
		o := dtLegacyOut("6", "x/listen", "", false)
		o.Listen = true
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	if m, err := lx.Next(ctx); err != nil || !strings.Contains(string(m), "tools/list_changed") {
		t.Fatalf("listen: %s, %v", m, err)
	}
	_ = lx.Close()

	// A slow consumer: 10 progress notifications, 4 may wait unread.
	fx, err := tr.Open(ctx, dtLegacyOut("7", "flood", "7", false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		failed := fx.(*legacyExchange).in.Err() != nil
		if failed || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := fx.Next(ctx); !errors.Is(err, mcpclient.ErrSlowConsumer) {
		t.Fatalf("slow consumer: %v", err)
	}
	_ = fx.Close()

	// A refused POST: a StatusError.
	if _, err := tr.Open(ctx, dtLegacyOut("8", "bad", "", false)); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("refused POST: %v", err)
	}

	// The stream is lost: the exchange waiting on it fails with
	// ErrDropped; the next request opens a new stream and runs the hook.
	hooked := make(chan struct{}, 1)
	tr.SetConnectHook(func(ctx context.Context) error {
		x, err := tr.Open(ctx, dtLegacyOut("0", "initialize", "", true))
		if err != nil {
			return err
		}
		if _, err := dtDrain(ctx, x); err != nil {
			return err
		}
		hooked <- struct{}{}
		return nil
	})
	hx, err := tr.Open(ctx, dtLegacyOut("9", "hang", "", false))
	if err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	close(fake.kill)
	fake.kill = make(chan struct{})
	fake.mu.Unlock()
	if _, err := hx.Next(ctx); !errors.Is(err, mcpclient.ErrDropped) {
		t.Fatalf("lost stream: %v, want ErrDropped", err)
	}
	_ = hx.Close()
	x, err = tr.Open(ctx, dtLegacyOut("10", "tools/call", "", false))
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := dtDrain(ctx, x); err != nil || len(msgs) != 1 {
		t.Fatalf("after the new stream: %q, %v", msgs, err)
	}
	select {
	case <-hooked:
	default:
		t.Fatal("the hook did not run")
	}
	fake.mu.Lock()
	n := fake.n
	fake.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d streams, want 2", n)
	}
	// The exchanges closed before their response were cancelled (the
	// listen, the slow consumer), in the background.
	for deadline := time.Now().Add(5 * time.Second); fake.cancels.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications/cancelled, want 2", fake.cancels.Load())
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDialEra2024Refused: an endpoint on another origin is refused (the
// requests would carry Config.Header there); a server without the
// GET stream gives a StatusError.
func TestDialEra2024Refused(t *testing.T) {
	leakCheck(t)
	fake, url := newDT2024(t)
	fake.absolute = true
	tr := dtDial(t, url, Config{})
	if err := tr.SwitchEra(dtCtx(t), mcpclient.Era2024); !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), "origin") {
		t.Fatalf("SwitchEra = %v", err)
	}
	tr2 := dtDial(t, strings.TrimSuffix(url, "/mcp")+"/nope", Config{})
	var se *mcpclient.StatusError
	if err := tr2.SwitchEra(dtCtx(t), mcpclient.Era2024); !errors.As(err, &se) || se.Status != 405 {
		t.Fatalf("SwitchEra = %v, want a 405 StatusError", err)
	}
}

// TestResolveEndpoint: relative and absolute endpoint URIs.
func TestResolveEndpoint(t *testing.T) {
	tr := dtDial(t, "http://127.0.0.1:8080/base/sse?x=1", Config{})
	for _, tc := range []struct{ in, want string }{
		{"/messages?sessionId=1", "/messages?sessionId=1"},
		{"messages?sessionId=2", "/base/messages?sessionId=2"},
		{"http://127.0.0.1:8080/m", "/m"},
		{"http://evil.example/m", ""},
		{"https://127.0.0.1:8080/m", ""},
	} {
		got, err := tr.resolveEndpoint(tc.in)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestDialEra2024AbandonWhileWaiting: a Next waiting on the HTTP+SSE
// stream for a reply that is not coming ends when the exchange is closed
// from another goroutine, or when its own context ends; either way the
// server is sent notifications/cancelled.
func TestDialEra2024AbandonWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"Close", mcpclient.ErrClosed},
		{"context", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			fake, url := newDT2024(t)
			tr := dtDial(t, url, Config{})
			ctx := dtCtx(t)
			if err := tr.SwitchEra(ctx, mcpclient.Era2024); err != nil {
				t.Fatal(err)
			}
			x, err := tr.Open(ctx, dtLegacyOut("5", "hang", "", false))
			if err != nil {
				t.Fatal(err)
			}
			nctx, cancel := context.WithCancel(ctx)
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := x.Next(nctx)
				errc <- err
			}()
			time.Sleep(20 * time.Millisecond)
			if tc.name == "Close" {
				_ = x.Close()
			} else {
				cancel()
			}
			select {
			case err := <-errc:
				if !errors.Is(err, tc.want) {
					t.Fatalf("Next: %v, want %v", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Next still waits")
			}
			for deadline := time.Now().Add(5 * time.Second); fake.cancels.Load() < 1; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no notifications/cancelled")
				}
			}
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
