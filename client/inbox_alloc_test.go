//go:build !race

package client_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/mcpwire/mcpwire/client"
)

// TestInboxAllocs: the queue costs no allocation for a call answered by
// its response alone, nor once warm. (Not under -race, which instruments
// allocations.)
func TestInboxAllocs(t *testing.T) {
	ctx := context.Background()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	warm := &client.Inbox{Max: 4}
	for range 4 {
		warm.Push(msg)
	}
	for range 4 {
		_, _ = warm.Next(ctx)
	}
	for _, tc := range []struct {
		name string
		max  float64
		f    func()
	}{
		// The Inbox itself escapes (it points into itself): one.
		{"response only", 1, func() {
			b := &client.Inbox{Max: 4}
			b.Final(msg)
			if m, _ := b.Next(ctx); m == nil {
				t.Fatal("no message")
			}
			if _, err := b.Next(ctx); err == nil {
				t.Fatal("no end")
			}
		}},
		{"warm queue", 0, func() {
			warm.Push(msg)
			warm.Push(msg)
			_, _ = warm.Next(ctx)
			_, _ = warm.Next(ctx)
		}},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n > tc.max {
			t.Errorf("%s: %v allocs/op, want at most %v", tc.name, n, tc.max)
		}
	}
}

// TestInboxLongStream: a listen stream read as fast as it comes reuses
// its queue; the queue does not grow with the stream's length.
func TestInboxLongStream(t *testing.T) {
	ctx := context.Background()
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	b := &client.Inbox{Max: 4096}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100000 {
		b.Push(msg)
		if _, err := b.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("%d bytes allocated for 100,000 messages read as they came", n)
	}
}
