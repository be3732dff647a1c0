package streamhttp

import (
	"testing"
	"time"
)

// TestConfigLimitRule: each limit of Config follows the package's rule: 0
// is its Default* constant, positive that value, negative no limit (or,
// for the fields that cannot go without one, the default).
func TestConfigLimitRule(t *testing.T) {
	ints := []struct {
		name      string
		set       func(*Config, int)
		get       func(Config) int
		def, none int
	}{
		{"MaxBodyBytes", func(c *Config, v int) { c.MaxBodyBytes = v }, func(c Config) int { return c.MaxBodyBytes }, DefaultMaxBodyBytes, noLimit},
		{"MaxHeaderBytes", func(c *Config, v int) { c.MaxHeaderBytes = v }, func(c Config) int { return c.MaxHeaderBytes }, DefaultMaxHeaderBytes, DefaultMaxHeaderBytes},
		{"MaxPendingBytes", func(c *Config, v int) { c.MaxPendingBytes = v }, func(c Config) int { return c.MaxPendingBytes }, DefaultMaxPendingBytes, noLimit},
		{"MaxListenPendingBytes", func(c *Config, v int) { c.MaxListenPendingBytes = v }, func(c Config) int { return c.MaxListenPendingBytes }, DefaultMaxListenPending, noLimit},
		{"MaxConnsPerIP", func(c *Config, v int) { c.MaxConnsPerIP = v }, func(c Config) int { return c.MaxConnsPerIP }, DefaultMaxConnsPerIP, noLimit},
		{"MaxConns", func(c *Config, v int) { c.MaxConns = v }, func(c Config) int { return c.MaxConns }, DefaultMaxConns, noLimit},
		{"CompressMinBytes", func(c *Config, v int) { c.CompressMinBytes = v }, func(c Config) int { return c.CompressMinBytes }, DefaultCompressMinBytes, DefaultCompressMinBytes},
	}
	for _, f := range ints {
		for _, tc := range []struct{ in, want int }{{0, f.def}, {-1, f.none}, {7, 7}} {
			var c Config
			f.set(&c, tc.in)
			if got := f.get(c.withDefaults()); got != tc.want {
				t.Errorf("%s %d => %d, want %d", f.name, tc.in, got, tc.want)
			}
		}
	}
	durs := []struct {
		name      string
		set       func(*Config, time.Duration)
		get       func(Config) time.Duration
		def, none time.Duration
	}{
		{"ReadTimeout", func(c *Config, v time.Duration) { c.ReadTimeout = v }, func(c Config) time.Duration { return c.ReadTimeout }, DefaultReadTimeout, noTimeout},
		{"ReadIdleTimeout", func(c *Config, v time.Duration) { c.ReadIdleTimeout = v }, func(c Config) time.Duration { return c.ReadIdleTimeout }, DefaultReadIdleTimeout, noTimeout},
		{"IdleTimeout", func(c *Config, v time.Duration) { c.IdleTimeout = v }, func(c Config) time.Duration { return c.IdleTimeout }, DefaultIdleTimeout, noTimeout},
		{"WriteIdleTimeout", func(c *Config, v time.Duration) { c.WriteIdleTimeout = v }, func(c Config) time.Duration { return c.WriteIdleTimeout }, DefaultWriteIdleTimeout, noTimeout},
		{"AuthTimeout", func(c *Config, v time.Duration) { c.AuthTimeout = v }, func(c Config) time.Duration { return c.AuthTimeout }, DefaultAuthTimeout, noTimeout},
		{"KeepAlive", func(c *Config, v time.Duration) { c.KeepAlive = v }, func(c Config) time.Duration { return c.KeepAlive }, DefaultKeepAlive, DefaultKeepAlive},
	}
	for _, f := range durs {
		for _, tc := range []struct{ in, want time.Duration }{{0, f.def}, {-time.Second, f.none}, {time.Second, time.Second}} {
			var c Config
			f.set(&c, tc.in)
			if got := f.get(c.withDefaults()); got != tc.want {
				t.Errorf("%s %v => %v, want %v", f.name, tc.in, got, tc.want)
			}
		}
	}
	// A deadline noTimeout away is still in the future (no overflow).
	if now := time.Now(); !now.Add(noTimeout).After(now.Add(100 * 365 * 24 * time.Hour)) {
		t.Error("noTimeout does not reach a century ahead")
	}
}

// TestBodyLimitRule: on both front ends a positive MaxBodyBytes refuses
// one byte more (413) and passes the limit itself, and a negative one
// passes a body over DefaultMaxBodyBytes, which the default refuses
// (TestHTTPFramingTable).
func TestBodyLimitRule(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		for _, tc := range []struct {
			max, size, status int
		}{
			{2000, 2000, 200},
			{2000, 2001, 413},
			{-1, DefaultMaxBodyBytes + 1, 200},
		} {
			h := startHarness(t, fe, Config{MaxBodyBytes: tc.max}, defaultOptions())
			c := h.dial(t)
			c.write(h.raw(request{hdr: echoHdr, body: bigBody(tc.size)}))
			resp, err := c.readResponse(10 * time.Second)
			if err != nil {
				t.Fatalf("MaxBodyBytes %d, body %d: %v", tc.max, tc.size, err)
			}
			c.readAll(resp)
			if resp.StatusCode != tc.status {
				t.Errorf("MaxBodyBytes %d, body %d: status %d, want %d", tc.max, tc.size, resp.StatusCode, tc.status)
			}
			h.shutdown(5 * time.Second)
		}
	})
}
