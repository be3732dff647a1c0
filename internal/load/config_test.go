package load

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in   string
		want target
		err  string
	}{
		{in: "http://127.0.0.1:8080/mcp", want: target{kind: "http", addr: "127.0.0.1:8080", host: "127.0.0.1:8080", path: "/mcp"}},
		{in: "http://localhost/", want: target{kind: "http", addr: "localhost:80", host: "localhost", path: "/"}},
		{in: "http://[::1]:9/a/b?x=1", want: target{kind: "http", addr: "[::1]:9", host: "[::1]:9", path: "/a/b?x=1"}},
		{in: "http://h:1", want: target{kind: "http", addr: "h:1", host: "h:1", path: "/"}},
		{in: "stdio:bin/mcpwire serve --stdio", want: target{kind: "stdio", argv: []string{"bin/mcpwire", "serve", "--stdio"}}},
		{in: `stdio:'/path with space/srv' "a b" c\ d 'e'"f"`, want: target{kind: "stdio", argv: []string{"/path with space/srv", "a b", "c d", "ef"}}},
		{in: "tcp://127.0.0.1:9000", want: target{kind: "tcp", addr: "127.0.0.1:9000"}},
		{in: "unix:///tmp/x.sock", want: target{kind: "unix", addr: "/tmp/x.sock"}},
		{in: "https://h/mcp", want: target{kind: "http", tls: true, addr: "h:443", host: "h", path: "/mcp"}},
		{in: "https://127.0.0.1:8443/mcp", want: target{kind: "http", tls: true, addr: "127.0.0.1:8443", host: "127.0.0.1:8443", path: "/mcp"}},
		{in: "stdio:", err: "no command"},
		{in: "stdio:'unterminated", err: "quote"},
		{in: "tcp://nohost", err: "port"},
		{in: "unix://", err: "path"},
		{in: "ftp://x", err: "want"},
	}
	for _, tc := range cases {
		got, err := parseTarget(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		tc.want.raw = tc.in
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, *got, tc.want)
		}
	}
}

func TestMix(t *testing.T) {
	es, err := parseMix("tools/call=8, tools/list=1,server/discover=1,ping=0")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("entries %v", es)
	}
	seq := mixSequence(es)
	count := map[int]int{}
	for i, m := range seq {
		count[m]++
		if m != 0 && seq[(i+1)%len(seq)] != 0 {
			t.Errorf("rare methods bunched together: %v", seq)
		}
	}
	if len(seq) != 10 || count[0] != 8 || count[1] != 1 || count[2] != 1 {
		t.Errorf("sequence %v", seq)
	}
	for _, bad := range []string{"", "tools/call", "tools/call=x", "a=1,a=2", "subscriptions/listen=1", "prompts/get=1", "x=0", "bad method=1"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParamHeaders(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"b":{"type":"boolean","x-mcp-header":"B"},
		"nested":{"type":"object","properties":{"deep":{"type":"string","x-mcp-header":"Deep"}}},
		"absent":{"type":"string","x-mcp-header":"Absent"},
		"null":{"type":"string","x-mcp-header":"Null"}}}`)
	bs, err := client.ParseHeaderBindings(schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bs.Headers([]byte(`{"region":" us-west1","n":42.0,"b":true,"nested":{"deep":"plain value"},"null":null}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []client.Header{
		{Name: "Mcp-Param-B", Value: "true"},
		{Name: "Mcp-Param-Deep", Value: "plain value"},
		{Name: "Mcp-Param-N", Value: "42"},
		{Name: "Mcp-Param-Region", Value: "=?base64?IHVzLXdlc3Qx?="},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := bs.Headers([]byte(`{"region":{"x":1}}`)); err == nil {
		t.Error("an object value was mirrored")
	}
}

func TestNormalize(t *testing.T) {
	bad := []Config{
		{Target: "http://h:1/mcp", Inflight: 2, Duration: time.Second},
		{Target: "http://h:1/mcp"},
		{Target: "http://h:1/mcp", Duration: time.Second, Workload: "nope"},
		{Target: "http://h:1/mcp", Duration: time.Second, Workload: WorkloadListen, Rate: 10},
		{Target: "stdio:x", Duration: -time.Second},
	}
	for _, c := range bad {
		if _, err := c.normalize(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	c := Config{Target: "stdio:x", Requests: 5}
	if _, err := c.normalize(); err != nil {
		t.Fatal(err)
	}
	if c.Conns != 1 || c.Inflight != 1 || c.Tool != "echo" || c.Workload != "call" || c.Timeout != 5*time.Second {
		t.Errorf("defaults %+v", c)
	}
	c = Config{Target: "tcp://h:1", Duration: time.Second}
	if _, err := c.normalize(); err != nil || c.Conns != 64 {
		t.Errorf("tcp default conns %d, %v", c.Conns, err)
	}
}

func TestResultOutput(t *testing.T) {
	r := &Result{Target: "t", Workload: "call", Errors: map[string]int64{"http_503": 2}, Requests: 10}
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"target", "workload", "connections", "inflight", "duration_s", "requests", "rps", "errors",
		"latency_us", "bytes_sent", "bytes_recv", "client_cpu_us_per_req", "deliveries", "deliveries_per_s",
		"delivery_latency_us", "progress_per_call"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if len(m) != 16 {
		t.Errorf("JSON has %d fields, want the 16 fixed ones: %s", len(m), b.String())
	}
	lat := m["latency_us"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p99", "p999", "max", "mean"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us lacks %q", k)
		}
	}
	b.Reset()
	r.WriteText(&b)
	if !strings.Contains(b.String(), "http_503=2") {
		t.Errorf("text output:\n%s", b.String())
	}
}
