// Command clusterbench measures the scale-out figures of issue 11 (make
// cluster-bench) against a running cluster: redis-server (or, with
// CLUSTER=3, a 3-master Redis Cluster: issue 22), three `mcpwire serve
// --state redis://…` replicas and HAProxy, as deploy/cluster.sh starts
// them. It runs under the script, which names the cluster in its
// environment:
//
//	deploy/cluster.sh -- bin/clusterbench [flags]
//
// Three phases:
//
//   - fanout: for each run of -runs (FANOUT@RATE), -listeners
//     subscriptions/listen streams are opened through the balancer
//     (leastconn spreads them over the replicas), listener i subscribed to
//     bench://rK/gJ/ with J = i mod (listeners/FANOUT); then `touch
//     {uri: bench://rK/gJ/SEQ}` is called RATE times a second for -d,
//     open loop, straight to the replicas in turn, so each update reaches
//     FANOUT listeners, most of them held by another replica. The send
//     time of each update is kept by sequence number; each listener takes
//     publish→receive latency per delivery and counts deliveries per
//     sequence number (missing, duplicates).
//   - publish: -max-c callers call touch in a closed loop, replicas in
//     turn, on a URI no listener matches (with -listeners streams open on
//     another prefix): the publish rate the backplane sustains, and the CPU
//     of every process.
//   - handles: -callers callers through the balancer in a closed loop,
//     each on its own draft: draft_create, draft_append, draft_append with
//     an idempotency key, draft_read, -handle-d each.
//
// Every phase reports the CPU of redis-server, the replicas, HAProxy and
// this process over its window (% of one core) and the load average.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/deploy/internal/proxyhttp"
)

var (
	listeners  = flag.Int("listeners", 1000, "listen streams per fan-out run (and open during the publish phase)")
	runsFlag   = flag.String("runs", "1@1000,10@1000,100@1000,1000@20,1000@100,1000@200", "fan-out runs, FANOUT@RATE: each update reaches FANOUT listeners, RATE updates a second")
	dur        = flag.Duration("d", 10*time.Second, "publishing time of each fan-out run")
	drain      = flag.Duration("drain", 5*time.Second, "after publishing, wait at most this long for the deliveries still on their way")
	publishers = flag.Int("publishers", 32, "concurrent touch calls at most in a fan-out run (open loop)")
	maxD       = flag.Duration("max-d", 5*time.Second, "length of the publish phase")
	maxC       = flag.Int("max-c", 32, "closed-loop touch callers in the publish phase")
	handleD    = flag.Duration("handle-d", 5*time.Second, "length of each handle operation in the handles phase")
	callers    = flag.Int("callers", 16, "closed-loop callers in the handles phase")
	listenVia  = flag.String("listen-via", "balancer", "where listen streams are opened: balancer, or replicas (in turn, bypassing HAProxy: its share of the latency)")
	phases     = flag.String("phases", "fanout,publish,handles", "phases to run")
)

func main() {
	flag.Parse()
	front := os.Getenv("MCPWIRE_CLUSTER_URL")
	replicas := strings.Fields(os.Getenv("MCPWIRE_CLUSTER_REPLICAS"))
	if front == "" || len(replicas) == 0 {
		fatalf("MCPWIRE_CLUSTER_URL and MCPWIRE_CLUSTER_REPLICAS are not set: run under deploy/cluster.sh -- (make cluster-bench)")
	}
	raiseFDLimit()
	b := &bench{front: front, replicas: replicas, procs: parsePIDs(os.Getenv("MCPWIRE_CLUSTER_PIDS"))}
	var names []string
	for _, p := range b.procs {
		names = append(names, p.name)
	}
	procNames = strings.Join(names, ", ")
	fmt.Printf("clusterbench: %s, replicas %v, state %s, GOMAXPROCS %d of %d CPUs, load average %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), replicas, os.Getenv("MCPWIRE_CLUSTER_STATE"), runtime.GOMAXPROCS(0), runtime.NumCPU(), loadavg())
	want := map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		want[strings.TrimSpace(p)] = true
	}
	if want["fanout"] {
		runs, err := parseRuns(*runsFlag)
		if err != nil {
			fatalf("-runs: %v", err)
		}
		b.subs = runSubs(runs)
		began := time.Now()
		ls, err := b.openAll(*listeners, b.subs)
		if err != nil {
			fatalf("opening %d listen streams: %v", *listeners, err)
		}
		b.ls = ls
		fmt.Printf("%d listen streams acknowledged in %s: %s\n", len(ls), time.Since(began).Round(time.Millisecond), spread(ls))
		var rows []fanoutResult
		for k, r := range runs {
			if err := b.reopen(ls, b.subs); err != nil {
				fatalf("re-opening the listen streams cut in the previous run: %v", err)
			}
			res, err := b.fanout(ls, k, r.fanout, r.rate)
			if err != nil {
				fatalf("fan-out run %d@%d: %v", r.fanout, r.rate, err)
			}
			rows = append(rows, res)
			printFanout(rows[len(rows)-1:], true)
		}
		fmt.Println()
		fmt.Printf("### fan-out (%d listeners opened via the %s, %s per run, touch straight to the replicas in turn)\n\n", *listeners, *listenVia, *dur)
		printFanout(rows, false)
	}
	if want["publish"] {
		if err := b.publishMax(); err != nil {
			fatalf("publish: %v", err)
		}
	}
	if want["handles"] {
		if err := b.handles(); err != nil {
			fatalf("handles: %v", err)
		}
	}
	for _, l := range b.ls {
		l.close()
	}
	fmt.Printf("\nload average at the end: %s\n", loadavg())
}

// procNames names the processes whose CPU every table reports, in order
// (MCPWIRE_CLUSTER_PIDS, then this one).
var procNames string

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clusterbench: "+format+"\n", args...)
	os.Exit(1)
}

type run struct{ fanout, rate int }

func parseRuns(s string) ([]run, error) {
	var out []run
	for _, f := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(f), "@")
		fo, err1 := strconv.Atoi(a)
		rate, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || fo < 1 || rate < 1 || fo > *listeners {
			return nil, fmt.Errorf("%q: want FANOUT@RATE with 1 ≤ FANOUT ≤ listeners", f)
		}
		out = append(out, run{fo, rate})
	}
	return out, nil
}

type bench struct {
	front    string
	replicas []string
	procs    []proc
	ls       []*listener          // the fan-out phase's streams, kept for the publish phase
	subs     func(i int) []string // their subscriptions
	opened   atomic.Int64         // listen streams opened straight to the replicas
}

// Clocks: every time is nanoseconds since base, on the monotonic clock;
// publisher and listeners share the process, so no clock skew.
var base = time.Now()

func now() int64 { return int64(time.Since(base)) }

// HTTP ----------------------------------------------------------------------

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

var idSeq atomic.Int64

// direct talks to a replica itself. The replicas trust 127.0.0.1 as a
// proxy (--trusted-proxy), so each direct connection starts with a PROXY
// header, as HAProxy's do.
var direct = proxyhttp.Client(256)

// viaBalancer carries calls through HAProxy; streams has one connection
// per listen stream.
var (
	viaBalancer = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	streams     = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	// directStreams opens listen streams straight to the replicas.
	directStreams = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true,
		DialContext: direct.Transport.(*http.Transport).DialContext}}
)

func request(ctx context.Context, url, method, name, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return req, nil
}

type toolResult struct {
	Result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call runs tools/call and returns the first text block of its result.
func call(c *http.Client, url, tool, args string) (string, error) {
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(idSeq.Add(1), 10) +
		`,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + meta + `}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := request(ctx, url, "tools/call", tool, body)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data: ")); ok {
				b = d // the last message is the response
			}
		}
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, b)
	}
	var r toolResult
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("%v: %.200s", err, b)
	}
	if r.Error != nil {
		return "", fmt.Errorf("error %d %s", r.Error.Code, r.Error.Message)
	}
	if r.Result.IsError || len(r.Result.Content) == 0 {
		return "", fmt.Errorf("tool error: %.200s", b)
	}
	return r.Result.Content[0].Text, nil
}

// Listen streams ---------------------------------------------------------------

type listener struct {
	subs    []string // resourceSubscriptions
	replica string
	body    io.ReadCloser
	got     atomic.Int64 // deliveries in the current run
	mu      sync.Mutex   // guards st
	st      *runState    // the current run's tallies; nil between runs
	closing atomic.Bool
	done    chan struct{}
}

// runState is one listener's tallies in one fan-out run.
type runState struct {
	prefix  []byte  // the run's URI prefix
	sent    []int64 // shared: send time of each sequence number (atomic)
	counts  []uint8 // deliveries per sequence number
	lats    []int32 // publish→receive, µs, one per delivery
	last    int64   // receive time of the last delivery
	foreign int     // updates outside the run's sequence numbers
}

var (
	ackTimeout = 10 * time.Second
	uriKey     = []byte(`"uri":"`)
	updated    = []byte(`"method":"notifications/resources/updated"`)
)

// listen opens l's stream (on the balancer, or with -listen-via replicas
// on a replica) and waits for its acknowledgement.
func (b *bench) listen(l *listener) error {
	subs, _ := json.Marshal(l.subs)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(idSeq.Add(1), 10) +
		`,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":` + string(subs) + `},` + meta + `}}`
	url, client, name := b.front, streams, ""
	if *listenVia == "replicas" {
		i := int(b.opened.Add(1)) % len(b.replicas)
		url, client, name = b.replicas[i], directStreams, "r"+strconv.Itoa(i+1)
	}
	req, err := request(context.Background(), url, "subscriptions/listen", "", body)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		m, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return fmt.Errorf("listen: HTTP %d %s", resp.StatusCode, m)
	}
	if l.replica = resp.Header.Get("X-Mcp-Replica"); l.replica == "" {
		l.replica = name
	}
	l.body, l.done = resp.Body, make(chan struct{})
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	acked := make(chan error, 1)
	go l.pump(br, acked)
	select {
	case err := <-acked:
		if err != nil {
			resp.Body.Close()
			<-l.done
		}
		return err
	case <-time.After(ackTimeout):
		resp.Body.Close()
		<-l.done
		return fmt.Errorf("listen: no acknowledgement within %s", ackTimeout)
	}
}

func (l *listener) pump(br *bufio.Reader, acked chan<- error) {
	defer close(l.done)
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// Longer than any notification of ours: skip the rest.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			if first {
				acked <- fmt.Errorf("listen: stream ended before its acknowledgement: %v", err)
			}
			return
		}
		d, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		if first {
			first = false
			if !bytes.Contains(d, []byte("notifications/subscriptions/acknowledged")) {
				acked <- fmt.Errorf("listen: first message %.200s", d)
				return
			}
			acked <- nil
			continue
		}
		t := now()
		if !bytes.Contains(d, updated) {
			continue
		}
		l.mu.Lock()
		if st := l.st; st != nil {
			if seq, ok := st.seq(d); ok {
				lat := (t - atomic.LoadInt64(&st.sent[seq])) / 1000
				st.lats = append(st.lats, int32(min(lat, 1<<31-1)))
				if st.counts[seq] < 255 {
					st.counts[seq]++
				}
				st.last = t
				l.got.Add(1)
			} else {
				st.foreign++
			}
		}
		l.mu.Unlock()
	}
}

// seq extracts SEQ from `"uri":"PREFIXgJ/SEQ"`.
func (l *runState) seq(d []byte) (int, bool) {
	i := bytes.Index(d, uriKey)
	if i < 0 {
		return 0, false
	}
	u := d[i+len(uriKey):]
	j := bytes.IndexByte(u, '"')
	if j < 0 || !bytes.HasPrefix(u, l.prefix) {
		return 0, false
	}
	u = u[:j]
	k := bytes.LastIndexByte(u, '/')
	n, err := strconv.Atoi(string(u[k+1:]))
	if err != nil || n < 0 || n >= len(l.sent) {
		return 0, false
	}
	return n, true
}

func (l *listener) close() {
	l.closing.Store(true)
	l.body.Close()
	<-l.done
}

// ended reports whether the stream ended by itself.
func (l *listener) ended() bool {
	select {
	case <-l.done:
		return !l.closing.Load()
	default:
		return false
	}
}

// openAll opens n streams, 64 at a time; subs(i) are stream i's
// subscriptions.
func (b *bench) openAll(n int, subs func(i int) []string) ([]*listener, error) {
	ls := make([]*listener, n)
	err := b.reopen(ls, subs)
	return ls, err
}

// reopen opens the streams of ls that are nil or ended.
func (b *bench) reopen(ls []*listener, subs func(i int) []string) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 64)
	for i := range ls {
		if ls[i] != nil && !ls[i].ended() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			l := &listener{subs: subs(i)}
			if err := b.listen(l); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
			ls[i] = l
		}()
	}
	wg.Wait()
	if first != nil {
		for i, l := range ls {
			if l != nil {
				l.close()
				ls[i] = nil
			}
		}
	}
	return first
}

func spread(ls []*listener) string {
	per := map[string]int{}
	for _, l := range ls {
		per[l.replica]++
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, per[k]))
	}
	return strings.Join(parts, ", ")
}

// Fan-out ---------------------------------------------------------------------

type fanoutResult struct {
	fanout, rate, listeners int
	spread                  string
	published, pubErrors    int
	pubRate                 float64 // touch calls answered / publishing time
	lagMax                  time.Duration
	expected, unique        int64
	deliveries, dups        int64
	ended                   int
	perSec                  float64
	lat                     percentiles
	cpu                     []cpuShare
	load                    string
}

// runSubs are listener i's subscriptions: its group in every run.
func runSubs(runs []run) func(i int) []string {
	return func(i int) []string {
		var out []string
		for k, r := range runs {
			out = append(out, fmt.Sprintf("bench://r%d/g%d/", k, i%(*listeners/r.fanout)))
		}
		return out
	}
}

func (b *bench) fanout(ls []*listener, k, fanout, rate int) (fanoutResult, error) {
	n := len(ls)
	groups := n / fanout
	total := int(int64(rate) * int64(*dur) / int64(time.Second))
	prefix := fmt.Sprintf("bench://r%d/", k)
	sent := make([]int64, total)
	fmt.Printf("\nrun %d: %d listeners, each update to %d of them (%d groups), %d updates/s for %s (%d updates)\n",
		k+1, n, fanout, groups, rate, *dur, total)
	res := fanoutResult{fanout: fanout, rate: rate, listeners: n, spread: spread(ls)}
	fmt.Printf("  streams: %s\n", res.spread)
	for _, l := range ls {
		l.mu.Lock()
		l.st = &runState{prefix: []byte(prefix), sent: sent, counts: make([]uint8, total)}
		l.got.Store(0)
		l.mu.Unlock()
	}
	time.Sleep(300 * time.Millisecond)

	snap := b.cpuSnap()
	start := now()
	period := float64(time.Second) / float64(rate)
	var next, errs atomic.Int64
	var lagMax atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range *publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq := int(next.Add(1) - 1)
				if seq >= total {
					return
				}
				due := start + int64(float64(seq)*period)
				if d := due - now(); d > 0 {
					time.Sleep(time.Duration(d))
				}
				t := now()
				for lag := t - due; ; {
					m := lagMax.Load()
					if lag <= m || lagMax.CompareAndSwap(m, lag) {
						break
					}
				}
				atomic.StoreInt64(&sent[seq], t)
				uri := fmt.Sprintf("%sg%d/%d", prefix, seq%groups, seq)
				if _, err := call(direct, b.replicas[seq%len(b.replicas)], "touch", `{"uri":`+strconv.Quote(uri)+`}`); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	pubEnd := now()
	res.published, res.pubErrors = total, int(errs.Load())
	res.pubRate = float64(total-res.pubErrors) / (float64(pubEnd-start) / 1e9)
	res.lagMax = time.Duration(lagMax.Load())
	if e := firstErr.Load(); e != nil {
		fmt.Printf("  %d touch calls failed, first: %s\n", res.pubErrors, e)
	}
	// Expected deliveries per listener: the updates of its group.
	exp := func(i int) int64 {
		g := i % groups
		if g >= total {
			return 0
		}
		return int64((total-1-g)/groups + 1)
	}
	for i := range ls {
		res.expected += exp(i)
	}
	deadline := time.Now().Add(*drain)
	for {
		var got int64
		for _, l := range ls {
			got += l.got.Load()
		}
		if got >= res.expected || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	end := now()
	res.cpu = b.cpuSince(snap, end-start)
	res.load = loadavg()
	var all []int32
	var last int64
	for _, l := range ls {
		if l.ended() {
			res.ended++
		}
		l.mu.Lock()
		st := l.st
		l.st = nil
		l.mu.Unlock()
		all = append(all, st.lats...)
		res.deliveries += int64(len(st.lats))
		for _, c := range st.counts {
			if c > 0 {
				res.unique++
			}
			if c > 1 {
				res.dups += int64(c - 1)
			}
		}
		last = max(last, st.last)
	}
	if last > start {
		res.perSec = float64(res.deliveries) / (float64(last-start) / 1e9)
	}
	res.lat = pct(all)
	return res, nil
}

func printFanout(rows []fanoutResult, short bool) {
	if short {
		r := rows[0]
		fmt.Printf("  published %d (%.0f/s answered, %d errors, schedule lag max %s); deliveries %d of %d expected, %d missing, %d duplicates, %d streams ended early; %.0f deliveries/s\n",
			r.published, r.pubRate, r.pubErrors, r.lagMax.Round(time.Microsecond), r.deliveries, r.expected, r.expected-r.unique, r.dups, r.ended, r.perSec)
		fmt.Printf("  latency µs: p50 %s p90 %s p99 %s p99.9 %s max %s; CPU %s; load %s\n",
			us(r.lat.p50), us(r.lat.p90), us(r.lat.p99), us(r.lat.p999), us(r.lat.max), cpuLine(r.cpu), r.load)
		return
	}
	fmt.Println("| listeners / update | updates/s offered | updates/s answered | deliveries/s | p50 µs | p90 µs | p99 µs | max µs | missing | duplicates | streams cut | CPU % (" + procNames + ") |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s |\n",
			grp(int64(r.fanout)), grp(int64(r.rate)), grp(int64(r.pubRate+0.5)), grp(int64(r.perSec+0.5)),
			us(r.lat.p50), us(r.lat.p90), us(r.lat.p99), us(r.lat.max), grp(r.expected-r.unique), r.dups, r.ended, cpuCols(r.cpu))
	}
}

// Publish phase -----------------------------------------------------------------

func (b *bench) publishMax() error {
	n := *listeners
	ls := b.ls
	if ls == nil {
		b.subs = func(int) []string { return []string{"bench://idle/"} }
		var err error
		if ls, err = b.openAll(n, b.subs); err != nil {
			return err
		}
		b.ls = ls
	} else if err := b.reopen(ls, b.subs); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	snap := b.cpuSnap()
	r := closedLoop(*maxC, *maxD, func(_ int, s int64) error {
		_, err := call(direct, b.replicas[int(s)%len(b.replicas)], "touch", `{"uri":"bench://busy/`+strconv.FormatInt(s, 10)+`"}`)
		return err
	})
	cpu := b.cpuSince(snap, r.window)
	p := pct(r.lats)
	rate := float64(len(r.lats)) / (float64(r.window) / 1e9)
	fmt.Printf("\n### publish (touch, closed loop, %d callers straight to the replicas in turn, %s; %d listen streams open, subscribed to other URIs: %s)\n\n", *maxC, *maxD, n, spread(ls))
	if r.errs > 0 {
		fmt.Printf("%d touch calls failed, first: %s\n\n", r.errs, r.firstErr)
	}
	fmt.Println("| publishes/s | p50 µs | p99 µs | errors | CPU % (" + procNames + ") | load average |")
	fmt.Println("| ---: | ---: | ---: | ---: | --- | --- |")
	fmt.Printf("| %s | %s | %s | %d | %s | %s |\n", grp(int64(rate+0.5)), us(p.p50), us(p.p99), r.errs, cpuCols(cpu), loadavg())
	return nil
}

// Handles phase -------------------------------------------------------------------

func (b *bench) handles() error {
	c := *callers
	hs := make([]string, c)
	for i := range hs {
		h, err := call(viaBalancer, b.front, "draft_create", `{"text":"x"}`)
		if err != nil {
			return fmt.Errorf("draft_create: %v", err)
		}
		hs[i] = h
	}
	type op struct {
		name string
		args func(caller int, n int64) (tool, args string)
	}
	ops := []op{
		{"draft_create", func(int, int64) (string, string) { return "draft_create", `{"text":"hello"}` }},
		{"draft_append", func(i int, _ int64) (string, string) {
			return "draft_append", `{"handle":` + strconv.Quote(hs[i]) + `,"text":"x"}`
		}},
		{"draft_append + idempotencyKey", func(i int, n int64) (string, string) {
			return "draft_append", `{"handle":` + strconv.Quote(hs[i]) + `,"text":"y","idempotencyKey":"k` + strconv.FormatInt(n, 10) + `"}`
		}},
		{"draft_read", func(i int, _ int64) (string, string) { return "draft_read", `{"handle":` + strconv.Quote(hs[i]) + `}` }},
	}
	fmt.Printf("\n### handles (%d callers through the balancer, closed loop, %s per operation; each caller on its own draft)\n\n", c, *handleD)
	fmt.Println("| operation | calls/s | p50 µs | p99 µs | errors | CPU % (" + procNames + ") | load average |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | --- | --- |")
	for _, o := range ops {
		snap := b.cpuSnap()
		r := closedLoop(c, *handleD, func(i int, seq int64) error {
			tool, args := o.args(i, seq)
			_, err := call(viaBalancer, b.front, tool, args)
			return err
		})
		cpu := b.cpuSince(snap, r.window)
		p := pct(r.lats)
		fmt.Printf("| %s | %s | %s | %s | %d | %s | %s |\n", o.name, grp(int64(float64(len(r.lats))/(float64(r.window)/1e9)+0.5)),
			us(p.p50), us(p.p99), r.errs, cpuCols(cpu), loadavg())
		if r.errs > 0 {
			fmt.Printf("\n%s: %d calls failed, first: %s\n\n", o.name, r.errs, r.firstErr)
		}
	}
	return nil
}

// loopResult is what closedLoop measured.
type loopResult struct {
	lats     []int32 // every successful call's latency, µs
	errs     int64   // calls that failed
	firstErr string  // the first failure's text
	window   int64   // the measured time, ns
}

// closedLoop runs callers goroutines, each calling op(caller, seq) back to
// back for d (seq numbers the calls across all callers, from 1).
func closedLoop(callers int, d time.Duration, op func(caller int, seq int64) error) loopResult {
	start := now()
	stop := start + int64(d)
	var seq, errs atomic.Int64
	var firstErr atomic.Value
	lats := make([][]int32, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for now() < stop {
				t := now()
				if err := op(i, seq.Add(1)); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lats[i] = append(lats[i], int32((now()-t)/1000))
			}
		}()
	}
	wg.Wait()
	r := loopResult{errs: errs.Load(), window: now() - start}
	if e, ok := firstErr.Load().(string); ok {
		r.firstErr = e
	}
	for _, l := range lats {
		r.lats = append(r.lats, l...)
	}
	return r
}

// Figures -------------------------------------------------------------------------

type percentiles struct{ n, p50, p90, p99, p999, max int64 }

func pct(v []int32) percentiles {
	if len(v) == 0 {
		return percentiles{p50: -1, p90: -1, p99: -1, p999: -1, max: -1}
	}
	slices.Sort(v)
	at := func(q float64) int64 { return int64(v[min(len(v)-1, int(q*float64(len(v))))]) }
	return percentiles{n: int64(len(v)), p50: at(0.50), p90: at(0.90), p99: at(0.99), p999: at(0.999), max: int64(v[len(v)-1])}
}

func us(v int64) string {
	if v < 0 {
		return "—"
	}
	return grp(v)
}

// grp writes n with thousands separators.
func grp(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Processes -------------------------------------------------------------------------

type proc struct {
	name string
	pid  int
}

type cpuShare struct {
	name string
	pct  float64
}

func parsePIDs(s string) []proc {
	var out []proc
	for _, f := range strings.Fields(s) {
		name, p, ok := strings.Cut(f, "=")
		if pid, err := strconv.Atoi(p); ok && err == nil {
			out = append(out, proc{name, pid})
		}
	}
	return append(out, proc{"bench", os.Getpid()})
}

// clkTck is USER_HZ, 100 on every Linux architecture Go supports.
const clkTck = 100

// cpuTicks is utime + stime of pid from /proc/PID/stat.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

func (b *bench) cpuSnap() []int64 {
	out := make([]int64, len(b.procs))
	for i, p := range b.procs {
		out[i] = cpuTicks(p.pid)
	}
	return out
}

func (b *bench) cpuSince(snap []int64, window int64) []cpuShare {
	out := make([]cpuShare, len(b.procs))
	for i, p := range b.procs {
		t := cpuTicks(p.pid)
		out[i] = cpuShare{p.name, -1}
		if t >= 0 && snap[i] >= 0 && window > 0 {
			out[i].pct = float64(t-snap[i]) * (1e9 / clkTck) / float64(window) * 100
		}
	}
	return out
}

func cpuLine(c []cpuShare) string {
	var parts []string
	for _, s := range c {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", s.name, s.pct))
	}
	return strings.Join(parts, " ")
}

func cpuCols(c []cpuShare) string {
	var parts []string
	for _, s := range c {
		if s.pct < 0 {
			parts = append(parts, "?")
		} else {
			parts = append(parts, strconv.Itoa(int(s.pct+0.5)))
		}
	}
	return strings.Join(parts, ", ")
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
