package metrics

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// blockingEngine serves "block", which reports progress once (so that an
// HTTP reply becomes an SSE stream) and then runs until it is cancelled.
func blockingEngine(t *testing.T) (*engine.Server, chan struct{}) {
	srv := engine.New(engine.Config{})
	started := make(chan struct{}, 4)
	_ = srv.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
		c.Progress(1, 2, "started")
		started <- struct{}{}
		<-c.Done()
		return c.Err()
	}})
	return srv, started
}

// waitCounters polls the scrape (boundedly) until every named counter has
// its value, and fails with what it last saw.
func waitCounters(t *testing.T, c *Collector, want map[string]float64) {
	t.Helper()
	reg := Registry(c)
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mfs := gather(t, reg)
		got = map[string]float64{}
		ok := true
		for name, v := range want {
			if mf := mfs[name]; mf != nil {
				got[name] = mf.GetMetric()[0].GetCounter().GetValue()
			}
			ok = ok && got[name] == v
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counters %v, want %v", got, want)
		}
	}
}

// A request with a progress token, so the reply is an SSE stream.
const blockCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// TestHTTPDisconnectCountsBoth: a client that leaves while its call runs
// (here, while the reply streams its progress as SSE) is counted as an
// HTTP disconnect and its call as cancelled by the peer
// (mcpwire_http_disconnects_total and mcpwire_engine_cancelled_total;
// issue 20), on the fasthttp and the net/http front ends.
func TestHTTPDisconnectCountsBoth(t *testing.T) {
	for _, front := range []string{"fasthttp", "net/http"} {
		t.Run(strings.ReplaceAll(front, "/", ""), func(t *testing.T) {
			leakCheck(t)
			srv, started := blockingEngine(t)
			defer func() { _ = srv.Shutdown(context.Background()) }()
			hs := streamhttp.New(srv, streamhttp.Config{})
			var addr string
			if front == "fasthttp" {
				ln, err := hs.Listen("127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go func() { _ = hs.Serve(ln) }()
				addr = ln.Addr().String()
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr = ln.Addr().String()
				h, err := hs.Handler(addr)
				if err != nil {
					t.Fatal(err)
				}
				hsrv := &http.Server{Handler: h, ConnContext: hs.ConnContext}
				go func() { _ = hsrv.Serve(hs.NetListener(ln)) }()
				defer hsrv.Close()
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = hs.Shutdown(ctx)
			}()
			c := New(srv)
			c.AddStats("http", hs.Stats())

			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"+
				"Mcp-Method: tools/call\r\nMcp-Name: block\r\nContent-Length: "+itoa(len(blockCall))+"\r\n\r\n"+blockCall)
			<-started
			// Read up to the first event: the reply is a stream now.
			r := bufio.NewReader(conn)
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("reading the stream: %v", err)
				}
				if strings.HasPrefix(l, "data:") {
					break
				}
			}
			conn.Close()
			waitCounters(t, c, map[string]float64{
				"mcpwire_http_disconnects_total": 1,
				"mcpwire_engine_cancelled_total": 1,
			})
		})
	}
}

// TestTCPDisconnectCountsBoth: a TCP peer that closes its connection while
// a call runs is counted as a socket disconnect and its call as cancelled
// by the peer (mcpwire_socket_disconnects_total and
// mcpwire_engine_cancelled_total; issue 20); a connection closed with
// nothing in flight is neither.
func TestTCPDisconnectCountsBoth(t *testing.T) {
	leakCheck(t)
	srv, started := blockingEngine(t)
	defer func() { _ = srv.Shutdown(context.Background()) }()
	ss := socket.New(srv, socket.Config{})
	if err := ss.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := ss.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ss.Shutdown(ctx)
	}()
	c := New(srv)
	c.AddStats("socket", ss.Stats())
	addr := ss.Addrs()[0].String()

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	idle.Close()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, blockCall+"\n")
	<-started
	conn.Close()
	waitCounters(t, c, map[string]float64{
		"mcpwire_socket_disconnects_total": 1,
		"mcpwire_engine_cancelled_total":   1,
		"mcpwire_socket_accepted_total":    2,
	})
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0 || len(b) == 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
