package main

// The outside generator of the HTTP rows: wrk (Debian package wrk), run as
// `wrk -t1 -cN --latency -s SCRIPT -dD URL`: one thread, N keep-alive
// connections, one request in flight on each (wrk does not pipeline), the
// request of SCRIPT (bench/wrk/*.lua) sent unchanged every time. wrk has no
// warm-up, so each row runs it twice: WARMUP (whole seconds, at least 1)
// unmeasured, then DURATION measured; the server is sampled over the
// measured run. wrk does not read bodies: before the runs the harness
// sends the script's request once itself and checks the reply is the echo
// result, and after the measured run it checks that the bytes wrk read per
// request match that reply's size (a server answering something else, a
// JSON-RPC error with status 200 say, would show there). Non-2xx responses
// and socket errors, which wrk counts, fail the run.

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkScript is what a wrk script sets: the request it sends on every
// connection, unchanged.
type wrkScript struct {
	method  string
	headers [][2]string
	body    string
}

var (
	reWrkMethod = regexp.MustCompile(`^wrk\.method\s*=\s*"([^"\\]*)"$`)
	reWrkHeader = regexp.MustCompile(`^wrk\.headers\["([^"\\]+)"\]\s*=\s*"([^"\\]*)"$`)
	reWrkBody   = regexp.MustCompile(`^wrk\.body\s*=\s*(?:'([^'\\]*)'|"([^"\\]*)")$`)
)

// parseWrkScript reads a script made only of wrk.method, wrk.headers[…]
// and wrk.body assignments (and comments): anything else could change what
// wrk sends, and the harness could then not check the reply.
func parseWrkScript(path string) (*wrkScript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &wrkScript{method: "GET"}
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--") {
			continue
		}
		if m := reWrkMethod.FindStringSubmatch(l); m != nil {
			s.method = m[1]
		} else if m := reWrkHeader.FindStringSubmatch(l); m != nil {
			s.headers = append(s.headers, [2]string{m[1], m[2]})
		} else if m := reWrkBody.FindStringSubmatch(l); m != nil {
			s.body = m[1] + m[2]
		} else {
			return nil, fmt.Errorf("%s:%d: not a wrk.method/headers/body assignment the harness can check: %q", path, i+1, l)
		}
	}
	return s, nil
}

// id is the raw id of the script's request ("1" unless the body says
// otherwise).
func (s *wrkScript) id() string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(s.body), &m) != nil || m.ID == nil {
		return "1"
	}
	return string(m.ID)
}

// uniqueIDs is appended to a session row's script once its reply has been
// checked: one 2025-11-25 session serves every wrk connection, and a
// session refuses an id already in flight (-32600), so each request gets
// an id of its own among 4096, of the same width as the script's (a 9-digit
// number: the reply's size stays the checked one), far more than the
// connections in flight. Each request is formatted once and then reused,
// so that the generator spends about what it spends on a static request
// (a gsub and a wrk.format per request cost wrk ~2 µs, which the server
// beside it on the same cores then lacks).
const uniqueIDs = `
local reqs, n = {}, 0
request = function()
  n = n %% 4096 + 1
  local r = reqs[n]
  if r == nil then
    r = wrk.format(nil, nil, nil, (string.gsub(wrk.body, '"id":%s', '"id":' .. (100000000 + n), 1)))
    reqs[n] = r
  end
  return r
end
`

// request is the HTTP/1.1 request wrk builds from the script for url.
func (s *wrkScript) request(host, path string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", s.method, path, host)
	for _, h := range s.headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if s.body != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(s.body))
	}
	b.WriteString("\r\n")
	b.WriteString(s.body)
	return b.Bytes()
}

// checkReply sends the script's request once to addr and checks that the
// reply is a 200 carrying the echo tool's result for id 1 (as JSON or as
// an event of an SSE stream). It returns the reply's size on the wire.
func checkReply(s *wrkScript, addr, path string, tlsConf *tls.Config) (int, error) {
	var c net.Conn
	var err error
	if tlsConf != nil {
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: tlsConf}
		c, err = d.Dial("tcp", addr)
	} else {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(s.request(addr, path)); err != nil {
		return 0, err
	}
	cr := &countingReader{r: c}
	br := bufio.NewReader(cr)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	size := cr.n - br.Buffered()
	if resp.StatusCode != http.StatusOK {
		return size, fmt.Errorf("HTTP %d: %s", resp.StatusCode, trim(body))
	}
	msgs := [][]byte{body}
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		msgs = sseData(body)
	} else if !strings.HasPrefix(ct, "application/json") {
		return size, fmt.Errorf("Content-Type %q", ct)
	}
	for _, m := range msgs {
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   json.RawMessage `json:"error"`
			Result  *struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &r) != nil || r.ID == nil {
			continue // a notification
		}
		switch {
		case r.JSONRPC != "2.0" || string(r.ID) != s.id():
			return size, fmt.Errorf("not the response to id %s: %s", s.id(), trim(m))
		case r.Error != nil || r.Result == nil:
			return size, fmt.Errorf("JSON-RPC error: %s", trim(m))
		case r.Result.IsError || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" || r.Result.Content[0].Text != "hello world":
			return size, fmt.Errorf("not the echo result: %s", trim(m))
		}
		return size, nil
	}
	return size, fmt.Errorf("no JSON-RPC response in the body: %s", trim(body))
}

// sessionScript initializes a 2025-11-25 session at addr+path and writes
// to out the script at in plus the session's Mcp-Session-Id header.
func sessionScript(in, addr, path, out string) (string, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}`
	req, err := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("initialize: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" || strings.ContainsAny(sid, `"\`) {
		return "", fmt.Errorf("initialize: HTTP %d, session %q: %s", resp.StatusCode, sid, trim(b))
	}
	src, err := os.ReadFile(in)
	if err != nil {
		return "", err
	}
	src = fmt.Appendf(bytes.TrimRight(src, "\n"), "\nwrk.headers[\"Mcp-Session-Id\"] = \"%s\"\n", sid)
	return out, os.WriteFile(out, src, 0o644)
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// sseData returns the data of each event of a text/event-stream body.
func sseData(body []byte) [][]byte {
	var out [][]byte
	var cur []byte
	has := false
	for _, l := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		switch {
		case l == "":
			if has {
				out = append(out, cur)
			}
			cur, has = nil, false
		case strings.HasPrefix(l, "data:"):
			if has {
				cur = append(cur, '\n')
			}
			cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " ")...)
			has = true
		}
	}
	if has {
		out = append(out, cur)
	}
	return out
}

func trim(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// wrkResult is what wrk prints with --latency.
type wrkResult struct {
	requests   float64 // "N requests in …"
	rps        float64 // Requests/sec
	bytesRead  float64 // "…, X MB read"
	meanUs     float64 // Latency Avg
	p50, p99   float64 // µs, from the Latency Distribution
	non2xx     float64 // "Non-2xx or 3xx responses: N"
	sockErrors float64 // connect + read + write + timeout
	sockDetail string
}

var (
	reWrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in [^,]+, ([\d.]+)([KMGTP]?)B read`)
	reWrkRPS      = regexp.MustCompile(`(?m)^Requests/sec:\s+([\d.]+)`)
	reWrkLatAvg   = regexp.MustCompile(`(?m)^\s+Latency\s+([\d.]+)(us|ms|s|m|h)\s`)
	reWrkPct      = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$`)
	reWrkNon2xx   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s+(\d+)`)
	reWrkSock     = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func wrkTimeUs(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	switch unit {
	case "ms":
		return f * 1e3
	case "s":
		return f * 1e6
	case "m":
		return f * 60e6
	case "h":
		return f * 3600e6
	}
	return f
}

// parseWrk reads wrk's --latency report.
func parseWrk(out string) (*wrkResult, error) {
	r := &wrkResult{}
	m := reWrkRequests.FindStringSubmatch(out)
	if m == nil {
		return nil, errors.New("no \"N requests in\" line in wrk's output")
	}
	r.requests, _ = strconv.ParseFloat(m[1], 64)
	r.bytesRead, _ = strconv.ParseFloat(m[2], 64)
	if m[3] != "" { // binary prefixes (wrk divides by 1024)
		r.bytesRead *= math.Pow(1024, float64(strings.Index("KMGTP", m[3])+1))
	}
	m = reWrkRPS.FindStringSubmatch(out)
	if m == nil {
		return nil, errors.New("no Requests/sec in wrk's output")
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	r.meanUs, r.p50, r.p99 = nan, nan, nan
	if m = reWrkLatAvg.FindStringSubmatch(out); m != nil {
		r.meanUs = wrkTimeUs(m[1], m[2])
	}
	for _, m := range reWrkPct.FindAllStringSubmatch(out, -1) {
		if m[1] == "50" {
			r.p50 = wrkTimeUs(m[2], m[3])
		} else {
			r.p99 = wrkTimeUs(m[2], m[3])
		}
	}
	if m = reWrkNon2xx.FindStringSubmatch(out); m != nil {
		r.non2xx, _ = strconv.ParseFloat(m[1], 64)
	}
	if m = reWrkSock.FindStringSubmatch(out); m != nil {
		for _, v := range m[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			r.sockErrors += n
		}
		r.sockDetail = strings.TrimSpace(m[0])
	}
	return r, nil
}

// wrkSeconds is d in whole seconds as wrk takes it (at least 1).
func wrkSeconds(d time.Duration) int {
	return max(1, int(d.Round(time.Second)/time.Second))
}

// runWrk runs wrk once; during is called with its start time while it runs.
func runWrk(cfg config, r row, script, target string, secs int, outFile string, during func(start time.Time)) (*wrkResult, time.Duration, error) {
	args := []string{"-t1", "-c" + strconv.Itoa(r.conns), "-d" + strconv.Itoa(secs) + "s", "--latency", "-s", script, target}
	cmd := exec.Command(cfg.wrk, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan struct{})
	if during != nil {
		go func() { defer close(done); during(start) }()
	} else {
		close(done)
	}
	err := cmd.Wait()
	<-done
	if outFile != "" {
		_ = os.WriteFile(outFile, fmt.Appendf(nil, "%s %s\n%s\n--- stderr\n%s", cfg.wrk, strings.Join(args, " "), stdout.Bytes(), stderr.Bytes()), 0o644)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("wrk: %v: %s", err, trim(stderr.Bytes()))
	}
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	res, err := parseWrk(stdout.String())
	return res, cpu, err
}

// runWrkRow runs one wrk row: the server, the reply check, wrk's warm-up,
// then the measured run with the server sampled over it.
func runWrkRow(cfg config, r row, idx int, tag string) runResult {
	var res runResult
	network, addr, target := endpoint(cfg, r, idx)
	path := "/mcp"
	if r.path != "" {
		path = r.path
		target = strings.TrimSuffix(target, "/mcp") + path
	}
	if !portFree(addr) {
		res.err = fmt.Errorf("port %s is busy", addr)
		return res
	}
	scriptPath := filepath.Join(cfg.wrkDir, r.fixture.wrkScript)
	script, err := parseWrkScript(scriptPath)
	if err != nil {
		res.err = err
		return res
	}
	srv, err := startServer(r.server, network, addr, filepath.Join(cfg.outDir, tag+".stderr"))
	if err != nil {
		res.err = err
		return res
	}
	defer srv.stop()
	var tlsConf *tls.Config
	if r.tls {
		if tlsConf, err = testCertClient(cfg.tlsDir); err != nil {
			res.err = err
			return res
		}
	}
	if r.session {
		// One 2025-11-25 session for the whole run: wrk sends its id on
		// every connection, and each request an id of its own
		// (uniqueIDs, appended once the reply is checked).
		if scriptPath, err = sessionScript(scriptPath, addr, path, filepath.Join(cfg.outDir, tag+".lua")); err != nil {
			res.err = err
			return res
		}
		if script, err = parseWrkScript(scriptPath); err != nil {
			res.err = err
			return res
		}
	}
	replySize, err := checkReply(script, addr, path, tlsConf)
	if err != nil {
		res.err = fmt.Errorf("the server does not answer %s with the echo result: %v", r.fixture.wrkScript, err)
		return res
	}
	if r.session {
		id := script.id()
		if len(id) != 9 || strings.Trim(id, "0123456789") != "" {
			res.err = fmt.Errorf("%s: a session row's request needs a 9-digit id, not %s", r.fixture.wrkScript, id)
			return res
		}
		if err := appendFile(scriptPath, fmt.Sprintf(uniqueIDs, id)); err != nil {
			res.err = err
			return res
		}
	}
	if cfg.warmup > 0 {
		if _, _, err := runWrk(cfg, r, scriptPath, target, wrkSeconds(cfg.warmup), "", nil); err != nil {
			res.err = fmt.Errorf("warm-up: %v", err)
			return res
		}
	}
	secs := wrkSeconds(cfg.duration)
	wcfg := cfg
	wcfg.warmup, wcfg.duration = 0, time.Duration(secs)*time.Second
	var w window
	wr, cpu, err := runWrk(cfg, r, scriptPath, target, secs, filepath.Join(cfg.outDir, tag+".wrk.txt"),
		func(start time.Time) { w = sampleWindow(wcfg, func() *statSource { return srv.src }, start) })
	if err != nil {
		res.err = err
		return res
	}
	lr := &loadResult{Requests: wr.requests, RPS: wr.rps,
		Errors:  json.RawMessage(strconv.FormatFloat(wr.non2xx+wr.sockErrors, 'f', 0, 64)),
		Latency: latency{P50: wr.p50, P90: nan, P99: wr.p99, P999: nan, Max: nan, Mean: wr.meanUs}}
	lr.ClientCPU = nan
	if wr.requests > 0 {
		lr.ClientCPU = float64(cpu.Microseconds()) / wr.requests
	}
	res.load = lr
	res.allocsReq, res.cpuReq = w.perRequest(lr.RPS)
	if w.err != nil {
		res.statsNote = w.err.Error()
	}
	switch {
	case wr.non2xx > 0 || wr.sockErrors > 0:
		res.err = fmt.Errorf("wrk: %.0f non-2xx responses, %s", wr.non2xx, strings.TrimSpace("socket errors: "+wr.sockDetail))
	case wr.requests <= 0:
		res.err = errors.New("wrk: no request completed")
	default:
		// Every answer must be the checked reply: wrk does not read
		// bodies, so a server answering something else would show in the
		// bytes read per request.
		if per, want := wr.bytesRead/wr.requests, float64(replySize); per < want*0.98 || per > want*1.02 {
			res.err = fmt.Errorf("wrk: %.1f bytes read per request, want %d (the checked reply): the server answered something else", per, replySize)
		}
	}
	select {
	case <-srv.done:
		res.err = fmt.Errorf("server exited during the run:\n%s", srv.tail.String())
	default:
	}
	return res
}
