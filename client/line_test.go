package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// lineOut is a request as the Client would hand it to a LineTransport.
func lineOut(id int, method string, listen bool) *Outgoing {
	return &Outgoing{ID: fmt.Appendf(nil, "%d", id), Token: fmt.Appendf(nil, "%d", id), Method: method, Listen: listen,
		Body: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"_meta":{"progressToken":%d}}}`, id, method, id)}
}

// lineFake is a fake line server whose requests are answered by serve;
// it sees every message the client sends.
func lineFake(t *testing.T, o LineConfig, serve func(m map[string]json.RawMessage, reply func(string))) (*LineTransport, *fake) {
	f := &fake{t: t, serve: func(_ *fake, m map[string]json.RawMessage, _ string, reply func(string)) { serve(m, reply) }}
	o.Logger = slog.New(slog.DiscardHandler)
	lt := NewLineTransport(f.dial, o)
	t.Cleanup(func() { lt.Close() })
	return lt, f
}

// sawCancel reports whether the server was sent notifications/cancelled
// for id.
func (f *fake) sawCancel(id int) bool {
	for _, m := range f.messages() {
		if strings.Contains(m, `"notifications/cancelled"`) && strings.Contains(m, fmt.Sprintf(`"requestId":%d,`, id)) {
			return true
		}
	}
	return false
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestLineQueueBound: at most MaxQueued messages wait unread per
// exchange. Past it a call's notifications are dropped and counted and
// its response still arrives; a listen stream fails with ErrSlowConsumer
// at once and is cancelled on the wire (SUB-09).
func TestLineQueueBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		listen    bool
		want      []string // what Next returns before the end, by progress
		end       error
		dropped   uint64
		cancelled bool
	}{
		{"call", false, []string{`"progress":1`, `"progress":2`, `"result"`}, io.EOF, 3, false},
		{"listen", true, nil, ErrSlowConsumer, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lt, f := lineFake(t, LineConfig{MaxQueued: 2}, func(m map[string]json.RawMessage, reply func(string)) {
				if m["id"] == nil {
					return
				}
				id := string(m["id"])
				// From a goroutine of its own: the pipe has no buffer, and
				// the client's reader may write notifications/cancelled
				// back while these lines go out.
				go func() {
					for i := 1; i <= 5; i++ {
						if tc.listen {
							reply(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"n":` + fmt.Sprint(i) + `,"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`)
						} else {
							reply(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + id + `,"progress":` + fmt.Sprint(i) + `}}`)
						}
					}
					if !tc.listen {
						reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
					}
				}()
			})
			ctx := ctx10(t)
			x, err := lt.Open(ctx, lineOut(1, "tools/call", tc.listen))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			in := &x.(*lineExchange).in
			waitFor(t, "the exchange's end", func() bool { return in.Err() != nil })
			if tc.cancelled {
				waitFor(t, "notifications/cancelled", func() bool { return f.sawCancel(1) })
			}
			for _, want := range tc.want {
				if m, err := x.Next(ctx); err != nil || !strings.Contains(string(m), want) {
					t.Fatalf("Next = %s, %v; want one with %s", m, err, want)
				}
			}
			if _, err := x.Next(ctx); err != tc.end {
				t.Fatalf("end %v, want %v", err, tc.end)
			}
			if d := lt.Stats().Dropped; d != tc.dropped {
				t.Fatalf("Dropped = %d, want %d", d, tc.dropped)
			}
			if !tc.cancelled && f.sawCancel(1) {
				t.Fatal("a call that was answered was cancelled")
			}
		})
	}
}

// TestLineCloseWakesNext: Close from another goroutine ends a Next that
// waits for a reply that is not coming (Exchange allows the two on
// different goroutines), and the request is cancelled on the wire.
func TestLineCloseWakesNext(t *testing.T) {
	lt, f := lineFake(t, LineConfig{}, func(map[string]json.RawMessage, func(string)) {})
	ctx := ctx10(t)
	x, err := lt.Open(ctx, lineOut(1, "tools/call", false))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := x.Next(ctx)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	_ = x.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next still waits after Close")
	}
	waitFor(t, "notifications/cancelled", func() bool { return f.sawCancel(1) })
}
