package legacy

import (
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// TestConfigLimitRule: each limit of Config follows the package's rule: 0
// is its Default* constant, positive that value, negative no limit (or,
// for IdleTimeout and KeepAlive, the default).
func TestConfigLimitRule(t *testing.T) {
	ints := []struct {
		name      string
		set       func(*Config, int)
		get       func(Config) int
		def, none int
	}{
		{"MaxSessions", func(c *Config, v int) { c.MaxSessions = v }, func(c Config) int { return c.MaxSessions }, DefaultMaxSessions, noLimit},
		{"MaxBodyBytes", func(c *Config, v int) { c.MaxBodyBytes = v }, func(c Config) int { return c.MaxBodyBytes }, DefaultMaxBodyBytes, noLimit},
		{"MaxLine", func(c *Config, v int) { c.MaxLine = v }, func(c Config) int { return c.MaxLine }, DefaultMaxLine, noLimit},
		{"MaxPendingBytes", func(c *Config, v int) { c.MaxPendingBytes = v }, func(c Config) int { return c.MaxPendingBytes }, DefaultMaxPendingBytes, noLimit},
		{"MaxRounds", func(c *Config, v int) { c.MaxRounds = v }, func(c Config) int { return c.MaxRounds }, DefaultMaxRounds, noLimit},
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
		{"IdleTimeout", func(c *Config, v time.Duration) { c.IdleTimeout = v }, func(c Config) time.Duration { return c.IdleTimeout }, DefaultIdleTimeout, DefaultIdleTimeout},
		{"KeepAlive", func(c *Config, v time.Duration) { c.KeepAlive = v }, func(c Config) time.Duration { return c.KeepAlive }, DefaultKeepAlive, DefaultKeepAlive},
		{"WriteIdleTimeout", func(c *Config, v time.Duration) { c.WriteIdleTimeout = v }, func(c Config) time.Duration { return c.WriteIdleTimeout }, DefaultWriteIdleTimeout, noTimeout},
		{"InputTimeout", func(c *Config, v time.Duration) { c.InputTimeout = v }, func(c Config) time.Duration { return c.InputTimeout }, DefaultInputTimeout, noTimeout},
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
	// The message bounds are the modern transports' (one source).
	if DefaultMaxLine != framing.DefaultMaxLine || DefaultMaxBodyBytes != framing.DefaultMaxLine {
		t.Error("the legacy message bounds differ from framing.DefaultMaxLine")
	}
}
