package stdio

import (
	"bufio"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestReaderYields: a reader kept busy for several yieldEvery periods
// yields between its reads (so that sysmon can back off, see yieldEvery),
// and answers every request all the same.
func TestReaderYields(t *testing.T) {
	base := goleak.IgnoreCurrent()
	var yields atomic.Int64
	yield = func() { yields.Add(1) }
	defer func() { yield = runtime.Gosched }()

	srv := testServer(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, inR, outW, Config{}) }()

	const n = 64
	br := bufio.NewReader(outR)
	// Busy for several yieldEvery, and on a slow machine (-race, load)
	// until the reader has yielded twice or 5 s have passed.
	const busy = 30 * time.Millisecond
	start := time.Now()
	sent := 0
	for id := 1; time.Since(start) < busy || yields.Load() < 2 && time.Since(start) < 5*time.Second; id += n {
		var batch []byte
		for i := id; i < id+n; i++ {
			batch = append(batch, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"ping"}`+"\n"...)
		}
		if _, err := inW.Write(batch); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if _, err := br.ReadSlice('\n'); err != nil {
				t.Fatal(err)
			}
		}
		sent += n
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = srv.Shutdown(context.Background())
	inR.Close()
	outW.Close()
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("%d bytes after the last answer: %q", len(rest), rest)
	}
	outR.Close()
	if got := yields.Load(); got < 2 {
		t.Errorf("reader yielded %d times in %d round trips over %v, want at least 2", got, sent/n, time.Since(start).Round(time.Millisecond))
	}
	goleak.VerifyNone(t, base)
}
