package codec_test

import (
	"fmt"

	"github.com/mcpwire/mcpwire/codec"
)

func ExamplePeek() {
	msg := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		// Answer with the sentinel's code; echo env.ID when it was read.
		out := codec.AppendErrorResponse(nil, env.ID, err.(*codec.Error))
		fmt.Println(string(out))
		return
	}
	region, _ := codec.LookupString(env.Arguments, "region")
	fmt.Println(env.Kind, string(env.ID), env.Method.String(), env.Name.String(), env.ProtocolVersion.String(), region.String())

	// A case-variant member is never dispatched on (A10).
	err := codec.Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`), &env)
	fmt.Println(string(codec.AppendErrorResponse(nil, env.ID, err.(*codec.Error))))
	// Output:
	// request 2 tools/call execute_sql 2026-07-28 us-west1
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: duplicate or case-variant member"}}
}

func ExampleDecodeHeaderValue() {
	var stack [128]byte // no allocation for values up to 128 decoded bytes
	for _, h := range []string{"us-west1", "=?base64?WsO8cmljaA==?=", "=?BASE64?SGk=?=", "=?base64?SGVsbG8?="} {
		v, err := codec.DecodeHeaderValue(stack[:0], []byte(h))
		if err != nil {
			fmt.Printf("%s → error %d (HTTP %d)\n", h, err.(*codec.Error).Code, err.(*codec.Error).HTTPStatus())
			continue
		}
		fmt.Printf("%s → %s\n", h, v)
	}
	fmt.Println(string(codec.AppendHeaderValue(nil, []byte(" us-west1"))))
	// Output:
	// us-west1 → us-west1
	// =?base64?WsO8cmljaA==?= → Zürich
	// =?BASE64?SGk=?= → =?BASE64?SGk=?=
	// =?base64?SGVsbG8?= → error -32020 (HTTP 400)
	// =?base64?IHVzLXdlc3Qx?=
}

func ExampleAppendErrorResponse() {
	// A parse error has no readable id: the "id" member is omitted (GEN-05).
	fmt.Println(string(codec.AppendErrorResponse(nil, nil, codec.ErrParse)))
	// Output: {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}
}

func ExampleAppendTextResult() {
	result := codec.AppendTextResult(nil, []byte("1 row"), false, nil)
	fmt.Println(string(codec.AppendResponse(nil, []byte("2"), result)))
	// Output: {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"1 row"}],"isError":false}}
}

func ExampleLookupPath() {
	args := []byte(`{"region":"us-west1","limits":{"rows":100}}`)
	rows, ok := codec.LookupPath(args, "limits", "rows")
	fmt.Println(string(rows), ok)
	// Output: 100 true
}

func ExampleUnmarshal() {
	var req struct {
		Method string `json:"method"`
	}
	_ = codec.Unmarshal([]byte(`{"Method":"tools/call"}`), &req)
	fmt.Printf("%q %v\n", req.Method, codec.UsingFallback())
	// Output: "" false
}

func ExampleEnvelope_PlainArguments() {
	var env codec.Envelope
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world","n":2},"_meta":{"progressToken":1}}}`)
	if err := codec.Peek(msg, &env); err != nil {
		panic(err)
	}
	// Recorded: each value is used as it is, no unescaping needed.
	for j := range env.PlainArguments() {
		name, value := env.PlainArgument(j)
		fmt.Printf("%s=%s\n", name, value)
	}
	// An escape: not recorded, the arguments are read by ScanArguments' scan.
	msg = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"caf\u00e9"},"_meta":{"progressToken":1}}}`)
	if err := codec.Peek(msg, &env); err != nil {
		panic(err)
	}
	fmt.Println(env.PlainArguments())
	// Output:
	// text="hello world"
	// n=2
	// -1
}

// A connection's reader keeps one PeekMemo (or takes one from a pool per
// read): the client's requests repeat the start of their _meta, which
// PeekWith then compares instead of reading again. What it records is
// the same with or without the memo.
func ExamplePeekMemo() {
	cfg := codec.PeekConfig{Memo: new(codec.PeekMemo)} // one reader at a time
	var env codec.Envelope
	for i, token := range []string{"1", `"two"`} {
		msg := []byte(`{"jsonrpc":"2.0","id":` + fmt.Sprint(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ex","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":` + token + `}}}`)
		if err := codec.PeekWith(msg, &env, cfg); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(env.ID), env.ProtocolVersion.String(), string(env.ClientInfo), string(env.ProgressToken))
	}
	// Output:
	// 1 2026-07-28 {"name":"ex","version":"1"} 1
	// 2 2026-07-28 {"name":"ex","version":"1"} "two"
}
