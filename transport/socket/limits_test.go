package socket

import (
	"math"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// TestConfigLimitRule: each limit of Config follows the package's rule: 0
// is its Default* constant, positive that value, negative no limit (or,
// for AuthTimeout and EventLoops, the default).
func TestConfigLimitRule(t *testing.T) {
	ints := []struct {
		name      string
		set       func(*Config, int)
		get       func(Config) int
		def, none int
	}{
		{"MaxConns", func(c *Config, v int) { c.MaxConns = v }, func(c Config) int { return c.MaxConns }, DefaultMaxConns, math.MaxInt},
		{"MaxConnsPerIP", func(c *Config, v int) { c.MaxConnsPerIP = v }, func(c Config) int { return c.MaxConnsPerIP }, DefaultMaxConnsPerIP, math.MaxInt},
		{"MaxPending", func(c *Config, v int) { c.MaxPending = v }, func(c Config) int { return c.MaxPending }, linestream.DefaultMaxPending, math.MaxInt},
		{"EventLoops", func(c *Config, v int) { c.EventLoops = v }, func(c Config) int { return c.EventLoops }, DefaultEventLoops(), DefaultEventLoops()},
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
		// Negative stays negative: watchStall arms no timer then.
		{"WriteTimeout", func(c *Config, v time.Duration) { c.WriteTimeout = v }, func(c Config) time.Duration { return c.WriteTimeout }, DefaultWriteTimeout, -time.Second},
		{"AuthTimeout", func(c *Config, v time.Duration) { c.AuthTimeout = v }, func(c Config) time.Duration { return c.AuthTimeout }, DefaultAuthTimeout, DefaultAuthTimeout},
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
	// MaxLine, MaxBacklog and CancelBudget go to linestream as given, where
	// the same rule applies (linestream's TestConfigLimitRule).
	s := New(engine.New(engine.Config{}), Config{MaxLine: -1, MaxBacklog: -1, CancelBudget: -1})
	if l := s.lcfg; l.MaxLine != -1 || l.MaxBacklog != -1 || l.CancelBudget != -1 {
		t.Errorf("linestream config %+v", l)
	}
}
