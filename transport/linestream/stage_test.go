package linestream

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// The answers given on the input side during a read wait in the Conn's
// stage (ReplyInBatch) and join the output queue at the end of the read;
// everything else (worker replies, notifications, a timeout's answer) goes
// to the queue at once. These tests hold the rules that split keeps.

// stageServer: "fast" (Inline), "slow" (a worker, answers once its channel
// is closed), "late" (Inline, times out while it runs, then returns), and
// "chatty" (Inline: progress from its own goroutine and from another one
// it waits for, then its result).
func stageServer(t *testing.T) (*engine.Server, chan struct{}) {
	t.Helper()
	s := engine.New(engine.Config{ProgressInterval: -1})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	release := make(chan struct{})
	add := func(tool engine.Tool) {
		if err := s.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	add(engine.Tool{Name: "fast", Inline: true, Handler: func(c *engine.Call) error { c.Text("fast " + string(c.ID())); return nil }})
	add(engine.Tool{Name: "slow", Handler: func(c *engine.Call) error { <-release; c.Text("slow"); return nil }})
	add(engine.Tool{Name: "late", Inline: true, Timeout: 20 * time.Millisecond, Handler: func(c *engine.Call) error {
		<-c.Done() // the timeout's answer is written meanwhile, from its timer
		c.Text("too late")
		return nil
	}})
	add(engine.Tool{Name: "chatty", Inline: true, Handler: func(c *engine.Call) error {
		c.Progress(1, 3, "")
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); c.Progress(2, 3, "") }()
		wg.Wait()
		c.Progress(3, 3, "")
		c.Text("chatty")
		return nil
	}})
	return s, release
}

func callLine(id, tool string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p` + id + `"}}}`
}

// TestStagedAnswersKeepReadOrder: in one read, the inline answers, the
// validation failures and the answers to lines that are no request leave
// in the order of their lines (STD-03: one message per line).
func TestStagedAnswersKeepReadOrder(t *testing.T) {
	leakCheck(t)
	s, release := stageServer(t)
	close(release)
	out, m := memOn(t, s, Config{})
	read := strings.Join([]string{
		callLine("1", "fast"),
		`{"jsonrpc":"2.0","id":2,`, // a parse error
		callLine("3", "nosuch"),    // a validation failure
		callLine("4", "fast"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, // no answer
		callLine("5", "fast"),
	}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	wantAnswersInOrder(t, out.all(), []string{`"id":1,`, `"code":-32700`, `"id":3,`, `"id":4,`, `"id":5,`})
}

// TestStagedAnswersExactlyOnce: a read whose requests end in every way —
// inline, a worker (the request leaves the batch), a timeout written by its
// timer while the inline run still goes on (its late result is dropped) —
// gets exactly one answer per request, the staged ones no more than once
// (engine.BatchReplier is only used on the batch's goroutine; the race
// detector checks the stage is not touched from the timer).
func TestStagedAnswersExactlyOnce(t *testing.T) { // TMO-01, GEN-04
	leakCheck(t)
	s, release := stageServer(t)
	out, m := memOn(t, s, Config{})
	read := strings.Join([]string{callLine("1", "fast"), callLine("2", "slow"), callLine("3", "late"), callLine("4", "fast")}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	close(release)
	out.response(t, "2")
	waitFor(t, "the worker to end", func() bool { return m.Conn().InFlight() == 0 })
	count := map[string]int{}
	for _, f := range out.all() {
		msg := decode(t, f)
		if msg.Method != "" {
			continue
		}
		count[string(msg.ID)]++
		if strings.Contains(f, "too late") {
			t.Fatalf("the timed-out run's result was written: %s", f)
		}
		if string(msg.ID) == "3" && msg.code() != -32603 {
			t.Fatalf("request 3: %s, want the timeout's error", f)
		}
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if count[id] != 1 {
			t.Fatalf("request %s answered %d times: %q", id, count[id], out.all())
		}
	}
}

// TestStagedResponseAfterItsProgress: an inline request's progress
// notifications, sent on the input side and from another goroutine while
// it runs, all precede its response, which waits in the stage (PROG-07).
func TestStagedResponseAfterItsProgress(t *testing.T) {
	leakCheck(t)
	s, release := stageServer(t)
	close(release)
	out, m := memOn(t, s, Config{})
	read := strings.Join([]string{callLine("1", "chatty"), callLine("2", "fast"), callLine("3", "chatty")}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "3"} {
		notes, resultAt := progressOf(t, filterToken(t, out.all(), id))
		if len(notes) != 3 || resultAt != 3 {
			t.Fatalf("request %s: %d progress notifications, response at %d; frames %q", id, len(notes), resultAt, out.all())
		}
	}
}

// filterToken keeps the frames of request id: its progress notifications
// (token "p"+id) and its response.
func filterToken(t *testing.T, frames []string, id string) []string {
	t.Helper()
	var keep []string
	for _, f := range frames {
		msg := decode(t, f)
		if string(msg.ID) == id || strings.Contains(string(msg.Params), `"progressToken":"p`+id+`"`) {
			keep = append(keep, f)
		}
	}
	return keep
}

// TestStagedAnswersBoundedByMaxPending: the answers of one read count
// against MaxPending while they wait in the stage, as they did in the
// queue: a read whose answers pass it ends the connection as a slow
// consumer (A18), counted once.
func TestStagedAnswersBoundedByMaxPending(t *testing.T) { // A18
	leakCheck(t)
	s, release := stageServer(t)
	close(release)
	out, m := memOn(t, s, Config{MaxPending: 1000})
	lines := make([]string, 20) // ~20 answers of ~200 bytes
	for i := range lines {
		lines[i] = callLine("1", "fast")
	}
	_ = m.Send([]byte(strings.Join(lines, "\n")))
	select {
	case <-m.Aborted():
	default:
		t.Fatal("the connection was not aborted")
	}
	if err := m.Err(); err != ErrSlowConsumer {
		t.Fatalf("abort reason %v, want ErrSlowConsumer", err)
	}
	if n := s.Stats().SlowConsumers.Load(); n != 1 {
		t.Fatalf("SlowConsumers = %d, want 1", n)
	}
	if len(out.all()) != 0 {
		t.Fatalf("%d answers written past the bound", len(out.all()))
	}
}

// TestStagedAnswersBeforeALaterWorkersAnswer: the answers to a read's
// lines before a request that leaves for a worker are queued before that
// request's answer, however soon the worker answers (STD-03: the parse
// error of a line was written after the answer to a later line when the
// worker replied before the read ended; socket's golden parse_errors.txtar
// caught it once under load).
func TestStagedAnswersBeforeALaterWorkersAnswer(t *testing.T) {
	leakCheck(t)
	s := engine.New(engine.Config{ProgressInterval: -1})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	started, answered := make(chan struct{}), make(chan struct{})
	for _, tool := range []engine.Tool{
		{Name: "worker", Handler: func(c *engine.Call) error { close(started); c.Text("worker"); return nil }},
		// Holds the read until the worker's request has ended (its
		// answer queued), then a little longer.
		{Name: "hold", Inline: true, Handler: func(c *engine.Call) error {
			select {
			case <-answered:
			case <-time.After(5 * time.Second):
			}
			c.Text("hold")
			return nil
		}},
	} {
		if err := s.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	out, m := memOn(t, s, Config{})
	go func() {
		defer close(answered)
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			return
		}
		// Its answer is queued before Done takes it off the table.
		for deadline := time.Now().Add(5 * time.Second); m.Conn().InFlight() > 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}()
	read := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,`, // a parse error
		callLine("2", "nosuch"),    // a validation failure
		callLine("3", "worker"),
		callLine("4", "hold"),
	}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	wantAnswersInOrder(t, out.all(), []string{`"code":-32700`, `"id":2,`, `"id":3,`, `"id":4,`})
}

// TestStagedAnswersBeforeAnInlineTimeout: an inline request with a
// timeout has its timeout's answer queued from the timer while the read
// goes on; the answers to the read's earlier lines still go first.
func TestStagedAnswersBeforeAnInlineTimeout(t *testing.T) {
	leakCheck(t)
	s, release := stageServer(t)
	close(release)
	out, m := memOn(t, s, Config{})
	read := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,`, // a parse error
		callLine("2", "fast"),
		callLine("3", "late"),
	}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	wantAnswersInOrder(t, out.all(), []string{`"code":-32700`, `"id":2,`, `"id":3,`})
}

// wantAnswersInOrder fails unless got has one answer per want, the i-th
// holding want[i].
func wantAnswersInOrder(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Fatalf("answer %d is %s, want one with %s; all: %q", i, got[i], w, got)
		}
	}
}

// memOn connects a Mem connection with cfg to s; its answers go to out.
// It is closed when the test ends.
func memOn(t *testing.T, s *engine.Server, cfg Config) (*sink, *MemConn) {
	t.Helper()
	out := newSink()
	m := NewMem(engine.NewScope(s, ""), out.WriteFrame, cfg, nil)
	t.Cleanup(func() { m.Close() })
	return out, m
}

// TestInlinePanicKeepsReadOrder: handlers run inline recover no panic
// themselves (engine.Batch.SetRecovers); pump recovers it for the batch. A
// panicking inline handler's request is answered -32603 in its line's
// place among the read's answers, counted, and the lines after it are
// served (in a new batch), also when the panicking request has a timeout
// (Start, not StartInline); the connection goes on.
func TestInlinePanicKeepsReadOrder(t *testing.T) { // C12
	leakCheck(t)
	s, release := stageServer(t)
	close(release)
	boom := func(c *engine.Call) error {
		var m map[string]int
		//lint:ignore SA5000 a deliberate nil map write: the panic under test
		m["x"] = 1
		return nil
	}
	if err := s.AddTool(engine.Tool{Name: "boom", Inline: true, Handler: boom}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(engine.Tool{Name: "boomTimed", Inline: true, Timeout: time.Minute, Handler: boom}); err != nil {
		t.Fatal(err)
	}
	out, m := memOn(t, s, Config{})
	read := strings.Join([]string{
		callLine("1", "fast"), callLine("2", "boom"), callLine("3", "fast"),
		callLine("4", "boomTimed"), callLine("5", "fast"), callLine("6", "boom"),
	}, "\n")
	if err := m.Send([]byte(read)); err != nil {
		t.Fatal(err)
	}
	wantAnswersInOrder(t, out.all(), []string{`"fast 1"`, `"id":2,"error":{"code":-32603`, `"fast 3"`,
		`"id":4,"error":{"code":-32603`, `"fast 5"`, `"id":6,"error":{"code":-32603`})
	if n := s.Stats().Panics.Load(); n != 3 {
		t.Fatalf("%d panics counted, want 3", n)
	}
	if err := m.Send([]byte(callLine("7", "fast"))); err != nil {
		t.Fatal(err)
	}
	if got := out.response(t, "7").text(); got != "fast 7" {
		t.Fatalf("after the panics: %q", got)
	}
}
