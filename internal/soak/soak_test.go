//go:build soak

package soak

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
)

var (
	soakFor   = flag.Duration("soak", 2*time.Minute, "how long the load runs (warm-up included)")
	rate      = flag.Int("rate", 250, "operations per second per transport")
	workers   = flag.Int("workers", 8, "concurrent callers per transport")
	sampleDur = flag.Duration("sample", 5*time.Second, "time between samples of the servers")
	only      = flag.String("transports", "http,tcp,unix,stdio", "the transports that carry the load (comma-separated; the servers serve all four)")
	binPath   = flag.String("bin", "", "the mcpwire binary (default: built from this module)")
	maxDrift  = flag.Float64("drift", 0.10, "largest relative drift allowed between the warm-up plateau and the end")
	p99Drift  = flag.Float64("p99drift", 3.0, "largest relative rise of the echo p99 latency allowed between the plateau window and the last one (plus -p99slack)")
	p99Slack  = flag.Duration("p99slack", 40*time.Millisecond, "absolute p99 rise that is noise whatever its ratio")
)

// Absolute allowances under which a drift is noise, whatever its ratio:
// a few goroutines of requests in flight at the sampling instant, a
// little heap and RSS of runtime bookkeeping.
const (
	slackGoroutines = 8
	slackHeap       = 1 << 20
	slackRSS        = 2 << 20
)

type sample struct {
	at                   time.Duration
	rss, heap, goroutine float64
	stacks               string // goroutine profile, for the idle samples only
}

// server is one mcpwire process watched through its admin listener.
type server struct {
	name    string
	admin   string // host:port
	samples []sample
}

func TestSoak(t *testing.T) {
	if *soakFor < 30*time.Second {
		t.Fatalf("-soak %v: at least 30s (a warm-up and a plateau before the end)", *soakFor)
	}
	bin := *binPath
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "mcpwire")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpwire/mcpwire/cmd/mcpwire").CombinedOutput()
		if err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "mcp.sock")
	httpAddr, tcpAddr, adminAddr, stdioAdmin := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)

	// The network server: HTTP, TCP and Unix on one engine.
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve", "--http", httpAddr, "--tcp", tcpAddr, "--unix", sock,
		"--admin", adminAddr, "--admin-pprof", "--log-level", "warn", "--grace", "3s")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v", err)
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("serve did not stop after SIGTERM")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("serve log:\n%s", tail(string(b), 4000))
		}
	}()
	net1 := &server{name: "http+tcp+unix", admin: adminAddr}
	stdioSrv := &server{name: "stdio", admin: stdioAdmin}
	waitHealthy(t, net1)

	stop := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), *soakFor+2*time.Minute)
	defer cancel()

	targets := []struct{ name, spec string }{
		{"http", "http://" + httpAddr + "/mcp"},
		{"tcp", "tcp://" + tcpAddr},
		{"unix", "unix://" + sock},
		{"stdio", "stdio:" + bin + " serve --stdio --log-level warn --admin-pprof --admin " + stdioAdmin},
	}
	for _, name := range strings.Split(*only, ",") {
		if !slices.ContainsFunc(targets, func(tg struct{ name, spec string }) bool { return tg.name == name }) {
			t.Fatalf("-transports: no transport %q (http, tcp, unix, stdio)", name)
		}
	}
	// The baselines are taken after one operation of each kind: what a
	// server starts once, on first use (the engine's worker janitor,
	// fasthttp's date ticker), is not something the load left behind.
	for _, tg := range targets[:3] {
		c, err := target.Open(tg.spec, target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Discover(ctx); err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		warmUp(ctx, t, tg.name, c)
		_ = c.Close()
	}
	idle := map[*server]sample{net1: net1.idleSample(t)} // no client connected

	clients := map[string]*client.Client{}
	for _, tg := range targets {
		c, err := target.Open(tg.spec, target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Discover(ctx); err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		clients[tg.name] = c
	}
	waitHealthy(t, stdioSrv)
	warmUp(ctx, t, "stdio", clients["stdio"])
	servers := []*server{net1, stdioSrv}
	idle[stdioSrv] = stdioSrv.idleSample(t) // its client is its parent: connected from the start

	var st stats
	st.init()
	var wg sync.WaitGroup
	start := time.Now()
	for _, tg := range targets {
		if !slices.Contains(strings.Split(*only, ","), tg.name) {
			continue
		}
		c := clients[tg.name]
		// One long-lived listen stream per transport, touched every second.
		long := "test://soak/long/" + tg.name
		sub, err := c.Listen(ctx, client.Filter{ResourceSubscriptions: []string{long}})
		if err != nil {
			t.Fatalf("%s listen: %v", tg.name, err)
		}
		var longEvents atomic.Int64
		wg.Add(2)
		go func() {
			defer wg.Done()
			for e := range sub.Events() {
				if e.Kind == client.EventNotification && e.URI == long {
					longEvents.Add(1)
				}
			}
		}()
		go func() {
			defer wg.Done()
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			touches := int64(0)
			for {
				select {
				case <-stop:
					// Every touch reached the stream, one notification
					// each (or fewer: updates of one URI collapse while
					// a listener is behind; none here is behind for a
					// second).
					deadline := time.Now().Add(5 * time.Second)
					for longEvents.Load() < touches && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					if got := longEvents.Load(); got < touches {
						st.fail(tg.name, "long-lived listen stream", fmt.Errorf("%d of %d updates arrived", got, touches))
					}
					_ = sub.Close()
					return
				case <-tk.C:
					if _, err := c.CallTool(ctx, "touch", map[string]string{"uri": long}, nil); err != nil {
						st.fail(tg.name, "touch", err)
						continue
					}
					touches++
				}
			}
		}()
		// The paced mixed load.
		tick := make(chan struct{}, *workers)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(tick)
			every := time.Second / time.Duration(*rate)
			next := time.Now()
			for {
				next = next.Add(every)
				if d := time.Until(next); d > 0 {
					select {
					case <-stop:
						return
					case <-time.After(d):
					}
				}
				select {
				case tick <- struct{}{}:
				case <-stop:
					return
				default:
					st.behind.Add(1) // every worker busy: the op is skipped, not queued
				}
			}
		}()
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				uri := fmt.Sprintf("test://soak/%s/%d", tg.name, w)
				rng := rand.New(rand.NewPCG(uint64(w), 42))
				for range tick {
					st.op(ctx, tg.name, c, rng, uri, time.Since(start))
				}
			}()
		}
	}

	// Sample until the end.
	tk := time.NewTicker(*sampleDur)
	end := time.After(*soakFor)
	t.Logf("%8s %-14s %10s %10s %10s", "t", "server", "rss MiB", "heap MiB", "goroutines")
loop:
	for {
		select {
		case <-tk.C:
			for _, s := range servers {
				sm := s.sample(t, time.Since(start))
				s.samples = append(s.samples, sm)
				t.Logf("%8s %-14s %10.1f %10.2f %10.0f", sm.at.Round(time.Second), s.name, sm.rss/(1<<20), sm.heap/(1<<20), sm.goroutine)
			}
		case <-end:
			break loop
		}
	}
	tk.Stop()
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)

	// Idle again (C15): every listen stream closed, the network clients
	// gone (the stdio client stays: it owns its server). Once the
	// engine's idle workers have expired (10 s) and fasthttp's, the
	// goroutines are back to what the server had before the load, and
	// the live heap within 10 % of it (plus 1 MiB of pools and caches).
	for _, name := range []string{"http", "tcp", "unix"} {
		_ = clients[name].Close()
	}
	for _, s := range servers {
		before := idle[s]
		var after sample
		for deadline := time.Now().Add(40 * time.Second); ; {
			after = s.sample(t, time.Since(start))
			if after.goroutine <= before.goroutine+2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		t.Logf("idle %-14s goroutines %0.f → %0.f, heap %.2f → %.2f MiB, rss %.1f → %.1f MiB (before the load → after it)",
			s.name, before.goroutine, after.goroutine, before.heap/(1<<20), after.heap/(1<<20), before.rss/(1<<20), after.rss/(1<<20))
		if after.goroutine > before.goroutine+2 {
			t.Errorf("%s: %0.f goroutines once idle, %0.f before the load: the load left some behind", s.name, after.goroutine, before.goroutine)
			t.Logf("%s goroutines before the load:\n%s\nonce idle:\n%s", s.name, tail(before.stacks, 8000), tail(get(t, "http://"+s.admin+"/debug/pprof/goroutine?debug=1"), 8000))
		}
		if after.heap > before.heap*(1+*maxDrift)+slackHeap {
			t.Errorf("%s: live heap %.2f MiB once idle, %.2f MiB before the load", s.name, after.heap/(1<<20), before.heap/(1<<20))
		}
	}

	st.report(t, elapsed)
	warm := max(15*time.Second, *soakFor/5)
	for _, s := range servers {
		s.checkDrift(t, warm)
	}
	st.checkLatencyDrift(t, warm, *soakFor)
}

// checkLatencyDrift fails the soak when the echo p99 of the last full
// latency window rose by more than -p99drift (300 %: four times) plus
// -p99slack (40 ms) over the first full window after the warm-up (C18;
// a 6-minute run on the shared box saw windows from 11 to 39 ms, so a
// tighter bound would fail on the neighbours). RELIABILITY's goal
// is a drift under 10 %; the bound here is looser because the soak runs on
// shared CI machines where a window's p99 moves by tens of percent with
// the neighbours' load, while what it is there to catch (latency that
// grows with the run: a queue that is never drained, a map or list walked
// per call that only grows, a lock held longer as state piles up) shows as
// a multiple, not a few percent. Windows are latWindow (15 s) long; a run
// with no full window after the plateau's is reported and not judged.
func (s *stats) checkLatencyDrift(t *testing.T, warm, run time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := int((warm + latWindow - 1) / latWindow) // the first window wholly after the warm-up
	last := int(run/latWindow) - 1                   // the last window wholly inside the run
	if last <= first || last >= len(s.lat) {
		t.Logf("p99 drift: not judged (%d windows of %v, plateau window %d, last full window %d)", len(s.lat), latWindow, first, last)
		return
	}
	pl, end := s.lat[first], s.lat[last]
	if pl.TotalCount() == 0 || end.TotalCount() == 0 {
		t.Errorf("p99 drift: no echo calls in window %d or %d", first, last)
		return
	}
	p, e := float64(pl.ValueAtQuantile(99)), float64(end.ValueAtQuantile(99))
	limit := p*(1+*p99Drift) + float64(*p99Slack/time.Microsecond)
	t.Logf("p99 drift: echo p99 %.0f µs in window %d (plateau), %.0f µs in window %d (end): %+.1f %%; limit %.0f µs",
		p, first, e, last, 100*(e-p)/p, limit)
	if e > limit {
		t.Errorf("echo p99 latency drifted from %.0f µs (plateau, window %d) to %.0f µs (end, window %d): over %.0f µs (+%.0f %% + %v)",
			p, first, e, last, limit, 100**p99Drift, *p99Slack)
	}
}

// stats counts what the load did; every failure of a well-behaved call is
// an error of the soak.
type stats struct {
	mu       sync.Mutex
	ops      map[string]int64
	failures map[string]int64
	firstErr []string
	// echo latency per window of the run, for the p99 drift (reported).
	lat    []*hdrhistogram.Histogram
	latOf  map[string]*hdrhistogram.Histogram // per transport, the whole run
	behind atomic.Int64
}

const latWindow = 15 * time.Second

func (s *stats) init() {
	s.ops, s.failures = map[string]int64{}, map[string]int64{}
	s.latOf = map[string]*hdrhistogram.Histogram{}
}

func (s *stats) count(transport, op string) {
	s.mu.Lock()
	s.ops[transport+" "+op]++
	s.mu.Unlock()
}

func (s *stats) fail(transport, op string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[transport+" "+op]++
	if len(s.firstErr) < 10 {
		s.firstErr = append(s.firstErr, transport+" "+op+": "+err.Error())
	}
}

func (s *stats) latency(transport string, at, d time.Duration) {
	i := int(at / latWindow)
	s.mu.Lock()
	h := s.latOf[transport]
	if h == nil {
		h = hdrhistogram.New(1, int64(10*time.Second/time.Microsecond), 3)
		s.latOf[transport] = h
	}
	_ = h.RecordValue(max(1, int64(d/time.Microsecond)))
	for len(s.lat) <= i {
		s.lat = append(s.lat, hdrhistogram.New(1, int64(10*time.Second/time.Microsecond), 3))
	}
	_ = s.lat[i].RecordValue(max(1, int64(d/time.Microsecond)))
	s.mu.Unlock()
}

// op runs one operation of the mix: 70 % echo, 10 % sleep with progress,
// 9 % a short listen stream (open, touch, receive, close), 10 % tools/list,
// 1 % a call to an unknown tool (refused: -32602).
func (s *stats) op(ctx context.Context, transport string, c *client.Client, rng *rand.Rand, uri string, at time.Duration) {
	s.opOf(ctx, rng.IntN(100), transport, c, rng, uri, at)
}

// warmUp runs one operation of each kind of the mix on c; any failure ends
// the test.
func warmUp(ctx context.Context, t *testing.T, transport string, c *client.Client) {
	t.Helper()
	var st stats
	st.init()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 70, 80, 89, 99} {
		st.opOf(ctx, n, transport, c, rng, "test://soak/warm/"+transport, 0)
	}
	for _, e := range st.firstErr {
		t.Fatalf("warm-up: %s", e)
	}
}

// opOf runs the operation of the mix that n (0..99) selects.
func (s *stats) opOf(ctx context.Context, n int, transport string, c *client.Client, rng *rand.Rand, uri string, at time.Duration) {
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch {
	case n < 70:
		text := strconv.FormatUint(rng.Uint64(), 36)
		t0 := time.Now()
		res, err := c.CallTool(octx, "echo", map[string]string{"text": text}, nil)
		if err == nil && res.Text() != text {
			err = fmt.Errorf("echo answered %q, want %q", res.Text(), text)
		}
		if err != nil {
			s.fail(transport, "echo", err)
			return
		}
		s.latency(transport, at, time.Since(t0))
		s.count(transport, "echo")
	case n < 80:
		var progress atomic.Int32
		res, err := c.CallTool(octx, "sleep", map[string]int{"ms": 60, "steps": 3}, &client.CallOptions{
			OnProgress: func(client.Progress) { progress.Add(1) },
		})
		if err == nil && !strings.HasPrefix(res.Text(), "slept") {
			err = fmt.Errorf("sleep answered %q", res.Text())
		}
		if err == nil && progress.Load() == 0 {
			err = errors.New("no progress before the result")
		}
		if err != nil {
			s.fail(transport, "sleep+progress", err)
			return
		}
		s.count(transport, "sleep+progress")
	case n < 89:
		sub, err := c.Listen(octx, client.Filter{ResourceSubscriptions: []string{uri}})
		if err != nil {
			s.fail(transport, "listen", err)
			return
		}
		defer sub.Close()
		if _, err := c.CallTool(octx, "touch", map[string]string{"uri": uri}, nil); err != nil {
			s.fail(transport, "listen", err)
			return
		}
		for {
			select {
			case e, ok := <-sub.Events():
				if !ok {
					s.fail(transport, "listen", fmt.Errorf("stream ended: %v", sub.Err()))
					return
				}
				if e.Kind == client.EventNotification && e.URI == uri {
					s.count(transport, "listen")
					return
				}
			case <-octx.Done():
				s.fail(transport, "listen", errors.New("no update within 10 s"))
				return
			}
		}
	case n < 99:
		if _, err := c.ListTools(octx); err != nil {
			s.fail(transport, "tools/list", err)
			return
		}
		s.count(transport, "tools/list")
	default:
		_, err := c.CallTool(octx, "no-such-tool", nil, nil)
		var re *client.RPCError
		if !errors.As(err, &re) || re.Code != -32602 {
			s.fail(transport, "unknown tool", fmt.Errorf("want -32602, got %v", err))
			return
		}
		s.count(transport, "unknown tool (refused)")
	}
}

func (s *stats) report(t *testing.T, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.ops))
	var total int64
	for k, v := range s.ops {
		keys = append(keys, k)
		total += v
	}
	slices.Sort(keys)
	t.Logf("%d operations in %v (%.0f/s); %d ticks skipped with every worker busy", total, elapsed.Round(time.Second), float64(total)/elapsed.Seconds(), s.behind.Load())
	for _, k := range keys {
		t.Logf("  %-32s %8d", k, s.ops[k])
	}
	for i, h := range s.lat {
		if h.TotalCount() > 0 {
			t.Logf("  echo latency %3ds–%3ds: p50 %6d µs  p99 %6d µs  max %6d µs  (%d calls)", int((time.Duration(i) * latWindow).Seconds()),
				int((time.Duration(i+1) * latWindow).Seconds()), h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.Max(), h.TotalCount())
		}
	}
	names := slices.Sorted(maps.Keys(s.latOf))
	for _, k := range names {
		h := s.latOf[k]
		t.Logf("  echo latency %-5s whole run: p50 %6d µs  p90 %6d µs  p99 %6d µs  max %6d µs  (%d calls)", k,
			h.ValueAtQuantile(50), h.ValueAtQuantile(90), h.ValueAtQuantile(99), h.Max(), h.TotalCount())
	}
	for k, v := range s.failures {
		t.Errorf("%s: %d failures", k, v)
	}
	for _, e := range s.firstErr {
		t.Errorf("  %s", e)
	}
}

// checkDrift compares the median of the first samples after the warm-up
// (the plateau) with the median of the last ones.
func (s *server) checkDrift(t *testing.T, warm time.Duration) {
	var after []sample
	for _, sm := range s.samples {
		if sm.at >= warm {
			after = append(after, sm)
		}
	}
	if len(after) < 6 {
		t.Errorf("%s: %d samples after the warm-up; run longer or sample more often", s.name, len(after))
		return
	}
	k := max(3, len(after)/5)
	plateau, last := after[:k], after[len(after)-k:]
	for _, m := range []struct {
		name  string
		get   func(sample) float64
		slack float64
		unit  float64
	}{
		{"rss MiB", func(s sample) float64 { return s.rss }, slackRSS, 1 << 20},
		{"heap MiB", func(s sample) float64 { return s.heap }, slackHeap, 1 << 20},
		{"goroutines", func(s sample) float64 { return s.goroutine }, slackGoroutines, 1},
	} {
		p, e := median(plateau, m.get), median(last, m.get)
		drift := (e - p) / p
		t.Logf("drift %-14s %-10s plateau %10.2f  end %10.2f  %+6.1f %%", s.name, m.name, p/m.unit, e/m.unit, 100*drift)
		if drift > *maxDrift && e-p > m.slack {
			t.Errorf("%s: %s drifted %+.1f %% (%.2f → %.2f) between the plateau and the end (limit %.0f %%)",
				s.name, m.name, 100*drift, p/m.unit, e/m.unit, 100**maxDrift)
		}
	}
}

func median(ss []sample, get func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = get(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

var httpc = &http.Client{Timeout: 30 * time.Second}

// sample reads RSS and goroutines from /metrics, and the live heap after
// a collection from /debug/pprof/heap?gc=1 (its runtime.MemStats footer).
func (s *server) sample(t *testing.T, at time.Duration) sample {
	t.Helper()
	sm := sample{at: at}
	m := get(t, "http://"+s.admin+"/metrics")
	sm.rss = metric(t, m, "process_resident_memory_bytes")
	sm.goroutine = metric(t, m, "go_goroutines")
	h := get(t, "http://"+s.admin+"/debug/pprof/heap?gc=1&debug=1")
	sm.heap = memstat(t, h, "HeapAlloc")
	return sm
}

// idleSample is a sample with the server's goroutine stacks, to show what
// the load left behind when the idle check fails.
func (s *server) idleSample(t *testing.T) sample {
	sm := s.sample(t, 0)
	sm.stacks = get(t, "http://"+s.admin+"/debug/pprof/goroutine?debug=1")
	return sm
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := httpc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

func metric(t *testing.T, text, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

func memstat(t *testing.T, text, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# "+name+" = "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in the heap profile", name)
	return 0
}

func waitHealthy(t *testing.T, s *server) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := httpc.Get("http://" + s.admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the admin listener never became ready: %v", s.name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
