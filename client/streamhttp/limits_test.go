package streamhttp

import (
	"math"
	"testing"
	"time"
)

// TestConfigLimitRule: each limit of Config follows mcpwire's
// rule: 0 is its Default* constant, positive that value, negative no
// limit (kept negative where the transport reads it so).
func TestConfigLimitRule(t *testing.T) {
	ints := []struct {
		name      string
		get       func(v int) int
		def, none int
	}{
		{"MaxConns", func(v int) int { return Config{MaxConns: v}.withDefaults().MaxConns }, DefaultMaxConns, -1},
		{"MaxMessage", func(v int) int { return Config{MaxMessage: v}.withDefaults().MaxMessage }, DefaultMaxMessage, -1},
		{"MaxQueued", func(v int) int { return Config{MaxQueued: v}.withDefaults().MaxQueued }, DefaultMaxQueued, math.MaxInt},
	}
	for _, f := range ints {
		for _, tc := range []struct{ in, want int }{{0, f.def}, {-1, f.none}, {7, 7}} {
			if got := f.get(tc.in); got != tc.want {
				t.Errorf("%s %d => %d, want %d", f.name, tc.in, got, tc.want)
			}
		}
	}
	durs := []struct {
		name string
		get  func(v time.Duration) time.Duration
		def  time.Duration
	}{
		{"DialTimeout", func(v time.Duration) time.Duration { return Config{DialTimeout: v}.withDefaults().DialTimeout }, DefaultDialTimeout},
		{"IdleTimeout", func(v time.Duration) time.Duration { return Config{IdleTimeout: v}.withDefaults().IdleTimeout }, DefaultIdleTimeout},
	}
	for _, f := range durs {
		for _, tc := range []struct{ in, want time.Duration }{{0, f.def}, {-time.Second, -time.Second}, {time.Second, time.Second}} {
			if got := f.get(tc.in); got != tc.want {
				t.Errorf("%s %v => %v, want %v", f.name, tc.in, got, tc.want)
			}
		}
	}
}
