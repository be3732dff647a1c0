package redisstate

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: every
// Store is closed and every subscription ended. Ignored: rueidis's own
// reconnect delay after a failed dial (a bounded sleep, under 1 s, that
// outlives Close), and, on a Redis Cluster, its closing of the
// connections to nodes that left the slot map (5 s after a refresh).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"))
}
