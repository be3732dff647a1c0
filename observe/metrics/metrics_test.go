package metrics

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// leakCheck fails the test when goroutines started during it outlive it
// (registered first, so it runs after every other cleanup).
func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		// fasthttp's worker-pool cleaner and Date refresher (see
		// transport/streamhttp's harness).
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	}
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		goleak.VerifyNone(t, opts...)
	})
}

// gather scrapes reg into name → metric families.
func gather(t *testing.T, reg prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// find returns the metric of family name whose labels include want.
func find(mfs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	mf := mfs[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		got := labelsOf(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// TestEveryCounterIsExported: every atomic field of the engine's, the HTTP
// transport's, the socket transport's and the Redis store's Stats appears
// in a scrape, counters with _total, with the value the atomic holds.
func TestEveryCounterIsExported(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	hs := streamhttp.New(srv, streamhttp.Config{})
	ss := socket.New(srv, socket.Config{})
	var rs redisstate.Stats
	c := New(srv)
	c.AddStats("http", hs.Stats())
	c.AddStats("socket", ss.Stats())
	c.AddStats("redis", &rs)
	srv.Stats().Requests.Add(7)
	srv.Stats().ListenStreams.Add(3)
	hs.Stats().BodyTooLarge.Add(5)
	ss.Stats().Open.Add(2)
	rs.Reconnects.Add(4)
	mfs := gather(t, Registry(c))

	for _, src := range []struct {
		sub   string
		stats any
	}{{"engine", srv.Stats()}, {"http", hs.Stats()}, {"socket", ss.Stats()}, {"redis", &rs}} {
		v := reflect.ValueOf(src.stats).Elem()
		n := 0
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			var name string
			var want float64
			switch a := v.Field(i).Addr().Interface().(type) {
			case uint64Loader: // *atomic.Uint64, *engine.Counter
				name, want = "mcpwire_"+src.sub+"_"+statNames[typeKey(v.Type())][f.Name].name+"_total", float64(a.Load())
			case *atomic.Int64:
				name, want = "mcpwire_"+src.sub+"_"+statNames[typeKey(v.Type())][f.Name].name, float64(a.Load())
			default:
				continue
			}
			n++
			mf := mfs[name]
			if mf == nil || len(mf.GetMetric()) != 1 {
				t.Errorf("%s.%s: no metric %s", src.sub, f.Name, name)
				continue
			}
			m := mf.GetMetric()[0]
			got := m.GetCounter().GetValue()
			if help := statNames[typeKey(v.Type())][f.Name].help; mf.GetHelp() != help {
				t.Errorf("%s: HELP %q, want %q", name, mf.GetHelp(), help)
			}
			if strings.HasSuffix(name, "_total") != (mf.GetType() == dto.MetricType_COUNTER) {
				t.Errorf("%s: type %v", name, mf.GetType())
			}
			if mf.GetType() == dto.MetricType_GAUGE {
				got = m.GetGauge().GetValue()
			}
			if got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		if n < 5 {
			t.Errorf("%s: only %d atomic fields found", src.sub, n)
		}
	}
	for name, want := range map[string]float64{
		"mcpwire_engine_requests_total": 7, "mcpwire_engine_listen_streams": 3,
		"mcpwire_http_body_too_large_total": 5, "mcpwire_socket_open": 2, "mcpwire_redis_reconnects_total": 4,
	} {
		mf := mfs[name]
		if mf == nil {
			t.Fatalf("%s missing", name)
		}
		m := mf.GetMetric()[0]
		if got := m.GetCounter().GetValue() + m.GetGauge().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"} {
		if mfs[name] == nil {
			t.Errorf("%s missing: the admin endpoint's soak sampling reads it", name)
		}
	}
}

func post(t *testing.T, url, name, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// TestHTTPScrape: requests over Streamable HTTP show in the duration
// histogram under their method and transport "http"; a request blocked in
// its handler shows in the in-flight gauge, its open connection in the
// HTTP transport's connection gauge, and the SSE bytes a stalled reader
// leaves queued in the queued-bytes gauge.
func TestHTTPScrape(t *testing.T) {
	leakCheck(t)
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		c.Text("hi")
		return nil
	}})
	gate := make(chan struct{})
	started := make(chan struct{})
	_ = srv.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
		close(started)
		<-gate
		c.Text("done")
		return nil
	}})
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}()
	c := New(srv)
	c.AddStats("http", hs.Stats())
	c.AddGauge("open_connections", "Open connections.", func() float64 { return float64(hs.Gauges().OpenConns) }, "transport", "http")
	c.AddGauge("queued_bytes", "Output bytes queued.", func() float64 { return float64(hs.Gauges().QueuedBytes) }, "transport", "http")
	reg := Registry(c)
	url := "http://" + ln.Addr().String() + "/mcp"

	for range 3 {
		resp := post(t, url, "echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},`+meta+`}}}`, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp := post(t, url, "block", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{},`+meta+`}}}`, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	<-started

	mfs := gather(t, reg)
	h := find(mfs, "mcpwire_request_duration_seconds", map[string]string{"method": "tools/call", "transport": "http"})
	if h == nil || h.GetHistogram().GetSampleCount() != 3 {
		t.Fatalf("histogram: %v, want 3 requests", h)
	}
	bs := h.GetHistogram().GetBucket()
	if len(bs) != len(engine.DurationBounds()) || bs[len(bs)-1].GetCumulativeCount() != 3 {
		t.Fatalf("buckets: %v", bs)
	}
	if m := find(mfs, "mcpwire_in_flight_requests", map[string]string{"transport": "http"}); m == nil || m.GetGauge().GetValue() != 1 {
		t.Fatalf("in flight: %v, want 1", m)
	}
	if m := find(mfs, "mcpwire_open_connections", map[string]string{"transport": "http"}); m == nil || m.GetGauge().GetValue() < 1 {
		t.Fatalf("open connections: %v, want at least 1", m)
	}
	close(gate)
	<-done
	mfs = gather(t, reg)
	if m := find(mfs, "mcpwire_in_flight_requests", map[string]string{"transport": "http"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Fatalf("in flight after the end: %v, want 0", m)
	}
	if m := find(mfs, "mcpwire_queued_bytes", map[string]string{"transport": "http"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Fatalf("queued bytes after the end: %v, want 0", m)
	}
}

// TestSocketGauges: TCP and Unix-socket connections are counted apart,
// and their requests carry transport "tcp" and "unix".
func TestSocketGauges(t *testing.T) {
	leakCheck(t)
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error { c.Text("hi"); return nil }})
	ss := socket.New(srv, socket.Config{})
	sock := t.TempDir() + "/m.sock"
	if err := ss.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := ss.Listen("unix", sock); err != nil {
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
	var conns []net.Conn
	for _, a := range ss.Addrs() {
		c, err := net.Dial(a.Network(), a.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	conns = append(conns, conns[0]) // two calls on the first (TCP)
	for i, c := range conns {
		// A new id each time: the first call on a connection may still be in
		// its in-flight table (being recorded) when its reply has been read,
		// and a request reusing an id in flight is refused.
		_, _ = io.WriteString(c, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"echo","arguments":{},`+meta+`}}}`+"\n")
		buf := make([]byte, 4096)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"hi"`) {
			t.Fatalf("reply %q, %v", buf[:n], err)
		}
	}
	if g := ss.Gauges(); g.OpenTCP != 1 || g.OpenUnix != 1 || g.QueuedBytes != 0 {
		t.Fatalf("gauges %+v, want one TCP and one Unix connection, nothing queued", g)
	}
	// A request's duration is recorded as it ends, just after its reply is
	// written: wait (boundedly) for the last one.
	want := map[string]uint64{"tcp": 2, "unix": 1}
	var got map[string]uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		got = map[string]uint64{}
		srv.RequestDurations(func(h *engine.DurationHistogram) {
			if h.Method == "tools/call" {
				got[h.Transport] = h.Count
			}
		})
		if maps.Equal(got, want) || time.Now().After(deadline) {
			break
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("tools/call requests per transport %v, want %v", got, want)
	}
}

// TestStatsFunc: a snapshot struct's uint64 fields are counters, its int64
// and int fields gauges, read afresh at every scrape.
func TestStatsFunc(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	lt := client.NewLineTransport(nil, client.LineConfig{})
	c := New(srv)
	c.AddStatsFunc("client_line", func() any { return lt.Stats() })
	var n atomic.Int64
	c.AddStatsFunc("snap", func() any {
		return struct {
			Calls   uint64 `metric:"calls" help:"Calls made."`
			Pending int    `metric:"pending" help:"Calls waiting."`
			skipped uint64
		}{uint64(n.Add(1)), -2, 9}
	})
	reg := Registry(c)
	for want := 2.0; want <= 3; want++ { // AddStatsFunc called it once for its type
		mfs := gather(t, reg)
		if m := mfs["mcpwire_snap_calls_total"]; m == nil || m.GetMetric()[0].GetCounter().GetValue() != want {
			t.Fatalf("scrape %v: calls %v", want, m)
		}
		if m := mfs["mcpwire_snap_pending"]; m == nil || m.GetMetric()[0].GetGauge().GetValue() != -2 {
			t.Fatalf("pending %v", m)
		}
		if mfs["mcpwire_snap_skipped_total"] != nil {
			t.Fatal("an unexported field was exported")
		}
		if mfs["mcpwire_client_line_dials_total"] == nil || mfs["mcpwire_client_line_stray_lines_total"] == nil {
			t.Fatal("client.LineStats not exported")
		}
	}
}

// loadOnly is a counter type of another package's own: AddStats exports
// atomic.Uint64, atomic.Int64 and engine.Counter, and ignores the rest,
// as it did before engine.Counter (no panic for a field without a name).
type loadOnly struct{ v atomic.Uint64 }

func (l *loadOnly) Load() uint64 { return l.v.Load() }

func TestStatsOtherLoaderIgnored(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	c := New(srv)
	var st struct {
		Calls  atomic.Uint64 `metric:"calls" help:"Calls made."`
		Padded loadOnly
		Parts  engine.Counter `metric:"parts" help:"Parts summed."`
	}
	st.Calls.Add(2)
	st.Padded.v.Add(5)
	st.Parts.Add(3)
	c.AddStats("own", &st) // panicked with "has no metric name" when any Load() uint64 was a counter
	mfs := gather(t, Registry(c))
	if m := mfs["mcpwire_own_calls_total"]; m == nil || m.GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Errorf("calls %v", m)
	}
	if m := mfs["mcpwire_own_parts_total"]; m == nil || m.GetMetric()[0].GetCounter().GetValue() != 3 {
		t.Errorf("parts %v", m)
	}
	for name := range mfs {
		if strings.Contains(name, "padded") {
			t.Errorf("%s exported", name)
		}
	}
}
