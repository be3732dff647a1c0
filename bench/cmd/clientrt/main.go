// Command clientrt compares MCP clients: mcpwire's client (through
// target.Open), the go-sdk v1.8.0 client and the mcp-go v1.2.1 client, each
// making tools/call echo {"text":"hello world"} in a closed loop against
// the same server, `mcpwire serve` (the reference server), over Streamable
// HTTP and stdio (all three) and TCP (mcpwire only: the others have no TCP
// transport). `make compare-clients` runs it.
//
// Every run is one child process (clientrt -child …) holding one client and
// nothing else, so its CPU time (getrusage) and allocations
// (runtime.MemStats) are that client's. HTTP and TCP servers are started by
// this process on a free loopback port, fresh for every run; a stdio server
// is started by the client under test, as its API does.
//
// Rounds are interleaved as in bench/cmd/compare: every round runs every
// row once, the order rotating by one row per round; the table reports
// medians over rounds, and "vs mcpwire" is the median of each round's
// ratio to the mcpwire row of the same transport and callers.
package main

import (
	"bufio"
	"bytes"
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/report"
)

type config struct {
	bin      string // directory holding mcpwire
	rounds   int
	duration time.Duration
	warmup   time.Duration
	callers  []int
	only     string
	outDir   string
	self     string // this executable (for -child)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		os.Exit(runChild(os.Args[2:]))
	}
	var cfg config
	var callers string
	flag.StringVar(&cfg.bin, "bin", "bin", "directory with the mcpwire binary (the reference server)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "interleaved rounds")
	flag.DurationVar(&cfg.duration, "d", 5*time.Second, "measured duration of each run")
	flag.DurationVar(&cfg.warmup, "warmup", time.Second, "unmeasured warm-up before each run (after connecting)")
	flag.StringVar(&callers, "c", "1,16", "concurrent callers (one client shared by all): comma-separated list, one set of rows each")
	flag.StringVar(&cfg.only, "only", "", "comma-separated substrings: run only rows whose name matches (and the mcpwire rows they are compared with)")
	flag.StringVar(&cfg.outDir, "out", "bench/out", "directory for each run's JSON and stderr (\"\": none)")
	flag.Parse()
	for _, f := range strings.Split(callers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-c: bad caller count %q", f))
		}
		cfg.callers = append(cfg.callers, n)
	}
	cfg.rounds = max(cfg.rounds, 1)
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	cfg.self = self
	if _, err := os.Stat(serverBin(cfg)); err != nil {
		fatal(fmt.Errorf("%v (build it: go build -o bin/mcpwire ./cmd/mcpwire, or make compare-clients)", err))
	}
	if cfg.outDir != "" {
		if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
			fatal(err)
		}
	}
	ok := run(cfg)
	fmt.Printf("load average at the end: %s\n", report.LoadAvg())
	if !ok {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "clientrt:", err)
	os.Exit(2)
}

func serverBin(cfg config) string {
	p, _ := filepath.Abs(filepath.Join(cfg.bin, "mcpwire"))
	return p
}

// ---------------------------------------------------------------- rows

// row is one line of the table: a client, a transport, a caller count.
type row struct {
	client    string // mcpwire, go-sdk, mcp-go
	transport string // http, stdio, tcp
	callers   int
}

var transportLabel = map[string]string{"http": "HTTP", "stdio": "stdio", "tcp": "TCP"}

func (r row) name() string {
	return fmt.Sprintf("%s %s c=%d", r.client, transportLabel[r.transport], r.callers)
}

// ref is the mcpwire row r is compared with.
func (r row) ref() row { return row{client: "mcpwire", transport: r.transport, callers: r.callers} }

func allRows(cfg config) []row {
	var rows []row
	for _, c := range cfg.callers {
		for _, tr := range []string{"http", "stdio", "tcp"} {
			for _, cl := range []string{"mcpwire", "go-sdk", "mcp-go"} {
				if tr == "tcp" && cl != "mcpwire" {
					continue // go-sdk and mcp-go have no TCP client transport
				}
				rows = append(rows, row{client: cl, transport: tr, callers: c})
			}
		}
	}
	return rows
}

// selectRows keeps the rows matching only and the mcpwire rows they are
// compared with.
func selectRows(rows []row, only string) []row {
	if only == "" {
		return rows
	}
	refs := map[row]bool{}
	for _, r := range rows {
		if report.MatchAny(r.name(), only) {
			refs[r.ref()] = true
		}
	}
	var keep []row
	for _, r := range rows {
		if report.MatchAny(r.name(), only) || refs[r] {
			keep = append(keep, r)
		}
	}
	return keep
}

// ---------------------------------------------------------------- one run

type runResult struct {
	res *childResult
	err error
}

// server is an HTTP or TCP reference server started for one run.
type server struct {
	cmd  *exec.Cmd
	done chan struct{}
	tail *tailBuf
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

func startServer(cfg config, transport, logPath string) (*server, string, error) {
	addr, err := freePort()
	if err != nil {
		return nil, "", err
	}
	flagName := "--http"
	if transport == "tcp" {
		flagName = "--tcp"
	}
	cmd := exec.Command(serverBin(cfg), "serve", flagName, addr, "--log-level", "error")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	s := &server{cmd: cmd, done: make(chan struct{}), tail: &tailBuf{}}
	var logFile *os.File
	if logPath != "" {
		if f, err := os.Create(logPath); err == nil {
			logFile, s.tail.w = f, f
		}
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.tail.add(sc.Text())
		}
		_ = cmd.Wait()
		if logFile != nil {
			logFile.Close()
		}
		close(s.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.done:
			return nil, "", fmt.Errorf("server exited before listening:\n%s", s.tail)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, "", fmt.Errorf("server not listening on %s after 10s:\n%s", addr, s.tail)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if transport == "http" {
		return s, "http://" + addr + "/mcp", nil
	}
	return s, addr, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(3 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func runRow(cfg config, r row, round int) runResult {
	tag := fmt.Sprintf("clientrt-r%d-%s", round, report.Slug(r.name()))
	logPath := func(ext string) string {
		if cfg.outDir == "" {
			return ""
		}
		return filepath.Join(cfg.outDir, tag+ext)
	}
	var addr string
	var srv *server
	var serverArgv []string
	if r.transport == "stdio" {
		serverArgv = []string{"--", serverBin(cfg), "serve", "--stdio", "--log-level", "error"}
	} else {
		var err error
		srv, addr, err = startServer(cfg, r.transport, logPath(".server.stderr"))
		if err != nil {
			return runResult{err: err}
		}
		defer srv.stop()
	}
	cmd := exec.Command(cfg.self, "-child", "-client", r.client, "-transport", r.transport, "-addr", addr,
		"-c", strconv.Itoa(r.callers), "-d", cfg.duration.String(), "-warmup", cfg.warmup.String())
	cmd.Args = append(cmd.Args, serverArgv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return runResult{err: err}
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	limit := cfg.warmup + cfg.duration + 60*time.Second
	var err error
	select {
	case err = <-waitErr:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-waitErr
		err = fmt.Errorf("child still running after %s: killed", limit)
	}
	if p := logPath(".json"); p != "" {
		_ = os.WriteFile(p, append(append(stdout.Bytes(), "\n--- stderr\n"...), stderr.Bytes()...), 0o644)
	}
	if err != nil {
		return runResult{err: fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 600))}
	}
	var res childResult
	line := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal(line, &res); err != nil {
		return runResult{err: fmt.Errorf("no JSON from the child (%v): %s", err, lastLines(stderr.String(), 600))}
	}
	out := runResult{res: &res}
	if srv != nil {
		select {
		case <-srv.done:
			out.err = fmt.Errorf("server exited during the run:\n%s", srv.tail)
		default:
		}
	}
	switch {
	case res.Calls == 0:
		out.err = errors.New("no call completed")
	case float64(res.Errors)/float64(res.Calls) > 0.01:
		out.err = fmt.Errorf("%d errors in %d calls (%d wrong echo texts); first: %s", res.Errors, res.Calls, res.Mismatch, res.FirstErr)
	}
	return out
}

func lastLines(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// tailBuf keeps the last lines of a server's stderr (and copies them to w).
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

// ---------------------------------------------------------------- the table

func run(cfg config) bool {
	rows := selectRows(allRows(cfg), cfg.only)
	if len(rows) == 0 {
		fatal(fmt.Errorf("no row matches -only %q", cfg.only))
	}
	header(cfg)
	results := make([][]runResult, len(rows)) // [row][round]
	for i := range results {
		results[i] = make([]runResult, cfg.rounds)
	}
	for round := 0; round < cfg.rounds; round++ {
		for k := range rows {
			i := (k + round) % len(rows) // rotate the order each round
			fmt.Fprintf(os.Stderr, "round %d/%d: %-22s ", round+1, cfg.rounds, rows[i].name())
			t0 := time.Now()
			res := runRow(cfg, rows[i], round+1)
			results[i][round] = res
			if res.err != nil {
				fmt.Fprintf(os.Stderr, "FAILED (%v)\n", res.err)
			} else {
				c := res.res
				fmt.Fprintf(os.Stderr, "%9.0f calls/s  p50 %6s µs  p99 %7s µs  cpu %6.1f µs/call  %6.1f allocs/call  (%s)\n",
					float64(c.Calls)/c.ElapsedS, report.FmtNum(c.P50US, 0), report.FmtNum(c.P99US, 0),
					float64(c.CPUUS)/float64(c.Calls), float64(c.Mallocs)/float64(c.Calls),
					time.Since(t0).Round(100*time.Millisecond))
			}
		}
	}
	return printTable(rows, results)
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
	fmt.Printf("machine: nproc=%d, CPU %q, %s/%s, %s\n", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Printf("NOTE: the client and the server (mcpwire serve) run on this same machine and share its %d cores;\n", runtime.NumCPU())
	fmt.Printf("      the numbers are relative (client vs client), not absolute capacity.\n")
	fmt.Printf("load average at the start: %s", report.LoadAvg())
	if l := load1(); l >= float64(runtime.NumCPU())/2 {
		fmt.Printf("  (WARNING: the machine is busy with other work; expect noisy numbers)")
	}
	fmt.Println()
	fmt.Printf("rounds: %d (interleaved), %s measured after %s warm-up per run; callers = goroutines sharing one client, each in a closed loop\n\n",
		cfg.rounds, cfg.duration, cfg.warmup)
}

func load1() float64 {
	f := strings.Fields(report.LoadAvg())
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

var nan = func() float64 { var z float64; return z / z }()

func printTable(rows []row, results [][]runResult) bool {
	ok := true
	index := map[row]int{}
	for i, r := range rows {
		index[r] = i
	}
	head := []string{"row", "client", "transport", "callers", "protocol", "calls/s", "vs mcpwire", "p50 µs", "p99 µs", "CPU µs/call", "allocs/call", "errors"}
	var out [][]string
	var notes []string
	for i, r := range rows {
		var rate, ratio, p50, p99, cpu, allocs, errs []float64
		protocol := "—"
		failed := 0
		for round, res := range results[i] {
			if res.res != nil {
				protocol = res.res.Protocol
			}
			if res.err != nil || res.res == nil {
				failed++
				notes = append(notes, fmt.Sprintf("%s, round %d: %v", r.name(), round+1, res.err))
				continue
			}
			c := res.res
			n := float64(c.Calls)
			rate = append(rate, n/c.ElapsedS)
			p50 = append(p50, c.P50US)
			p99 = append(p99, c.P99US)
			cpu = append(cpu, float64(c.CPUUS)/n)
			allocs = append(allocs, float64(c.Mallocs)/n)
			errs = append(errs, float64(c.Errors))
			if ri, ok := index[r.ref()]; ok && r.client != "mcpwire" {
				if rr := results[ri][round]; rr.err == nil && rr.res != nil && rr.res.Calls > 0 {
					ratio = append(ratio, (n/c.ElapsedS)/(float64(rr.res.Calls)/rr.res.ElapsedS))
				}
			}
		}
		if failed > 0 {
			ok = false
		}
		rateCell := report.FmtNum(report.Median(rate), 0)
		if failed == len(results[i]) {
			rateCell = "FAILED"
		} else if failed > 0 {
			rateCell += fmt.Sprintf(" (%d/%d failed)", failed, len(results[i]))
		}
		ratioCell := report.FmtNum(report.Median(ratio), 2)
		if r.client == "mcpwire" {
			ratioCell = "ref"
		}
		out = append(out, []string{r.name(), r.client, transportLabel[r.transport], strconv.Itoa(r.callers), protocol,
			rateCell, ratioCell, report.FmtNum(report.Median(p50), 0), report.FmtNum(report.Median(p99), 0),
			report.FmtNum(report.Median(cpu), 1), report.FmtNum(report.Median(allocs), 1), report.FmtNum(report.Median(errs), 0)})
	}
	report.PrintGrid(head, out, 5)
	fmt.Println()
	fmt.Println("Every call: tools/call echo {\"text\":\"hello world\"} through the client's own call API (mcpwire CallTool,")
	fmt.Println("go-sdk ClientSession.CallTool, mcp-go Client.CallTool), arguments as map[string]any; the result must be exactly")
	fmt.Println("one text block \"hello world\" without isError, or the call counts as an error. Server: bin/mcpwire serve")
	fmt.Println("(--http / --tcp on a free loopback port, fresh for each run; stdio: started by the client). go-sdk and mcp-go")
	fmt.Println("get net/http's default transport with MaxIdleConnsPerHost = callers (their default keeps 2 idle connections).")
	fmt.Println()
	fmt.Println("calls/s, latencies and the per-call columns are medians over the rounds; \"vs mcpwire\" is the median of each")
	fmt.Println("round's calls/s divided by the mcpwire row of the same transport and callers in that round. p50/p99: each call's")
	fmt.Println("time in the client's call (histogram, ±1.6%). CPU µs/call: user+system CPU of the client's process (getrusage")
	fmt.Println("RUSAGE_SELF: the client alone; a stdio server is its child and not counted) over the measured window / calls.")
	fmt.Println("allocs/call: runtime.MemStats.Mallocs delta in that process / calls. errors: failed calls + wrong echo texts;")
	fmt.Println("a run with errors above 1% of its calls fails. protocol: the revision the client negotiated.")
	for _, n := range notes {
		fmt.Println("FAILED:", n)
	}
	return ok
}
