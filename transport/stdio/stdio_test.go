package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/internal/golden"
)

// req builds a request line (id is raw JSON).
func req(id, method, params string) string { return golden.Request(id, method, params) }

// testServer has the tools the golden conversations use.
func testServer(t testing.TB) *engine.Server { return golden.Server(t) }

// session runs ServeConn over pipes.
type session struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	srv  *engine.Server
}

func startSession(t *testing.T, opt Config) *session {
	t.Helper()
	base := goleak.IgnoreCurrent()
	srv := testServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1), srv: srv}
	go func() {
		err := ServeConn(context.Background(), srv, inR, outW, opt)
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeConn did not return after stdin closed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		goleak.VerifyNone(t, base)
	})
	return s
}

func (s *session) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *session) readLine(t *testing.T) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() { l, err := s.out.ReadString('\n'); ch <- res{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read: %v", r.err)
		}
		if !strings.HasSuffix(r.s, "\n") || strings.HasSuffix(r.s, "\r\n") {
			t.Fatalf("line must end in LF only: %q", r.s)
		}
		if !json.Valid([]byte(r.s)) {
			t.Fatalf("not JSON: %q", r.s)
		}
		return strings.TrimSuffix(r.s, "\n")
	case <-time.After(5 * time.Second):
		t.Fatal("timed out reading a line")
		return ""
	}
}

// TestGolden replays the shared golden conversations (internal/golden)
// over stdio: the conversation ends with EOF on stdin, which completes what
// is still open (SUB-10, STD-12) and ends the output.
func TestGolden(t *testing.T) {
	for _, c := range golden.Conversations(t) {
		t.Run(c.Name, func(t *testing.T) {
			s := startSession(t, Config{})
			golden.Replay(t, c, s.in, s.out, func() { s.in.Close() })
		})
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestOverlongLine(t *testing.T) { // A1
	s := startSession(t, Config{MaxLine: 1 << 20})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	go func() {
		// Written in 64 KiB chunks, like a real pipe.
		for i := 0; i < len(big); i += 64 << 10 {
			_, _ = io.WriteString(s.in, big[i:min(i+64<<10, len(big))])
		}
		_, _ = io.WriteString(s.in, "\n"+req("2", "tools/call", `"name":"echo","arguments":{"text":"next"}`)+"\n")
	}()
	l := s.readLine(t)
	if l != `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: message too large"}}` {
		t.Fatalf("over-long line: %s", l)
	}
	if l = s.readLine(t); !strings.Contains(l, `"id":2`) || !strings.Contains(l, "next") {
		t.Fatalf("next line not served: %s", l)
	}
	if s.srv.Stats().LinesTooLong.Load() != 1 {
		t.Fatal("not counted")
	}
}

func TestEOFGrace(t *testing.T) { // A15, STD-12
	s := startSession(t, Config{Grace: 300 * time.Millisecond})
	s.send(t,
		req("1", "tools/call", `"name":"wait","arguments":{}`),
		req("2", "tools/call", `"name":"block","arguments":{}`),
		req("3", "tools/call", `"name":"wait","arguments":{}`),
	)
	t0 := time.Now()
	// Let the requests start, then EOF.
	time.Sleep(50 * time.Millisecond)
	s.in.Close()
	all, _ := io.ReadAll(s.out)
	err := <-s.done
	s.done <- err // for the cleanup
	if err != nil {
		t.Fatalf("ServeConn after EOF: %v", err)
	}
	took := time.Since(t0)
	if took > 5*time.Second { // A15: exit within 5 s
		t.Fatalf("took %v to stop after EOF", took)
	}
	out := string(all)
	// wait finishes within the grace period; block is cancelled at its end.
	if strings.Count(out, `"waited"`) != 2 || strings.Contains(out, `"id":2,`) {
		t.Fatalf("output after EOF: %s", out)
	}
}

// TestEPIPE: a closed output ends the connection cleanly (A16).
func TestEPIPE(t *testing.T) {
	base := goleak.IgnoreCurrent()
	srv := testServer(t)
	defer func() { _ = srv.Shutdown(context.Background()); goleak.VerifyNone(t, base) }()
	inR, inW := io.Pipe()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the peer is gone: writes fail with EPIPE
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, inR, w, Config{}) }()
	_, _ = io.WriteString(inW, req("1", "tools/call", `"name":"block","arguments":{}`)+"\n")
	_, _ = io.WriteString(inW, req("2", "tools/call", `"name":"echo","arguments":{"text":"x"}`)+"\n")
	select {
	case err := <-done:
		if !errors.Is(err, ErrOutputClosed) {
			t.Fatalf("ServeConn: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeConn did not end after EPIPE")
	}
	inW.Close()
	w.Close()
}

// TestProtectStdout runs this test binary as a child serving stdio, with a
// tool that prints to os.Stdout (A14, STD-03).
func TestProtectStdout(t *testing.T) {
	if os.Getenv("MCPWIRE_STDIO_CHILD") == "1" {
		srv := testServer(t)
		if err := Serve(context.Background(), srv, Config{}); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProtectStdout$")
	cmd.Env = append(os.Environ(), "MCPWIRE_STDIO_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdin = strings.NewReader(req("1", "tools/call", `"name":"print","arguments":{}`) + "\n" + req("2", "tools/call", `"name":"echo","arguments":{"text":"x"}`) + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\nstderr: %s", err, stderr.String())
	}
	lines := nonEmptyLines(string(out))
	if len(lines) != 2 {
		t.Fatalf("stdout must carry exactly the two responses, got %q", out)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("non-JSON on stdout: %q", l)
		}
	}
	if !strings.Contains(stderr.String(), "stray debug output") {
		t.Fatalf("the stray print should be on stderr, stderr = %q", stderr.String())
	}
}

// TestConcurrentOutputIsWholeLines: many requests answered concurrently
// never interleave bytes within a line.
func TestConcurrentOutputIsWholeLines(t *testing.T) {
	s := startSession(t, Config{})
	const n = 500
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			_, _ = io.WriteString(s.in, req(fmt.Sprint(i), "tools/call", `"name":"echo","arguments":{"text":"`+strings.Repeat("z", i)+`"}`)+"\n")
		}
	}()
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(s.readLine(t)), &m)
		seen[string(m.ID)] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("got %d distinct responses, want %d", len(seen), n)
	}
}

// TestSlowConsumer: a peer that never reads its output is cut off once the
// queued output passes MaxPending, and it is counted once (A18). Over an
// io.Pipe the reader hands every batch to the writer; over an OS pipe,
// non-blocking, it writes what the pipe takes and hands over the rest: in
// both the reader keeps reading, so the bound is reached and counted
// rather than the reader blocking.
func TestSlowConsumer(t *testing.T) {
	for _, tc := range []struct {
		name string
		pipe func(t *testing.T) (io.ReadCloser, io.WriteCloser)
	}{
		{"io.Pipe", func(*testing.T) (io.ReadCloser, io.WriteCloser) { return io.Pipe() }},
		{"os.Pipe", func(t *testing.T) (io.ReadCloser, io.WriteCloser) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, w
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := goleak.IgnoreCurrent()
			srv := testServer(t)
			inR, inW := io.Pipe()
			outR, outW := tc.pipe(t) // never read until the end
			defer outW.Close()
			done := make(chan error, 1)
			go func() { done <- ServeConn(context.Background(), srv, inR, outW, Config{MaxPending: 64 << 10}) }()
			go func() {
				for i := 0; i < 5000; i++ {
					line := req(fmt.Sprint(i), "tools/call", `"name":"echo","arguments":{"text":"`+strings.Repeat("x", 100)+`"}`)
					if _, err := io.WriteString(inW, line+"\n"); err != nil {
						return
					}
				}
			}()
			deadline := time.Now().Add(5 * time.Second)
			for srv.Stats().SlowConsumers.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("slow consumer not detected")
				}
				time.Sleep(time.Millisecond)
			}
			outR.Close() // unblock the stuck write
			inW.Close()
			if err := <-done; !errors.Is(err, framing.ErrSlowConsumer) {
				t.Fatalf("ServeConn: %v", err)
			}
			if n := srv.Stats().SlowConsumers.Load(); n != 1 {
				t.Fatalf("counted %d times", n)
			}
			_ = srv.Shutdown(context.Background())
			goleak.VerifyNone(t, base)
		})
	}
}

// TestQueuedGauge: Config.Queued reports the output waiting for a peer
// that does not read (the metrics' queued_bytes for stdio), and 0 once the
// connection has ended.
func TestQueuedGauge(t *testing.T) {
	base := goleak.IgnoreCurrent()
	srv := testServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // never read
	q := new(Queued)
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, inR, outW, Config{Queued: q}) }()
	for i := 0; i < 100; i++ {
		line := req(fmt.Sprint(i), "tools/call", `"name":"echo","arguments":{"text":"`+strings.Repeat("x", 100)+`"}`)
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for q.Bytes() < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("queued %d bytes after 100 unread replies", q.Bytes())
		}
		time.Sleep(time.Millisecond)
	}
	inW.Close()
	outR.Close() // the stuck write fails: the connection ends
	<-done
	if n := q.Bytes(); n != 0 {
		t.Fatalf("queued %d bytes after the connection ended", n)
	}
	_ = srv.Shutdown(context.Background())
	goleak.VerifyNone(t, base)
}
