//go:build cluster

package clustertest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/deploy/internal/proxyhttp"
)

// proc is one process the test started; it is stopped by PID.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func start(t *testing.T, dir, name string, bin string, args ...string) *proc {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with the test process, even when a -timeout panic skips the
	// cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	return p
}

// stop signals the process and waits for it (SIGKILL after 5 s).
func (p *proc) stop(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int, p *proc) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		if p.exited() {
			t.Fatalf("%s exited before listening", p.name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not listening on %d", p.name, port)
}

// cluster is redis-server (or a Redis Cluster of masters), three
// replicas and HAProxy.
type cluster struct {
	t         *testing.T
	dir, bin  string
	redisPort int
	redis     *proc
	masters   int     // > 0: a Redis Cluster of that many masters (redis_cluster.go)
	nodePorts []int   // the cluster's nodes
	nodes     []*proc // the cluster's nodes, by index of nodePorts
	ports     [3]int
	replicas  [3]*proc
	front     int
	haproxy   *proc
	keyFile   string
}

func (c *cluster) url() string { return "http://127.0.0.1:" + strconv.Itoa(c.front) + "/mcp" }
func (c *cluster) replica(i int) string {
	return "http://127.0.0.1:" + strconv.Itoa(c.ports[i]) + "/mcp"
}

func need(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: make cluster-test installs it", name)
	}
	return p
}

func newCluster(t *testing.T, masters int) *cluster {
	bin, _ := filepath.Abs("../../bin/mcpwire")
	if b := os.Getenv("MCPWIRE_BIN"); b != "" {
		bin = b
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v (make build)", bin, err)
	}
	c := &cluster{t: t, dir: t.TempDir(), bin: bin, masters: masters}
	theCluster = c
	t.Cleanup(func() {
		if keep := os.Getenv("MCPWIRE_CLUSTER_LOGS"); keep != "" && !t.Failed() {
			// Kept on request (a directory) for runs that pass, too.
			for _, n := range c.logNames() {
				b, _ := os.ReadFile(filepath.Join(c.dir, n+".log"))
				_ = os.WriteFile(filepath.Join(keep, n+".log"), b, 0o600)
			}
		}
		if t.Failed() {
			// Goroutine dumps of the replicas still running, into their logs.
			for _, r := range c.replicas {
				if r != nil && !r.exited() {
					_ = r.cmd.Process.Signal(syscall.SIGQUIT)
					select {
					case <-r.done:
					case <-time.After(2 * time.Second):
					}
				}
			}
			keep, _ := os.MkdirTemp("", "mcpwire-cluster-")
			t.Logf("full logs kept in %s", keep)
			for _, n := range c.logNames() {
				b, _ := os.ReadFile(filepath.Join(c.dir, n+".log"))
				_ = os.WriteFile(filepath.Join(keep, n+".log"), b, 0o600)
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("--- %s.log\n%s", n, b)
			}
		}
	})
	if masters > 0 {
		c.startRedisCluster()
	} else {
		c.redisPort = freePort(t)
		c.startRedis()
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c.keyFile = filepath.Join(c.dir, "state.keys")
	if err := os.WriteFile(c.keyFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range c.ports {
		c.ports[i] = freePort(t)
		c.startReplica(i)
	}
	c.front = freePort(t)
	cfg, err := os.ReadFile("../haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(cfg), "127.0.0.1:8080", "127.0.0.1:"+strconv.Itoa(c.front))
	for i, p := range c.ports {
		s = strings.ReplaceAll(s, "127.0.0.1:808"+strconv.Itoa(i+1), "127.0.0.1:"+strconv.Itoa(p))
	}
	cfgPath := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(need(t, "haproxy"), "-c", "-q", "-f", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	c.haproxy = start(t, c.dir, "haproxy", need(t, "haproxy"), "-db", "-f", cfgPath)
	waitPort(t, c.front, c.haproxy)
	c.waitHealthy()
	return c
}

// dump makes the replica serving url write its goroutines to its log
// (SIGQUIT; it exits) and keeps the logs.
func (c *cluster) dump(url string) {
	for i := range c.ports {
		if url == c.replica(i) && c.replicas[i] != nil {
			_ = c.replicas[i].cmd.Process.Signal(syscall.SIGQUIT)
		}
	}
}

func (c *cluster) startRedis() {
	c.redis = start(c.t, c.dir, "redis", need(c.t, "redis-server"), "--bind", "127.0.0.1", "--port", strconv.Itoa(c.redisPort),
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "verbose")
	waitPort(c.t, c.redisPort, c.redis)
}

// memoryOnly (MCPWIRE_CLUSTER_STATE=memory) runs the replicas without a
// shared store, to check the balancer alone; tests that need sharing skip.
var memoryOnly = os.Getenv("MCPWIRE_CLUSTER_STATE") == "memory"

func shared(t *testing.T) {
	if memoryOnly {
		t.Skip("MCPWIRE_CLUSTER_STATE=memory: replicas share nothing")
	}
}

// redisCmd sends one command to the cluster's Redis (to every node of a
// Redis Cluster) and fails the test unless it answers +OK.
func (c *cluster) redisCmd(t *testing.T, args ...string) {
	t.Helper()
	if c.masters > 0 {
		for _, p := range c.nodePorts {
			redisCmdAt(t, p, args...)
		}
		return
	}
	redisCmdAt(t, c.redisPort, args...)
}

func redisCmdAt(t *testing.T, port int, args ...string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("redis %v: %q %v", args, line, err)
	}
}

func (c *cluster) startReplica(i int) {
	spec := "redis://127.0.0.1:" + strconv.Itoa(c.redisPort) + "/0"
	if c.masters > 0 {
		spec = c.clusterURL()
	}
	if memoryOnly {
		spec = "memory"
	}
	c.replicas[i] = start(c.t, c.dir, "r"+strconv.Itoa(i+1), c.bin, "serve", "--http", "127.0.0.1:"+strconv.Itoa(c.ports[i]),
		"--state", spec, "--state-key-file", c.keyFile,
		"--trusted-proxy", "127.0.0.1/32", "--insecure-test-auth", "--log-level", "info", "--grace", "2s")
	waitPort(c.t, c.ports[i], c.replicas[i])
}

// waitHealthy waits until a round of calls through the balancer reaches
// every replica (its health checks passed).
func (c *cluster) waitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		seen := map[string]bool{}
		for range 6 {
			r := call(c.t, c.url(), "", "echo", `{"text":"hi"}`)
			if r.status == 200 {
				seen[r.replica] = true
			}
		}
		if len(seen) == 3 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatal("the balancer does not reach three replicas")
}

// HTTP ----------------------------------------------------------------------

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

var idSeq atomic.Int64

// direct talks to a replica itself: the replicas trust 127.0.0.1 as a
// proxy, so every direct connection begins with a PROXY header, as
// HAProxy's do.
var direct = proxyhttp.Client(64)

var viaBalancer = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func clientFor(url string, c *cluster) *http.Client {
	if c != nil && url == c.url() {
		return viaBalancer
	}
	return direct
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type reply struct {
	status  int
	replica string
	msg     rpcMsg
	err     error
}

var theCluster *cluster // for clientFor in call

func post(url, token, method, name, body string) (*http.Response, error) {
	return postCtx(context.Background(), url, token, method, name, body)
}

func postCtx(ctx context.Context, url, token, method, name, body string) (*http.Response, error) {
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
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return clientFor(url, theCluster).Do(req)
}

// callTrace notes how far a call got, for the message of one that fails:
// a connection taken (new or reused), the request written, a first byte.
type callTrace struct {
	mu                sync.Mutex
	start             time.Time
	got, wrote, first time.Duration
	reused            bool
	local             string
}

func (c *callTrace) hooks() *httptrace.ClientTrace {
	c.start = time.Now()
	at := func(d *time.Duration) {
		c.mu.Lock()
		*d = time.Since(c.start)
		c.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			c.mu.Lock()
			c.reused, c.local = i.Reused, i.Conn.LocalAddr().String()
			c.mu.Unlock()
			at(&c.got)
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { at(&c.wrote) },
		GotFirstResponseByte: func() { at(&c.first) },
	}
}

func (c *callTrace) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("conn %s reused %v at %v, written at %v, first byte at %v", c.local, c.reused, c.got, c.wrote, c.first)
}

// call runs tools/call and returns its (JSON or last SSE) message.
func call(t *testing.T, url, token, tool, args string) reply {
	id := idSeq.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, id, tool, args, meta)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var tr callTrace
	ctx = httptrace.WithClientTrace(ctx, tr.hooks())
	resp, err := postCtx(ctx, url, token, "tools/call", tool, body)
	if err != nil {
		return reply{err: fmt.Errorf("%w (%s)", err, tr.String())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	r := reply{status: resp.StatusCode, replica: resp.Header.Get("X-Mcp-Replica")}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				b = []byte(d)
			}
		}
	}
	if len(b) > 0 {
		r.err = json.Unmarshal(b, &r.msg)
	}
	return r
}

func text(r reply) string {
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(r.msg.Result, &res)
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}

// stream is one subscriptions/listen stream.
type stream struct {
	replica string
	body    io.ReadCloser
	mu      sync.Mutex
	updates map[string]int // URI → deliveries
	final   *rpcMsg        // the listen request's response, if one came
	done    chan struct{}  // the stream ended
}

var ackTimeout = 5 * time.Second

// listen opens a stream subscribed to prefix and waits for its
// acknowledgement.
func listen(url, prefix string) (*stream, error) {
	id := idSeq.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[%q]},%s}}`, id, prefix, meta)
	resp, err := post(url, "", "subscriptions/listen", "", body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("listen: HTTP %d %s", resp.StatusCode, b)
	}
	s := &stream{replica: resp.Header.Get("X-Mcp-Replica"), body: resp.Body, updates: map[string]int{}, done: make(chan struct{})}
	br := bufio.NewReader(resp.Body)
	acked := make(chan error, 1)
	go s.pump(br, acked)
	select {
	case err := <-acked:
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		return s, nil
	case <-time.After(ackTimeout):
		resp.Body.Close()
		return nil, fmt.Errorf("listen: no acknowledgement within %s", ackTimeout)
	}
}

func (s *stream) pump(br *bufio.Reader, acked chan<- error) {
	defer close(s.done)
	first := true
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if first {
				acked <- fmt.Errorf("listen: stream ended before its acknowledgement: %v", err)
			}
			return
		}
		d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: ")
		if !ok {
			continue
		}
		var m rpcMsg
		if json.Unmarshal([]byte(d), &m) != nil {
			continue
		}
		if first {
			first = false
			if m.Method != "notifications/subscriptions/acknowledged" {
				acked <- fmt.Errorf("listen: first message %s", d)
				return
			}
			acked <- nil
			continue
		}
		s.mu.Lock()
		switch {
		case m.Method == "notifications/resources/updated":
			var p struct{ URI string }
			_ = json.Unmarshal(m.Params, &p)
			s.updates[p.URI]++
		case m.Method == "":
			s.final = &m
		}
		s.mu.Unlock()
	}
}

func (s *stream) close() { s.body.Close(); <-s.done }

func (s *stream) count(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates[uri]
}

func (s *stream) ended(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(d):
		return false
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[0]
}

// waitAll waits until s has every URI of uris at least once.
func (s *stream) waitAll(uris []string, d time.Duration) (missing []string, dup int) {
	deadline := time.Now().Add(d)
	for {
		missing, dup = missing[:0], 0
		s.mu.Lock()
		for _, u := range uris {
			switch n := s.updates[u]; {
			case n == 0:
				missing = append(missing, u)
			case n > 1:
				if _, again := retried.Load(u); !again {
					dup++
				}
			}
		}
		s.mu.Unlock()
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing, dup
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// retried holds the URIs whose touch was sent again after a 503: a
// second delivery of those is the client's retry, not a duplicate.
var retried sync.Map

// touch publishes an update of uri through url; a 503 (the shared state
// briefly unreachable, e.g. a pooled connection that died with a Redis
// restart) is retried, as a client would.
func touch(t *testing.T, url, uri string) {
	t.Helper()
	r := call(t, url, "", "touch", fmt.Sprintf(`{"uri":%q}`, uri))
	for i := 0; i < 5 && r.status == 503; i++ {
		// A publish that timed out may still have reached Redis: its
		// outcome is unknown, so the retry may deliver it twice.
		retried.Store(uri, true)
		time.Sleep(50 * time.Millisecond)
		r = call(t, url, "", "touch", fmt.Sprintf(`{"uri":%q}`, uri))
	}
	if r.err != nil || r.status != 200 || r.msg.Error != nil {
		if r.err != nil && theCluster != nil {
			theCluster.dump(url) // the replica's goroutines, into its log
		}
		t.Errorf("touch %s via %s: %d %v %+v", uri, url, r.status, r.err, r.msg.Error)
	}
}

var replicaName = regexp.MustCompile(`^r[123]$`)

// The test --------------------------------------------------------------------

// TestCluster: the fleet on one redis-server (classic pub/sub).
func TestCluster(t *testing.T) {
	testFleet(t, newCluster(t, 0))
}

// testFleet runs the multi-replica checks on c; on a Redis Cluster
// (c.masters > 0) those that do not concern the store are left to
// TestCluster, and the Redis outage is a master's (redis_cluster.go).
func testFleet(t *testing.T, c *cluster) {
	theCluster = c
	notOnRedisCluster := func(t *testing.T) {
		if c.masters > 0 {
			t.Skip("does not depend on the store: run by TestCluster")
		}
	}

	t.Run("update_through_each_replica_delivered_once", func(t *testing.T) {
		shared(t)
		s, err := listen(c.url(), "cluster://once/")
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		if !replicaName.MatchString(s.replica) {
			t.Fatalf("X-Mcp-Replica %q", s.replica)
		}
		var uris []string
		for i := range 3 {
			u := "cluster://once/" + strconv.Itoa(i)
			touch(t, c.replica(i), u)
			uris = append(uris, u)
		}
		if missing, _ := s.waitAll(uris, 3*time.Second); len(missing) > 0 {
			t.Fatalf("missing %v", missing)
		}
		time.Sleep(300 * time.Millisecond) // a duplicate would arrive here
		for _, u := range uris {
			if _, again := retried.Load(u); !again && s.count(u) != 1 || s.count(u) == 0 {
				t.Errorf("%s delivered %d times", u, s.count(u))
			}
		}
	})

	t.Run("1100_streams_300_updates", func(t *testing.T) {
		const n, updates = 1100, 300
		streams := make([]*stream, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		sem := make(chan struct{}, 64)
		for i := range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				s, err := listen(c.url(), "cluster://fan/")
				if err != nil {
					errs <- err
					return
				}
				streams[i] = s
			}()
		}
		wg.Wait()
		close(errs)
		defer func() {
			for _, s := range streams {
				if s != nil {
					s.close()
				}
			}
		}()
		for err := range errs {
			t.Fatalf("not every stream acknowledged: %v", err)
		}
		per := map[string]int{}
		for _, s := range streams {
			per[s.replica]++
		}
		t.Logf("%d streams acknowledged through one balancer address: %v", n, per)
		shared(t)
		var uris []string
		var uwg sync.WaitGroup
		for i := range updates {
			u := "cluster://fan/" + strconv.Itoa(i)
			uris = append(uris, u)
			uwg.Add(1)
			go func() {
				defer uwg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				touch(t, c.replica(i%3), u)
			}()
		}
		uwg.Wait()
		// One deadline for all the streams: a stream that misses updates
		// must not make every later one wait its own full timeout.
		bad := 0
		deadline := time.Now().Add(15 * time.Second)
		for i, s := range streams {
			missing, dup := s.waitAll(uris, time.Until(deadline))
			if len(missing) > 0 || dup > 0 {
				bad++
				if bad < 4 {
					ended := s.ended(0)
					t.Errorf("stream %d (%s, ended %v): %d missing (first %s), %d duplicated", i, s.replica, ended, len(missing), first(missing), dup)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%d of %d streams missed updates", bad, n)
		}
	})

	t.Run("handles_across_replicas", func(t *testing.T) {
		shared(t)
		r := call(t, c.replica(0), "alice", "draft_create", `{"text":"hello"}`)
		if r.status != 200 || r.msg.Error != nil {
			t.Fatalf("create: %d %+v", r.status, r.msg.Error)
		}
		h := text(r)
		if got := text(call(t, c.replica(1), "alice", "draft_read", fmt.Sprintf(`{"handle":%q}`, h))); got != "hello" {
			t.Fatalf("read via B: %q", got)
		}
		r = call(t, c.replica(2), "alice", "draft_append", fmt.Sprintf(`{"handle":%q,"text":" world","idempotencyKey":"k1"}`, h))
		if r.status != 200 || r.msg.Error != nil {
			t.Fatalf("append via C: %d %+v", r.status, r.msg.Error)
		}
		// Re-sent (new id, same key) to another replica: applied once.
		call(t, c.replica(1), "alice", "draft_append", fmt.Sprintf(`{"handle":%q,"text":" world","idempotencyKey":"k1"}`, h))
		if got := text(call(t, c.url(), "alice", "draft_read", fmt.Sprintf(`{"handle":%q}`, h))); got != "hello world" {
			t.Fatalf("read via the balancer: %q", got)
		}
		for _, who := range []string{"bob", ""} {
			r = call(t, c.replica(1), who, "draft_read", fmt.Sprintf(`{"handle":%q}`, h))
			if r.msg.Error == nil || r.msg.Error.Code != -32602 || strings.Contains(string(r.msg.Result), "hello") {
				t.Fatalf("%q read alice's draft: %d %s %+v", who, r.status, r.msg.Result, r.msg.Error)
			}
		}
	})

	t.Run("mrtr_retry_on_another_replica", func(t *testing.T) {
		notOnRedisCluster(t)
		// E5: the fleet shares the requestState key (--state-key-file).
		const tool = "test_input_required_result_tampered_state"
		elicit := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
		round := func(url, extra string) reply {
			id := idSeq.Add(1)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s,%s}}`, id, tool, extra, elicit)
			resp, err := post(url, "", "tools/call", tool, body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var r reply
			r.status = resp.StatusCode
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &r.msg); err != nil {
				t.Fatalf("%s: %s", err, b)
			}
			return r
		}
		first := round(c.replica(0), "")
		var ir struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		}
		if err := json.Unmarshal(first.msg.Result, &ir); err != nil || ir.ResultType != "input_required" || ir.RequestState == "" {
			t.Fatalf("round 1: %s %+v", first.msg.Result, first.msg.Error)
		}
		answer := `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":`
		if got := text(round(c.replica(1), answer+strconv.Quote(ir.RequestState))); !strings.Contains(got, "state-ok") {
			t.Fatalf("retry on another replica: %q", got)
		}
		bad := round(c.replica(2), answer+strconv.Quote(ir.RequestState+"x"))
		if bad.msg.Error == nil || bad.msg.Error.Code != -32602 {
			t.Fatalf("tampered state on a third replica: %s %+v", bad.msg.Result, bad.msg.Error)
		}
	})

	// open3 opens three streams through the balancer. Streams closed by
	// earlier subtests may still count on their replicas for HAProxy's
	// leastconn (a replica notices a closed listen stream at its next
	// write or keep-alive), so they may all land on one replica.
	open3 := func(t *testing.T, prefix string) []*stream {
		t.Helper()
		var ss []*stream
		for range 3 {
			s, err := listen(c.url(), prefix)
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, s)
		}
		t.Cleanup(func() {
			for _, s := range ss {
				s.close()
			}
		})
		return ss
	}
	index := func(replica string) int { return int(replica[1] - '1') }

	t.Run("sigkill_replica_relisten", func(t *testing.T) {
		notOnRedisCluster(t)
		ss := open3(t, "cluster://kill/")
		victim := index(ss[0].replica)
		c.replicas[victim].stop(syscall.SIGKILL)
		for _, s := range ss {
			if s.replica == ss[0].replica && !s.ended(3*time.Second) {
				t.Fatalf("the stream on the killed replica %s did not end", s.replica)
			}
		}
		for _, s := range ss {
			if s.replica != ss[0].replica && s.ended(0) {
				t.Fatalf("the stream on %s ended with %s", s.replica, ss[0].replica)
			}
		}
		began := time.Now()
		s, err := listen(c.url(), "cluster://kill/")
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		if d := time.Since(began); d > time.Second || s.replica == ss[0].replica {
			t.Fatalf("re-listen acknowledged by %s after %s", s.replica, d)
		}
		var uris []string
		for i := range 20 {
			u := "cluster://kill/" + strconv.Itoa(i)
			via := c.replica((victim + 1 + i%2) % 3) // the live ones
			if memoryOnly {
				via = c.replica(index(s.replica))
			}
			touch(t, via, u)
			uris = append(uris, u)
		}
		if missing, dup := s.waitAll(uris, 3*time.Second); len(missing) > 0 || dup > 0 {
			t.Fatalf("after re-listen: missing %v, %d duplicated", missing, dup)
		}
		c.startReplica(victim)
		c.waitHealthy()
	})

	t.Run("sigterm_completes_streams", func(t *testing.T) {
		notOnRedisCluster(t)
		ss := open3(t, "cluster://term/")
		victim := index(ss[0].replica)
		c.replicas[victim].stop(syscall.SIGTERM)
		for _, s := range ss {
			if s.replica != ss[0].replica {
				continue
			}
			if !s.ended(5 * time.Second) {
				t.Fatal("stream not ended by SIGTERM")
			}
			s.mu.Lock()
			final := s.final
			s.mu.Unlock()
			if final == nil || !strings.Contains(string(final.Result), `"resultType":"complete"`) {
				t.Fatalf("final message %+v", final)
			}
		}
		c.startReplica(victim)
		c.waitHealthy()
	})

	t.Run("publish_refused", func(t *testing.T) {
		// F9: a PUBLISH that fails while every subscription stays up (here
		// refused by an ACL) is not lost in silence: the publisher answers
		// 503 and ends its own streams for the URI at once (its cue would
		// have come back through Redis), and once publishing works again
		// the other replicas end theirs (CueMissed). A stream the cue did
		// not concern stays open.
		shared(t)
		var ss []*stream
		for i := range 3 {
			s, err := listen(c.replica(i), "cluster://refused/")
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			ss = append(ss, s)
		}
		other, err := listen(c.replica(1), "cluster://unrelated/")
		if err != nil {
			t.Fatal(err)
		}
		defer other.close()
		c.redisCmd(t, "ACL", "SETUSER", "default", "-"+c.publishCmd())
		r := call(t, c.replica(0), "", "touch", `{"uri":"cluster://refused/x"}`)
		if r.status != 503 {
			c.redisCmd(t, "ACL", "SETUSER", "default", "+"+c.publishCmd())
			t.Fatalf("touch with PUBLISH refused: %d %+v", r.status, r.msg.Error)
		}
		if !ss[0].ended(5 * time.Second) {
			c.redisCmd(t, "ACL", "SETUSER", "default", "+"+c.publishCmd())
			t.Fatal("the publisher's own stream still open after its publish failed")
		}
		c.redisCmd(t, "ACL", "SETUSER", "default", "+"+c.publishCmd())
		for i, s := range ss[1:] {
			if !s.ended(10 * time.Second) {
				t.Fatalf("replica %d: stream still open 10 s after publishing works again", i+2)
			}
		}
		if other.ended(0) {
			t.Fatal("a stream for another URI was ended")
		}
	})

	if c.masters > 0 {
		testRedisClusterOutages(t, c)
		return
	}
	t.Run("redis_outage", func(t *testing.T) {
		shared(t)
		var ss []*stream
		for i := range 3 { // one on each replica, directly
			s, err := listen(c.replica(i), "cluster://outage/")
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			ss = append(ss, s)
		}
		ss = append(ss, open3(t, "cluster://outage/")...)
		// A handle made before the restart (Redis runs without persistence).
		before := call(t, c.replica(0), "alice", "draft_create", `{"text":"before"}`)
		if before.status != 200 || before.msg.Error != nil {
			t.Fatalf("create before the outage: %d %+v", before.status, before.msg.Error)
		}
		stopped := time.Now()
		c.redis.stop(syscall.SIGKILL)
		for i, s := range ss {
			if !s.ended(10 * time.Second) {
				t.Fatalf("stream %d still open 10 s after Redis stopped", i)
			}
		}
		t.Logf("%d listen streams ended %s after Redis was killed", len(ss), time.Since(stopped).Round(time.Millisecond))
		for i := range 3 {
			var r reply
			deadline := time.Now().Add(10 * time.Second)
			for {
				r = call(t, c.replica(i), "alice", "draft_create", `{"text":"x"}`)
				if r.status == 503 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if r.status != 503 || r.msg.Error == nil || r.msg.Error.Code != -32603 {
				t.Fatalf("draft_create on replica %d with Redis down: %d %+v", i+1, r.status, r.msg.Error)
			}
			if _, err := listen(c.replica(i), "cluster://outage/"); err == nil || !strings.Contains(err.Error(), "503") {
				t.Fatalf("listen on replica %d with Redis down: %v", i+1, err)
			}
		}
		t.Logf("503 and refused listens on every replica %s after Redis was killed", time.Since(stopped).Round(time.Millisecond))
		restarted := time.Now()
		c.startRedis()
		for i := range 3 {
			deadline := time.Now().Add(20 * time.Second)
			for {
				r := call(t, c.replica(i), "alice", "draft_create", `{"text":"x"}`)
				if r.status == 200 && r.msg.Error == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("replica %d not back 20 s after Redis: %d %v %+v", i+1, r.status, r.err, r.msg.Error)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		var s *stream
		var err error
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if s, err = listen(c.url(), "cluster://outage/"); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("listen after Redis came back: %v", err)
			}
		}
		defer s.close()
		t.Logf("store and listen back on every replica %s after Redis restarted", time.Since(restarted).Round(time.Millisecond))
		// F9: every replica detected the restart and the lost data (once its
		// subscription is back): the handle made before is answered 503
		// "state was lost", to its owner and to anyone else alike, not
		// "unknown handle".
		for i := range 3 {
			for _, who := range []string{"alice", "bob"} {
				var r reply
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					r = call(t, c.replica(i), who, "draft_read", fmt.Sprintf(`{"handle":%q}`, text(before)))
					if r.status == 503 || time.Now().After(deadline) {
						break
					}
				}
				if r.status != 503 || r.msg.Error == nil || !strings.Contains(r.msg.Error.Message, "state was lost") {
					t.Fatalf("replica %d, %s: draft_read of a handle lost in the restart: %d %+v", i+1, who, r.status, r.msg.Error)
				}
			}
		}
		var uris []string
		for i := range 3 {
			u := "cluster://outage/" + strconv.Itoa(i)
			touch(t, c.replica(i), u)
			uris = append(uris, u)
		}
		if missing, dup := s.waitAll(uris, 5*time.Second); len(missing) > 0 || dup > 0 {
			t.Fatalf("after the outage: missing %v, %d duplicated", missing, dup)
		}
		// The subscription stays up once restored: a stream opened after
		// the restart is not ended by a second "lost" (updates keep
		// flowing through every replica for a few seconds).
		uris = uris[:0]
		for k := range 30 {
			u := "cluster://outage/later/" + strconv.Itoa(k)
			touch(t, c.replica(k%3), u)
			uris = append(uris, u)
			time.Sleep(100 * time.Millisecond)
		}
		if s.ended(0) {
			t.Fatalf("the stream opened after Redis came back ended within %s", time.Since(restarted).Round(time.Millisecond))
		}
		if missing, dup := s.waitAll(uris, 5*time.Second); len(missing) > 0 || dup > 0 {
			t.Fatalf("later updates: missing %v, %d duplicated", missing, dup)
		}
	})
}
