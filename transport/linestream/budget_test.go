package linestream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestCancelBudgetEarnedBack: every notifications/cancelled naming no
// request in flight draws on the budget (C8), every request served earns
// one back, but never past the budget: requests served while it is full
// bank nothing. The connection ends at the first cancellation past it.
func TestCancelBudgetEarnedBack(t *testing.T) {
	const budget = 3
	cancels := func(n, from int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", from+i)
		}
		return b.String()
	}
	calls := func(n, from int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(req(from+i, "tools/call", `"name":"echo","arguments":{"text":"x"}`) + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		input []string // fed one after the other
		flood bool
	}{
		{"the budget itself", []string{cancels(budget, 100)}, false},
		{"one past it", []string{cancels(budget+1, 100)}, true},
		{"earned back", []string{cancels(budget, 100), calls(2, 1), cancels(2, 200)}, false},
		{"earned back, then past it", []string{cancels(budget, 100), calls(2, 1), cancels(3, 200)}, true},
		{"nothing banked at a full budget", []string{calls(5, 1), cancels(budget+1, 100)}, true},
		{"banked only up to the budget", []string{calls(2, 1), cancels(1, 100), calls(5, 10), cancels(budget, 200)}, false},
		{"and no more", []string{calls(2, 1), cancels(1, 100), calls(5, 10), cancels(budget+1, 200)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := splitServer(t)
			defer func() { _ = s.Shutdown(context.Background()) }()
			d := &collectDriver{}
			c := New(engine.NewScope(s, ""), d, Config{CancelBudget: budget}, context.Background(), nil)
			for _, in := range tc.input {
				c.Feed([]byte(in))
			}
			c.Close(nil)
			c.ReleaseInput()
			floods := s.Stats().CancelFloods.Load()
			if tc.flood != (d.aborted == ErrCancelFlood) || tc.flood != (floods == 1) || floods > 1 {
				t.Fatalf("flood %v: aborted with %v, CancelFloods %d", tc.flood, d.aborted, floods)
			}
		})
	}
}
