package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/report"

	"github.com/mcpwire/mcpwire/internal/load"
)

// TestRowGroups: every group of the request table has exactly one ceiling,
// and row names (the -only filter, the output file names) are unique.
func TestRowGroups(t *testing.T) {
	rows := requestRows(config{bin: "bin", tsung: "tsung", wrk: "wrk"})
	ceilings := map[string]int{}
	names := map[string]bool{}
	for _, r := range rows {
		if names[report.Slug(r.name)] {
			t.Errorf("row name %q is not unique", r.name)
		}
		names[report.Slug(r.name)] = true
		if r.ceiling {
			ceilings[r.group()]++
		}
	}
	for _, r := range rows {
		if ceilings[r.group()] != 1 {
			t.Errorf("%s: group %q has %d ceilings", r.name, r.group(), ceilings[r.group()])
		}
	}
	for _, want := range []string{"mcpwire TCP 1×64", "mcpwire TCP 64×1", "mcpwire Unix 1×64", "mcpwire Unix 64×1",
		"raw gnet TCP 1×64", "raw gnet Unix 64×1", "mcpwire TCP 64×1 (tsung)", "mcpwire stdio", "mcpwire HTTP",
		"mcpwire HTTP (wrk)", "go-sdk HTTP (wrk)", "mcp-go HTTP (wrk)", "raw fasthttp (wrk)", "floor HTTP (wrk)",
		"mcpwire HTTP no token", "raw fasthttp no token", "mcpwire HTTP no token (wrk)", "raw fasthttp no token (wrk)",
		"mcpwire HTTP 1×1", "raw fasthttp 1×1", "mcpwire HTTP 1×1 (wrk)", "raw fasthttp 1×1 (wrk)",
		"mcpwire HTTPS (wrk)", "mcpwire HTTPS 1×1 (wrk)", "raw fasthttp TLS (wrk)", "raw fasthttp TLS 1×1 (wrk)",
		"mcpwire HTTPS", "mcpwire HTTPS 1×1", "raw fasthttp TLS", "raw fasthttp TLS 1×1"} {
		if !names[report.Slug(want)] {
			t.Errorf("no row %q", want)
		}
	}
}

func TestSelectRows(t *testing.T) {
	rows := requestRows(config{bin: "bin", tsung: "tsung", wrk: "wrk"})
	for only, want := range map[string][]string{
		"mcpwire Unix": {"mcpwire Unix 1×64", "raw gnet Unix 1×64", "mcpwire Unix 64×1", "raw gnet Unix 64×1"},
		"go-sdk":       {"go-sdk HTTP", "go-sdk HTTP (wrk)", "raw fasthttp", "raw fasthttp (wrk)", "go-sdk stdio", "raw stdio lines"},
		"tsung":        {"mcpwire TCP 64×1 (tsung)", "raw gnet TCP 64×1 (tsung)"},
		"raw net":      {"raw gnet TCP 64×1", "raw net TCP 64×1"},
		"no token":     {"mcpwire HTTP no token", "mcpwire HTTP no token (wrk)", "raw fasthttp no token", "raw fasthttp no token (wrk)"},
		"1×1 (wrk)":    {"mcpwire HTTP 1×1 (wrk)", "raw fasthttp 1×1 (wrk)", "mcpwire HTTPS 1×1 (wrk)", "raw fasthttp TLS 1×1 (wrk)"},
		// An HTTPS row brings its plain twin (the ratio) and its ceiling,
		// raw fasthttp over TLS, not the plain one.
		"HTTPS 1×1": {"mcpwire HTTP 1×1", "mcpwire HTTP 1×1 (wrk)", "mcpwire HTTPS 1×1", "raw fasthttp TLS 1×1",
			"mcpwire HTTPS 1×1 (wrk)", "raw fasthttp TLS 1×1 (wrk)"},
		// The TLS ceiling named alone brings its own plain twin.
		"raw fasthttp TLS (wrk)": {"raw fasthttp (wrk)", "raw fasthttp TLS (wrk)"},
	} {
		var got []string
		for _, r := range selectRows(rows, only) {
			got = append(got, r.name)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("-only %q: %q, want %q", only, got, want)
		}
	}
	// WRK=0 (-wrk ""): no wrk row.
	for _, r := range requestRows(config{bin: "bin"}) {
		if r.gen == genWrk || r.gen == genTsung {
			t.Errorf("row %q without wrk and tsung", r.name)
		}
	}
}

// TestTsungConfig: the scenario is well-formed XML and carries the fixture
// line, newline included, byte for byte.
func TestTsungConfig(t *testing.T) {
	line, err := fixtureLine()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := tsungConfig("127.0.0.1:18199", line, 30e9)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(conf))
	dec.Strict = false
	var data string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "raw" {
			for _, a := range se.Attr {
				if a.Name.Local == "data" {
					data = a.Value
				}
			}
		}
	}
	if data != string(line)+"\n" {
		t.Errorf("raw data = %q, want the fixture and a newline", data)
	}
	if !strings.Contains(string(conf), `port="18199"`) {
		t.Errorf("no port in %s", conf)
	}
}

func TestParseTsungLine(t *testing.T) {
	l := ` {"timestamp": 1796187984,  "samples": [   {"name": "users", "value": 64, "max": 64}, {"name": "request", "value": 20625, "mean": 1.5606,"stddev": 1.2,"max":  34.9,"min": 0.02 ,"global_mean": 0 ,"global_count": 0}, {"name": "size_rcv", "value": 5238750, "total": 5238750}, {"name": "error_abort", "value": 1, "total": 1}]}]}`
	s, ok := parseTsungLine(l)
	if !ok || s.ts != 1796187984 || s.requests != 20625 || s.meanMs != 1.5606 || s.rcv != 5238750 || s.errors != 1 || s.users != 64 {
		t.Errorf("parsed %+v, %v", s, ok)
	}
	if _, ok := parseTsungLine(` "stats": [`); ok {
		t.Error("the header line parsed as a second")
	}
}

// TestWrkScripts: the wrk scripts send the fixture mcpwire load sends (for
// id 1, progressToken 1; clientInfo names wrk), with the same mirrored
// headers, and without the token in fixture-notoken.lua.
func TestWrkScripts(t *testing.T) {
	withToken, err := fixtureLine()
	if err != nil {
		t.Fatal(err)
	}
	noToken, err := load.RequestBody(load.Config{Target: "tcp://127.0.0.1:1", Duration: time.Second,
		Tool: "echo", Args: `{"text":"hello world"}`, NoProgressToken: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"fixture.lua": withToken, "fixture-notoken.lua": noToken} {
		s, err := parseWrkScript(filepath.Join("..", "..", "wrk", file))
		if err != nil {
			t.Fatal(err)
		}
		body := strings.Replace(s.body, `clientInfo":{"name":"wrk",`, `clientInfo":{"name":"mcpwire-load",`, 1)
		if body != string(want) {
			t.Errorf("%s: body\n%s\nwant (clientInfo aside)\n%s", file, s.body, want)
		}
		got := map[string]string{}
		for _, h := range s.headers {
			got[h[0]] = h[1]
		}
		wantH := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
		if s.method != "POST" || !reflect.DeepEqual(got, wantH) {
			t.Errorf("%s: %s with headers %v, want POST with %v", file, s.method, got, wantH)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.lua")
	os.WriteFile(bad, []byte("wrk.method = \"POST\"\nrequest = function() return wrk.format() end\n"), 0o644)
	if _, err := parseWrkScript(bad); err == nil {
		t.Error("a script with code was accepted")
	}
}

func TestParseWrk(t *testing.T) {
	out := `Running 5s test @ http://127.0.0.1:18180/mcp
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.43ms    1.42ms  18.93ms   92.28%
    Req/Sec    38.46k     5.62k   46.56k    75.00%
  Latency Distribution
     50%  812.00us
     75%    1.44ms
     90%    2.34ms
     99%    1.07s
  76476 requests in 2.01s, 26.40MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 12
Requests/sec:  38142.61
Transfer/sec:     13.17MB
`
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{requests: 76476, rps: 38142.61, bytesRead: 26.40 * 1024 * 1024, meanUs: 1430, p50: 812, p99: 1.07e6,
		non2xx: 12, sockErrors: 5, sockDetail: "Socket errors: connect 0, read 2, write 0, timeout 3"}
	if math.Abs(r.meanUs-want.meanUs) > 1e-6 || math.Abs(r.bytesRead-want.bytesRead) > 1 {
		t.Errorf("mean %v bytes %v", r.meanUs, r.bytesRead)
	}
	r.meanUs, r.bytesRead = want.meanUs, want.bytesRead
	if *r != want {
		t.Errorf("parsed %+v\nwant %+v", *r, want)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Error("no error for an output without results")
	}
}

// TestCheckReply: the one-off check accepts the echo result as JSON or
// SSE and refuses an error status, a JSON-RPC error and another result.
func TestCheckReply(t *testing.T) {
	s := &wrkScript{method: "POST", headers: [][2]string{{"Content-Type", "application/json"}}, body: `{"jsonrpc":"2.0","id":1}`}
	ok := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello world"}],"isError":false}}`
	for _, tc := range []struct {
		name, ct, body string
		status         int
		good           bool
	}{
		{"json", "application/json", ok, 200, true},
		{"sse", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: " + ok + "\n\n", 200, true},
		{"status", "application/json", ok, 400, false},
		{"rpc error", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`, 200, false},
		{"other text", "application/json", strings.Replace(ok, "hello world", "bye", 1), 200, false},
		{"other id", "application/json", strings.Replace(ok, `"id":1`, `"id":2`, 1), 200, false},
		{"tool error", "application/json", strings.Replace(ok, `"isError":false`, `"isError":true`, 1), 200, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if string(b) != s.body || r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/mcp" {
				w.WriteHeader(500)
				return
			}
			w.Header().Set("Content-Type", tc.ct)
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		size, err := checkReply(s, strings.TrimPrefix(srv.URL, "http://"), "/mcp", nil)
		srv.Close()
		if (err == nil) != tc.good {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if tc.good && size < len(tc.body) {
			t.Errorf("%s: reply size %d", tc.name, size)
		}
	}
}

// TestTLSRows: the HTTPS rows serve with the test certificate on an
// https:// target; their ceiling is raw fasthttp over TLS with the same
// certificate (same shape, generator and fixture; not the plain HTTP
// ceiling); mcpwire load trusts the test CA; and their ratio to the plain
// twin is the median of each round's ratio to the twin of that round.
func TestTLSRows(t *testing.T) {
	cfg := config{bin: "bin", wrk: "wrk", tlsDir: "out/tls"}
	rows := requestRows(cfg)
	idx := map[string]int{}
	for i, r := range rows {
		idx[r.name] = i
	}
	for _, sfx := range []string{"", " 1×1", " (wrk)", " 1×1 (wrk)"} {
		ours, okO := idx["mcpwire HTTPS"+sfx]
		ceil, okC := idx["raw fasthttp TLS"+sfx]
		twin, okT := idx["mcpwire HTTP"+sfx]
		if !okO || !okC || !okT {
			t.Fatalf("%q: HTTPS row %v, TLS ceiling %v, plain twin %v", sfx, okO, okC, okT)
		}
		r, c := rows[ours], rows[ceil]
		for _, x := range []row{r, c} {
			if args := strings.Join(x.server, " "); !strings.Contains(args, "-tls-cert out/tls/cert.pem -") || !strings.Contains(args, "-tls-key out/tls/key.pem") {
				t.Errorf("%s: server %q", x.name, args)
			}
			if _, _, target := endpoint(cfg, x, ours); !strings.HasPrefix(target, "https://127.0.0.1:") {
				t.Errorf("%s: target %q", x.name, target)
			}
		}
		if !c.ceiling || r.group() != c.group() {
			t.Errorf("%s: ceiling %v, groups %q and %q", c.name, c.ceiling, r.group(), c.group())
		}
		if r.group() == rows[twin].group() {
			t.Errorf("%s shares the plain HTTP group %q: its ratio would be to the plain ceiling", r.name, r.group())
		}
		if r.plain != rows[twin].name {
			t.Errorf("%s: plain twin %q", r.name, r.plain)
		}
		if args := strings.Join(callArgs(cfg, r), " "); r.gen == genLoad && !strings.Contains(args, "-cacert out/tls/ca.pem") {
			t.Errorf("%s: load arguments %q", r.name, args)
		}
	}
	if args := strings.Join(callArgs(cfg, rows[idx["mcpwire HTTP"]]), " "); strings.Contains(args, "cacert") {
		t.Errorf("plain HTTP row with %q", args)
	}
	tlsRow, plain := idx["mcpwire HTTPS (wrk)"], idx["mcpwire HTTP (wrk)"]
	results := make([][]runResult, len(rows))
	for i := range results {
		results[i] = make([]runResult, 3)
	}
	set := func(i, round int, rps float64) { results[i][round] = runResult{load: &loadResult{RPS: rps}} }
	set(tlsRow, 0, 50)
	set(plain, 0, 100) // 0.5
	set(tlsRow, 1, 90)
	set(plain, 1, 100) // 0.9
	set(tlsRow, 2, 70)
	set(plain, 2, 100) // 0.7
	if got, n := tlsRatio(rows, results, tlsRow); got != 0.7 || n != 3 {
		t.Errorf("ratio %v over %d rounds, want 0.7 over 3", got, n)
	}
	results[plain][1].err = errors.New("failed")
	if got, n := tlsRatio(rows, results, tlsRow); got != 0.6 || n != 2 {
		t.Errorf("with a failed round: ratio %v over %d rounds, want 0.6 over 2", got, n)
	}
}

// TestCPUAbove: a line row's CPU above its ceiling is the median of each
// round's difference (not the difference of the medians), rounds where
// either side failed or has no figure are left out, and a row without a
// ceiling in its group reports nothing.
func TestCPUAbove(t *testing.T) {
	rows := []row{
		{name: "ours", kind: kindTCP, conns: 1, inflight: 64, gen: genLoad, fixture: fixToken},
		{name: "raw", kind: kindTCP, conns: 1, inflight: 64, gen: genLoad, fixture: fixToken, ceiling: true},
		{name: "alone", kind: kindUnix, conns: 1, inflight: 64, gen: genLoad, fixture: fixToken},
	}
	res := func(cpu float64) runResult { return runResult{load: &loadResult{RPS: 1}, cpuReq: cpu} }
	results := [][]runResult{
		{res(0.90), res(0.50), res(0.70), res(0.80), {err: errors.New("down")}},
		{res(0.40), res(0.30), res(0.10), {err: errors.New("down")}, res(0.30)},
		{res(0.5), res(0.5), res(0.5), res(0.5), res(0.5)},
	}
	// Differences 0.50, 0.20, 0.60 (rounds 4 and 5 lack a side): median
	// 0.50, where the difference of the medians would read 0.70 - 0.30.
	above, ours, ceil, n := cpuAbove(rows, results, 0)
	if n != 3 || math.Abs(above-0.50) > 1e-9 || math.Abs(ours-0.70) > 1e-9 || math.Abs(ceil-0.30) > 1e-9 {
		t.Errorf("cpuAbove = %.2f (%.2f against %.2f, %d rounds), want 0.50 (0.70 against 0.30, 3 rounds)", above, ours, ceil, n)
	}
	results[0][1] = res(3.00) // differences 0.50, 2.70, 0.60: the median moves to 0.60, not with the outlier
	if above, _, _, _ = cpuAbove(rows, results, 0); math.Abs(above-0.60) > 1e-9 {
		t.Errorf("cpuAbove after an outlier round = %.2f, want 0.60", above)
	}
	results[0][0] = res(math.NaN())
	if _, _, _, n = cpuAbove(rows, results, 0); n != 2 {
		t.Errorf("a round without a CPU figure was counted: %d rounds", n)
	}
	if _, _, _, n = cpuAbove(rows, results, 2); n != 0 {
		t.Errorf("a row without a ceiling reported %d rounds", n)
	}
}

// TestRoundOrder: every round runs each row once, and over a pair of
// rounds (an even one and the next) every two rows run in both orders.
func TestRoundOrder(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for r := range 6 {
			o := roundOrder(n, r)
			seen := make([]bool, n)
			for _, i := range o {
				if i < 0 || i >= n || seen[i] {
					t.Fatalf("n=%d round %d: %v is not an order of the rows", n, r, o)
				}
				seen[i] = true
			}
			if len(o) != n {
				t.Fatalf("n=%d round %d: %v", n, r, o)
			}
			if r%2 == 1 {
				prev := roundOrder(n, r-1)
				before := func(o []int, a, b int) bool { return slices.Index(o, a) < slices.Index(o, b) }
				for a := range n {
					for b := range n {
						if a != b && before(o, a, b) == before(prev, a, b) {
							t.Errorf("n=%d rounds %d and %d: rows %d and %d run in the same order in both (%v, %v)", n, r-1, r, a, b, prev, o)
						}
					}
				}
			}
		}
	}
}

// TestBaseRows: with -base, each mcpwire row but the legacy ones has a
// twin served by the base binary, in the same group (so the same
// ceiling); an HTTPS row's twin has the base's plain HTTP row as its plain
// twin, not ours.
func TestBaseRows(t *testing.T) {
	cfg := config{bin: "bin", wrk: "wrk", tlsDir: "out/tls", base: "old/mcpwire"}
	rows := requestRows(cfg)
	idx := map[string]int{}
	for i, r := range rows {
		idx[r.name] = i
	}
	for _, name := range []string{"mcpwire HTTP (wrk)", "mcpwire HTTPS (wrk)", "mcpwire HTTPS 1×1 (wrk)", "mcpwire stdio", "mcpwire TCP 1×64"} {
		i, ok := idx[name]
		j, okB := idx[baseName(name)]
		if !ok || !okB {
			t.Fatalf("%s: row %v, base twin %v", name, ok, okB)
		}
		r, b := rows[i], rows[j]
		if b.server[0] != cfg.base || strings.Join(b.server[1:], " ") != strings.Join(r.server[1:], " ") {
			t.Errorf("%s: base twin serves %q, ours %q", name, b.server, r.server)
		}
		if b.group() != r.group() || b.ceiling {
			t.Errorf("%s: base twin group %q (ceiling %v), ours %q", name, b.group(), b.ceiling, r.group())
		}
		if r.plain != "" {
			if b.plain != baseName(r.plain) {
				t.Errorf("%s: base twin's plain twin %q, want %q", name, b.plain, baseName(r.plain))
			} else if _, ok := idx[b.plain]; !ok {
				t.Errorf("%s: base twin's plain twin %q is not a row", name, b.plain)
			}
		}
	}
	for _, r := range rows {
		if strings.HasPrefix(r.name, "mcpwire@base ") && (strings.Contains(r.name, "legacy") || r.session) {
			t.Errorf("base twin of a legacy row: %s", r.name)
		}
	}
}
