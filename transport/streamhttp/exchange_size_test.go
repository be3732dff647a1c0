package streamhttp

import (
	"testing"
	"unsafe"
)

// TestExchangeSize: an open listen stream keeps its exchange for its whole
// life, so the exchange holds no per-request working space (work, about
// 2 KiB: the mirrored headers, the flat bindings, the joined Accept
// lines); that goes back to a pool once the stream takes its connection.
// 5,000 idle streams then hold about 3 MB less (issue 21 item 5: ≤ 16 KiB
// RSS per idle stream). The bound is the allocator's 576-byte size class:
// one byte more and each exchange takes 640. This fails if a per-request
// field moves back in.
func TestExchangeSize(t *testing.T) {
	const max = 576
	n := unsafe.Sizeof(exchange{})
	t.Logf("exchange: %d bytes", n)
	if n > max {
		t.Fatalf("exchange is %d bytes, want ≤ %d: per-request working space belongs in work", n, max)
	}
}
