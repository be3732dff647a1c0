package state_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

func ExampleNewMemory() {
	m := state.NewMemory(state.MemoryConfig{}) // defaults: 1 h TTL, 1 MiB values, 100,000 records
	defer m.Close()
	ctx := context.Background()

	h, _ := m.Create(ctx, "alice", []byte("draft"), 10*time.Minute)
	r, _ := m.Get(ctx, "alice", h)
	v, _ := m.CompareAndSet(ctx, "alice", h, r.Version, []byte("draft, edited"), 0)
	_, err := m.Get(ctx, "bob", h)
	fmt.Println(len(h), r.Version, v, errors.Is(err, state.ErrNotFound))

	res, _ := m.Once(ctx, "alice", "idempotency-key-1", time.Minute, func() ([]byte, error) {
		return []byte("applied"), nil
	})
	again, _ := m.Once(ctx, "alice", "idempotency-key-1", time.Minute, func() ([]byte, error) {
		return []byte("applied twice"), nil
	})
	fmt.Println(string(res), string(again))
	// Output:
	// 22 1 2 true
	// applied applied
}
