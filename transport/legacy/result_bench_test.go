package legacy

import (
	"bytes"
	"testing"
)

// BenchmarkLegacyResult: the result rewrite of the echo tool's answer
// (appendLegacyResult), the fast path's last step on every tools/call.
// "contains" is the look for members to drop as it was, two
// bytes.Contains, for the figure beside it.
func BenchmarkLegacyResult(b *testing.B) {
	tail := []byte(`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","version":"devel"}}`)
	raw := []byte(`{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false` + string(tail) + `}`)
	dst := make([]byte, 0, 512)
	b.Run("rewrite", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := appendLegacyResult(dst[:0], raw, tail); !ok {
				b.Fatal("declined")
			}
		}
	})
	body := raw[len(`{"resultType":"complete",`) : len(raw)-1-len(tail)]
	b.Run("look", func(b *testing.B) {
		for b.Loop() {
			if mayDropMembers(body) {
				b.Fatal("found")
			}
		}
	})
	b.Run("contains", func(b *testing.B) {
		for b.Loop() {
			if bytes.Contains(body, []byte(`"ttlMs":`)) || bytes.Contains(body, []byte(`"_meta":`)) {
				b.Fatal("found")
			}
		}
	})
}
