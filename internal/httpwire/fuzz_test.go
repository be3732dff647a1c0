package httpwire

import (
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzResponse: whatever the server sends, the parser neither panics nor
// hangs, where the stream is split never changes what it reads, and the
// push mode reads what the pull mode reads (below the pull buffer size,
// where a line too long for the pull buffer cannot occur; the push buffer
// grows instead).
func FuzzResponse(f *testing.F) {
	for _, tc := range wireCases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, k uint16) {
		split := int(k) % (len(in) + 1)
		a := readPull(splitAt(string(in), split), 4096)
		b := readPull(iotest.OneByteReader(strings.NewReader(string(in))), 4096)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("split at %d: %+v\none byte at a time: %+v", split, a, b)
		}
		if len(in) < 4096 {
			if p := readPush(splitAt(string(in), split), 64); !reflect.DeepEqual(p, a) {
				t.Fatalf("push mode, split at %d: %+v\npull mode: %+v", split, p, a)
			}
		}
	})
}

// FuzzSSE: the SSE parser returns the same events whatever the split.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: endpoint\r\ndata: /m\r\n\r\ndata: a\rdata: b\r\r: c\n\n"), uint16(7), uint16(20))
	f.Fuzz(func(t *testing.T, in []byte, i, j uint16) {
		a, b := int(i)%(len(in)+1), int(j)%(len(in)+1)
		if a > b {
			a, b = b, a
		}
		s := string(in)
		for _, types := range []bool{false, true} {
			whole := parseSSE([]string{s}, types)
			if got := parseSSE([]string{s[:a], s[a:b], s[b:]}, types); !reflect.DeepEqual(got, whole) {
				t.Fatalf("Types %v, split at %d,%d: %q, whole: %q", types, a, b, got, whole)
			}
		}
	})
}
