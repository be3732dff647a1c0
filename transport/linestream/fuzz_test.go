package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

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
func FuzzFeedSplit(f *testing.F) {
	f.Add([]byte(splitInput()), uint16(17))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\r\n\n  \n"), uint16(3))
	f.Add([]byte("\xe2\x82\xac\n{}\n[]\n"), uint16(1))
	s := splitServer(f)
	f.Fuzz(func(t *testing.T, in []byte, at uint16) {
		if len(in) > 1<<16 {
			return
		}
		i := int(at) % (len(in) + 1)
		want := feedChunks(s, [][]byte{in})
		if got := feedChunks(s, [][]byte{in[:i], in[i:]}); got != want {
			t.Fatalf("split at %d:\n got  %q\n want %q", i, got, want)
		}
		for _, l := range strings.SplitAfter(want, "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("not one JSON object per line: %q", l)
			}
		}
	})
}
