package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHandleFrame feeds arbitrary frames to a stream connection: the engine
// never panics, everything it writes is one valid UTF-8 JSON-RPC object, and
// no request is answered twice.
func FuzzHandleFrame(f *testing.F) {
	seeds := []string{
		req(1, "tools/call", `"name":"echo","arguments":{"text":"hi"}`),
		req("a", "server/discover", ""),
		req(2, "tools/list", `"cursor":"x"`),
		req(3, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"x"}`,
		`[1,2]`, `hello`, `{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	s := engine.New(engine.Config{})
	_ = s.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	f.Fuzz(func(t *testing.T, frame string) {
		out := newSink()
		sc := newStreamConn(s, out)
		if err := sc.HandleFrame([]byte(frame)); err != nil {
			t.Fatalf("HandleFrame: %v", err)
		}
		sc.Close() // ends listen streams and anything in flight
		waitFor(t, "in flight to end", func() bool { return sc.InFlight() == 0 })
		responses := map[string]int{}
		for _, w := range out.all() {
			if !utf8.ValidString(w) || strings.ContainsRune(w, '\n') {
				t.Fatalf("bad frame %q", w)
			}
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
			}
			if err := json.Unmarshal([]byte(w), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("invalid output %q: %v", w, err)
			}
			if m.Method == "" && m.ID != nil {
				responses[string(m.ID)]++
				if responses[string(m.ID)] > 1 {
					t.Fatalf("request %s answered twice", m.ID)
				}
			}
		}
	})
}

// FuzzFeedSplit feeds arbitrary input in two chunks split at an arbitrary
// point: the answers are the same bytes as when it arrives whole (inline
// handlers only, so the output depends on the bytes alone), and never
// contain a raw newline inside a frame.
//
// The harness keeps an input's coverage a function of the input, and its
// seeds small, because the fuzzing engine minimizes every input that
// brings new coverage, and its minimizer makes O(n²) attempts on an n-byte
// input whose new coverage no shorter input keeps — during which the
// coordinator reports 0 execs/sec. Hence:
//   - the seeds are splitInput's lines one by one, not splitInput whole
//     (TestFeedEverySplit tries it at every split point): minimizing a
//     2 KB seed whose new coverage was a count (of a loop's turns, of
//     requests) took the whole -fuzzminimizetime (60 s), so that a 20 s run
//     fuzzed nothing and reported 0 execs/sec for all but its first seconds;
//   - MaxLine is fuzzMaxLine (300), just over the longest seed line, so
//     that an input reaching the over-the-limit paths need not be 600
//     bytes long;
//   - the server records no request durations
//     (engine.Config.NoRequestDurations): the histogram's bucket search
//     loops as many times as the request took microseconds to answer,
//     coverage that depends on the clock;
//   - the seeds are fed once before fuzzing, so that the baseline runs of
//     the corpus meet the state the fuzzing runs meet (the tools/list
//     catalog built, the pooled peek memo and batch warm) instead of
//     counting what a first request does as new coverage later.
func FuzzFeedSplit(f *testing.F) {
	type seed struct {
		in []byte
		at uint16
	}
	var seeds []seed
	for _, l := range strings.SplitAfter(splitInput(), "\n") {
		if l != "" {
			seeds = append(seeds, seed{[]byte(l), uint16(len(l) / 2)})
		}
	}
	seeds = append(seeds,
		seed{[]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\r\n\n  \n"), 3},
		seed{[]byte("\xe2\x82\xac\n{}\n[]\n"), 1})
	s := splitServerWith(engine.Config{NoRequestDurations: true})
	defer func() { _ = s.Shutdown(context.Background()) }()
	for _, sd := range seeds {
		f.Add(sd.in, sd.at)
		feedChunksMax(s, fuzzMaxLine, [][]byte{sd.in})
	}
	f.Fuzz(func(t *testing.T, in []byte, at uint16) {
		if len(in) > 1<<16 {
			return
		}
		i := int(at) % (len(in) + 1)
		want := feedChunksMax(s, fuzzMaxLine, [][]byte{in})
		if got := feedChunksMax(s, fuzzMaxLine, [][]byte{in[:i], in[i:]}); got != want {
			t.Fatalf("split at %d:\n got  %q\n want %q", i, got, want)
		}
		for _, l := range strings.SplitAfter(want, "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("not one JSON object per line: %q", l)
			}
		}
	})
}

// fuzzMaxLine is FuzzFeedSplit's MaxLine: over every line of splitInput
// but the one meant to be over the limit.
const fuzzMaxLine = 300
