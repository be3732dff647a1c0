package linestream

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// An inline request writes its answer in the room of the Conn's stage
// (engine.Batch.SetStage) and ReplyInBatch takes it there without a copy.
// These tests hold what that must not change: every answer byte for byte,
// with answers that outgrow the room and requests that leave for a worker
// between inline ones.

// inPlaceServer: "sized" (Inline) and "worker" (a worker's, answering once
// release is closed) answer a text of arguments.n bytes made from the id.
func inPlaceServer(t testing.TB) (*engine.Server, chan struct{}) {
	t.Helper()
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	release := make(chan struct{})
	text := func(c *engine.Call) string {
		var a struct{ N int }
		if err := c.Bind(&a); err != nil {
			return err.Error()
		}
		return strings.Repeat(string(c.ID())+".", a.N)[:a.N]
	}
	for _, tool := range []engine.Tool{
		{Name: "sized", Inline: true, Handler: func(c *engine.Call) error { c.Text(text(c)); return nil }},
		{Name: "worker", Handler: func(c *engine.Call) error { <-release; c.Text(text(c)); return nil }},
	} {
		if err := s.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	return s, release
}

func sizedLine(id int, tool string, n int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"N":` + strconv.Itoa(n) + `},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// TestInPlaceAnswersExact: reads of 1 to 40 lines mixing small inline
// answers, inline answers from a few hundred bytes to 20 KB (past the
// stage's room and past the stage), and requests run by workers that
// answer while later reads are staged: every answer is byte for byte the
// one the same request gets alone in its read (the first answer of a read
// is never written in the stage: there is none yet), and the text is
// what the tool wrote.
func TestInPlaceAnswersExact(t *testing.T) {
	leakCheck(t)
	s, release := inPlaceServer(t)
	type line struct {
		id   int
		tool string
		n    int
	}
	var lines []line
	seed := uint32(7)
	for id := 1; id <= 400; id++ {
		seed = seed*1664525 + 1013904223
		l := line{id: id, tool: "sized", n: int(seed>>16) % 200}
		switch r := seed >> 8 % 16; {
		case r < 2:
			l.tool, l.n = "worker", int(seed>>12)%3000
		case r < 5:
			l.n = int(seed>>10) % 20000
		}
		lines = append(lines, l)
	}
	out, m := memOn(t, s, Config{})
	for i, k := 0, 1; i < len(lines); k = k%40 + 7 {
		j := min(i+k, len(lines))
		var read []string
		for _, l := range lines[i:j] {
			read = append(read, sizedLine(l.id, l.tool, l.n))
		}
		if err := m.Send([]byte(strings.Join(read, "\n") + "\n")); err != nil {
			t.Fatal(err)
		}
		if i <= len(lines)/2 && j > len(lines)/2 {
			close(release) // the workers answer while the next reads are staged
		}
		i = j
	}
	waitFor(t, "every answer", func() bool { return len(out.all()) == len(lines) })
	got := byID(t, out.all())
	// Each request alone in its read, on another connection.
	refOut, ref := memOn(t, s, Config{})
	for _, l := range lines {
		if err := ref.Send([]byte(sizedLine(l.id, l.tool, l.n) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every reference answer", func() bool { return len(refOut.all()) == len(lines) })
	refs := byID(t, refOut.all())
	for _, l := range lines {
		id := strconv.Itoa(l.id)
		want := refs[id]
		if got[id] != want {
			t.Fatalf("id %s (%s, %d bytes): answer\n%.300q\nwant\n%.300q", id, l.tool, l.n, got[id], want)
		}
		if text := decode(t, want).text(); text != strings.Repeat(id+".", l.n)[:l.n] {
			t.Fatalf("id %s: text %.80q", id, text)
		}
	}
}

// byID maps each answer's raw id to the answer; an id answered twice fails.
func byID(t *testing.T, frames []string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range frames {
		var msg struct{ ID json.RawMessage }
		if err := json.Unmarshal([]byte(f), &msg); err != nil {
			t.Fatalf("answer %q: %v", f, err)
		}
		if _, dup := got[string(msg.ID)]; dup {
			t.Fatalf("two answers for id %s", msg.ID)
		}
		got[string(msg.ID)] = f
	}
	return got
}

// TestInPlaceWorkerWritesAfterItLeft: a request that leaves for a worker
// never writes in the stage's room. Its handler writes its answer while a
// later read's answers wait in a stage (often the same pooled buffer the
// earlier read's stage was): those answers, and the worker's, stay exact.
func TestInPlaceWorkerWritesAfterItLeft(t *testing.T) {
	leakCheck(t)
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	release, written := make(chan struct{}), make(chan struct{})
	text := func(c *engine.Call, n int) string { return strings.Repeat(string(c.ID())+".", n)[:n] }
	for _, tool := range []engine.Tool{
		{Name: "small", Inline: true, Handler: func(c *engine.Call) error { c.Text(text(c, 40)); return nil }},
		{Name: "worker", Handler: func(c *engine.Call) error {
			<-release
			c.Text(text(c, 3000))
			close(written)
			return nil
		}},
		// Lets the worker write while the read's earlier answers are staged.
		{Name: "gate", Inline: true, Handler: func(c *engine.Call) error {
			close(release)
			<-written
			c.Text(text(c, 40))
			return nil
		}},
	} {
		if err := s.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	out, m := memOn(t, s, Config{})
	var read1, read2 []string
	for id := 1; id <= 4; id++ {
		read1 = append(read1, sizedLine(id, "small", 0))
	}
	read1 = append(read1, sizedLine(5, "worker", 0))
	for id := 6; id <= 60; id++ {
		read2 = append(read2, sizedLine(id, "small", 0))
	}
	read2 = append(read2, sizedLine(61, "gate", 0))
	if err := m.Send([]byte(strings.Join(read1, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := m.Send([]byte(strings.Join(read2, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every answer", func() bool { return len(out.all()) == 61 })
	got := byID(t, out.all())
	for id := 1; id <= 61; id++ {
		n := 40
		if id == 5 {
			n = 3000
		}
		sid := strconv.Itoa(id)
		if text := decode(t, got[sid]).text(); text != strings.Repeat(sid+".", n)[:n] {
			t.Fatalf("id %s: %.200q", sid, got[sid])
		}
	}
}
