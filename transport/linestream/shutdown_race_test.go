package linestream

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestShutdownDuringReadsRaceFree (RELIABILITY C13): one scope's Shutdown
// runs its cancel pass over and over while two connections of it and two
// of another scope keep sending reads of inline, worker and failing
// requests. Under -race no reference the pass takes may touch a Call the
// batch has moved on to, and the other scope's requests are each answered
// exactly once with a result.
func TestShutdownDuringReadsRaceFree(t *testing.T) {
	s := engine.New(engine.Config{ProgressInterval: -1})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(engine.Tool{Name: "fast", Inline: true, Handler: func(c *engine.Call) error { c.Text("ok"); return nil }})
	_ = s.AddTool(engine.Tool{Name: "wfast", Handler: func(c *engine.Call) error { c.Text("ok"); return nil }})
	_ = s.AddTool(engine.Tool{Name: "chat", Inline: true, Handler: func(c *engine.Call) error {
		done := make(chan struct{})
		go func() { c.Progress(1, 2, ""); close(done) }()
		<-done
		c.Text("ok")
		return nil
	}})
	scA, scB := engine.NewScope(s, "a"), engine.NewScope(s, "b")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	type res struct {
		mu  sync.Mutex
		n   map[string]int
		bad []string
	}
	run := func(sc *engine.Scope, r *res, conn int) {
		defer wg.Done()
		m := NewMem(sc, func(f []byte) error {
			s := string(f)
			if strings.Contains(s, `"method"`) {
				return nil
			}
			i := strings.Index(s, `"id":`)
			if i < 0 {
				r.mu.Lock()
				r.bad = append(r.bad, s)
				r.mu.Unlock()
				return nil
			}
			j := strings.IndexByte(s[i+5:], ',')
			id := s[i+5 : i+5+j]
			r.mu.Lock()
			r.n[id]++
			if !strings.Contains(s, `"result"`) {
				r.bad = append(r.bad, s)
			}
			r.mu.Unlock()
			return nil
		}, Config{}, nil)
		defer m.Close()
		tools := []string{"fast", "wfast", "chat", "fast", "nosuch", "fast"}
		for k := 0; ; k++ {
			select {
			case <-stop:
				waitFor(t, "in flight", func() bool { return m.Conn().InFlight() == 0 })
				return
			default:
			}
			lines := make([]string, 0, len(tools))
			for i, tool := range tools {
				if tool == "nosuch" && sc == scB {
					continue
				}
				id := strconv.Itoa(conn+1) + strconv.Itoa(1000000+k) + strconv.Itoa(i)
				lines = append(lines, callLine(id, tool))
			}
			if err := m.Send([]byte(strings.Join(lines, "\n"))); err != nil {
				return
			}
		}
	}
	ra, rb := &res{n: map[string]int{}}, &res{n: map[string]int{}}
	for i := 0; i < 2; i++ {
		wg.Add(2)
		go run(scA, ra, i)
		go run(scB, rb, 2+i)
	}
	deadline := time.Now().Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for time.Now().Before(deadline) {
		_ = scA.Shutdown(ctx)
	}
	close(stop)
	wg.Wait()
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if len(rb.bad) > 0 {
		t.Fatalf("scope B got %d non-results, e.g. %s", len(rb.bad), rb.bad[0])
	}
	for id, n := range rb.n {
		if n != 1 {
			t.Fatalf("scope B request %s answered %d times", id, n)
		}
	}
	t.Logf("scope B: %d requests answered", len(rb.n))
}
