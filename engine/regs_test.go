package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRegistryBuiltOnRead: a registry change does not build the snapshot
// the hot path reads; the first read after it does, once, from every
// change made before it. Registering n tools thus copies the names once,
// not n times. Fails when a change builds the snapshot itself (each
// AddTool then copies every name registered so far), or when a read
// after a change is served an older snapshot.
func TestRegistryBuiltOnRead(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	h := func(c *Call) error { c.Text("ok"); return nil }
	const n = 300
	for i := range n {
		if err := s.AddTool(Tool{Name: fmt.Sprintf("tool_%03d", i), Handler: h}); err != nil {
			t.Fatal(err)
		}
		if s.reg.Load() != nil {
			t.Fatalf("AddTool %d built the snapshot", i)
		}
	}
	for i := range n {
		if s.lookupTool(fmt.Appendf(nil, "tool_%03d", i)) == nil {
			t.Fatalf("tool_%03d not found after its AddTool", i)
		}
	}
	rc := s.reg.Load()
	if rc == nil || len(rc.toolsByName) != n {
		t.Fatalf("the read did not keep a snapshot of the %d tools", n)
	}
	if s.regs() != rc {
		t.Fatal("a second read built the snapshot again")
	}
	if !s.RemoveTool("tool_007") || s.reg.Load() != nil {
		t.Fatal("RemoveTool left the old snapshot in place")
	}
	if s.lookupTool([]byte("tool_007")) != nil {
		t.Fatal("a removed tool is still found")
	}
	// The lists and tools/call read it too.
	p := decodePage(t, "tools/list", rpc(t, s, "tools/list", "").frame)
	if p.Error != nil || p.Result == nil || len(p.Result.Items) == 0 {
		t.Fatalf("tools/list: %+v", p)
	}
	if err := s.AddTool(Tool{Name: "late", Handler: h}); err != nil {
		t.Fatal(err)
	}
	if r := rpc(t, s, "tools/call", `"name":"late","arguments":{}`); !strings.Contains(string(r.frame), `"text":"ok"`) {
		t.Fatalf("a tool added after a read is not called: %s", r.frame)
	}
}

// TestRegistryReadsDuringChanges: readers that look a tool up while
// another goroutine keeps adding tools find every tool whose AddTool
// returned before their lookup began (a read after a change sees it).
// Fails when a change leaves the old snapshot in place (staleLocked
// skipped), or when a snapshot is built from a partial registry.
func TestRegistryReadsDuringChanges(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	h := func(c *Call) error { return nil }
	const n = 400
	var added atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				m := added.Load()
				if m > 0 {
					i := (int64(k)*7919 + int64(r)) % m
					if s.lookupTool(fmt.Appendf(nil, "t%04d", i)) == nil {
						errs <- fmt.Sprintf("t%04d not found; %d added before the lookup began", i, m)
						return
					}
				}
				if m == n {
					return
				}
			}
		}()
	}
	for i := range n {
		if err := s.AddTool(Tool{Name: fmt.Sprintf("t%04d", i), Handler: h}); err != nil {
			t.Error(err)
			break
		}
		added.Store(int64(i + 1))
	}
	added.Store(n)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkRegisterTools: registering n tools, then one lookup (the
// first request's). Per op: the n registrations. The cost per tool
// should not grow with n.
func BenchmarkRegisterTools(b *testing.B) {
	h := func(c *Call) error { return nil }
	for _, n := range []int{100, 1000, 10000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("tool_%05d", i)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				s := New(Config{})
				for _, name := range names {
					_ = s.AddTool(Tool{Name: name, Handler: h})
				}
				if s.lookupTool([]byte(names[n-1])) == nil {
					b.Fatal("not found")
				}
				_ = s.Shutdown(context.Background())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
		})
	}
}
