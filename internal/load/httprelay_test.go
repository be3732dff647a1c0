package load

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// pushAllWire reads responses from parts the way a poller feeds a relay
// connection (push mode: the bytes arrive in parts, the parser resumes),
// with the same outcomes as readAllWire.
func pushAllWire(rd io.Reader, bufSize int) []wireOutcome {
	var in, out atomic.Int64
	c := httpConn{bufSize: bufSize, in: &in, out: &out}
	c.br.Reset(nil, make([]byte, bufSize))
	c.br.Push = true
	var res []wireOutcome
	var col collector
	c.begin()
	for len(res) < 8 {
		done, status, err := c.readResponse(&col)
		if !done {
			if err := c.br.Room(); err != nil {
				c.br.Err = err
				continue
			}
			n, err := rd.Read(c.br.Buf[c.br.W:])
			c.br.W += n
			if n == 0 && err != nil {
				c.br.Err = err
			}
			continue
		}
		open := err == nil && c.keepAlive()
		res = append(res, wireOutcome{status, col.msgs, err != nil, open})
		if !open {
			break
		}
		col = collector{}
		c.begin()
	}
	return res
}

// TestHTTPPushParserEverySplit: the push-mode parser of the HTTP relay
// reads every wire case exactly as the blocking client does, whatever the
// split of the stream and even with a buffer smaller than a head.
func TestHTTPPushParserEverySplit(t *testing.T) {
	for _, tc := range wireCases {
		t.Run(tc.name, func(t *testing.T) {
			want := readAllWire(strings.NewReader(tc.in))
			for k := 0; k <= len(tc.in); k++ {
				for _, size := range []int{4096, 64} {
					if got := pushAllWire(splitAt(tc.in, k), size); !reflect.DeepEqual(got, want) {
						t.Fatalf("split at %d, buffer %d:\n got %+v\nwant %+v", k, size, got, want)
					}
				}
			}
			if got := pushAllWire(iotest.OneByteReader(strings.NewReader(tc.in)), 64); !reflect.DeepEqual(got, want) {
				t.Fatalf("one byte at a time:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// rawHTTP is a hand-written HTTP/1.1 MCP server for the relay tests; mode
// says how it answers: "keep" (keep-alive), "close" (Connection: close on
// every response), "silent" (closes after each response without saying
// so), "hang" (never answers).
type rawHTTP struct {
	ln    net.Listener
	mode  string
	wg    sync.WaitGroup
	mu    sync.Mutex
	open  map[net.Conn]bool
	conns atomic.Int64 // connections accepted
	reqs  atomic.Int64 // requests read
	dups  atomic.Int64 // ids seen twice on one connection
}

func startRawHTTP(t *testing.T, mode string) *rawHTTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawHTTP{ln: ln, mode: mode, open: map[net.Conn]bool{}}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.mu.Lock()
			s.open[c] = true
			s.mu.Unlock()
			s.wg.Go(func() {
				defer func() {
					s.mu.Lock()
					delete(s.open, c)
					s.mu.Unlock()
					c.Close()
				}()
				s.serve(c)
			})
		}
	})
	t.Cleanup(s.stop)
	return s
}

func (s *rawHTTP) url() string { return "http://" + s.ln.Addr().String() + "/mcp" }

// stop closes the listener and every open connection.
func (s *rawHTTP) stop() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *rawHTTP) serve(c net.Conn) {
	tp := textproto.NewReader(bufio.NewReader(c))
	seen := map[string]bool{}
	for {
		if _, err := tp.ReadLine(); err != nil {
			return
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(tp.R, body); err != nil {
			return
		}
		s.reqs.Add(1)
		var m rpcMsg
		_ = json.Unmarshal(body, &m)
		if seen[string(m.ID)] {
			s.dups.Add(1)
		}
		seen[string(m.ID)] = true
		var reply []byte
		switch {
		case m.Method == "tools/list":
			reply = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, m.ID)
		case s.mode == "hang":
			// Wait for the client to give up (it closes the connection).
			_, _ = io.Copy(io.Discard, c)
			return
		default:
			reply = resultJSON(m.ID, "ok")
		}
		extra := ""
		if s.mode == "close" {
			extra = "Connection: close\r\n"
		}
		if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", extra, len(reply), reply); err != nil {
			return
		}
		if s.mode == "close" || s.mode == "silent" && m.Method != "tools/list" {
			return
		}
	}
}

// TestHTTPRelayKeepAlive: the relay carries every request on the
// connections opened at setup, each id once per connection, and answers
// them all.
func TestHTTPRelayKeepAlive(t *testing.T) {
	s := startRawHTTP(t, "keep")
	res := runLoad(t, Config{Target: s.url(), Conns: 4, Requests: 4000})
	if len(res.Errors) != 0 || res.Requests != 4000 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if d := s.dups.Load(); d != 0 {
		t.Errorf("%d ids used twice on a connection", d)
	}
	// 4 connections for the load and one for tools/list at setup.
	if n := s.conns.Load(); n != 5 {
		t.Errorf("%d connections, want 5", n)
	}
}

// TestHTTPRelayConnectionClose: a server that answers every request with
// Connection: close gets each request on a fresh connection.
func TestHTTPRelayConnectionClose(t *testing.T) {
	s := startRawHTTP(t, "close")
	res := runLoad(t, Config{Target: s.url(), Conns: 3, Requests: 300})
	if len(res.Errors) != 0 || res.Requests != 300 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if n := s.conns.Load(); n < 300 {
		t.Errorf("%d connections for 300 requests", n)
	}
}

// TestHTTPRelaySilentClose: a server that closes every connection after
// one response without saying so: the next request finds the connection
// closed before any answer and is sent once more on a fresh one (as
// net/http does), so nothing fails.
func TestHTTPRelaySilentClose(t *testing.T) {
	s := startRawHTTP(t, "silent")
	res := runLoad(t, Config{Target: s.url(), Conns: 2, Requests: 200})
	if len(res.Errors) != 0 || res.Requests != 200 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
}

// TestHTTPRelayTimeouts: requests the server never answers time out one
// by one, each on its own connection, and the run ends.
func TestHTTPRelayTimeouts(t *testing.T) {
	s := startRawHTTP(t, "hang")
	res := runLoad(t, Config{Target: s.url(), Conns: 2, Requests: 6, Timeout: 100 * time.Millisecond})
	if res.Errors[errTimeout] != 6 || len(res.Errors) != 1 || res.Requests != 6 {
		t.Fatalf("requests %d, errors %v, want 6 timeouts", res.Requests, res.Errors)
	}
}

// TestHTTPRelayServerGoesAway: the server stops mid-run; the requests in
// flight fail, the next ones cannot connect, and the run still ends on
// time.
func TestHTTPRelayServerGoesAway(t *testing.T) {
	s := startRawHTTP(t, "keep")
	time.AfterFunc(300*time.Millisecond, s.stop)
	start := time.Now()
	res := runLoad(t, Config{Target: s.url(), Conns: 2, Duration: time.Second})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %v", d)
	}
	if res.Requests == 0 || res.LatencyUs.P50 == 0 {
		t.Fatalf("no request answered before the server went away")
	}
	// Every connection attempt after the server left is refused.
	if res.Errors[errConnect] == 0 {
		t.Errorf("errors %v, want connect errors", res.Errors)
	}
	for k := range res.Errors {
		if k != errConnect && k != errIO {
			t.Errorf("errors %v: only connect and io expected", res.Errors)
		}
	}
}

// TestHTTPRelaySweepWarmupTimeout: a request of the warm-up that the
// relay's sweeper times out counts as a warm-up failure on the live line
// (so the run's lines leave it out) and not as a measured timeout. Before
// the fix the sweeper counted it as a request of the run.
func TestHTTPRelaySweepWarmupTimeout(t *testing.T) {
	for _, measured := range []bool{false, true} {
		w := &httpWorker{rec: newRecorder()}
		w.inflight.Store(7)
		w.measAt.Store(measured)
		r := &run{cfg: Config{Timeout: time.Millisecond}, base: time.Now().Add(-time.Second), workers: []*httpWorker{w}}
		stop, done := make(chan struct{}), make(chan struct{})
		go r.sweepHTTP(stop, done)
		for deadline := time.Now().Add(10 * time.Second); w.inflight.Load() != 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		close(stop)
		<-done
		l := &w.rec.live
		wantWarm := map[bool]int64{false: 1, true: 0}[measured]
		if l.done.Load() != 1 || l.errs.Load() != 1 || l.warm.Load() != wantWarm || l.warmErrs.Load() != wantWarm ||
			w.oobTimeout.Load() != 1-wantWarm {
			t.Errorf("measured %v: live done %d errs %d warm %d warmErrs %d, measured timeouts %d; want 1 1 %d %d %d",
				measured, l.done.Load(), l.errs.Load(), l.warm.Load(), l.warmErrs.Load(), w.oobTimeout.Load(),
				wantWarm, wantWarm, 1-wantWarm)
		}
	}
}
