package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
)

var errLost = errors.New("connection lost")

// inboxStep is one call on an Inbox and what it must return. Next is only
// asked for when it has something to return at once.
type inboxStep struct {
	do   string // push, final, end, cancel, next, err
	msg  string // push, final: the message; next: the message expected
	err  error  // end, cancel: the argument; next, err: the error expected
	want any    // push: the PushResult; final, end, cancel: the bool
}

func push(m string, want client.PushResult) inboxStep {
	return inboxStep{do: "push", msg: m, want: want}
}
func final(m string, want bool) inboxStep   { return inboxStep{do: "final", msg: m, want: want} }
func end(err error, want bool) inboxStep    { return inboxStep{do: "end", err: err, want: want} }
func cancel(err error, want bool) inboxStep { return inboxStep{do: "cancel", err: err, want: want} }
func next(m string) inboxStep               { return inboxStep{do: "next", msg: m} }
func nextErr(err error) inboxStep           { return inboxStep{do: "next", err: err} }
func errIs(err error) inboxStep             { return inboxStep{do: "err", err: err} }

// TestInbox walks the contract of client.Inbox one rule at a time.
func TestInbox(t *testing.T) {
	for _, tc := range []struct {
		name     string
		max      int
		overflow client.Overflow
		steps    []inboxStep
	}{
		{name: "order: notifications, the final message, then io.EOF", steps: []inboxStep{
			push("a", client.PushQueued), push("b", client.PushQueued), errIs(nil),
			final("c", true), errIs(io.EOF), // ended before Next has read it
			next("a"), next("b"), next("c"), nextErr(io.EOF), nextErr(io.EOF),
		}},
		{name: "messages after the final one are ignored", steps: []inboxStep{
			final("a", true), push("b", client.PushIgnored), final("c", false), end(errLost, false),
			next("a"), nextErr(io.EOF),
		}},
		{name: "End: what was queued, then the error", steps: []inboxStep{
			push("a", client.PushQueued), end(errLost, true), push("b", client.PushIgnored), end(io.EOF, false),
			next("a"), nextErr(errLost), nextErr(errLost),
		}},
		{name: "End(nil) completes", steps: []inboxStep{
			end(nil, true), nextErr(io.EOF),
		}},
		{name: "OverflowDrop: past Max a notification is dropped, the final one kept", max: 2, overflow: client.OverflowDrop, steps: []inboxStep{
			push("a", client.PushQueued), push("b", client.PushQueued), push("c", client.PushDropped), errIs(nil),
			final("d", true),
			next("a"), next("b"), next("d"), nextErr(io.EOF),
		}},
		{name: "OverflowFail: past Max the exchange fails and the queue goes", max: 2, overflow: client.OverflowFail, steps: []inboxStep{
			push("a", client.PushQueued), push("b", client.PushQueued), push("c", client.PushFailed),
			errIs(client.ErrSlowConsumer), push("d", client.PushIgnored), final("e", false), cancel(nil, false),
			nextErr(client.ErrSlowConsumer), nextErr(client.ErrSlowConsumer),
		}},
		{name: "OverflowFail: the final message is accepted at Max", max: 1, overflow: client.OverflowFail, steps: []inboxStep{
			push("a", client.PushQueued), final("b", true),
			next("a"), next("b"), nextErr(io.EOF),
		}},
		{name: "reading makes room again", max: 1, overflow: client.OverflowFail, steps: []inboxStep{
			push("a", client.PushQueued), next("a"),
			push("b", client.PushQueued), next("b"),
			push("c", client.PushQueued), push("d", client.PushFailed), nextErr(client.ErrSlowConsumer),
		}},
		{name: "the zero Inbox has the default bound", steps: func() []inboxStep {
			var s []inboxStep
			for i := range client.DefaultMaxQueued {
				s = append(s, push(strconv.Itoa(i), client.PushQueued))
			}
			return append(append(s, push("over", client.PushFailed)), nextErr(client.ErrSlowConsumer))
		}()},
		{name: "a negative Max has no bound", max: -1, steps: func() []inboxStep {
			var s []inboxStep
			for i := range 10000 {
				s = append(s, push(strconv.Itoa(i), client.PushQueued))
			}
			return append(append(s, final("last", true)), next("0"), next("1"))
		}()},
		{name: "Cancel while pending: ErrClosed, once", steps: []inboxStep{
			push("a", client.PushQueued), cancel(nil, true), cancel(nil, false),
			push("b", client.PushIgnored), final("c", false), end(errLost, false), errIs(client.ErrClosed),
			nextErr(client.ErrClosed), nextErr(client.ErrClosed),
		}},
		{name: "Cancel with a reason", steps: []inboxStep{
			cancel(context.DeadlineExceeded, true), nextErr(context.DeadlineExceeded),
		}},
		{name: "Cancel after the final message: nothing pending, queue dropped", steps: []inboxStep{
			push("a", client.PushQueued), final("b", true), cancel(nil, false), nextErr(io.EOF),
		}},
		{name: "Cancel after End keeps the error", steps: []inboxStep{
			end(errLost, true), cancel(nil, false), nextErr(errLost),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
			defer stop()
			b := &client.Inbox{Max: tc.max, Overflow: tc.overflow}
			for i, s := range tc.steps {
				var got any
				switch s.do {
				case "push":
					got = b.Push([]byte(s.msg))
				case "final":
					got = b.Final([]byte(s.msg))
				case "end":
					got = b.End(s.err)
				case "cancel":
					got = b.Cancel(s.err)
				case "err":
					if err := b.Err(); err != s.err {
						t.Fatalf("step %d: Err() = %v, want %v", i, err, s.err)
					}
					continue
				case "next":
					m, err := b.Next(ctx)
					if string(m) != s.msg || err != s.err {
						t.Fatalf("step %d: Next = %q, %v; want %q, %v", i, m, err, s.msg, s.err)
					}
					continue
				}
				if got != s.want {
					t.Fatalf("step %d: %s(%q, %v) = %v, want %v", i, s.do, s.msg, s.err, got, s.want)
				}
			}
		})
	}
}

// TestInboxWakesNext: a Next waiting in another goroutine returns when a
// message arrives, when the exchange ends, and when it is cancelled
// (Close while Next waits), not when its context runs out.
func TestInboxWakesNext(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wake    func(b *client.Inbox)
		msg     string
		err     error
		pending bool // Err() afterwards is nil
	}{
		{"Push", func(b *client.Inbox) { b.Push([]byte("a")) }, "a", nil, true},
		{"Final", func(b *client.Inbox) { b.Final([]byte("a")) }, "a", nil, false},
		{"End", func(b *client.Inbox) { b.End(errLost) }, "", errLost, false},
		{"Cancel", func(b *client.Inbox) { b.Cancel(client.ErrClosed) }, "", client.ErrClosed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &client.Inbox{Max: 1, Overflow: client.OverflowFail}
			ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			type result struct {
				m   []byte
				err error
			}
			got := make(chan result, 1)
			go func() {
				m, err := b.Next(ctx)
				got <- result{m, err}
			}()
			time.Sleep(20 * time.Millisecond) // let Next wait (it passes either way)
			start := time.Now()
			tc.wake(b)
			r := <-got
			if string(r.m) != tc.msg || r.err != tc.err {
				t.Fatalf("Next = %q, %v; want %q, %v", r.m, r.err, tc.msg, tc.err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Next returned after %v: not woken", d)
			}
			if pending := b.Err() == nil; pending != tc.pending {
				t.Fatalf("open after: %v, want %v", pending, tc.pending)
			}
		})
	}
}

// TestInboxContext: the end of the context only ends the wait; the
// exchange stays open. A context that has ended is seen before queued
// messages (TMO-01), which stay for a later call.
func TestInboxContext(t *testing.T) {
	var b client.Inbox
	ctx, cancelCtx := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Next(ctx)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancelCtx()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Next after the context's end: %v", err)
	}
	if err := b.Err(); err != nil {
		t.Fatalf("the context's end ended the exchange: %v", err)
	}
	b.Push([]byte("a"))
	b.Final([]byte("b"))
	if m, err := b.Next(ctx); m != nil || err != context.Canceled {
		t.Fatalf("Next under an ended context with messages queued: %q, %v", m, err)
	}
	live, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	for _, want := range []string{"a", "b"} {
		if m, err := b.Next(live); string(m) != want || err != nil {
			t.Fatalf("Next = %q, %v; want %q", m, err, want)
		}
	}
	if _, err := b.Next(live); err != io.EOF {
		t.Fatalf("after the final message: %v", err)
	}
}

// TestInboxConcurrent: one goroutine pushes while another reads, and a
// Cancel from a third may land in the middle (run under -race). What is
// read stays in order, the end is one the case allows, nothing hangs.
func TestInboxConcurrent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		overflow client.Overflow
		cancelAt int     // cancel after this many reads; -1: never
		ends     []error // the ends Next may report
	}{
		{"drop, read to the end", client.OverflowDrop, -1, []error{io.EOF}},
		{"drop, cancelled while reading", client.OverflowDrop, 3, []error{io.EOF, client.ErrClosed}},
		{"fail, cancelled while reading", client.OverflowFail, 3, []error{io.EOF, client.ErrClosed, client.ErrSlowConsumer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 5000
			b := &client.Inbox{Max: 8, Overflow: tc.overflow}
			ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range n {
					if b.Push([]byte(strconv.Itoa(i))) == client.PushFailed {
						return
					}
				}
				b.Final([]byte("end"))
			})
			last, reads := -1, 0
			for {
				if reads == tc.cancelAt {
					wg.Go(func() { b.Cancel(nil) })
				}
				m, err := b.Next(ctx)
				if err != nil {
					if !slices.Contains(tc.ends, err) {
						t.Fatalf("after %d reads: %v, want one of %v", reads, err, tc.ends)
					}
					break
				}
				reads++
				if string(m) == "end" {
					continue
				}
				i, _ := strconv.Atoi(string(m))
				if i <= last {
					t.Fatalf("message %d after %d", i, last)
				}
				last = i
			}
			wg.Wait()
		})
	}
}

// An Inbox is the receiving half of an Exchange; a Transport of its own
// feeds one from its reading goroutine. Here a "server" sends two
// progress notifications and the response.
func ExampleInbox() {
	in := &client.Inbox{Max: 4096, Overflow: client.OverflowDrop}
	go func() {
		for i := 1; i <= 2; i++ {
			in.Push(fmt.Appendf(nil, `{"method":"notifications/progress","params":{"progress":%d}}`, i))
		}
		in.Final([]byte(`{"id":1,"result":{}}`))
	}()
	for {
		msg, err := in.Next(context.Background())
		if err == io.EOF {
			break
		}
		fmt.Println(string(msg))
	}
	// Output:
	// {"method":"notifications/progress","params":{"progress":1}}
	// {"method":"notifications/progress","params":{"progress":2}}
	// {"id":1,"result":{}}
}

// TestEnding: the end state alone, as a Streamable HTTP exchange keeps it:
// open until the first End or Cancel, which no later call changes; Cancel
// reports a still pending request once.
func TestEnding(t *testing.T) {
	var e client.Ending
	if e.Err() != nil {
		t.Fatal("the zero Ending is not open")
	}
	if !e.End(nil) || e.Err() != io.EOF {
		t.Fatalf("End(nil): %v", e.Err())
	}
	if e.Cancel(nil) || e.End(errLost) || e.Err() != io.EOF {
		t.Fatalf("a later Cancel or End changed the end: %v", e.Err())
	}
	var c client.Ending
	if !c.Cancel(nil) || !errors.Is(c.Err(), client.ErrClosed) {
		t.Fatalf("Cancel(nil) while open: %v", c.Err())
	}
	if c.Cancel(context.Canceled) || !errors.Is(c.Err(), client.ErrClosed) {
		t.Fatal("a second Cancel reported a pending request or changed the reason")
	}
	var r client.Ending
	if !r.Cancel(context.DeadlineExceeded) || r.Err() != context.DeadlineExceeded || r.End(nil) {
		t.Fatalf("Cancel with a reason: %v", r.Err())
	}
}
