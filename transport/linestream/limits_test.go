package linestream

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
)

// TestConfigLimitRule: every Config limit follows the package's rule: 0
// is its Default* constant, negative no limit, positive that value.
func TestConfigLimitRule(t *testing.T) {
	type field struct {
		name string
		set  func(*Config, int)
		get  func(Config) int
		def  int
	}
	fields := []field{
		{"MaxLine", func(c *Config, v int) { c.MaxLine = v }, func(c Config) int { return c.MaxLine }, framing.DefaultMaxLine},
		{"MaxPending", func(c *Config, v int) { c.MaxPending = v }, func(c Config) int { return c.MaxPending }, DefaultMaxPending},
		{"MaxBacklog", func(c *Config, v int) { c.MaxBacklog = v }, func(c Config) int { return c.MaxBacklog }, framing.DefaultMaxLine + DefaultBacklogSlack},
		{"CancelBudget", func(c *Config, v int) { c.CancelBudget = v }, func(c Config) int { return c.CancelBudget }, DefaultCancelBudget},
	}
	for _, f := range fields {
		for _, tc := range []struct{ in, want int }{{0, f.def}, {7, 7}} {
			var c Config
			f.set(&c, tc.in)
			if got := f.get(c.withDefaults()); got != tc.want {
				t.Errorf("%s %d => %d, want %d", f.name, tc.in, got, tc.want)
			}
		}
		var c Config
		f.set(&c, -1)
		got := f.get(c.withDefaults())
		// The framing layer and the cancel budget read a negative value as
		// no limit; the others hold the largest int.
		if unlimited := got < 0 || got == math.MaxInt; !unlimited {
			t.Errorf("%s -1 => %d, want no limit", f.name, got)
		}
	}
	// MaxBacklog's default follows MaxLine, and stays finite when MaxLine
	// is unlimited.
	if got := (Config{MaxLine: 100}).withDefaults().MaxBacklog; got != 100+DefaultBacklogSlack {
		t.Errorf("MaxBacklog with MaxLine 100 => %d", got)
	}
	if got := (Config{MaxLine: -1}).withDefaults().MaxBacklog; got != framing.DefaultMaxLine+DefaultBacklogSlack {
		t.Errorf("MaxBacklog with MaxLine -1 => %d", got)
	}
	for in, want := range map[int]int32{-1: math.MaxInt32, 3: 3, math.MaxInt32 + 1: math.MaxInt32} {
		if got := maxInFlight(in); got != want {
			t.Errorf("maxInFlight(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestUnlimitedInFlight: with engine.Config.MaxInFlight negative the
// Conn never pauses its input, even past DefaultMaxInFlight requests in
// flight (the default would block the third HandleFrame here at 256).
func TestUnlimitedInFlight(t *testing.T) {
	s, sc, _ := newConn(t, engine.Config{MaxInFlight: -1})
	n := engine.DefaultMaxInFlight + 10
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := sc.HandleFrame([]byte(req(i, "tools/call", `"name":"block","arguments":{}`))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("input paused with %d requests in flight", sc.InFlight())
	}
	if got := sc.InFlight(); got != n {
		t.Errorf("%d in flight, want %d", got, n)
	}
	if s.Stats().InFlightStalls.Load() != 0 {
		t.Error("a stall was counted")
	}
	sc.CancelAll(errors.New("test over"))
}

// TestUnlimitedDepth: with engine.Config.MaxDepth negative a message
// nested deeper than DefaultMaxDepth is served; with the default it is
// refused.
func TestUnlimitedDepth(t *testing.T) {
	deep := strings.Repeat("[", engine.DefaultMaxDepth+10) + strings.Repeat("]", engine.DefaultMaxDepth+10)
	line := req("d", "tools/call", `"name":"echo","arguments":{"text":"deep","deep":`+deep+`}`)
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{0, false}, {-1, true}} {
		_, sc, out := newConn(t, engine.Config{MaxDepth: tc.depth})
		feed(t, sc, line)
		m := out.wait(t, "the answer", func(m wireMsg) bool { return string(m.ID) == `"d"` || m.code() != 0 })
		if got := m.code() == 0 && m.text() == "deep"; got != tc.ok {
			t.Errorf("MaxDepth %d: %s", tc.depth, m.raw)
		}
	}
}
