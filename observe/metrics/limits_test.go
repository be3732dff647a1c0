package metrics

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestLimitRefused: the per-caller refusals are one counter family,
// mcpwire_limit_refused_total, labelled by limit: the engine's four and
// what AddLimit adds, each read at scrape time (F5).
func TestLimitRefused(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	srv.LimitStats().ListenPerPrincipal.Add(3)
	srv.LimitStats().RatePerPrincipal.Add(1)
	c := New(srv)
	var sessions uint64 = 5
	c.AddLimit("sessions_per_ip", func() uint64 { return sessions })
	mf := gather(t, Registry(c))["mcpwire_limit_refused_total"]
	if mf == nil {
		t.Fatal("mcpwire_limit_refused_total not exported")
	}
	got := map[string]float64{}
	for _, m := range mf.GetMetric() {
		got[labelsOf(m)["limit"]] = m.GetCounter().GetValue()
	}
	want := map[string]float64{
		engine.LimitListenPerPrincipal: 3, engine.LimitInFlightPerPrincipal: 0,
		engine.LimitRatePerPrincipal: 1, engine.LimitToolRatePerPrincipal: 0, "sessions_per_ip": 5,
	}
	if len(got) != len(want) {
		t.Fatalf("limits %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("limit=%q: %v, want %v", k, got[k], v)
		}
	}
}
