package rawreply

import "testing"

func TestAppend(t *testing.T) {
	for _, tc := range []struct {
		req    string
		splice bool
		id     string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, true, `1`},
		{`{"jsonrpc":"2.0","id":4711,"method":"tools/call","params":{"_meta":{"progressToken":4711}}}`, true, `4711`},
		{`{"jsonrpc":"2.0","id":"a-b","method":"ping"}`, true, `"a-b"`},
		{`{"jsonrpc":"2.0","id":4711,"method":"ping"}`, false, `1`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, `1`},
	} {
		got := string(Append(nil, []byte(tc.req), tc.splice))
		want := string(Head) + tc.id + string(Tail)
		if got != want {
			t.Errorf("Append(%s, %v) = %s, want %s", tc.req, tc.splice, got, want)
		}
	}
	if got := string(Append(nil, []byte(`{"id":1}`), true)); got != Line || len(Line) != 297 {
		t.Errorf("reply for id 1: %d bytes %q, want Line (297 bytes)", len(got), got)
	}
}
