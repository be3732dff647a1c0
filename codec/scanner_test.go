package codec

import (
	"strings"
	"testing"
)

// TestSkipBracketKinds checks every closing bracket of a 400-level nesting
// of objects and arrays against its opener: the skipper keeps the innermost
// 64 levels' kinds in a register and the words below in its bit stack, and
// a swapped bracket at any depth, across those words, must fail.
func TestSkipBracketKinds(t *testing.T) {
	const n = 400
	var sb strings.Builder
	for i := range n {
		if i%3 == 0 {
			sb.WriteString(`{"k":`)
		} else {
			sb.WriteString(`[0,`)
		}
	}
	sb.WriteString("1")
	for i := n - 1; i >= 0; i-- {
		if i%3 == 0 {
			sb.WriteByte('}')
		} else {
			sb.WriteByte(']')
		}
	}
	msg := []byte(sb.String())
	sk := skipper{max: MaxDepthLimit}
	if e := sk.skip(msg, 0, 0); e != len(msg) {
		t.Fatalf("valid nesting: skip = %d, want %d", e, len(msg))
	}
	for j := len(msg) - n; j < len(msg); j++ {
		bad := append([]byte(nil), msg...)
		bad[j] ^= '}' ^ ']'
		sk := skipper{max: MaxDepthLimit}
		if e := sk.skip(bad, 0, 0); e != scanErrParse {
			t.Fatalf("closer %d of %d swapped: skip = %d, want scanErrParse", j-(len(msg)-n), n, e)
		}
	}
}
