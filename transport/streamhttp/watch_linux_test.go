//go:build linux

package streamhttp

import (
	"net"
	"testing"
	"time"
)

// TestWatchStopDuringBegin: stop called while begin is between marking
// the watch started and waiting on the socket must wake the wait at once
// (HCAN-01's watcher must never hold a reply back). Before the fix, begin
// cleared the read deadline after stop had set it, and stop waited until
// the client closed its connection.
func TestWatchStopDuringBegin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close() // stays open and silent: only the deadline can wake the watch
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	inGap := make(chan struct{})
	stopped := make(chan struct{})
	watchBeginGap = func() {
		close(inGap)
		<-stopped // stop has set its wake-up deadline
	}
	defer func() { watchBeginGap = nil }()

	var w watcher
	w.arm(server, time.Millisecond, func() { t.Error("onGone called for a live client") })
	<-inGap
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.stop()
	}()
	// Let stop set its deadline; it then waits for the watch goroutine,
	// which the gap holds back until now.
	time.Sleep(50 * time.Millisecond)
	close(stopped)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop still waiting 5 s after it was called: the wake-up deadline was erased")
	}
}
