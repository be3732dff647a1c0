// Command compare is the side-by-side comparison harness behind
// bench/compare.sh (make compare, make compare-fanout). It starts each
// server, drives it with `mcpwire load` (and, for the HTTP rows, wrk; for
// the TCP rows, tsung: generators we did not write, see wrk.go and
// tsung.go), samples the server's counters over SIGUSR1 (or /proc when the
// binary has no such hook) and prints one table.
//
// Rounds are interleaved: every round runs every row once (roundOrder: the
// row order reversed every other round and rotated), and each row's ratio
// to its raw ceiling is taken against the ceiling's run of the same round,
// so slow drift of the machine hits all rows alike. The table reports
// medians over rounds.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/report"
)

type config struct {
	bin       string // directory holding mcpwire and the bench binaries
	gen       string // the load generator binary (default bin/mcpwire)
	rounds    int
	duration  time.Duration
	warmup    time.Duration
	basePort  int
	fanout    bool
	listeners []int
	pubRate   int
	outDir    string
	only      string
	waitQuiet time.Duration
	tsung     string // tsung binary for the outside-generator rows ("" = none)
	wrk       string // wrk binary for the outside-generator HTTP rows ("" = none)
	wrkDir    string // directory of the wrk scripts (bench/wrk)
	tlsDir    string // the HTTPS rows' test CA, certificate and key (made by runCompare)
	sockDir   string // temporary directory for the Unix socket rows
	base      string // another mcpwire binary (the code before a change): its rows run beside ours ("" = none)
}

func main() {
	var cfg config
	var listeners string
	flag.StringVar(&cfg.bin, "bin", "bin", "directory with mcpwire, rawfast and the bench-* servers")
	flag.StringVar(&cfg.gen, "gen", "", "load generator binary (default: BIN/mcpwire; its `load` subcommand is used)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "interleaved rounds")
	flag.DurationVar(&cfg.duration, "d", 5*time.Second, "measured duration of each run")
	flag.DurationVar(&cfg.warmup, "warmup", time.Second, "unmeasured warm-up before each run")
	flag.IntVar(&cfg.basePort, "port", 18180, "first loopback port used by the servers")
	flag.BoolVar(&cfg.fanout, "fanout", false, "run the fan-out section (subscriptions/listen) instead of the request rows")
	flag.StringVar(&listeners, "listeners", "1000,5000", "fan-out: comma-separated listen stream counts")
	flag.IntVar(&cfg.pubRate, "publish-rate", 20, "fan-out: touch calls per second")
	flag.StringVar(&cfg.outDir, "out", "bench/out", "directory for raw generator output and server stderr")
	flag.StringVar(&cfg.tlsDir, "tls-dir", "", "where the HTTPS rows' throwaway test CA and certificate are written (default: OUT/tls)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated substrings: run only matching rows (and the ceilings they are compared with)")
	flag.StringVar(&cfg.tsung, "tsung", "tsung", "tsung binary for the outside-generator TCP rows (\"\" or a missing binary: those rows are skipped)")
	flag.StringVar(&cfg.wrk, "wrk", "wrk", "wrk binary for the outside-generator HTTP rows (\"\" or a missing binary: those rows are skipped)")
	flag.StringVar(&cfg.wrkDir, "wrk-scripts", "bench/wrk", "directory of the wrk fixture scripts")
	flag.StringVar(&cfg.base, "base", "", "another mcpwire binary, e.g. built from the commit before a change: each mcpwire row (HTTP, HTTPS, stdio, TCP, Unix; not legacy) runs again with it as \"mcpwire@base …\", interleaved in the same rounds")
	flag.DurationVar(&cfg.waitQuiet, "wait-quiet", 0, "before starting, wait up to this long for the 1-minute load average to fall below half the CPU count")
	flag.Parse()
	if cfg.tlsDir == "" {
		cfg.tlsDir = filepath.Join(cfg.outDir, "tls")
	}
	for _, f := range strings.Split(listeners, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			cfg.listeners = append(cfg.listeners, n)
		}
	}
	if cfg.rounds < 1 {
		cfg.rounds = 1
	}
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		fatal(err)
	}
	if cfg.waitQuiet > 0 {
		waitQuiet(cfg.waitQuiet)
	}
	var ok bool
	if cfg.fanout {
		ok = runFanout(cfg)
	} else {
		ok = runCompare(cfg)
	}
	fmt.Printf("load average at the end: %s\n", report.LoadAvg())
	if !ok {
		os.Exit(1)
	}
}

func load1() float64 {
	f := strings.Fields(report.LoadAvg())
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func waitQuiet(limit time.Duration) {
	deadline := time.Now().Add(limit)
	want := float64(runtime.NumCPU()) / 2
	for load1() >= want && time.Now().Before(deadline) {
		fmt.Fprintf(os.Stderr, "waiting for a quieter machine: load average %s (want < %.1f)\n", report.LoadAvg(), want)
		time.Sleep(15 * time.Second)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(2)
}

// ---------------------------------------------------------------- rows

type kind string

const (
	kindHTTP  kind = "http"
	kindStdio kind = "stdio"
	kindTCP   kind = "tcp"
	kindUnix  kind = "unix"
)

// generator is the load generator of a row.
type generator string

const (
	genLoad  generator = "mcpwire load"
	genTsung generator = "tsung"
	genWrk   generator = "wrk"
)

// fixture is the request a row sends: the standard fixture (a
// progressToken in _meta) or the same without the token (HTTP rows only).
type fixture struct {
	name      string // the table's fixture column
	noToken   bool   // mcpwire load: -progress-token=false
	wrkScript string // wrk: the script in bench/wrk sending it
}

var (
	fixToken = fixture{name: "token", wrkScript: "fixture.lua"}
	// fixLegacy is the standard fixture as a 2025-11-25 client sends it
	// (the legacy endpoint; the harness adds the session's header).
	fixLegacy  = fixture{name: "token", wrkScript: "fixture-legacy.lua"}
	fixNoToken = fixture{name: "no token", noToken: true, wrkScript: "fixture-notoken.lua"}
)

// row is one line of the request table.
type row struct {
	name     string
	kind     kind
	conns    int // connections (stdio: processes)
	inflight int // requests in flight on each
	gen      generator
	fixture  fixture
	ceiling  bool
	tls      bool   // HTTPS (https:// target)
	plain    string // an HTTPS row: its plain HTTP twin (same server, shape, generator, fixture), for the TLS ratio
	// path is the HTTP endpoint ("" = /mcp); session: initialize there
	// first and send the Mcp-Session-Id on every request (legacy rows).
	path    string
	session bool
	// server is the command line: started by the harness for http, tcp
	// and unix rows (ADDR is replaced by the row's address or socket
	// path), handed to the generator's stdio target for stdio rows.
	server []string
}

func (r row) shape() string { return fmt.Sprintf("%d×%d", r.conns, r.inflight) }

// group is what a row is compared within: the transport, the shape, the
// generator and the fixture; each group has one ceiling.
func (r row) group() string {
	g := fmt.Sprintf("%s %s %s %s", r.kind, r.shape(), r.gen, r.fixture.name)
	if r.tls {
		g += " tls"
	}
	return g
}

func requestRows(cfg config) []row {
	b := func(name string) string { return filepath.Join(cfg.bin, name) }
	stdio := func(name string, ceiling bool, server ...string) row {
		return row{name: name, kind: kindStdio, conns: 1, inflight: 64, gen: genLoad, fixture: fixToken, ceiling: ceiling, server: server}
	}
	// HTTP: every server at 64×1 with the standard fixture; mcpwire and
	// its ceiling also without the progressToken and at 1×1. Each under
	// mcpwire load and, next to it, under wrk.
	var rows []row
	gens := []generator{genLoad}
	if cfg.wrk != "" {
		gens = append(gens, genWrk)
	}
	for _, v := range []struct {
		suffix string
		conns  int
		fix    fixture
		all    bool // go-sdk and mcp-go too
	}{{"", 64, fixToken, true}, {" no token", 64, fixNoToken, false}, {" 1×1", 1, fixToken, false}} {
		type srv struct {
			name    string
			ceiling bool
			args    []string
		}
		servers := []srv{
			{"mcpwire HTTP", false, []string{b("mcpwire"), "serve", "--http", "ADDR", "--log-level", "error"}},
			{"go-sdk HTTP", false, []string{b("bench-gosdk"), "-http", "ADDR"}},
			{"mcp-go HTTP", false, []string{b("bench-mcpgo"), "-http", "ADDR"}},
			// -splice-id (here and on the raw line servers): mcpwire load
			// matches replies to requests by id, so the raw ceilings copy
			// the id token into their otherwise fixed reply (a byte
			// search, no JSON parsing).
			{"raw fasthttp", true, []string{b("rawfast"), "-addr", "ADDR", "-splice-id"}},
			// The floor (internal/benchfloor): raw fasthttp plus the
			// checks every 2026-07-28 server makes before it answers,
			// the body parsed by mcpwire's codec. Not a ceiling: a row
			// between raw fasthttp and mcpwire, so that each ratio says
			// how much of mcpwire's gap any conforming server pays.
			{"floor HTTP", false, []string{b("rawfast"), "-addr", "ADDR", "-floor"}},
		}
		for _, sv := range servers {
			if !v.all && !sv.ceiling && sv.name != "mcpwire HTTP" {
				continue
			}
			for _, g := range gens {
				name := sv.name + v.suffix
				if g == genWrk {
					name += " (wrk)"
				}
				rows = append(rows, row{name: name, kind: kindHTTP, conns: v.conns, inflight: 1, gen: g,
					fixture: v.fix, ceiling: sv.ceiling, server: sv.args})
			}
		}
	}
	// HTTPS against raw fasthttp over TLS, and next to the plain twins (tls.go).
	rows = append(rows, tlsRows(cfg, b)...)
	// The legacy endpoint (transport/legacy, 2025-11-25 with a session) and the
	// modern one of the same server, under wrk: what serving old clients
	// costs per call, and that mounting it costs the modern path nothing.
	if cfg.wrk != "" {
		legacySrv := []string{b("mcpwire"), "serve", "--http", "ADDR", "--legacy-path", "/mcp-2025", "--log-level", "error"}
		rows = append(rows,
			row{name: "mcpwire HTTP beside legacy (wrk)", kind: kindHTTP, conns: 64, inflight: 1, gen: genWrk, fixture: fixToken, server: legacySrv},
			row{name: "mcpwire HTTP legacy 2025-11-25 (wrk)", kind: kindHTTP, conns: 64, inflight: 1, gen: genWrk, fixture: fixLegacy,
				server: legacySrv, path: "/mcp-2025", session: true})
	}
	rows = append(rows,
		stdio("mcpwire stdio", false, b("mcpwire"), "serve", "--stdio", "--log-level", "error"),
		stdio("go-sdk stdio", false, b("bench-gosdk")),
		stdio("mcp-go stdio", false, b("bench-mcpgo")),
		stdio("raw stdio lines", true, b("bench-rawtcp"), "-splice-id"),
	)
	// Sockets: mcpwire serve --tcp/--unix (gnet event loops) against a bare
	// gnet line server, one request pipeline of 64 and 64 connections of 1.
	for _, k := range []kind{kindTCP, kindUnix} {
		label, mflag, rflag := "TCP", "--tcp", "-tcp"
		if k == kindUnix {
			label, mflag, rflag = "Unix", "--unix", "-unix"
		}
		for _, sh := range [][2]int{{1, 64}, {64, 1}} {
			sock := func(name string, ceiling bool, server ...string) row {
				r := row{kind: k, conns: sh[0], inflight: sh[1], gen: genLoad, fixture: fixToken, ceiling: ceiling, server: server}
				r.name = name + " " + label + " " + r.shape()
				return r
			}
			rows = append(rows,
				sock("mcpwire", false, b("mcpwire"), "serve", mflag, "ADDR", "--log-level", "error"),
				sock("raw gnet", true, b("bench-rawgnet"), rflag, "ADDR", "-splice-id"))
			if k == kindTCP && sh[0] == 64 {
				// The former raw TCP row: goroutine-per-connection net server.
				rows = append(rows, sock("raw net", false, b("bench-rawtcp"), "-tcp", "ADDR", "-splice-id"))
			}
		}
	}
	// The same TCP pair under a generator we did not write.
	if cfg.tsung != "" {
		ts := func(name string, ceiling bool, server ...string) row {
			return row{name: name, kind: kindTCP, conns: 64, inflight: 1, gen: genTsung, fixture: fixToken, ceiling: ceiling, server: server}
		}
		rows = append(rows,
			ts("mcpwire TCP 64×1 (tsung)", false, b("mcpwire"), "serve", "--tcp", "ADDR", "--log-level", "error"),
			ts("raw gnet TCP 64×1 (tsung)", true, b("bench-rawgnet"), "-tcp", "ADDR", "-splice-id"))
	}
	return withBase(rows, b("mcpwire"), cfg.base)
}

// withBase adds, after each mcpwire row but the legacy ones, the same row
// served by the base binary, so that a change is measured against the
// code before it in the same rounds and against the same ceilings. An
// HTTPS row's base twin has the base's plain HTTP row as its plain twin.
func withBase(rows []row, ours, base string) []row {
	if base == "" {
		return rows
	}
	out := make([]row, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out, r)
		if len(r.server) == 0 || r.server[0] != ours || r.session || !strings.HasPrefix(r.name, "mcpwire ") || strings.Contains(r.name, "legacy") {
			continue
		}
		b := r
		b.name = baseName(r.name)
		b.server = append([]string{base}, r.server[1:]...)
		if r.plain != "" {
			b.plain = baseName(r.plain)
		}
		out = append(out, b)
	}
	return out
}

// baseName is the name of the base binary's twin of our row name.
func baseName(name string) string { return "mcpwire@base " + strings.TrimPrefix(name, "mcpwire ") }

// ---------------------------------------------------------------- generator output

type latency struct {
	P50  float64 `json:"p50"` // NaN when the generator does not tell (tsung)
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type loadResult struct {
	Requests  float64         `json:"requests"`
	RPS       float64         `json:"rps"`
	Errors    json.RawMessage `json:"errors"`
	Latency   latency         `json:"latency_us"`
	ClientCPU float64         `json:"client_cpu_us_per_req"`
	raw       map[string]any
}

// errorCount sums the errors field, whether it is a number or an object of
// per-kind counts.
func (r *loadResult) errorCount() float64 {
	return sumNumbers(r.Errors)
}

func sumNumbers(raw json.RawMessage) float64 {
	if len(raw) == 0 {
		return 0
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		var s float64
		for _, v := range m {
			s += sumNumbers(v)
		}
		return s
	}
	return 0
}

// parseLoad reads the generator's JSON: the last line of stdout that parses
// as an object (the generator may print progress before it).
func parseLoad(out []byte) (*loadResult, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	// Try the whole output first (pretty-printed JSON), then line by line from the end.
	cands := [][]byte{bytes.TrimSpace(out)}
	if i := bytes.IndexByte(out, '{'); i > 0 {
		cands = append(cands, bytes.TrimSpace(out[i:]))
	}
	for i := len(lines) - 1; i >= 0; i-- {
		cands = append(cands, lines[i])
	}
	for _, c := range cands {
		if len(c) == 0 || c[0] != '{' {
			continue
		}
		var r loadResult
		if json.Unmarshal(c, &r) != nil {
			continue
		}
		_ = json.Unmarshal(c, &r.raw)
		return &r, nil
	}
	return nil, fmt.Errorf("no JSON result in generator output (%d bytes)", len(out))
}

// ---------------------------------------------------------------- process stats

type stats struct {
	mallocs int64 // -1: unknown
	cpuUS   int64
	rssKB   int64
	at      time.Time
}

func parseStatsLine(line string) (stats, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "stats ")
	if !ok {
		return stats{}, false
	}
	s := stats{mallocs: -1, at: time.Now()}
	found := 0
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "mallocs":
			s.mallocs = n
			found++
		case "cpu_us":
			s.cpuUS = n
			found++
		case "rss_kb":
			s.rssKB = n
			found++
		}
	}
	return s, found >= 2
}

// procStats reads CPU and RSS of pid from /proc (no allocation count).
func procStats(pid int) (stats, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stats{}, err
	}
	// Fields after the parenthesised command name; utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stats{}, errors.New("bad /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return stats{}, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	s := stats{mallocs: -1, cpuUS: (ut + st) * 1e6 / hz, at: time.Now()}
	if sb, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(sb), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				s.rssKB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			}
		}
	}
	return s, nil
}

// hasStatsHook reports whether the binary answers SIGUSR1 with a stats line
// (sending SIGUSR1 to a Go program without a handler kills it).
var hookCache sync.Map

func hasStatsHook(path string) bool {
	if v, ok := hookCache.Load(path); ok {
		return v.(bool)
	}
	b, err := os.ReadFile(path)
	ok := err == nil && bytes.Contains(b, []byte("stats mallocs="))
	hookCache.Store(path, ok)
	return ok
}

// statSource samples one server process.
type statSource struct {
	pid  int
	hook bool
	// lines receives the stats lines the process writes (hook only).
	lines chan stats
}

func (s *statSource) sample() (stats, error) {
	if !s.hook {
		return procStats(s.pid)
	}
	// Drop stale lines, signal, wait for the answer.
	for len(s.lines) > 0 {
		<-s.lines
	}
	if err := syscall.Kill(s.pid, syscall.SIGUSR1); err != nil {
		return stats{}, err
	}
	select {
	case st := <-s.lines:
		return st, nil
	case <-time.After(2 * time.Second):
		// No answer: fall back to /proc so CPU and RSS still come through.
		st, err := procStats(s.pid)
		if err != nil {
			return stats{}, errors.New("no stats line after SIGUSR1")
		}
		return st, nil
	}
}

// scanStats forwards stats lines from r to ch and keeps the rest in tail.
func scanStats(r io.Reader, ch chan stats, tail *tailBuf) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if st, ok := parseStatsLine(sc.Text()); ok {
			select {
			case ch <- st:
			default:
			}
			continue
		}
		tail.add(sc.Text())
	}
}

// tailBuf keeps the last lines of a stream for error reports.
type tailBuf struct {
	mu    sync.Mutex
	lines []string
	w     io.Writer
}

func (t *tailBuf) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		fmt.Fprintln(t.w, l)
	}
	t.lines = append(t.lines, l)
	if len(t.lines) > 20 {
		t.lines = t.lines[len(t.lines)-20:]
	}
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// ---------------------------------------------------------------- servers

type server struct {
	cmd  *exec.Cmd
	src  *statSource
	tail *tailBuf
	done chan struct{}
	log  *os.File
}

// startServer starts args (ADDR replaced by addr) and waits until it
// accepts connections on addr (network "tcp" or "unix").
func startServer(args []string, network, addr string, logPath string) (*server, error) {
	argv := make([]string, len(args))
	for i, a := range args {
		argv[i] = strings.ReplaceAll(a, "ADDR", addr)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	lf, _ := os.Create(logPath)
	if err := cmd.Start(); err != nil {
		if lf != nil {
			lf.Close()
		}
		return nil, err
	}
	s := &server{cmd: cmd, tail: &tailBuf{}, done: make(chan struct{}), log: lf}
	if lf != nil {
		s.tail.w = lf
	}
	s.src = &statSource{pid: cmd.Process.Pid, hook: hasStatsHook(argv[0]), lines: make(chan stats, 4)}
	go func() {
		scanStats(stderr, s.src.lines, s.tail)
		_ = cmd.Wait()
		close(s.done)
	}()
	if err := waitListening(network, addr, s.done, 10*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %v\n%s", argv[0], err, s.tail.String())
	}
	return s, nil
}

func waitListening(network, addr string, done chan struct{}, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("exited before listening")
		default:
		}
		c, err := net.DialTimeout(network, addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("not listening after " + limit.String())
}

func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(3 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if s.log != nil {
		s.log.Close()
	}
}

// portFree reports whether nothing listens on addr.
func portFree(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// ---------------------------------------------------------------- stdio children

// findDescendant returns the pid of a descendant of root whose executable is exe.
func findDescendant(root int, exe string) int {
	want, _ := filepath.Abs(exe)
	if r, err := filepath.EvalSymlinks(want); err == nil {
		want = r
	}
	for _, pid := range descendants(root) {
		if got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && got == want {
			return pid
		}
	}
	return 0
}

// parents maps every process to its parent, from /proc.
func parents() map[int]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
	}
	return parent
}

// descendants lists the pids below root in the process tree, nearest first.
func descendants(root int) []int {
	children := map[int][]int{}
	for pid, pp := range parents() {
		children[pp] = append(children[pp], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// fileStats follows a stderr file for stats lines.
func followFile(ctx context.Context, path string, ch chan stats, tail *tailBuf) {
	var off int64
	var partial []byte
	for {
		f, err := os.Open(path)
		if err == nil {
			_, _ = f.Seek(off, io.SeekStart)
			b, _ := io.ReadAll(f)
			f.Close()
			off += int64(len(b))
			partial = append(partial, b...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				l := string(partial[:i])
				partial = partial[i+1:]
				if st, ok := parseStatsLine(l); ok {
					select {
					case ch <- st:
					default:
					}
				} else {
					tail.add(l)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------- one run

type runResult struct {
	load      *loadResult
	err       error
	allocsReq float64 // NaN: unknown
	cpuReq    float64
	statsNote string
	genStderr string
}

func genPath(cfg config) string {
	if cfg.gen != "" {
		return cfg.gen
	}
	return filepath.Join(cfg.bin, "mcpwire")
}

// runGenerator starts `mcpwire load args... target`, calls during(pid,
// start) while it runs, and parses its JSON.
func runGenerator(cfg config, args []string, outFile string, during func(pid int, start time.Time)) (*loadResult, string, error) {
	cmd := exec.Command(genPath(cfg), append([]string{"load"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	var wg sync.WaitGroup
	if during != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			during(cmd.Process.Pid, start)
		}()
	}
	err := cmd.Wait()
	wg.Wait()
	if outFile != "" {
		_ = os.WriteFile(outFile, append(append(stdout.Bytes(), "\n--- stderr\n"...), stderr.Bytes()...), 0o644)
	}
	res, perr := parseLoad(stdout.Bytes())
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = msg[len(msg)-600:]
		}
		return res, stderr.String(), fmt.Errorf("generator: %v: %s", err, msg)
	}
	if perr != nil {
		return nil, stderr.String(), perr
	}
	return res, stderr.String(), nil
}

// window samples the server at the start and near the end of the measured
// part of a run: before at start+warmup+margin, after at
// start+warmup+duration-margin. Per-request figures are the deltas divided
// by rps × the time between the samples.
type window struct {
	before, after stats
	err           error
}

func sampleWindow(cfg config, src func() *statSource, start time.Time) window {
	var w window
	margin := cfg.duration / 20
	if margin > 250*time.Millisecond {
		margin = 250 * time.Millisecond
	}
	sleepUntil(start.Add(cfg.warmup + margin))
	s := src()
	if s == nil {
		w.err = errors.New("server process not found")
		return w
	}
	if w.before, w.err = s.sample(); w.err != nil {
		return w
	}
	sleepUntil(start.Add(cfg.warmup + cfg.duration - margin))
	w.after, w.err = s.sample()
	return w
}

func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

func (w window) perRequest(rps float64) (allocs, cpu float64) {
	allocs, cpu = nan, nan
	if w.err != nil || rps <= 0 {
		return
	}
	reqs := rps * w.after.at.Sub(w.before.at).Seconds()
	if reqs <= 0 {
		return
	}
	cpu = float64(w.after.cpuUS-w.before.cpuUS) / reqs
	if w.before.mallocs >= 0 && w.after.mallocs >= 0 {
		allocs = float64(w.after.mallocs-w.before.mallocs) / reqs
	}
	return
}

var nan = func() float64 { var z float64; return z / z }()

func isNaN(f float64) bool { return f != f }

func callArgs(cfg config, r row) []string {
	args := []string{"-workload", "call", "-tool", "echo", "-args", `{"text":"hello world"}`,
		"-c", strconv.Itoa(r.conns), "-w", strconv.Itoa(r.inflight),
		"-d", cfg.duration.String(), "-warmup", cfg.warmup.String(), "-json"}
	if r.fixture.noToken {
		args = append(args, "-progress-token=false")
	}
	return append(args, tlsLoadArgs(cfg, r)...)
}

// endpoint is where the harness starts a row's server: a loopback port
// (from the row's index) or a socket path in the temporary directory.
func endpoint(cfg config, r row, idx int) (network, addr, target string) {
	switch r.kind {
	case kindUnix:
		addr = filepath.Join(cfg.sockDir, fmt.Sprintf("row%d.sock", idx))
		return "unix", addr, "unix://" + addr
	case kindHTTP:
		addr = fmt.Sprintf("127.0.0.1:%d", cfg.basePort+idx)
		if r.tls {
			return "tcp", addr, "https://" + addr + "/mcp"
		}
		return "tcp", addr, "http://" + addr + "/mcp"
	default:
		addr = fmt.Sprintf("127.0.0.1:%d", cfg.basePort+idx)
		return "tcp", addr, "tcp://" + addr
	}
}

func runRow(cfg config, r row, idx, round int) runResult {
	var res runResult
	tag := fmt.Sprintf("r%d-%s", round, report.Slug(r.name))
	outFile := filepath.Join(cfg.outDir, tag+".json")
	switch {
	case r.gen == genTsung:
		res = runTsungRow(cfg, r, idx, tag)
	case r.gen == genWrk:
		res = runWrkRow(cfg, r, idx, tag)
	case r.kind != kindStdio:
		network, addr, target := endpoint(cfg, r, idx)
		if network == "tcp" && !portFree(addr) {
			res.err = fmt.Errorf("port %s is busy", addr)
			return res
		}
		srv, err := startServer(r.server, network, addr, filepath.Join(cfg.outDir, tag+".stderr"))
		if err != nil {
			res.err = err
			return res
		}
		defer srv.stop()
		var w window
		res.load, res.genStderr, res.err = runGenerator(cfg, append(callArgs(cfg, r), target), outFile,
			func(_ int, start time.Time) { w = sampleWindow(cfg, func() *statSource { return srv.src }, start) })
		if res.load != nil {
			res.allocsReq, res.cpuReq = w.perRequest(res.load.RPS)
		}
		if w.err != nil {
			res.statsNote = w.err.Error()
		}
		select {
		case <-srv.done:
			if res.err == nil {
				res.err = fmt.Errorf("server exited during the run:\n%s", srv.tail.String())
			}
		default:
		}
	default: // stdio
		errFile := filepath.Join(cfg.outDir, tag+".stderr")
		_ = os.WriteFile(errFile, nil, 0o644)
		wrapper, _ := filepath.Abs(filepath.Join("bench", "stdio-stats.sh"))
		cmdline := append([]string{wrapper, errFile}, r.server...)
		target := "stdio:" + strings.Join(cmdline, " ")
		exe := r.server[0]
		hook := hasStatsHook(exe)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tail := &tailBuf{}
		lines := make(chan stats, 4)
		go followFile(ctx, errFile, lines, tail)
		var w window
		res.load, res.genStderr, res.err = runGenerator(cfg, append(callArgs(cfg, r), target), outFile,
			func(gpid int, start time.Time) {
				w = sampleWindow(cfg, func() *statSource {
					deadline := time.Now().Add(3 * time.Second)
					for time.Now().Before(deadline) {
						if pid := findDescendant(gpid, exe); pid > 0 {
							return &statSource{pid: pid, hook: hook, lines: lines}
						}
						time.Sleep(10 * time.Millisecond)
					}
					return nil
				}, start)
			})
		if res.load != nil {
			res.allocsReq, res.cpuReq = w.perRequest(res.load.RPS)
		}
		if w.err != nil {
			res.statsNote = w.err.Error()
		}
	}
	if res.err == nil && res.load != nil {
		// Failed requests are counted in requests too; the ratio is taken
		// against requests alone, which errs on the strict side.
		total := max(res.load.Requests, 1)
		if e := res.load.errorCount(); e/total > 0.01 {
			res.err = fmt.Errorf("%.0f errors in %.0f requests (%.1f%%): %s", e, res.load.Requests, 100*e/total, string(res.load.Errors))
		}
		if res.load.Requests <= 0 {
			res.err = errors.New("no request completed")
		}
	}
	return res
}

// ---------------------------------------------------------------- request table

func runCompare(cfg config) bool {
	var skipNotes []string
	if cfg.tsung != "" {
		if p, err := exec.LookPath(cfg.tsung); err != nil {
			skipNotes = append(skipNotes, fmt.Sprintf("tsung rows skipped: %v (bench/compare.sh installs the Debian package tsung; TSUNG=0 skips it)", err))
			cfg.tsung = ""
		} else {
			cfg.tsung = p
		}
	}
	if cfg.wrk != "" {
		if p, err := exec.LookPath(cfg.wrk); err != nil {
			skipNotes = append(skipNotes, fmt.Sprintf("wrk rows skipped: %v (bench/compare.sh installs the Debian package wrk; WRK=0 skips it)", err))
			cfg.wrk = ""
		} else {
			cfg.wrk = p
		}
	}
	if err := writeTestCert(cfg.tlsDir); err != nil {
		fatal(err)
	}
	rows := selectRows(requestRows(cfg), cfg.only)
	if len(rows) == 0 {
		fatal(fmt.Errorf("no row matches -only %q", cfg.only))
	}
	for _, r := range rows {
		if _, err := os.Stat(r.server[0]); err != nil {
			fatal(fmt.Errorf("%s: %v (run make compare, which builds it)", r.name, err))
		}
	}
	if _, err := os.Stat(genPath(cfg)); err != nil {
		fatal(err)
	}
	fixture, err := fixtureLine()
	if err != nil {
		fatal(err)
	}
	dir, err := os.MkdirTemp("", "compare-sock-") // the Unix socket rows' sockets
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg.sockDir = dir
	header(cfg)
	results := make([][]runResult, len(rows)) // [row][round]
	for i := range results {
		results[i] = make([]runResult, cfg.rounds)
	}
	for round := 0; round < cfg.rounds; round++ {
		for _, i := range roundOrder(len(rows), round) {
			fmt.Fprintf(os.Stderr, "round %d/%d: %-30s ", round+1, cfg.rounds, rows[i].name)
			t0 := time.Now()
			res := runRow(cfg, rows[i], i, round+1)
			results[i][round] = res
			if res.err != nil {
				fmt.Fprintf(os.Stderr, "FAILED (%v)\n", res.err)
			} else {
				fmt.Fprintf(os.Stderr, "%10.0f req/s  mean %6.0f µs  p99 %7s µs  gen %5.1f µs/req  (%s)\n",
					res.load.RPS, res.load.Latency.Mean, report.FmtNum(res.load.Latency.P99, 0), res.load.ClientCPU,
					time.Since(t0).Round(100*time.Millisecond))
			}
			if res.statsNote != "" {
				fmt.Fprintf(os.Stderr, "    server stats: %s\n", res.statsNote)
			}
		}
	}
	return printTable(cfg, rows, results, fixture, skipNotes)
}

// roundOrder is the order in which round r (from 0) runs n rows: the list
// rotated by r/2, read forwards in even rounds and backwards in odd ones.
// Over two rounds every row runs once before and once after each other
// row. Rotation alone kept neighbours in one order in every round, so a
// row's place could bias it; round 12 ran one binary as both "mcpwire" and
// "@base" and read them 2-5 % apart on the line rows with that order, and
// still apart on two of three rows with this one (profiles/README.md,
// round 12): the order is one confound fewer, not the whole cause.
func roundOrder(n, r int) []int {
	o := make([]int, n)
	for k := range o {
		o[k] = (k + r/2) % n
	}
	if r%2 == 1 {
		slices.Reverse(o)
	}
	return o
}

// selectRows keeps, when only is set, the rows whose name matches it and
// the ceilings they are compared with.
func selectRows(rows []row, only string) []row {
	if only == "" {
		return rows
	}
	groups := map[string]bool{}
	twins := map[string]bool{}
	for _, r := range rows {
		if report.MatchAny(r.name, only) {
			groups[r.group()] = true
			if r.plain != "" {
				twins[r.plain] = true
			}
		}
	}
	var keep []row
	for _, r := range rows {
		if report.MatchAny(r.name, only) || r.ceiling && groups[r.group()] || twins[r.name] {
			keep = append(keep, r)
		}
	}
	return keep
}

func header(cfg config) {
	model := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	nproc := strconv.Itoa(runtime.NumCPU())
	if out, err := exec.Command("nproc").Output(); err == nil {
		nproc = strings.TrimSpace(string(out))
	}
	fmt.Printf("machine: nproc=%s, CPU %q, %s/%s, %s\n", nproc, model, runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Printf("NOTE: every server and the load generator run on this same machine and share its %s cores;\n", nproc)
	fmt.Printf("      the numbers are relative (row vs row, row vs raw ceiling), not absolute capacity.\n")
	fmt.Printf("load average at the start: %s", report.LoadAvg())
	if l := load1(); l >= float64(runtime.NumCPU())/2 {
		fmt.Printf("  (WARNING: the machine is busy with other work; expect noisy numbers)")
	}
	fmt.Println()
	if cfg.fanout {
		fmt.Printf("fan-out: %d round(s), %s measured after %s warm-up, publish rate %d touch/s, listeners %v\n\n",
			cfg.rounds, cfg.duration, cfg.warmup, cfg.pubRate, cfg.listeners)
	} else {
		fmt.Printf("rounds: %d (interleaved), %s measured after %s warm-up per run; shape = connections (stdio: processes) × requests in flight on each\n\n",
			cfg.rounds, cfg.duration, cfg.warmup)
	}
}

func printTable(cfg config, rows []row, results [][]runResult, fixture []byte, skipNotes []string) bool {
	ok := true
	ceilingOf := map[string]int{}
	for i, r := range rows {
		if r.ceiling {
			ceilingOf[r.group()] = i
		}
	}
	head := []string{"row", "shape", "generator", "fixture", "req/s", "vs ceiling", "mean µs", "p50 µs", "p99 µs", "srv allocs/req", "srv CPU µs/req", "gen CPU µs/req", "errors"}
	used := map[generator]bool{}
	noToken := false
	for _, r := range rows {
		used[r.gen] = true
		noToken = noToken || r.fixture.noToken
	}
	var out [][]string
	var notes []string
	for i, r := range rows {
		var rps, ratio, mean, p50, p99, allocs, cpu, gen, errs []float64
		failed := 0
		for round, res := range results[i] {
			if res.err != nil || res.load == nil {
				failed++
				notes = append(notes, fmt.Sprintf("%s, round %d: %v", r.name, round+1, res.err))
				continue
			}
			rps = append(rps, res.load.RPS)
			mean = append(mean, res.load.Latency.Mean)
			p50 = append(p50, res.load.Latency.P50)
			p99 = append(p99, res.load.Latency.P99)
			allocs = append(allocs, res.allocsReq)
			cpu = append(cpu, res.cpuReq)
			gen = append(gen, res.load.ClientCPU)
			errs = append(errs, res.load.errorCount())
			if ci, ok := ceilingOf[r.group()]; ok {
				c := results[ci][round]
				if c.err == nil && c.load != nil && c.load.RPS > 0 {
					ratio = append(ratio, res.load.RPS/c.load.RPS)
				}
			}
		}
		if failed > 0 {
			ok = false
		}
		ratioCell := report.FmtNum(report.Median(ratio), 2)
		if r.ceiling {
			ratioCell = "ceiling"
		}
		rpsCell := report.FmtNum(report.Median(rps), 0)
		if failed == len(results[i]) {
			rpsCell = "FAILED"
		} else if failed > 0 {
			rpsCell += fmt.Sprintf(" (%d/%d failed)", failed, len(results[i]))
		}
		out = append(out, []string{r.name, r.shape(), string(r.gen), r.fixture.name, rpsCell, ratioCell,
			report.FmtNum(report.Median(mean), 0), report.FmtNum(report.Median(p50), 0), report.FmtNum(report.Median(p99), 0), report.FmtNum(report.Median(allocs), 1),
			report.FmtNum(report.Median(cpu), 1), report.FmtNum(report.Median(gen), 1), report.FmtNum(report.Median(errs), 0)})
	}
	report.PrintGrid(head, out, 4)
	fmt.Println()
	tlsNotes(rows, results)
	cpuAboveNotes(rows, results)
	fmt.Println("Fixture \"token\" (the standard fixture, every row but the \"no token\" ones): tools/call echo {\"text\":\"hello world\"}")
	fmt.Printf("with params._meta protocolVersion, clientCapabilities, clientInfo and a progressToken equal to the id; %d bytes +\nnewline for id 1:\n  %s\n", len(fixture), fixture)
	if noToken {
		fmt.Println("Fixture \"no token\": the same without the progressToken (mcpwire load -progress-token=false; wrk: fixture-notoken.lua).")
	}
	fmt.Println("mcpwire load sends it as one line per request (stdio, TCP, Unix) or as the body of a POST with the mirrored")
	fmt.Println("MCP-Protocol-Version/Mcp-Method/Mcp-Name headers (HTTP), with a fresh id per request.")
	if used[genTsung] {
		fmt.Println("tsung sends the same line (id 1 every time, one request in flight per connection) and counts a request done")
		fmt.Println("when reply bytes arrive; it reports a mean per second, no percentiles.")
	}
	if used[genWrk] {
		fmt.Printf("wrk (-t1 -cN --latency, N = the shape's connections, one request in flight on each) sends the request of\n")
		fmt.Printf("%s/fixture.lua or fixture-notoken.lua unchanged (id 1, clientInfo name \"wrk\", the same headers); it does\n", cfg.wrkDir)
		fmt.Println("not read bodies, so before its runs the harness sends the script's request once and checks the reply is the")
		fmt.Println("echo result (mcpwire, go-sdk and mcp-go answer it with 200 and application/json), and a run fails on any")
		fmt.Println("non-2xx response or socket error, or when the bytes read per request differ from that reply's by over 2%.")
		fmt.Println("wrk has no warm-up: each wrk row runs it WARMUP (whole seconds) unmeasured, then DURATION measured.")
	}
	fmt.Println()
	fmt.Println("req/s, latencies and the per-request columns are medians over the rounds; \"vs ceiling\" is the median of each")
	fmt.Println("round's ratio to the ceiling of the same transport, shape, generator and fixture run in that round (HTTP: raw fasthttp;")
	fmt.Println("stdio: raw stdio lines; TCP and Unix: raw gnet). srv allocs/req and srv CPU µs/req come from the server process")
	fmt.Println("(SIGUSR1 stats before/after the measured window); \"—\" = not available (no SIGUSR1 hook: CPU from /proc,")
	fmt.Println("allocations unknown; tsung reports a mean per second, no percentiles). gen CPU µs/req is the load generator's")
	fmt.Println("own CPU (tsung: the Erlang VM and its children, sampled over the window; wrk: its user+system CPU over the")
	fmt.Println("measured run / the requests it completed).")
	for _, n := range skipNotes {
		fmt.Println(n)
	}
	for _, n := range notes {
		fmt.Println("FAILED:", n)
	}
	requestChart.writeChartNote(cfg.outDir, head, out, append(skipNotes, prefixed("FAILED: ", notes)...)) // chart.go
	return ok
}
