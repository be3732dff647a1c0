package client

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// TestConfigLimitRule: each limit of Config and LineConfig follows the
// package's rule: 0 is its Default* constant, positive that value,
// negative no limit (or, for the fields that cannot go without one, the
// default).
func TestConfigLimitRule(t *testing.T) {
	norm := func(o Config) Config { o.normalize(); return o }
	line := func(o LineConfig) LineConfig { return NewLineTransport(nil, o).o }
	ints := []struct {
		name      string
		get       func(v int) int
		def, none int
	}{
		{"MaxInputRounds", func(v int) int { return norm(Config{MaxInputRounds: v}).MaxInputRounds }, DefaultMaxInputRounds, math.MaxInt},
		{"Retries", func(v int) int { return norm(Config{Retries: v}).Retries }, DefaultRetries, 0},
		{"LineConfig.MaxQueued", func(v int) int { return line(LineConfig{MaxQueued: v}).MaxQueued }, DefaultMaxQueued, math.MaxInt},
	}
	for _, f := range ints {
		for _, tc := range []struct{ in, want int }{{0, f.def}, {-1, f.none}, {7, 7}} {
			if got := f.get(tc.in); got != tc.want {
				t.Errorf("%s %d => %d, want %d", f.name, tc.in, got, tc.want)
			}
		}
	}
	durs := []struct {
		name      string
		get       func(v time.Duration) time.Duration
		def, none time.Duration
	}{
		{"Timeout", func(v time.Duration) time.Duration { return norm(Config{Timeout: v}).Timeout }, DefaultTimeout, -time.Second},
		{"ProbeTimeout", func(v time.Duration) time.Duration { return norm(Config{ProbeTimeout: v}).ProbeTimeout }, DefaultProbeTimeout, DefaultProbeTimeout},
		{"MinBackoff", func(v time.Duration) time.Duration { return line(LineConfig{MinBackoff: v}).MinBackoff }, DefaultMinBackoff, DefaultMinBackoff},
		{"MaxBackoff", func(v time.Duration) time.Duration { return line(LineConfig{MaxBackoff: v}).MaxBackoff }, DefaultMaxBackoff, DefaultMaxBackoff},
	}
	for _, f := range durs {
		for _, tc := range []struct{ in, want time.Duration }{{0, f.def}, {-time.Second, f.none}, {time.Second, time.Second}} {
			if got := f.get(tc.in); got != tc.want {
				t.Errorf("%s %v => %v, want %v", f.name, tc.in, got, tc.want)
			}
		}
	}
}

// TestLineMaxLineRule: LineConfig.MaxLine follows the rule: 0 refuses a
// reply over framing.DefaultMaxLine with ErrTooLarge, negative accepts it.
func TestLineMaxLineRule(t *testing.T) {
	big := strings.Repeat("x", framing.DefaultMaxLine)
	serve := modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"resultType":"complete","content":[{"type":"text","text":"` + big + `"}]}}`)
	})
	for _, tc := range []struct {
		maxLine int
		err     error
	}{{0, ErrTooLarge}, {-1, nil}} {
		f := &fake{t: t, serve: serve}
		lt := NewLineTransport(f.dial, LineConfig{MaxLine: tc.maxLine, Logger: slog.New(slog.DiscardHandler)})
		c := New(lt, Config{Logger: slog.New(slog.DiscardHandler)})
		res, err := c.CallTool(ctx10(t), "big", nil, nil)
		if !errors.Is(err, tc.err) || err == nil && res.Text() != big {
			t.Errorf("MaxLine %d: a reply over framing.DefaultMaxLine: %v, want %v", tc.maxLine, err, tc.err)
		}
		c.Close()
	}
}
