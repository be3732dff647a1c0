package engine

import (
	"context"
	"testing"
	"time"
)

// TestRequestsCountedInShards: Stats.Requests counts each admitted request
// once: a request on its own in its tracker shard (tracker.add), a
// batch's requests at its End (its own tracker entry is not a request),
// and a request refused once Shutdown began not at all.
func TestRequestsCountedInShards(t *testing.T) {
	s, _ := fastSlowServer()
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	own := func(id string) {
		t.Helper()
		runChecked(t, sc, sc.Prepare(), batchMsg(id, "fast"), rep)
	}
	for i := range 5 {
		own(string(rune('1' + i)))
	}
	if n := s.Stats().Requests.Load(); n != 5 {
		t.Fatalf("Requests = %d after five on their own, want 5", n)
	}
	b := sc.StartBatch()
	startInBatch(t, sc, b, batchMsg("6", "fast"), rep)
	startInBatch(t, sc, b, batchMsg("7", "fast"), rep)
	b.End()
	if n := s.Stats().Requests.Load(); n != 7 {
		t.Fatalf("Requests = %d after a batch of two, want 7 (the batch's entry is no request)", n)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	own("8")
	if n, r := s.Stats().Requests.Load(), s.Stats().ShutdownRefused.Load(); n != 7 || r != 1 {
		t.Fatalf("Requests = %d, ShutdownRefused = %d after a refused request, want 7 and 1", n, r)
	}
}

// TestServerShutdownWaitsForRequest: Server.Shutdown waits for a request
// on its own still in flight (tracker.count with no scope walks every
// shard's list) and returns once it has ended.
func TestServerShutdownWaitsForRequest(t *testing.T) {
	s, release := fastSlowServer()
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	r := beginOn(t, sc, sc.Prepare(), batchMsg("1", "slow"), rep)
	if e := r.Check(); e != nil {
		t.Fatalf("check: %s", e.Message)
	}
	r.Start() // to a worker: it waits for release
	if n := s.tracker.count(nil); n != 1 {
		close(release)
		t.Fatalf("count(nil) = %d with one request in flight, want 1", n)
	}
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		close(release)
		t.Fatalf("Shutdown returned %v while a request was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := s.tracker.count(nil); n != 0 {
		t.Fatalf("count(nil) = %d after Shutdown returned, want 0", n)
	}
}
