package engine

import (
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// TestConfigLimitRule: each limit of Config follows the package's rule:
// 0 is its Default* constant, positive that value, and negative no limit
// (or, where a field cannot go without one, the default).
func TestConfigLimitRule(t *testing.T) {
	eff := func(o Config) Config { return o.withDefaults() }
	ints := []struct {
		name      string
		set       func(*Config, int)
		get       func(Config) int
		def, none int // none: what a negative value becomes
	}{
		{"MaxInFlight", func(o *Config, v int) { o.MaxInFlight = v }, func(o Config) int { return o.MaxInFlight }, DefaultMaxInFlight, -1},
		{"MaxDepth", func(o *Config, v int) { o.MaxDepth = v }, func(o Config) int { return o.MaxDepth }, DefaultMaxDepth, codec.MaxDepthLimit},
		{"LogBurst", func(o *Config, v int) { o.LogBurst = v }, func(o Config) int { return o.LogBurst }, DefaultLogBurst, -1},
	}
	for _, f := range ints {
		for _, tc := range []struct{ in, want int }{{0, f.def}, {-1, f.none}, {7, 7}} {
			var o Config
			f.set(&o, tc.in)
			if got := f.get(eff(o)); got != tc.want {
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
		// The effective form of "no rate limit" is 0.
		{"ProgressInterval", func(o *Config, v time.Duration) { o.ProgressInterval = v }, func(o Config) time.Duration { return o.ProgressInterval }, DefaultProgressInterval, 0},
		{"LogInterval", func(o *Config, v time.Duration) { o.LogInterval = v }, func(o Config) time.Duration { return o.LogInterval }, DefaultLogInterval, 0},
		// A publish is always bounded: negative is the default.
		{"PublishTimeout", func(o *Config, v time.Duration) { o.PublishTimeout = v }, func(o Config) time.Duration { return o.PublishTimeout }, DefaultPublishTimeout, DefaultPublishTimeout},
		// No default timeout: 0 and negative are both none.
		{"Timeout", func(o *Config, v time.Duration) { o.Timeout = v }, func(o Config) time.Duration { return o.Timeout }, 0, -time.Second},
	}
	for _, f := range durs {
		for _, tc := range []struct{ in, want time.Duration }{{0, f.def}, {-time.Second, f.none}, {time.Second, time.Second}} {
			var o Config
			f.set(&o, tc.in)
			if got := f.get(eff(o)); got != tc.want {
				t.Errorf("%s %v => %v, want %v", f.name, tc.in, got, tc.want)
			}
		}
	}
}

// TestNegativeLogBurstUnlimited: with LogBurst negative the log limiter
// takes every message, where the default burst would drop.
func TestNegativeLogBurstUnlimited(t *testing.T) {
	var l logLimit
	t0 := time.Unix(1000, 0)
	for i := range 10 * DefaultLogBurst {
		if !l.take(t0, DefaultLogInterval, -1) {
			t.Fatalf("message %d dropped with LogBurst -1", i)
		}
	}
}
