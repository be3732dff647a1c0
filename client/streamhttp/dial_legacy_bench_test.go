package streamhttp

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// BenchmarkDialLegacyRoundTrip: one tools/call on the 2024-11-05 HTTP+SSE
// transport (client.Era2024) against the fake server of the tests
// (net/http, loopback): the POST, then the messages as the stream's
// reader queues them, Next until io.EOF, Close. "call": the response
// alone; "progress": with a progressToken, one progress notification for
// the call (and one for another token, not delivered) before it. The
// allocations are both sides', the net/http server's most of them.
func BenchmarkDialLegacyRoundTrip(b *testing.B) {
	s := &dt2024{streams: map[string]chan string{}, stop: make(chan struct{}), kill: make(chan struct{})}
	hs := httptest.NewServer(s)
	b.Cleanup(func() {
		close(s.stop)
		hs.Close()
	})
	tr := dtDial(b, hs.URL+"/mcp", Config{})
	ctx := context.Background()
	if err := tr.SwitchEra(ctx, mcpclient.Era2024); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		token string
		msgs  int
	}{
		{"call", "", 1},
		{"progress", "5", 2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			out := dtLegacyOut("5", "tools/call", bc.token, false)
			call := func() {
				x, err := tr.Open(ctx, out)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := x.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				_ = x.Close()
				if n != bc.msgs {
					b.Fatalf("%d messages, want %d", n, bc.msgs)
				}
			}
			for range 100 {
				call()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}
