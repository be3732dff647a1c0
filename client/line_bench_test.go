package client_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/mcpwire/mcpwire/client"
)

// BenchmarkLineRoundTrip: one request through a LineTransport (Open,
// Next until io.EOF, Close) against a scripted server at the other end
// of an in-memory pipe, which answers each request at once. "call": the
// response alone; "progress": a progress notification (matched by
// progressToken), then the response. The allocations are both sides'
// (the server's: none per request).
func BenchmarkLineRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name     string
		progress bool
	}{
		{"call", false},
		{"progress", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dial := func(context.Context) (io.ReadWriteCloser, error) {
				ours, theirs := net.Pipe()
				go benchLineServer(theirs, bc.progress)
				return ours, nil
			}
			lt := client.NewLineTransport(dial, client.LineConfig{Logger: slog.New(slog.DiscardHandler)})
			defer lt.Close()
			ctx := context.Background()
			out := &client.Outgoing{ID: []byte("7"), Token: []byte("7"), Method: "tools/call",
				Body: []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}}}`)}
			want := 1
			if bc.progress {
				want = 2
			}
			call := func() {
				x, err := lt.Open(ctx, out)
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
				if n != want {
					b.Fatalf("%d messages, want %d", n, want)
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

// benchLineServer answers each request line on c with a fixed result
// (after a progress notification when progress is set) until c closes.
func benchLineServer(c net.Conn, progress bool) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	var out []byte
	for sc.Scan() {
		line := sc.Bytes()
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue // a notification
		}
		id := line[i+5:]
		id = id[:bytes.IndexByte(id, ',')]
		out = out[:0]
		if progress {
			out = append(out, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
			out = append(append(out, id...), `,"progress":1,"total":1}}`+"\n"...)
		}
		out = append(append(append(out, `{"jsonrpc":"2.0","id":`...), id...),
			`,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}`+"\n"...)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}
