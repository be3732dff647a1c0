package codec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
)

// BenchmarkPeekToolsCall: the EXAMPLES.md §2 tools/call body (354 bytes).
// Target ≤ 150 ns/op, 0 allocs/op.
func BenchmarkPeekToolsCall(b *testing.B) {
	msg := []byte(vecToolsCall)
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := Peek(msg, &env); err != nil {
			b.Fatal(err)
		}
	}
}

// largeMessage is a ~64 KiB tools/call whose arguments hold long ASCII and
// non-ASCII strings, numbers and nested objects.
func largeMessage() []byte {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":"large-1","method":"tools/call","params":{"name":"ingest","arguments":{"rows":[`)
	for i := 0; sb.Len() < 64<<10; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":12345,"ratio":-0.25e-3,"ok":true,"tags":["alpha","beta",null],"text":"The quick brown fox jumps over the lazy dog. Zürich 世界 \"quoted\" \\ \n","nested":{"a":{"b":[1,2,3]}}}`)
	}
	sb.WriteString(`]},"_meta":` + stdMeta + `}}`)
	return []byte(sb.String())
}

func BenchmarkPeekLarge(b *testing.B) {
	msg := largeMessage()
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := Peek(msg, &env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeekCancelled: the EXAMPLES.md §4 notification (101 bytes).
func BenchmarkPeekCancelled(b *testing.B) {
	msg := []byte(vecCancelled)
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := Peek(msg, &env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeekTooDeep: the A9 error path (10,000 nested '[').
func BenchmarkPeekTooDeep(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`)
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := Peek(msg, &env); err != ErrTooDeep {
			b.Fatal(err)
		}
	}
}

// BenchmarkSonicGet3Fields: sonic's lazy read of method, params.name and the
// protocol version of the same §2 vector, for comparison. It validates
// nothing beyond the paths it walks.
func BenchmarkSonicGet3Fields(b *testing.B) {
	src := vecToolsCall
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		m, err := sonic.GetFromString(src, "method")
		if err != nil {
			b.Fatal(err)
		}
		n, err := sonic.GetFromString(src, "params", "name")
		if err != nil {
			b.Fatal(err)
		}
		v, err := sonic.GetFromString(src, "params", "_meta", MetaProtocolVersion)
		if err != nil {
			b.Fatal(err)
		}
		s1, _ := m.String()
		s2, _ := n.String()
		s3, _ := v.String()
		if s1 != "tools/call" || s2 != "execute_sql" || s3 != "2026-07-28" {
			b.Fatal(s1, s2, s3)
		}
	}
}

// fixture is the standard fixture (bench/wrk/fixture.lua, profiles/README.md):
// the tools/call echo every transport benchmark sends, 313 bytes.
const fixture = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

// BenchmarkPeekFixture: PeekWith on the standard fixture, what every line
// and HTTP transport runs once per message.
func BenchmarkPeekFixture(b *testing.B) {
	msg := []byte(fixture)
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := PeekWith(msg, &env, PeekConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeekFixtureMemo: PeekWith on the standard fixture with a memo
// (PeekConfig.Memo), as a line connection reads its client's requests.
func BenchmarkPeekFixtureMemo(b *testing.B) {
	msg := []byte(fixture)
	var env Envelope
	o := PeekConfig{Memo: new(PeekMemo)}
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := PeekWith(msg, &env, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanMembersFixture: the engine's flat check's scan of the
// fixture's arguments ({"text":"hello world"}).
func BenchmarkScanMembersFixture(b *testing.B) {
	msg := []byte(fixture)
	var env Envelope
	if err := Peek(msg, &env); err != nil {
		b.Fatal(err)
	}
	names := []string{"text"}
	vals := make([][]byte, 1)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := ScanMembers(env.Arguments, names, vals); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
}

// reordered is the standard fixture with its members in another order at
// every level (as a client that writes method and params before jsonrpc
// and id, and _meta first, sends it): the usual-shape readers decline it
// at each level, and the object loop reads it.
const reordered = `{"method":"tools/call","params":{"_meta":{"progressToken":1,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"hello world"}},"jsonrpc":"2.0","id":1}`

// BenchmarkPeekReordered: PeekWith on reordered, what a message outside
// the usual shape costs.
func BenchmarkPeekReordered(b *testing.B) {
	msg := []byte(reordered)
	var env Envelope
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := PeekWith(msg, &env, PeekConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeekLineFixture: PeekLine on the standard fixture followed by
// its '\n' and the next line, with a memo, as a line connection reads its
// client's requests (transport/linestream's pump).
func BenchmarkPeekLineFixture(b *testing.B) {
	buf := []byte(fixture + "\n" + fixture + "\n")
	var env Envelope
	o := PeekConfig{Memo: new(PeekMemo)}
	b.ReportAllocs()
	b.SetBytes(int64(len(fixture) + 1))
	for b.Loop() {
		if n := PeekLine(buf, &env, o); n != len(fixture) {
			b.Fatal(n)
		}
	}
}

// BenchmarkPeekLineTools: PeekLine with a memo on requests for 2 or 5
// tools in turn (a client calling one tool, then another): each misses
// the template the one before left, and is read in full. The figure to
// compare with BenchmarkPeekLineFixture, where every request repeats
// the one before.
func BenchmarkPeekLineTools(b *testing.B) {
	for _, tools := range []int{2, 5} {
		b.Run(strconv.Itoa(tools), func(b *testing.B) {
			bufs := make([][]byte, tools)
			for j := range bufs {
				msg := strings.Replace(fixture, `"name":"echo"`, `"name":"tool`+strconv.Itoa(j)+`"`, 1)
				bufs[j] = []byte(msg + "\n" + fixture + "\n")
			}
			var env Envelope
			o := PeekConfig{Memo: new(PeekMemo)}
			b.ReportAllocs()
			b.SetBytes(int64(len(fixture) + 1))
			j := 0
			for b.Loop() {
				buf := bufs[j]
				if n := PeekLine(buf, &env, o); n < 0 || buf[n] != '\n' {
					b.Fatal(n)
				}
				if j++; j == tools {
					j = 0
				}
			}
		})
	}
}
