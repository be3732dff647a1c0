package auth

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// TestNegCacheBounded: the inactive-answer cache never holds more than
// its limit: expired entries go first, else the older half; the newest
// entry is always kept, and entries expire after the TTL.
func TestNegCacheBounded(t *testing.T) {
	c := newNegCache(time.Minute, 8)
	now := time.Unix(1000, 0)
	key := func(i int) [sha256.Size]byte { return sha256.Sum256(fmt.Appendf(nil, "tok%d", i)) }
	for i := range 100 {
		c.add(key(i), now.Add(time.Duration(i)*time.Millisecond))
		if len(c.m) > 8 {
			t.Fatalf("after %d adds: %d entries, limit 8", i+1, len(c.m))
		}
		if !c.has(key(i), now.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("entry %d not kept", i)
		}
	}
	if c.has(key(0), now) {
		t.Error("the oldest entry survived 100 adds to a cache of 8")
	}
	if c.has(key(99), now.Add(2*time.Minute)) {
		t.Error("an entry past its TTL is still there")
	}
	// Expired entries are dropped before live ones.
	c = newNegCache(time.Second, 2)
	c.add(key(1), now)
	c.add(key(2), now.Add(2*time.Second))
	c.add(key(3), now.Add(2*time.Second))
	if !c.has(key(2), now.Add(2*time.Second)) || !c.has(key(3), now.Add(2*time.Second)) {
		t.Error("a live entry was dropped while an expired one could go")
	}
}
