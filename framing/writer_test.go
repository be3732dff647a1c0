package framing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// checkNoGoroutineLeak fails the test if goroutines started during it are
// still running 2 s after it ends.
func checkNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				t.Errorf("goroutine leak: %d running, %d at start", runtime.NumGoroutine(), base)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// recWriter records what it is given and fails if Write is ever entered by
// two goroutines at once.
type recWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	calls  int
	inside atomic.Int32
	t      *testing.T
}

func (r *recWriter) Write(p []byte) (int, error) {
	if r.inside.Add(1) != 1 {
		r.t.Errorf("concurrent Write calls on the underlying writer")
	}
	defer r.inside.Add(-1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return r.buf.Write(p)
}

func (r *recWriter) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// gateWriter blocks every Write until a token is sent on gate (or gate is
// closed), then records the bytes or fails with failErr.
type gateWriter struct {
	gate    chan struct{}
	entered chan struct{} // receives a token each time Write is entered
	failErr error
	mu      sync.Mutex
	buf     bytes.Buffer
	calls   int
}

func newGateWriter() *gateWriter {
	return &gateWriter{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if g.failErr != nil {
		return 0, g.failErr
	}
	return g.buf.Write(p)
}

func TestWriterRefusesNewline(t *testing.T) {
	rec := &recWriter{t: t}
	w := NewWriter(rec, WriterConfig{})
	tests := []struct {
		name    string
		write   func() error
		wantErr string
	}{
		{name: "lf inside", write: func() error { return w.WriteFrame([]byte("{\"a\":\n1}")) }, wantErr: "raw newline"},
		{name: "lf at end", write: func() error { return w.WriteFrame([]byte("{}\n")) }, wantErr: "raw newline"},
		{name: "lf in a part", write: func() error { return w.WriteFrameParts([]byte("{"), []byte("\n"), []byte("}")) }, wantErr: "raw newline"},
		{name: "cr is fine", write: func() error { return w.WriteFrame([]byte("a\rb")) }},
		{name: "parts", write: func() error { return w.WriteFrameParts([]byte(`{"id":`), []byte("7"), []byte(`}`)) }},
		{name: "no parts is an empty frame", write: func() error { return w.WriteFrameParts() }},
	}
	for i, tc := range tests {
		err := tc.write()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("#%d %s: err = %v, want %q", i, tc.name, err, tc.wantErr)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.String(), "a\rb\n{\"id\":7}\n\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err = %v after refused frames", err)
	}
}

// TestWriterConcurrent: 8 goroutines write frames of varied sizes; every
// frame comes out exactly once, whole, each goroutine's in order, each ended
// by one '\n'.
func TestWriterConcurrent(t *testing.T) {
	checkNoGoroutineLeak(t)
	const goroutines, perG = 8, 2000
	rec := &recWriter{t: t}
	w := NewWriter(rec, WriterConfig{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			pad := strings.Repeat("p", g*37)
			for i := range perG {
				var err error
				if i%3 == 0 {
					err = w.WriteFrameParts([]byte(fmt.Sprintf(`{"g":%d,`, g)), []byte(fmt.Sprintf(`"i":%d,`, i)), []byte(`"pad":"`+pad+`"}`))
				} else {
					err = w.WriteFrame([]byte(fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, pad)))
				}
				if err != nil {
					t.Errorf("WriteFrame: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := rec.String()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != goroutines*perG {
		t.Fatalf("%d frames written, want %d", len(lines), goroutines*perG)
	}
	next := make([]int, goroutines)
	for _, l := range lines {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, `{"g":%d,"i":%d,"pad":%s`, &g, &i, &pad); err != nil {
			t.Fatalf("mangled frame %q: %v", l, err)
		}
		if want := `{"g":` + itoa(g) + `,"i":` + itoa(i) + `,"pad":"` + strings.Repeat("p", g*37) + `"}`; l != want {
			t.Fatalf("frame %q, want %q", l, want)
		}
		if i != next[g] {
			t.Fatalf("goroutine %d: frame %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	t.Logf("%d frames in %d Write calls", len(lines), rec.calls)
	if p, s := w.bufCaps(); p != 0 || s != 0 {
		t.Errorf("buffers kept after Close: %d, %d", p, s)
	}
}

// TestWriterSlowConsumer is RELIABILITY A18: the underlying Write blocks
// forever; other goroutines' frames are queued promptly until MaxPending,
// then ErrSlowConsumer, and the Writer stays failed.
func TestWriterSlowConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw := newGateWriter()
		const maxPending = 1024
		w := NewWriter(gw, WriterConfig{MaxPending: maxPending})
		frame := bytes.Repeat([]byte("x"), 100) // 101 bytes queued each

		flusherErr := make(chan error, 1)
		go func() { flusherErr <- w.WriteFrame(frame) }()
		<-gw.entered // the flusher is now stuck in Write

		queued := 1
		var err error
		for range 100 {
			if err = w.WriteFrame(frame); err != nil {
				break
			}
			queued++
		}
		if !errors.Is(err, ErrSlowConsumer) {
			t.Fatalf("err = %v, want ErrSlowConsumer", err)
		}
		if want := maxPending / 101; queued != want {
			t.Errorf("%d frames accepted before ErrSlowConsumer, want %d", queued, want)
		}
		if p := w.Pending(); p > maxPending {
			t.Errorf("Pending = %d over MaxPending", p)
		}
		for _, f := range []func() error{
			func() error { return w.WriteFrame([]byte("{}")) },
			func() error { return w.WriteFrameParts([]byte("{}")) },
			w.Flush, // must not block: the Writer has failed
			w.Err,
			w.Close,
		} {
			if err := f(); !errors.Is(err, ErrSlowConsumer) {
				t.Errorf("after failure: %v, want ErrSlowConsumer", err)
			}
		}
		if !strings.HasPrefix(ErrSlowConsumer.Error(), "framing: ") {
			t.Errorf("error text %q", ErrSlowConsumer)
		}

		close(gw.gate) // unblock so no goroutine leaks
		if err := <-flusherErr; !errors.Is(err, ErrSlowConsumer) {
			t.Errorf("flusher returned %v, want ErrSlowConsumer", err)
		}
		if gw.calls != 1 {
			t.Errorf("%d Write calls after the failure, want 1 (queue dropped)", gw.calls)
		}
		if p := w.Pending(); p != 0 {
			t.Errorf("Pending = %d after the blocked write finished", p)
		}
		if p, s := w.bufCaps(); p != 0 || s != 0 {
			t.Errorf("buffers kept after failure: %d, %d", p, s)
		}
	})
}

// TestWriterGroupCommitAndFlush: frames queued while a Write is in flight go
// out together in the next Write; Flush waits for them.
func TestWriterGroupCommitAndFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw := newGateWriter()
		w := NewWriter(gw, WriterConfig{})
		firstDone := make(chan error, 1)
		go func() { firstDone <- w.WriteFrame([]byte("first")) }()
		<-gw.entered

		for i := range 100 {
			if err := w.WriteFrame([]byte("f" + itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := w.Pending(), len("first\n")+10*3+90*4; got != want {
			t.Errorf("Pending = %d, want %d", got, want)
		}
		var flushed atomic.Bool
		flushErr := make(chan error, 1)
		go func() {
			err := w.Flush()
			flushed.Store(true)
			flushErr <- err
		}()
		synctest.Wait()
		if flushed.Load() {
			t.Fatal("Flush returned while the write is blocked")
		}
		gw.gate <- struct{}{} // first batch
		<-gw.entered          // second batch: the 100 frames at once
		synctest.Wait()
		if flushed.Load() {
			t.Fatal("Flush returned before the second batch was written")
		}
		gw.gate <- struct{}{}
		if err := <-flushErr; err != nil {
			t.Fatal(err)
		}
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		if gw.calls != 2 {
			t.Errorf("%d Write calls, want 2", gw.calls)
		}
		var want strings.Builder
		want.WriteString("first\n")
		for i := range 100 {
			want.WriteString("f" + itoa(i) + "\n")
		}
		if gw.buf.String() != want.String() {
			t.Errorf("written %q", gw.buf.String())
		}
		if w.Pending() != 0 {
			t.Errorf("Pending = %d after Flush", w.Pending())
		}
		close(gw.gate)
	})
}

type failWriter struct {
	okWrites int
	short    bool
	err      error
	calls    int
}

func (f *failWriter) Write(p []byte) (int, error) {
	f.calls++
	if f.calls <= f.okWrites {
		return len(p), nil
	}
	if f.short {
		return len(p) / 2, nil
	}
	return 1, f.err
}

func TestWriterStickyError(t *testing.T) {
	boom := errors.New("boom: broken pipe")
	tests := []struct {
		name    string
		fw      *failWriter
		wantErr string
	}{
		{name: "write error", fw: &failWriter{okWrites: 1, err: boom}, wantErr: "broken pipe"},
		{name: "short write", fw: &failWriter{okWrites: 1, short: true}, wantErr: "short write"},
	}
	for i, tc := range tests {
		w := NewWriter(tc.fw, WriterConfig{})
		if err := w.WriteFrame([]byte("ok")); err != nil {
			t.Fatalf("#%d: first frame: %v", i, err)
		}
		err := w.WriteFrame([]byte("fails"))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("#%d %s: err = %v, want %q", i, tc.name, err, tc.wantErr)
		}
		for j, f := range []func() error{
			func() error { return w.WriteFrame([]byte("again")) },
			func() error { return w.WriteFrameParts([]byte("again")) },
			w.Flush, w.Err, w.Close, w.Close,
			func() error { return w.WriteFrame([]byte("after close")) },
		} {
			if got := f(); got != err {
				t.Errorf("#%d %s: call %d returned %v, want the first error %v", i, tc.name, j, got, err)
			}
		}
		if tc.fw.calls != 2 {
			t.Errorf("#%d %s: %d Write calls, want 2", i, tc.name, tc.fw.calls)
		}
	}
}

type closeRecorder struct {
	recWriter
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestWriterClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	cr := &closeRecorder{recWriter: recWriter{t: t}}
	w := NewWriter(cr, WriterConfig{})
	if err := w.WriteFrame([]byte("a")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := w.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if err := w.WriteFrame([]byte("b")); err != ErrClosed {
		t.Errorf("WriteFrame after Close: %v, want ErrClosed", err)
	}
	if err := w.WriteFrameParts([]byte("b")); err != ErrClosed {
		t.Errorf("WriteFrameParts after Close: %v, want ErrClosed", err)
	}
	if err := w.Err(); err != ErrClosed {
		t.Errorf("Err after Close: %v, want ErrClosed", err)
	}
	if err := w.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	if cr.String() != "a\n" {
		t.Errorf("written %q", cr.String())
	}
	if cr.closed {
		t.Errorf("Close closed the underlying writer")
	}
	if p, s := w.bufCaps(); p != 0 || s != 0 {
		t.Errorf("buffers kept after Close: %d, %d", p, s)
	}
}

// TestWriterCloseFlushes: Close waits for frames queued behind a blocked
// write, then refuses new ones.
func TestWriterCloseFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw := newGateWriter()
		w := NewWriter(gw, WriterConfig{})
		go w.WriteFrame([]byte("one"))
		<-gw.entered
		if err := w.WriteFrame([]byte("two")); err != nil {
			t.Fatal(err)
		}
		closeErr := make(chan error, 1)
		go func() { closeErr <- w.Close() }()
		synctest.Wait()
		if err := w.WriteFrame([]byte("three")); err != ErrClosed {
			t.Errorf("WriteFrame during Close: %v, want ErrClosed", err)
		}
		close(gw.gate)
		if err := <-closeErr; err != nil {
			t.Fatal(err)
		}
		if got := gw.buf.String(); got != "one\ntwo\n" {
			t.Errorf("written %q", got)
		}
	})
}

// TestWriterShrinksAfterBurst: buffers grown by a burst of big frames go back
// once the Writer is idle; small ones are kept for reuse.
func TestWriterShrinksAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw := newGateWriter()
		w := NewWriter(gw, WriterConfig{})
		go w.WriteFrame([]byte("start"))
		<-gw.entered
		big := bytes.Repeat([]byte("b"), 100<<10)
		for range 20 {
			if err := w.WriteFrame(big); err != nil {
				t.Fatal(err)
			}
		}
		if p, _ := w.bufCaps(); p < 20*len(big) {
			t.Fatalf("pending cap %d during the burst", p)
		}
		close(gw.gate)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the flusher has gone idle
		if p, s := w.bufCaps(); p > idleKeep || s > idleKeep {
			t.Errorf("buffers after the burst: %d, %d; want <= %d", p, s, idleKeep)
		}
		if gw.buf.Len() != len("start\n")+20*(len(big)+1) {
			t.Errorf("%d bytes written", gw.buf.Len())
		}
	})
}

func TestWriterFrameOverMaxPending(t *testing.T) {
	rec := &recWriter{t: t}
	w := NewWriter(rec, WriterConfig{MaxPending: 10})
	if err := w.WriteFrame([]byte("123456789")); err != nil { // 10 bytes with '\n'
		t.Fatalf("frame at the cap: %v", err)
	}
	if err := w.WriteFrame([]byte("1234567890")); err != ErrSlowConsumer {
		t.Fatalf("frame over the cap: %v, want ErrSlowConsumer", err)
	}
	if rec.String() != "123456789\n" {
		t.Errorf("written %q", rec.String())
	}
}

// TestWriterConfigLimitRule: MaxPending follows the package's limit rule,
// 0 the default, negative no cap, positive that cap.
func TestWriterConfigLimitRule(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{0, DefaultMaxPending},
		{-1, math.MaxInt},
		{10, 10},
	} {
		if w := NewWriter(io.Discard, WriterConfig{MaxPending: tc.in}); w.maxPending != tc.want {
			t.Errorf("MaxPending %d => %d, want %d", tc.in, w.maxPending, tc.want)
		}
	}
}

// TestWriterUncappedQueuesPastDefault: with MaxPending negative, frames
// keep queuing behind a blocked write past DefaultMaxPending, where the
// default cap would have failed the Writer.
func TestWriterUncappedQueuesPastDefault(t *testing.T) {
	gate := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
	w := NewWriter(gate, WriterConfig{MaxPending: -1})
	done := make(chan error, 1)
	go func() { done <- w.WriteFrame([]byte("first")) }() // blocks in Write
	<-gate.entered
	frame := bytes.Repeat([]byte{'x'}, 1<<20)
	for i := 0; i <= DefaultMaxPending>>20; i++ {
		if err := w.QueueFrame(frame); err != nil {
			t.Fatalf("after %d MiB queued: %v", i, err)
		}
	}
	close(gate.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// heldWriter blocks its first Write until release is closed and discards
// what it is given.
type heldWriter struct {
	once             sync.Once
	entered, release chan struct{}
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return len(p), nil
}

// brokenCountWriter claims to have written more than it was given.
type brokenCountWriter struct{}

func (brokenCountWriter) Write(p []byte) (int, error) { return len(p) + 5, nil }

func TestWriterBrokenCount(t *testing.T) {
	w := NewWriter(brokenCountWriter{}, WriterConfig{})
	if err := w.WriteFrame([]byte("x")); err != io.ErrShortWrite {
		t.Fatalf("err = %v, want io.ErrShortWrite", err)
	}
	if p := w.Pending(); p != 0 {
		t.Errorf("Pending = %d after failure", p)
	}
}
