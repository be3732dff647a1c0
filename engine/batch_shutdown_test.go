package engine

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// batchShutdownMidRead: a shutdown that begins while a read's first
// request runs refuses the rest of that read, as it refuses requests on
// their own (RELIABILITY C13, C14), instead of running them after
// Shutdown has returned with nobody to cancel them.
func batchShutdownMidRead(t *testing.T, scopeOnly bool) {
	s := New(Config{})
	var ran atomic.Int32
	running := make(chan struct{}, 10)
	_ = s.AddTool(Tool{Name: "block", Inline: true, Handler: func(c *Call) error {
		ran.Add(1)
		running <- struct{}{}
		select {
		case <-c.Done():
		case <-time.After(400 * time.Millisecond): // not cancelled: the test fails below
		}
		c.Text("ok")
		return nil
	}})
	sc := NewScope(s, "unix")
	rep := &keepReply{}
	done := make(chan time.Time, 1)
	go func() {
		b := sc.StartBatch()
		for i := 1; i <= 3; i++ {
			startInBatch(t, sc, b, batchMsg(strconv.Itoa(i), "block"), rep)
		}
		b.End()
		done <- time.Now()
	}()
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var err error
	if scopeOnly {
		err = sc.Shutdown(ctx)
	} else {
		err = s.Shutdown(ctx)
	}
	shutAt := time.Now()
	end := <-done
	t.Logf("Shutdown=%v; handlers ran=%d; ShutdownRefused=%d; Requests=%d; batch ended %v after Shutdown returned",
		err, ran.Load(), s.Stats().ShutdownRefused.Load(), s.Stats().Requests.Load(), end.Sub(shutAt).Round(time.Millisecond))
	for _, r := range rep.all() {
		t.Logf("reply %.90s", r)
	}
	if ran.Load() != 1 || s.Stats().ShutdownRefused.Load() != 2 {
		t.Errorf("%d handlers ran, %d refused; want requests 2 and 3, begun after Shutdown began, refused",
			ran.Load(), s.Stats().ShutdownRefused.Load())
	}
}

func TestBatchShutdownMidReadServer(t *testing.T) { batchShutdownMidRead(t, false) }
func TestBatchShutdownMidReadScope(t *testing.T)  { batchShutdownMidRead(t, true) }
