// Command idleconns measures what many mostly idle connections cost a
// line-framed server (issue 8): it starts the server, opens N connections
// (each makes one call, then stays idle), reads the server's resident set
// size before and after, and then has every connection send one call per
// second for a while, reporting the latency percentiles and the server's
// CPU per call. Each server row runs in turn in the same invocation, so the
// figures compare.
//
//	idleconns -n 10000 -d 10s \
//	    -row 'mcpwire=bin/mcpwire serve --tcp ADDR --log-level error' \
//	    -row 'raw gnet=bin/bench-rawgnet -tcp ADDR -splice-id'
//
// ADDR is replaced by a free loopback address. The client side holds N
// descriptors; the server another N (the usual limit of 20,000 per process
// is enough for 10,000).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// fixture is the standard request: tools/call echo with the _meta real
// clients send, a progressToken included. ID is replaced per call.
const fixture = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"idleconns","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":ID}}}` + "\n"

type rowFlag []string

func (r *rowFlag) String() string     { return strings.Join(*r, "; ") }
func (r *rowFlag) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var rows rowFlag
	n := flag.Int("n", 10000, "connections")
	d := flag.Duration("d", 10*time.Second, "how long every connection sends one call per second")
	settle := flag.Duration("settle", 2*time.Second, "wait after opening the connections before reading the RSS")
	flag.Var(&rows, "row", "NAME=COMMAND with ADDR for the address (repeatable)")
	flag.Parse()
	if len(rows) == 0 {
		fmt.Fprintln(os.Stderr, "idleconns: give at least one -row NAME=COMMAND")
		os.Exit(2)
	}
	fmt.Printf("%d connections over loopback TCP: one call each, then idle (RSS); then one call per connection per second for %s\n", *n, *d)
	fmt.Printf("fixture: tools/call echo {\"text\":\"hello world\"} with protocolVersion, clientCapabilities, clientInfo and a progressToken\n\n")
	fmt.Printf("%-12s %14s %14s %14s %10s %10s %10s %14s %8s\n", "row", "RSS before KiB", "RSS idle KiB", "KiB per conn", "p50 µs", "p99 µs", "max µs", "srv CPU µs/call", "errors")
	ok := true
	for _, r := range rows {
		name, command, found := strings.Cut(r, "=")
		if !found {
			fmt.Fprintf(os.Stderr, "idleconns: -row %q: want NAME=COMMAND\n", r)
			os.Exit(2)
		}
		res, err := run(strings.Fields(command), *n, *d, *settle)
		if err != nil {
			fmt.Printf("%-12s FAILED: %v\n", name, err)
			ok = false
			continue
		}
		fmt.Printf("%-12s %14d %14d %14.2f %10.0f %10.0f %10.0f %14.1f %8d\n", name, res.rssBefore, res.rssIdle,
			float64(res.rssIdle-res.rssBefore)/float64(*n), res.p50, res.p99, res.max, res.cpuPerCall, res.errors)
	}
	if !ok {
		os.Exit(1)
	}
}

type result struct {
	rssBefore, rssIdle int64
	p50, p99, max      float64
	cpuPerCall         float64
	errors             int64
}

func run(argv []string, n int, d, settle time.Duration) (*result, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "ADDR", addr)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	if err := waitListening(addr); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	pid := cmd.Process.Pid
	res := &result{}
	time.Sleep(200 * time.Millisecond)
	if res.rssBefore, err = rssKB(pid); err != nil {
		return nil, err
	}
	conns, err := openAll(addr, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.c.Close()
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	time.Sleep(settle)
	if res.rssIdle, err = rssKB(pid); err != nil {
		return nil, err
	}
	cpu0, err := cpuUS(pid)
	if err != nil {
		return nil, err
	}
	lat, errs := paced(conns, d)
	cpu1, err := cpuUS(pid)
	if err != nil {
		return nil, err
	}
	res.errors = errs
	if len(lat) == 0 {
		return nil, errors.New("no call completed")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e3 }
	res.p50, res.p99, res.max = pct(0.50), pct(0.99), float64(lat[len(lat)-1])/1e3
	res.cpuPerCall = float64(cpu1-cpu0) / float64(len(lat))
	return res, nil
}

type conn struct {
	c  net.Conn
	r  *bufio.Reader
	id int64
	b  []byte
}

// call sends the fixture and reads one line; it reports the round trip.
func (c *conn) call() (time.Duration, error) {
	c.id++
	c.b = append(c.b[:0], strings.ReplaceAll(fixture, "ID", strconv.FormatInt(c.id, 10))...)
	t0 := time.Now()
	if _, err := c.c.Write(c.b); err != nil {
		return 0, err
	}
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if !bytes.Contains(l, []byte(`"id":`+strconv.FormatInt(c.id, 10)+`,`)) {
		return 0, fmt.Errorf("unexpected reply %.200s", l)
	}
	return time.Since(t0), nil
}

// openAll dials n connections, 64 at a time, each making one call.
func openAll(addr string, n int) ([]*conn, error) {
	conns := make([]*conn, n)
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				nc, err := net.Dial("tcp", addr)
				if err == nil {
					c := &conn{c: nc, r: bufio.NewReaderSize(nc, 4096)}
					conns[i] = c
					_, err = c.call()
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("connection %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return conns, firstErr
}

// paced has every connection make one call per second for d, spread evenly
// over the second, and returns the round trips in nanoseconds.
func paced(conns []*conn, d time.Duration) ([]int64, int64) {
	workers := runtime.GOMAXPROCS(0) * 64
	var mu sync.Mutex
	var lat []int64
	var errs atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []int64
			// Worker w owns connections w, w+workers, ...; connection i
			// calls at start + i/N s + k s.
			for k := 0; time.Duration(k)*time.Second < d; k++ {
				for i := w; i < len(conns); i += workers {
					due := start.Add(time.Duration(k)*time.Second + time.Duration(i)*time.Second/time.Duration(len(conns)))
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
					rt, err := conns[i].call()
					if err != nil {
						errs.Add(1)
						continue
					}
					// Measured from the due time: a late send counts.
					mine = append(mine, int64(rt)+max(0, int64(time.Since(due)-rt)))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return lat, errs.Load()
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListening(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("server not listening after 10s")
}

func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

func cpuUS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return (ut + st) * 1e6 / 100, nil
}
