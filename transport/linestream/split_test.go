package linestream

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// collectDriver keeps everything written; the feeding goroutine writes.
type collectDriver struct {
	out     bytes.Buffer
	aborted error
}

func (d *collectDriver) Write(b []byte) (int, error) { return d.out.Write(b) }
func (d *collectDriver) WakeOutput()                 {}
func (d *collectDriver) WakeInput()                  {}
func (d *collectDriver) Abort(err error)             { d.aborted = err }

// splitInput is one conversation whose answers are all produced where the
// input is fed (Inline handlers, cached lists, rejections), so the output
// depends on the bytes alone: CRLF, blank and whitespace lines, a line over
// the limit, invalid JSON, invalid UTF-8, a multi-byte character, a
// cancellation of an unknown request, a notification and a response.
func splitInput() string {
	return strings.Join([]string{
		req(1, "tools/call", `"name":"echo","arguments":{"text":"héllo 😀"}`) + "\r",
		"",
		"   \t",
		req("two", "tools/list", ""),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"x":"` + strings.Repeat("z", 700) + `"}}`,
		"not json",
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		req(6, "tools/call", `"name":"echo","arguments":{"text":"\u00e9\ud83d\ude00"}`),
		req(7, "server/discover", ""),
	}, "\n") + "\n"
}

func splitServer(t testing.TB) *engine.Server { return splitServerWith(engine.Config{}) }

// splitServerWith is splitServer's server with cfg.
func splitServerWith(cfg engine.Config) *engine.Server {
	s := engine.New(cfg)
	_ = s.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	return s
}

// feedChunks feeds input in the given chunks and returns the output.
func feedChunks(s *engine.Server, chunks [][]byte) string {
	return feedChunksMax(s, 600, chunks)
}

// feedChunksMax is feedChunks with a MaxLine of maxLine.
func feedChunksMax(s *engine.Server, maxLine int, chunks [][]byte) string {
	d := &collectDriver{}
	c := New(engine.NewScope(s, ""), d, Config{MaxLine: maxLine}, context.Background(), nil)
	for _, ch := range chunks {
		// The caller reuses its buffer after Feed, as a reader does.
		buf := append([]byte(nil), ch...)
		c.Feed(buf)
		for i := range buf {
			buf[i] = '#'
		}
	}
	c.End()
	c.Close(nil)
	c.ReleaseInput()
	return d.out.String()
}

// TestFeedEverySplit: the connection core gives the same answers, byte for
// byte, whether the input arrives in one chunk, split in two at every
// position (inside lines, inside CRLF, inside multi-byte characters), or
// one byte at a time (A3, STYLE: every parser at every split point).
func TestFeedEverySplit(t *testing.T) {
	s := splitServer(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	in := []byte(splitInput())
	want := feedChunks(s, [][]byte{in})
	if n := strings.Count(want, "\n"); n != 7 {
		t.Fatalf("unsplit output has %d lines, want 7:\n%s", n, want)
	}
	for i := 1; i < len(in); i++ {
		if got := feedChunks(s, [][]byte{in[:i], in[i:]}); got != want {
			t.Fatalf("split at %d (%q|%q):\n got  %s\n want %s", i, in[max(0, i-5):i], in[i:min(len(in), i+5)], got, want)
		}
	}
	var bytesOneByOne [][]byte
	for i := range in {
		bytesOneByOne = append(bytesOneByOne, in[i:i+1])
	}
	if got := feedChunks(s, bytesOneByOne); got != want {
		t.Fatalf("one byte at a time:\n got  %s\n want %s", got, want)
	}
}

// TestFuzzMaxLineFitsSeeds: FuzzFeedSplit's seeds (splitInput's lines)
// are all under fuzzMaxLine but the one meant to be over it, so that a
// longer _meta in req, say, does not turn every seed request into a line
// over the limit without anyone noticing.
func TestFuzzMaxLineFitsSeeds(t *testing.T) {
	for _, l := range strings.Split(strings.TrimSuffix(splitInput(), "\n"), "\n") {
		over := strings.Contains(l, strings.Repeat("z", 700))
		if (len(l) > fuzzMaxLine) != over {
			t.Errorf("line of %d bytes (over the limit: %v, want %v) with fuzzMaxLine %d: %.60q", len(l), len(l) > fuzzMaxLine, over, fuzzMaxLine, l)
		}
	}
}

// TestFeedOneWritePerChunk: everything a chunk's requests produce leaves in
// one Write (the batching the socket transport relies on).
func TestFeedOneWritePerChunk(t *testing.T) {
	s := splitServer(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	var writes int
	d := &countingDriver{n: &writes}
	c := New(engine.NewScope(s, ""), d, Config{}, context.Background(), nil)
	defer c.Close(nil)
	var chunk []byte
	for i := 0; i < 64; i++ {
		chunk = append(chunk, req(i, "tools/call", `"name":"echo","arguments":{"text":"x"}`)+"\n"...)
	}
	c.Feed(chunk)
	if writes != 1 {
		t.Fatalf("64 answers took %d writes, want 1", writes)
	}
}

type countingDriver struct{ n *int }

func (d *countingDriver) Write(b []byte) (int, error) { *d.n++; return len(b), nil }
func (d *countingDriver) WakeOutput()                 {}
func (d *countingDriver) WakeInput()                  {}
func (d *countingDriver) Abort(error)                 {}
