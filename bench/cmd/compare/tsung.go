package main

// The outside generator of the socket rows: tsung (Debian package tsung,
// an Erlang load tool) with its raw-TCP plugin. Each of 64 users opens one
// connection and sends the fixture line in a loop, one request in flight:
// ack="local" counts a request done when the first reply bytes arrive
// (every reply here is one 254-byte line, which loopback delivers in one
// segment). tsung writes its counters every second (dumpstats_interval,
// set through ERL_ZFLAGS) as JSON lines to tsung.log; the harness reads
// them while tsung runs, takes the window that starts WARMUP after the
// first answered request, samples the server and tsung's own CPU over the
// same window, and stops tsung once the window's last second is written.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/rawreply"
	"github.com/mcpwire/mcpwire/internal/load"
)

// fixtureLine is the request every row sends, for id 1 (without newline).
func fixtureLine() ([]byte, error) {
	return load.RequestBody(load.Config{Target: "tcp://127.0.0.1:1", Duration: time.Second,
		Tool: "echo", Args: `{"text":"hello world"}`}, 1)
}

// tsungUsers is the number of tsung users (connections) of the tsung rows.
const tsungUsers = 64

// tsungConfig is the tsung scenario: tsungUsers users arriving at once,
// each looping over the fixture line on its own connection, for up to
// maxRun (the harness stops it earlier).
func tsungConfig(addr string, line []byte, maxRun time.Duration) ([]byte, error) {
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("bad address %q", addr)
	}
	var data bytes.Buffer
	if err := xmlAttr(&data, append(append([]byte(nil), line...), '\n')); err != nil {
		return nil, err
	}
	secs := int(maxRun.Seconds()) + 1
	return fmt.Appendf(nil, `<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="warning" dumptraffic="false" version="1.0" backend="json">
  <clients><client host="localhost" use_controller_vm="true" maxusers="%d"/></clients>
  <servers><server host="%s" port="%s" type="tcp"/></servers>
  <load duration="%d" unit="second">
    <arrivalphase phase="1" duration="%d" unit="second">
      <users maxnumber="%d" arrivalrate="1000" unit="second"/>
    </arrivalphase>
  </load>
  <sessions>
    <session probability="100" name="fixture" type="ts_raw">
      <for from="1" to="2000000000" incr="1" var="i">
        <request><raw data="%s" ack="local"/></request>
      </for>
    </session>
  </sessions>
</tsung>
`, tsungUsers*2, host, port, secs, secs, tsungUsers, data.String()), nil
}

// xmlAttr escapes b for a double-quoted XML attribute; a newline becomes
// &#10; so that it survives attribute-value normalisation.
func xmlAttr(w *bytes.Buffer, b []byte) error {
	for _, c := range b {
		switch c {
		case '&':
			w.WriteString("&amp;")
		case '<':
			w.WriteString("&lt;")
		case '>':
			w.WriteString("&gt;")
		case '"':
			w.WriteString("&quot;")
		case '\n':
			w.WriteString("&#10;")
		case '\r', '\t':
			fmt.Fprintf(w, "&#%d;", c)
		default:
			if c < ' ' {
				return fmt.Errorf("control byte %#x in the fixture", c)
			}
			w.WriteByte(c)
		}
	}
	return nil
}

// tsungSecond is one line of tsung.log: the counters of one second.
type tsungSecond struct {
	ts       int64
	requests float64 // requests answered in that second
	meanMs   float64 // their mean response time
	rcv      float64 // bytes received
	errors   float64 // error_* counters
	users    float64
}

// parseTsungLine reads one `{"timestamp": T, "samples": [...]}` line of a
// JSON tsung.log (ok false for the surrounding lines).
func parseTsungLine(line string) (tsungSecond, bool) {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimSuffix(line, "]}"), ",")
	if !strings.HasPrefix(line, `{"timestamp"`) {
		return tsungSecond{}, false
	}
	var v struct {
		Timestamp int64 `json:"timestamp"`
		Samples   []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
			Mean  float64 `json:"mean"`
		} `json:"samples"`
	}
	if json.Unmarshal([]byte(line), &v) != nil {
		return tsungSecond{}, false
	}
	s := tsungSecond{ts: v.Timestamp}
	for _, x := range v.Samples {
		switch {
		case x.Name == "request":
			s.requests, s.meanMs = x.Value, x.Mean
		case x.Name == "size_rcv":
			s.rcv = x.Value
		case x.Name == "users":
			s.users = x.Value
		case strings.HasPrefix(x.Name, "error_"):
			s.errors += x.Value
		}
	}
	return s, true
}

// readTsungLog returns the complete seconds written so far.
func readTsungLog(dir string) []tsungSecond {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "tsung.log"))
	if len(paths) == 0 {
		return nil
	}
	f, err := os.Open(paths[0])
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []tsungSecond
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if s, ok := parseTsungLine(sc.Text()); ok {
			out = append(out, s)
		}
	}
	return out
}

func runTsungRow(cfg config, r row, idx int, tag string) runResult {
	var res runResult
	network, addr, _ := endpoint(cfg, r, idx)
	if !portFree(addr) {
		res.err = fmt.Errorf("port %s is busy", addr)
		return res
	}
	line, err := fixtureLine()
	if err != nil {
		res.err = err
		return res
	}
	logDir, err := filepath.Abs(filepath.Join(cfg.outDir, tag+".tsung"))
	if err == nil {
		_ = os.RemoveAll(logDir)
		err = os.MkdirAll(logDir, 0o755)
	}
	if err != nil {
		res.err = err
		return res
	}
	const boot = 20 * time.Second // the Erlang VM's start, generously
	conf, err := tsungConfig(addr, line, boot+cfg.warmup+cfg.duration+5*time.Second)
	if err == nil {
		err = os.WriteFile(filepath.Join(logDir, "scenario.xml"), conf, 0o644)
	}
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

	cmd := exec.Command(cfg.tsung, "-n", "-f", filepath.Join(logDir, "scenario.xml"), "-l", logDir, "start")
	// One line of counters per second instead of every 10 s.
	cmd.Env = append(os.Environ(), "ERL_ZFLAGS=-tsung_controller dumpstats_interval 1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.Create(filepath.Join(cfg.outDir, tag+".tsung.out"))
	if err != nil {
		res.err = err
		return res
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		res.err = err
		return res
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer stopGroup(cmd.Process.Pid, exited)

	// Wait for the first answered request: the load's start.
	var first tsungSecond
	deadline := time.Now().Add(boot)
	for first.ts == 0 {
		for _, s := range readTsungLog(logDir) {
			if s.requests > 0 {
				first = s
				break
			}
		}
		if first.ts != 0 {
			break
		}
		select {
		case <-exited:
			res.err = fmt.Errorf("tsung ended before any request was answered (see %s)", logDir)
			return res
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			res.err = fmt.Errorf("tsung: no request answered within %s (see %s)", boot, logDir)
			return res
		}
	}
	// Seconds are whole: the window starts at the first whole second after
	// the warm-up and ends duration later.
	warm := max(time.Second, cfg.warmup.Round(time.Second))
	dur := max(time.Second, cfg.duration.Round(time.Second))
	from := first.ts + int64(warm/time.Second) // exclusive: the counters of seconds (from, to]
	to := from + int64(dur/time.Second)
	wStart := time.Unix(from, 0)

	// Server and tsung CPU over the same window.
	var w window
	var gen0, gen1 int64
	var g0, g1 time.Time
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		w = sampleWindow(cfg, func() *statSource {
			gen0, g0 = treeCPU(cmd.Process.Pid), time.Now()
			return srv.src
		}, wStart.Add(-cfg.warmup))
		gen1, g1 = treeCPU(cmd.Process.Pid), time.Now()
	}()
	var secs []tsungSecond
	for {
		secs = readTsungLog(logDir)
		if n := len(secs); n > 0 && secs[n-1].ts >= to {
			break
		}
		select {
		case <-exited:
			res.err = fmt.Errorf("tsung ended before the end of the window (see %s)", logDir)
			<-sampled
			return res
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(time.Unix(to, 0).Add(10 * time.Second)) {
			res.err = fmt.Errorf("tsung stopped writing its counters (see %s)", logDir)
			<-sampled
			return res
		}
	}
	<-sampled

	var reqs, lat, rcv, errs float64
	prev := from
	for _, s := range secs {
		if s.ts <= from || s.ts > to {
			continue
		}
		reqs += s.requests
		lat += s.requests * s.meanMs * 1000
		rcv += s.rcv
		errs += s.errors
		prev = max(prev, s.ts)
	}
	if reqs == 0 || prev == from {
		res.err = fmt.Errorf("tsung: no request answered in the window (see %s)", logDir)
		return res
	}
	span := float64(prev - from)
	lr := &loadResult{Requests: reqs, RPS: reqs / span, Errors: json.RawMessage(strconv.FormatFloat(errs, 'f', 0, 64))}
	lr.Latency = latency{P50: nan, P90: nan, P99: nan, P999: nan, Max: nan, Mean: lat / reqs}
	lr.ClientCPU = nan
	if d := g1.Sub(g0).Seconds(); gen1 > gen0 && d > 0 {
		lr.ClientCPU = float64(gen1-gen0) / (lr.RPS * d)
	}
	res.load = lr
	res.allocsReq, res.cpuReq = w.perRequest(lr.RPS)
	if w.err != nil {
		res.statsNote = w.err.Error()
	}
	// Every answer must be the echo reply: a server answering something
	// else (an error) would show in the bytes per answer.
	if per, want := rcv/reqs, float64(len(rawreply.Line)); per < want*0.98 || per > want*1.02 {
		res.err = fmt.Errorf("tsung: %.1f bytes received per request, want %.0f (the echo reply): the server answered something else", per, want)
	}
	select {
	case <-srv.done:
		res.err = fmt.Errorf("server exited during the run:\n%s", srv.tail.String())
	default:
	}
	return res
}

// stopGroup ends the process group led by pid (tsung and its Erlang VM,
// started by us with Setpgid): SIGTERM, then SIGKILL.
func stopGroup(pid int, exited chan struct{}) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	// The VM may outlive the shell script that started it.
	for range 50 {
		if syscall.Kill(-pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// treeCPU is the user+system CPU in µs of root and its descendants.
func treeCPU(root int) int64 {
	var total int64
	for _, pid := range append(descendants(root), root) {
		if st, err := procStats(pid); err == nil {
			total += st.cpuUS
		}
	}
	return total
}
