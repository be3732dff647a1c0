package load

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpwire/mcpwire/internal/netutil"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Workloads.
const (
	WorkloadCall     = "call"
	WorkloadMix      = "mix"
	WorkloadProgress = "progress"
	WorkloadListen   = "listen"
)

// Defaults of the CLI flags.
const (
	DefaultTool        = "echo"
	DefaultArgs        = `{"text":"hello world"}`
	DefaultMix         = "tools/call=8,tools/list=1,server/discover=1"
	DefaultSleepMs     = 100
	DefaultSteps       = 5
	DefaultListeners   = 100
	DefaultURI         = "test://load"
	DefaultPublishRate = 100
	DefaultConns       = 64
	DefaultDuration    = 10 * time.Second
	DefaultWarmup      = time.Second
	DefaultTimeout     = 5 * time.Second
)

// Config describes one run. Zero values of the numeric fields select the
// defaults above where noted.
type Config struct {
	// Target is http://host:port/path, https://host:port/path,
	// stdio:'command args...', tcp://host:port or unix:///path/to.sock.
	Target string
	// TLS is the client configuration of an https:// target (nil: the
	// system roots, no client certificate). The run uses a copy: its
	// ServerName defaults to the target's host, and without a
	// ClientSessionCache of its own the connections share one, so that a
	// reconnect resumes its TLS session as a browser's or an SDK's would.
	TLS *tls.Config
	// Workload is call, mix, progress or listen ("" = call).
	Workload string

	Tool string // call: tools/call of this tool ("" = echo)
	Args string // call: its arguments, a JSON object ("" = {"text":"hello world"})
	// NoProgressToken drops the progressToken that call requests carry by
	// default (the standard fixture: real clients send one with every
	// tools/call).
	NoProgressToken bool
	Mix             string // mix: method=weight,... ("" = DefaultMix)

	SleepMs int // progress: sleep {ms}
	Steps   int // progress: sleep {steps}

	Listeners   int     // listen: number of subscriptions/listen streams (0 = 100)
	URI         string  // listen: the subscribed resource ("" = test://load); mix: resources/read uri
	PublishRate float64 // listen: touch calls per second (0 = 100)
	// UniqueURIs (listen): the k-th touch names its own sub-resource
	// URI/k of the subscribed URI (SUB-06), so no two updates can collapse;
	// every stream must then receive every publish, and any that does not
	// arrive is reported as lost (Result.Lost, a failed run).
	UniqueURIs bool

	// Conns is the number of HTTP connections, stdio processes or
	// sockets (0 = 64; 1 for stdio).
	Conns int
	// Inflight is the window per connection (0 = 1). HTTP allows 1 only.
	Inflight int
	// Rate > 0 runs an open loop at this many requests per second in all
	// (listen: the publish rate is used instead).
	Rate float64
	// Duration of the measurement (0 = unbounded: Requests must be set).
	Duration time.Duration
	// Requests bounds the measured requests (0 = unbounded).
	Requests int64
	// Warmup runs before the measurement and is not recorded.
	Warmup time.Duration
	// Timeout per request (0 = 5s). Expired requests count as "timeout".
	Timeout time.Duration

	// Progress, when not nil, receives a live progress line every second,
	// redrawn in place with "\r" unless ProgressNewline is set.
	Progress        io.Writer
	ProgressNewline bool
	// Log receives warnings and the stderr of stdio servers (nil: discarded).
	Log io.Writer
	// Timeline records per-second samples of the measured window
	// (Result.Timeline, the HTML report's charts over time). Off: the
	// recorders pay one nil check per request.
	Timeline bool
}

// target is a parsed Config.Target.
type target struct {
	kind string // "http", "stdio", "tcp", "unix"
	raw  string
	tls  bool        // http: https://
	conf *tls.Config // https: the run's client configuration (clientTLS)

	addr string // http/tcp: host:port; unix: socket path
	host string // http: the Host header value
	path string // http: request-target (path and query)

	argv []string // stdio
}

func parseTarget(s string) (*target, error) {
	t := &target{raw: s}
	switch {
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("target %q: %v", s, err)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("target %q: no host", s)
		}
		t.kind, t.host, t.tls = "http", u.Host, u.Scheme == "https"
		t.addr = u.Host
		if u.Port() == "" {
			port := "80"
			if t.tls {
				port = "443"
			}
			t.addr = net.JoinHostPort(u.Hostname(), port)
		}
		t.path = u.EscapedPath()
		if t.path == "" {
			t.path = "/"
		}
		if u.RawQuery != "" {
			t.path += "?" + u.RawQuery
		}
		if !headerSafe(t.path) || !headerSafe(t.host) {
			return nil, fmt.Errorf("target %q: invalid characters", s)
		}
	case strings.HasPrefix(s, "stdio:"):
		argv, err := netutil.SplitCommand(strings.TrimPrefix(s, "stdio:"))
		if err != nil {
			return nil, fmt.Errorf("target %q: %v", s, err)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("target %q: no command", s)
		}
		t.kind, t.argv = "stdio", argv
	case strings.HasPrefix(s, "tcp://"):
		hp := strings.TrimSuffix(strings.TrimPrefix(s, "tcp://"), "/")
		if _, _, err := net.SplitHostPort(hp); err != nil {
			return nil, fmt.Errorf("target %q: %v", s, err)
		}
		t.kind, t.addr = "tcp", hp
	case strings.HasPrefix(s, "unix://"):
		p := strings.TrimPrefix(s, "unix://")
		if p == "" {
			return nil, fmt.Errorf("target %q: no socket path", s)
		}
		t.kind, t.addr = "unix", p
	default:
		return nil, fmt.Errorf("target %q: want http://host:port/path, https://host:port/path, stdio:'command args', tcp://host:port or unix:///path", s)
	}
	return t, nil
}

// headerSafe reports whether s can go into a request line or header as is.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return s != ""
}

// mixEntry is one method of the mix workload with its weight.
type mixEntry struct {
	method string
	weight int
}

func parseMix(s string) ([]mixEntry, error) {
	var out []mixEntry
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		m, w, ok := strings.Cut(part, "=")
		m = strings.TrimSpace(m)
		if !ok {
			return nil, fmt.Errorf("-mix %q: want method=weight", part)
		}
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 0 || n > 1000 {
			return nil, fmt.Errorf("-mix %q: weight must be an integer from 0 to 1000", part)
		}
		if !headerSafe(m) {
			return nil, fmt.Errorf("-mix %q: bad method name", part)
		}
		switch m {
		case "subscriptions/listen":
			return nil, errors.New("-mix: subscriptions/listen is long-lived; use -workload listen")
		case "prompts/get", "completion/complete":
			return nil, fmt.Errorf("-mix: %s needs arguments this generator does not take; use the others", m)
		}
		if seen[m] {
			return nil, fmt.Errorf("-mix: %s given twice", m)
		}
		seen[m] = true
		if n > 0 {
			out = append(out, mixEntry{m, n})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-mix: no method with a positive weight")
	}
	return out, nil
}

// mixSequence spreads the methods over one cycle of sum(weights) picks by
// smooth weighted round robin (8,1,1 gives a call-heavy cycle with the two
// others apart, not bunched at the end).
func mixSequence(es []mixEntry) []int {
	total := 0
	for _, e := range es {
		total += e.weight
	}
	cur := make([]int, len(es))
	seq := make([]int, 0, total)
	for range total {
		best := -1
		for i, e := range es {
			cur[i] += e.weight
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		seq = append(seq, best)
	}
	return seq
}

// compactObject validates a JSON object and returns it without
// insignificant whitespace (so it never holds a raw newline: stdio framing).
func compactObject(name, s string) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %v", name, err)
	}
	b := buf.Bytes()
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("%s: must be a JSON object", name)
	}
	return b, nil
}

// normalize fills defaults and validates cfg.
func (c *Config) normalize() (*target, error) {
	t, err := parseTarget(c.Target)
	if err != nil {
		return nil, err
	}
	if t.tls {
		t.conf = clientTLS(c.TLS, t)
	}
	if c.Workload == "" {
		c.Workload = WorkloadCall
	}
	switch c.Workload {
	case WorkloadCall, WorkloadMix, WorkloadProgress, WorkloadListen:
	default:
		return nil, fmt.Errorf("-workload %q: want call, mix, progress or listen", c.Workload)
	}
	if c.Tool == "" {
		c.Tool = DefaultTool
	}
	if c.Args == "" {
		c.Args = DefaultArgs
	}
	if c.Mix == "" {
		c.Mix = DefaultMix
	}
	if c.URI == "" {
		c.URI = DefaultURI
	}
	if c.Listeners == 0 {
		c.Listeners = DefaultListeners
	}
	if c.PublishRate == 0 {
		c.PublishRate = DefaultPublishRate
	}
	if c.Conns == 0 {
		c.Conns = DefaultConns
		if t.kind == "stdio" {
			c.Conns = 1
		}
	}
	if c.Inflight == 0 {
		c.Inflight = 1
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.Conns < 0 || c.Conns > 100000:
		return nil, errors.New("-c must be from 1 to 100000")
	case c.Inflight < 0 || c.Inflight > 65536:
		return nil, errors.New("-w must be from 1 to 65536")
	case t.kind == "http" && c.Inflight != 1:
		return nil, errors.New("-w must be 1 for HTTP targets (HTTP/1.1 without pipelining: one request per connection at a time); raise -c instead")
	case c.Rate < 0 || c.PublishRate < 0:
		return nil, errors.New("-rate and -publish-rate must not be negative")
	case c.Duration < 0 || c.Requests < 0 || c.Warmup < 0 || c.Timeout < 0:
		return nil, errors.New("-d, -n, -warmup and -timeout must not be negative")
	case c.Duration == 0 && c.Requests == 0:
		return nil, errors.New("give a duration (-d) or a request count (-n)")
	case c.SleepMs < 0 || c.Steps < 0:
		return nil, errors.New("-sleep-ms and -steps must not be negative")
	case c.Listeners < 0 || c.Listeners > 1000000:
		return nil, errors.New("-listeners must be from 1 to 1000000")
	}
	if c.Workload == WorkloadListen && c.Rate > 0 {
		return nil, errors.New("-rate does not apply to -workload listen (use -publish-rate)")
	}
	return t, nil
}
