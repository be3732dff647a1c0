package streamhttp

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestC5WriteIdle: the other half of C5. A listener that stops reading
// while its queue limit is far away (MaxListenPendingBytes 256 MiB) is
// closed by the write-idle path: once one write makes no progress for
// WriteIdleTimeout the stream ends and is counted (StreamWriteErrors, not
// SlowConsumers); a listener that reads gets every update meanwhile.
func TestC5WriteIdle(t *testing.T) {
	leakCheck(t)
	eng, hs, addr := fanoutServer(t, Config{MaxListenPendingBytes: 256 << 20, WriteIdleTimeout: 400 * time.Millisecond})
	slow := openListen(t, addr, 0) // never read again
	defer slow.conn.Close()
	fast := openListen(t, addr, 1)
	defer fast.conn.Close()
	for eng.Stats().ListenStreams.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	pad := strings.Repeat("p", 4000)
	before := hs.Stats().StreamWriteErrors.Load()
	disconnects := hs.Stats().Disconnects.Load()
	deadline := time.Now().Add(60 * time.Second)
	u := 0
	for ; hs.Stats().StreamWriteErrors.Load() == before; u++ {
		if time.Now().After(deadline) {
			t.Fatalf("after %d updates (%d MB) the stream that stopped reading is still open", u, u*len(pad)>>20)
		}
		eng.ResourceUpdated(fmt.Sprintf("test://fan/%d/%s", u, pad))
		_ = fast.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if ev := fast.next(t); !strings.Contains(ev, fmt.Sprintf(`"uri":"test://fan/%d/`, u)) {
			t.Fatalf("reading listener, update %d: %.80s", u, ev)
		}
		if u > 2000 {
			time.Sleep(time.Millisecond) // the kernel buffers are full by now: let the deadline pass
		}
	}
	if got := hs.Stats().StreamWriteErrors.Load() - before; got != 1 {
		t.Errorf("StreamWriteErrors +%d, want 1", got)
	}
	if got := hs.Stats().Disconnects.Load() - disconnects; got != 0 {
		t.Errorf("Disconnects +%d: a client that stopped reading did not leave", got)
	}
	if got := hs.Stats().SlowConsumers.Load(); got != 0 {
		t.Errorf("SlowConsumers = %d: the queue limit acted, not the write-idle path", got)
	}
	for deadline := time.Now().Add(5 * time.Second); eng.Stats().ListenStreams.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("listen streams %d after the write-idle close, want 1", eng.Stats().ListenStreams.Load())
		}
	}
	// The reading listener still hears updates.
	eng.ResourceUpdated("test://fan/after")
	if ev := fast.next(t); !strings.Contains(ev, `"uri":"test://fan/after"`) {
		t.Fatalf("reading listener after the close: %.80s", ev)
	}
	t.Logf("closed after %d updates of %d bytes", u, len(pad))
}
