package legacy

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// FuzzParse feeds arbitrary bodies to the 2025 message parser and, for
// requests it accepts, to the rewrite into a 2026-07-28 request: parse
// never panics, and every rewrite is one JSON object the engine's own
// parser accepts (or refuses with a JSON-RPC error the client is answered
// with, such as a case-variant of _meta the client sent: never a crash),
// with the session's protocol version and capabilities in _meta and the
// client's id and method unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"mcpwire-1","result":{"action":"accept"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`,
	} {
		f.Add([]byte(s))
	}
	eng := engine.New(engine.Config{Logging: true})
	s := &Server{eng: eng, modern: engine.ProtocolVersion}
	ss := &session{s: s, local: true, rec: record{Version: ProtocolVersion, Caps: json.RawMessage(`{"sampling":{}}`), Level: "info"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parse(body)
		if err != nil || m.Method == "" || len(m.ID) == 0 {
			return
		}
		msg, merr := ss.modern(nil, nil, m.ID, m.Method, m.Params, nil, nil, nil)
		if merr != nil {
			return
		}
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			var ce *codec.Error
			if !errors.As(err, &ce) || ce.Code != codec.CodeInvalidRequest {
				t.Fatalf("rewrite refused without an Invalid Request error: %v\n%s", err, msg)
			}
			return
		}
		if !env.ProtocolVersion.EqualString(engine.ProtocolVersion) || env.ClientCapabilities == nil {
			t.Fatalf("rewrite lost the session's _meta: %s", msg)
		}
		if env.Method.String() != m.Method || string(env.ID) != string(m.ID) {
			t.Fatalf("rewrite changed id or method: %s", msg)
		}
		// The byte splice means what the map merge means.
		slow, serr := ss.modernMap(m.ID, m.Method, m.Params, nil)
		if serr != nil {
			t.Fatalf("the map merge fails where the splice worked: %v\n%s", serr, msg)
		}
		var a, b any
		if json.Unmarshal(msg, &a) != nil || json.Unmarshal(slow, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("splice and map merge differ:\n%s\n%s", msg, slow)
		}
	})
}
