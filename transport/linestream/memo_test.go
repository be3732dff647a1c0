package linestream

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestPeekMemoPerMessage: the peek's memo of params._meta (codec.PeekMemo,
// one per read from a pool) never gives a request another's _meta. In one
// read and across reads, and on two connections in turn, each request's
// handler sees its own clientInfo, whether its _meta repeats the previous
// one, differs in one byte, or is ordered otherwise.
func TestPeekMemoPerMessage(t *testing.T) {
	leakCheck(t)
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	if err := s.AddTool(engine.Tool{Name: "who", Inline: true, Handler: func(c *engine.Call) error {
		c.Text(c.ProtocolVersion() + " " + string(c.ClientInfo()))
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	line := func(id, version, info string, swap bool) string {
		v := `"io.modelcontextprotocol/protocolVersion":"` + version + `"`
		ci := `"io.modelcontextprotocol/clientInfo":` + info
		meta := v + "," + ci
		if swap {
			meta = ci + "," + v
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"who","arguments":{},"_meta":{` + meta +
			`,"io.modelcontextprotocol/clientCapabilities":{},"progressToken":` + id + `}}}` + "\n"
	}
	type call struct{ version, info string }
	calls := []call{
		{"2026-07-28", `{"name":"a","version":"1"}`}, {"2026-07-28", `{"name":"a","version":"1"}`},
		{"2026-07-28", `{"name":"b","version":"1"}`}, {"2026-07-28", `{"name":"b","version":"2"}`},
		{"2026-07-28", `{"name":"b","version":"2"}`}, {"2026-07-28", `{"name":"a","version":"1"}`},
	}
	var mu sync.Mutex
	got := map[string]string{}
	write := func(f []byte) error {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(f, &m); err != nil || len(m.Result.Content) != 1 {
			t.Errorf("answer %q: %v", f, err)
			return nil
		}
		mu.Lock()
		got[string(m.ID)] = m.Result.Content[0].Text
		mu.Unlock()
		return nil
	}
	a := NewMem(engine.NewScope(s, ""), write, Config{}, nil)
	defer a.Close()
	b := NewMem(engine.NewScope(s, ""), write, Config{}, nil)
	defer b.Close()
	want := map[string]string{}
	id := 0
	var read strings.Builder
	for round, conn := range []*MemConn{a, b, a, b} {
		for j, c := range calls {
			id++
			n := strconv.Itoa(10 + id)
			read.WriteString(line(n, c.version, c.info, (j+round)%3 == 2))
			want[n] = c.version + " " + c.info
			if round >= 2 { // one request per read
				conn.Conn().Feed([]byte(read.String()))
				read.Reset()
			}
		}
		conn.Conn().Feed([]byte(read.String())) // rounds 0 and 1: one read
		read.Reset()
	}
	mu.Lock()
	defer mu.Unlock()
	for n, w := range want {
		if got[n] != w {
			t.Errorf("request %s: handler saw %q, want %q", n, got[n], w)
		}
	}
}

// TestPeekLineRawNewline: a raw '\n' ends a line wherever it stands, also
// as whitespace inside the flat objects codec.PeekLine reads (a tool's
// arguments, clientInfo), where JSON would allow it: each part is its own
// line and gets -32700 with a null id, as before PeekLine, and the usual
// line after them is answered. It fails when PeekLine's walk takes
// whitespace, with the remembered _meta of an earlier read too.
func TestPeekLineRawNewline(t *testing.T) {
	leakCheck(t)
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	if err := s.AddTool(engine.Tool{Name: "who", Inline: true, Handler: func(c *engine.Call) error {
		c.Text(string(c.ClientInfo()))
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	line := func(id, args, info string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"who","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":` + info +
			`,"io.modelcontextprotocol/clientCapabilities":{},"progressToken":` + id + `}}}` + "\n"
	}
	info := `{"name":"a","version":"1"}`
	var mu sync.Mutex
	var answers []string
	m := NewMem(engine.NewScope(s, ""), func(f []byte) error {
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct{ Code int }
		}
		if err := json.Unmarshal(f, &msg); err != nil {
			t.Errorf("answer %q: %v", f, err)
		}
		a := string(msg.ID)
		if a == "" {
			a = "null" // json.RawMessage takes null as nothing
		}
		if msg.Error != nil {
			a += " " + strconv.Itoa(msg.Error.Code)
		}
		mu.Lock()
		answers = append(answers, a)
		mu.Unlock()
		return nil
	}, Config{}, nil)
	defer m.Close()
	// The first read leaves its clientInfo in the memo; the second sends
	// the same bytes with a '\n' in them.
	m.Conn().Feed([]byte(line("1", `{"text":"x"}`, info) + line("2", `{"text":"x"}`, info)))
	m.Conn().Feed([]byte(line("3", "{\"text\"\n:\"x\"}", info) + line("4", "{\"text\":\"x\"\n}", info) +
		line("5", `{"text":"x"}`, "{\"name\":\"a\"\n,\"version\":\"1\"}") + line("6", `{"text":"x"}`, "{\"name\"\n:\"a\",\"version\":\"1\"}") +
		line("7", `{"text":"x"}`, info) + line("8", `{"text":"x","o":{"a":[1]}}`, info) + line("9", `{"text":"x"}`, info)))
	mu.Lock()
	defer mu.Unlock()
	want := "1 2" + strings.Repeat(" null -32700", 8) + " 7 8 9"
	if got := strings.Join(answers, " "); got != want {
		t.Fatalf("answers %q\nwant      %q", got, want)
	}
}
