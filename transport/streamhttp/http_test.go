package streamhttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/fixture"

	"github.com/klauspost/compress/zstd"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// The HTTP reliability table: RELIABILITY.md groups B and C, TRANSPORTS.md
// §4 and the EXAMPLES.md §2-§8 vectors, each case run against both front
// ends (fasthttp and the net/http adapter) with the same expectations.

func TestExampleVectorsVerbatim(t *testing.T) {
	for _, v := range []struct {
		name string
		body string
		n    int
	}{
		{"§2", fixture.Ex2Body, 354}, {"§2b", fixture.Ex2bBody, 323}, {"§2d", fixture.Ex2dBody, 296}, {"§3", fixture.Ex3Body, 357},
		{"§4", fixture.Ex4Body, 101}, {"§5", fixture.Ex5Body, 278}, {"§6", fixture.Ex6Body, 250}, {"§8", fixture.Ex8Body, 393},
	} {
		if len(v.body) != v.n {
			t.Errorf("EXAMPLES %s body is %d bytes, the vector's Content-Length is %d", v.name, len(v.body), v.n)
		}
	}
}

type httpCase struct {
	name   string
	req    request
	status int
	code   int    // JSON-RPC error code in the body; 0: the body is a result
	id     string // raw id the body must carry; "-": the body must have no id
	empty  bool   // the body must be empty
	runs   int64  // execute_sql handler runs expected
	stat   func(*Stats) *atomic.Uint64
	check  func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg)
	// parserOwn: the HTTP parser (fasthttp's and net/http's alike)
	// rejects the request itself with the same status, before the binding
	// runs: body and counters are not the binding's.
	parserOwn bool
}

func gz(t testing.TB, b []byte) string {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func zst(t testing.TB, b []byte) string {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return string(w.EncodeAll(b, nil))
}

func wantText(want string) func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
	return func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
		t.Helper()
		if got := fixture.ToolText(t, m); got != want {
			t.Errorf("tool text = %q, want %q", got, want)
		}
	}
}

// wantToolError: a tool result with isError true and this text (SEP-1303:
// arguments the schema refuses).
func wantToolError(want string) func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
	return func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
		t.Helper()
		var r struct {
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil || !r.IsError {
			t.Errorf("result %s: want isError true", m.Result)
		}
		wantText(want)(t, h, resp, m)
	}
}

func wantData(want string) func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
	return func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
		t.Helper()
		if !fixture.JsonEqual(m.Error.Data, []byte(want)) {
			t.Errorf("error.data = %s, want %s", m.Error.Data, want)
		}
	}
}

func wantAllowPost(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
	t.Helper()
	if got := resp.Header.Get("Allow"); got != "POST" {
		t.Errorf("Allow = %q, want POST", got)
	}
	noSessionEcho(t, h, resp, m)
}

// noSessionEcho: HTTP-11/12, session ids and event ids are never echoed.
func noSessionEcho(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
	t.Helper()
	for k, v := range resp.Header {
		if strings.EqualFold(k, "Mcp-Session-Id") || strings.EqualFold(k, "Last-Event-ID") {
			t.Errorf("response echoes %s: %v", k, v)
		}
		for _, s := range v {
			if strings.Contains(s, "1f3a4b5c") {
				t.Errorf("response header %s echoes the session id: %q", k, s)
			}
		}
	}
}

// paramRow is one EXAMPLES §2c row: a body argument and the header value
// a client sends for it.
type paramRow struct {
	name   string
	arg    string // JSON member(s) added to the arguments
	header string // the full Mcp-Param-* line(s); "" none
	ok     bool
}

var paramRows = []paramRow{
	{"plain", `"region":"us-west1"`, "Mcp-Param-Region: us-west1", true},
	{"inner_spaces", `"region":"us west 1"`, "Mcp-Param-Region: us west 1", true},
	{"leading_space_b64", `"region":" us-west1"`, "Mcp-Param-Region: =?base64?IHVzLXdlc3Qx?=", true},
	{"trailing_space_b64", `"region":"us-west1 "`, "Mcp-Param-Region: =?base64?dXMtd2VzdDEg?=", true},
	{"non_ascii_b64", `"region":"Hello, 世界"`, "Mcp-Param-Region: =?base64?SGVsbG8sIOS4lueVjA==?=", true},
	{"newline_b64", `"region":"line1\nline2"`, "Mcp-Param-Region: =?base64?bGluZTEKbGluZTI=?=", true},
	{"tab_b64", `"region":"a\tb"`, "Mcp-Param-Region: =?base64?YQli?=", true},
	{"sentinel_literal_b64", `"region":"=?base64?literal?="`, "Mcp-Param-Region: =?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", true},
	{"empty_value_present", `"region":""`, "Mcp-Param-Region:", true},
	{"integer_42", `"region":"us-west1","priority":42`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Priority: 42", true},
	{"integer_-7", `"region":"us-west1","priority":-7`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Priority: -7", true},
	{"PARAM-08/body_42.0_header_42", `"region":"us-west1","priority":42.0`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Priority: 42", true},
	{"boolean_true", `"region":"us-west1","dry_run":true`, "Mcp-Param-Region: us-west1\r\nMcp-Param-DryRun: true", true},
	{"boolean_false", `"region":"us-west1","dry_run":false`, "Mcp-Param-Region: us-west1\r\nMcp-Param-DryRun: false", true},
	{"uppercase_marker_is_literal", `"region":"=?BASE64?SGk=?="`, "Mcp-Param-Region: =?BASE64?SGk=?=", true},
	{"no_prefix_is_literal", `"region":"SGVsbG8="`, "Mcp-Param-Region: SGVsbG8=", true},
	{"no_suffix_is_literal", `"region":"=?base64?SGVsbG8="`, "Mcp-Param-Region: =?base64?SGVsbG8=", true},
	{"PARAM-05/null_no_header", `"region":"us-west1","priority":null`, "Mcp-Param-Region: us-west1", true},
	// rejections: 400 + -32020, the handler never runs
	{"uppercase_marker_not_decoded", `"region":"Hi"`, "Mcp-Param-Region: =?BASE64?SGk=?=", false},
	{"B64-06/bad_padding", `"region":"Hello"`, "Mcp-Param-Region: =?base64?SGVsbG8?=", false},
	{"B64-06/bad_alphabet", `"region":"Hello"`, "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=", false},
	{"integer_mismatch", `"region":"us-west1","priority":42`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Priority: 43", false},
	{"boolean_mismatch", `"region":"us-west1","dry_run":false`, "Mcp-Param-Region: us-west1\r\nMcp-Param-DryRun: true", false},
	{"PARAM-07/header_missing", `"region":"us-west1","priority":42`, "Mcp-Param-Region: us-west1", false},
	{"PARAM-14/header_without_body_value", `"region":"us-west1"`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Priority: 42", false},
	{"empty_header_vs_value", `"region":"x"`, "Mcp-Param-Region:", false},
	{"duplicate_param_header", `"region":"us-west1"`, "Mcp-Param-Region: us-west1\r\nmcp-param-region: us-west1", false},
}

func httpCases(t *testing.T) []httpCase {
	ok2 := func(r request) httpCase { // EXAMPLES §2 answer
		return httpCase{req: r, status: 200, id: "2", runs: 1, check: wantText("1 row")}
	}
	rej := func(hdr []string, body, id string, code int) httpCase {
		return httpCase{req: request{hdr: hdr, body: body}, status: 400, code: code, id: id,
			stat: func(s *Stats) *atomic.Uint64 { return &s.Rejected }}
	}
	named := func(name string, c httpCase) httpCase { c.name = name; return c }
	echo := fixture.ToolsCall("5", "echo", `{"text":"hi"}`)
	small := []byte(fixture.Ex2Body)
	bomb := make([]byte, 16<<20) // 16 MiB of zeros: about 16 KiB gzipped

	cases := []httpCase{
		named("EX2/tools_call_json", httpCase{req: request{hdr: ex2Hdr(), body: fixture.Ex2Body}, status: 200, id: "2", runs: 1,
			check: func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
				wantText("1 row")(t, h, resp, m)
				var r struct {
					ResultType string                     `json:"resultType"`
					Meta       map[string]json.RawMessage `json:"_meta"`
				}
				_ = json.Unmarshal(m.Result, &r)
				if r.ResultType != "complete" || !fixture.JsonEqual(r.Meta["io.modelcontextprotocol/serverInfo"], []byte(`{"name":"ExampleServer","version":"1.0.0"}`)) {
					t.Errorf("result = %s", m.Result)
				}
			}}),
		named("EX2b/base64_zurich_omitted_params", httpCase{
			req:    request{hdr: mcpHdr("tools/call", "Mcp-Name: execute_sql", "Mcp-Param-Region: =?base64?WsO8cmljaA==?="), body: fixture.Ex2bBody},
			status: 200, id: "4", runs: 1, check: wantText("1 row")}),
		named("EX2d/resources_read_name_is_uri", httpCase{
			req:    request{hdr: mcpHdr("resources/read", "Mcp-Name: file:///projects/app/config.json"), body: fixture.Ex2dBody},
			status: 200, id: "30",
			check: func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
				if !strings.Contains(string(m.Result), `"uri":"file:///projects/app/config.json"`) {
					t.Errorf("result = %s", m.Result)
				}
			}}),
		named("EX2d/HDR-04/name_not_the_uri", rej(mcpHdr("resources/read", "Mcp-Name: config"), fixture.Ex2dBody, "30", -32020)),
		named("EX4/B16/notification_202", httpCase{req: request{hdr: mcpHdr("notifications/cancelled"), body: fixture.Ex4Body}, status: 202, empty: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.Notifications }}),
		named("B16/notification_without_mcp_headers_or_meta", httpCase{
			req:    request{hdr: baseHdr, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`},
			status: 202, empty: true, stat: func(s *Stats) *atomic.Uint64 { return &s.Notifications }}),
		named("B16/string_request_id_notification", httpCase{
			req:    request{hdr: baseHdr, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc","reason":"AbortError"}}`},
			status: 202, empty: true}),
		named("EX5/name_mismatch", rej(mcpHdr("tools/call", "Mcp-Name: foo"), fixture.Ex5Body, "6", -32020)),
		named("EX5b/version_header_differs_from_body", rej(mcpHdr("tools/list"), fixture.Ex5bBody, "7", -32020)),
		named("EX6/B13/unsupported_version", func() httpCase {
			c := rej(setHdr(mcpHdr("tools/list"), "MCP-Protocol-Version", "MCP-Protocol-Version: 2099-01-01"), fixture.Ex6Body, "8", -32022)
			c.check = wantData(`{"supported":["2026-07-28"],"requested":"2099-01-01"}`)
			return c
		}()),
		named("EX7/HDR-08/ping_is_removed", httpCase{req: request{hdr: mcpHdr("ping"), body: fixture.Ex7Ping}, status: 404, code: -32601, id: "9"}),
		named("EX7/META-03/missing_meta", httpCase{req: request{hdr: mcpHdr("tools/list"), body: fixture.Ex7NoMeta}, status: 400, code: -32602, id: "10"}),
		named("EX7/META-08/missing_capability", func() httpCase {
			c := rej(mcpHdr("tools/call", "Mcp-Name: ask_user"), fixture.Ex7Caps, "11", -32021)
			c.check = wantData(`{"requiredCapabilities":{"elicitation":{}}}`)
			return c
		}()),
		named("EX7/DISC-05/legacy_initialize", func() httpCase {
			c := rej(baseHdr, fixture.Ex7Legacy, "0", -32022)
			c.check = wantData(`{"supported":["2026-07-28"],"requested":"2025-11-25"}`)
			return c
		}()),
		named("EX7/B14/GET_405", httpCase{req: request{method: "GET", hdr: []string{"Accept: text/event-stream", "Mcp-Session-Id: 1f3a4b5c"}},
			status: 405, empty: true, check: wantAllowPost, stat: func(s *Stats) *atomic.Uint64 { return &s.MethodNotAllowed }}),
		named("B14/DELETE_405", httpCase{req: request{method: "DELETE", hdr: []string{"Mcp-Session-Id: 1f3a4b5c"}},
			status: 405, empty: true, check: wantAllowPost}),
		named("B14/GET_last_event_id_405", httpCase{req: request{method: "GET", hdr: []string{"Accept: text/event-stream", "Last-Event-ID: 1f3a4b5c"}},
			status: 405, empty: true, check: wantAllowPost}),
		named("B14/HTTP-11/HTTP-12/session_and_event_ids_ignored_on_POST", func() httpCase {
			c := ok2(request{hdr: ex2Hdr("Mcp-Session-Id: 1f3a4b5c", "Last-Event-ID: 1f3a4b5c"), body: fixture.Ex2Body})
			c.check = func(t *testing.T, h *harness, resp *http.Response, m *fixture.RpcMsg) {
				wantText("1 row")(t, h, resp, m)
				noSessionEcho(t, h, resp, m)
			}
			return c
		}()),
		named("EX7/B6/origin_evil_example_com", httpCase{req: request{hdr: ex2Hdr("Origin: http://evil.example.com"), body: fixture.Ex2Body},
			status: 403, empty: true, stat: func(s *Stats) *atomic.Uint64 { return &s.BadOrigin }}),
		named("B6/origin_evil_example", httpCase{req: request{hdr: ex2Hdr("Origin: http://evil.example"), body: fixture.Ex2Body}, status: 403, empty: true}),
		named("B6/origin_other_loopback_port", httpCase{req: request{hdr: ex2Hdr("Origin: http://127.0.0.1:1"), body: fixture.Ex2Body}, status: 403, empty: true}),
		named("B7/host_attacker", httpCase{req: request{host: "attacker.example", hdr: ex2Hdr(), body: fixture.Ex2Body}, status: 403, empty: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadHost }}),
		named("B7/host_attacker_with_port", httpCase{req: request{host: "attacker.example:{port}", hdr: ex2Hdr(), body: fixture.Ex2Body}, status: 403, empty: true}),
		named("B7/origin_null", httpCase{req: request{hdr: ex2Hdr("Origin: null"), body: fixture.Ex2Body}, status: 403, empty: true}),
		named("B8/no_origin_allowed", ok2(request{hdr: ex2Hdr(), body: fixture.Ex2Body})),
		named("SEC-02/own_origin_allowed", ok2(request{hdr: ex2Hdr("Origin: http://127.0.0.1:{port}"), body: fixture.Ex2Body})),
		named("SEC-02/own_localhost_origin_allowed", ok2(request{hdr: ex2Hdr("Origin: http://LOCALHOST:{port}/"), body: fixture.Ex2Body})),
		named("SEC-03/host_localhost_allowed", ok2(request{host: "localhost:{port}", hdr: ex2Hdr(), body: fixture.Ex2Body})),
		named("B9/x_forwarded_host_localhost_ignored", httpCase{
			req:    request{host: "attacker.example", hdr: ex2Hdr("X-Forwarded-Host: localhost", "X-Forwarded-For: 127.0.0.1"), body: fixture.Ex2Body},
			status: 403, empty: true}),
		named("B9/x_forwarded_host_attacker_ignored", ok2(request{hdr: ex2Hdr("X-Forwarded-Host: attacker.example"), body: fixture.Ex2Body})),
		named("B10/no_mcp_method", rej(setHdr(ex2Hdr(), "Mcp-Method", ""), fixture.Ex2Body, "2", -32020)),
		named("B11/method_mismatch", rej(setHdr(ex2Hdr(), "Mcp-Method", "Mcp-Method: tools/list"), fixture.Ex2Body, "2", -32020)),
		named("B11/name_mismatch", rej(setHdr(ex2Hdr(), "Mcp-Name", "Mcp-Name: drop_tables"), fixture.Ex2Body, "2", -32020)),
		named("B11/param_bad_base64", rej(setHdr(ex2Hdr(), "Mcp-Param-Region", "Mcp-Param-Region: =?base64?SGVsbG8?="), fixture.Ex2Body, "2", -32020)),
		named("B11/param_value_mismatch", rej(setHdr(ex2Hdr(), "Mcp-Param-Region", "Mcp-Param-Region: eu-west1"), fixture.Ex2Body, "2", -32020)),
		// PARAM-09: both HTTP parsers refuse a control character in a
		// field value themselves (400) before the binding sees it.
		named("B11/param_control_character", func() httpCase {
			c := rej(setHdr(ex2Hdr(), "Mcp-Param-Region", "Mcp-Param-Region: us-\x01west1"), fixture.Ex2Body, "2", -32020)
			c.parserOwn = true
			return c
		}()),
		named("B12/two_mcp_method_lines", rej(ex2Hdr("Mcp-Method: tools/list"), fixture.Ex2Body, "2", -32020)),
		named("B12/two_mcp_method_lines_same_value", rej(ex2Hdr("mcp-method: tools/call"), fixture.Ex2Body, "2", -32020)),
		named("B12/two_mcp_name_lines", rej(ex2Hdr("Mcp-Name: other"), fixture.Ex2Body, "2", -32020)),
		named("B12/two_protocol_version_lines", rej(ex2Hdr("MCP-Protocol-Version: 2099-01-01"), fixture.Ex2Body, "2", -32020)),
		named("HDR-01/missing_protocol_version_header", rej(setHdr(ex2Hdr(), "MCP-Protocol-Version", ""), fixture.Ex2Body, "2", -32020)),
		named("HDR-04/missing_mcp_name", rej(setHdr(ex2Hdr(), "Mcp-Name", ""), fixture.Ex2Body, "2", -32020)),
		named("HDR-06/method_value_is_case_sensitive", rej(setHdr(ex2Hdr(), "Mcp-Method", "Mcp-Method: TOOLS/CALL"), fixture.Ex2Body, "2", -32020)),
		named("HDR-06/name_value_is_case_sensitive", rej(setHdr(ex2Hdr(), "Mcp-Name", "Mcp-Name: EXECUTE_SQL"), fixture.Ex2Body, "2", -32020)),
		named("HDR-06/HDR-07/lowercase_names_and_ows", httpCase{
			req: request{hdr: []string{"content-type: application/json", "accept: application/json, text/event-stream",
				"mcp-protocol-version: 2026-07-28", "mcp-method:\ttools/call ", "mcp-name:  echo "}, body: echo},
			status: 200, id: "5", check: wantText("hi")}),
		named("HDR-06/uppercase_names", ok2(request{hdr: []string{"CONTENT-TYPE: application/json", "ACCEPT: application/json, text/event-stream",
			"MCP-PROTOCOL-VERSION: 2026-07-28", "MCP-METHOD: tools/call", "MCP-NAME: execute_sql",
			"MCP-PARAM-REGION: us-west1", "mcp-param-priority: 42", "Mcp-Param-Dryrun: false"}, body: fixture.Ex2Body})),
		named("B15/content_type_text_plain_415", httpCase{req: request{hdr: setHdr(ex2Hdr(), "Content-Type", "Content-Type: text/plain"), body: fixture.Ex2Body},
			status: 415, code: -32600, id: "-", stat: func(s *Stats) *atomic.Uint64 { return &s.BadContentType }}),
		named("B15/content_type_missing_415", httpCase{req: request{hdr: setHdr(ex2Hdr(), "Content-Type", ""), body: fixture.Ex2Body},
			status: 415, code: -32600, id: "-"}),
		named("B15/accept_json_only_406", httpCase{req: request{hdr: setHdr(ex2Hdr(), "Accept", "Accept: application/json"), body: fixture.Ex2Body},
			status: 406, code: -32600, id: "-", stat: func(s *Stats) *atomic.Uint64 { return &s.NotAcceptable }}),
		named("B15/accept_missing_406", httpCase{req: request{hdr: setHdr(ex2Hdr(), "Accept", ""), body: fixture.Ex2Body}, status: 406, code: -32600, id: "-"}),
		named("B15/415_checked_before_406", httpCase{req: request{hdr: setHdr(setHdr(ex2Hdr(), "Accept", "Accept: text/html"), "Content-Type", "Content-Type: text/plain"), body: fixture.Ex2Body},
			status: 415, code: -32600, id: "-"}),
		named("HTTP-09/content_type_with_charset", ok2(request{hdr: setHdr(ex2Hdr(), "Content-Type", "Content-Type: application/json; charset=utf-8"), body: fixture.Ex2Body})),
		named("HTTP-03/accept_wildcard", ok2(request{hdr: setHdr(ex2Hdr(), "Accept", "Accept: */*"), body: fixture.Ex2Body})),
		named("HTTP-03/accept_two_lines", ok2(request{hdr: append(setHdr(ex2Hdr(), "Accept", "Accept: application/json"), "Accept: text/event-stream"), body: fixture.Ex2Body})),
		named("B17/gzip_small_accepted", ok2(request{hdr: ex2Hdr("Content-Encoding: gzip"), body: gz(t, small)})),
		named("B17/zstd_small_accepted", ok2(request{hdr: ex2Hdr("Content-Encoding: zstd"), body: zst(t, small)})),
		named("B17/gzip_bomb_413", httpCase{req: request{hdr: ex2Hdr("Content-Encoding: gzip"), body: gz(t, bomb)}, status: 413,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BodyTooLarge }}),
		named("B17/unknown_encoding_415", httpCase{req: request{hdr: ex2Hdr("Content-Encoding: br"), body: fixture.Ex2Body}, status: 415,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadEncoding }}),
		named("B17/corrupt_gzip_400", httpCase{req: request{hdr: ex2Hdr("Content-Encoding: gzip"), body: "\x1f\x8b\x08\x00garbage"}, status: 400}),
		named("HTTP-01/unknown_path_404", httpCase{req: request{path: "/other", hdr: ex2Hdr(), body: fixture.Ex2Body}, status: 404,
			stat: func(s *Stats) *atomic.Uint64 { return &s.NotFound }}),
		named("HTTP-01/path_prefix_404", httpCase{req: request{path: "/mcp/x", hdr: ex2Hdr(), body: fixture.Ex2Body}, status: 404}),
		named("GEN/parse_error_no_id", httpCase{req: request{hdr: ex2Hdr(), body: `{"jsonrpc":"2.0","id":2,`}, status: 400, code: -32700, id: "-",
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadMessage }}),
		named("HTTP-05/posted_response_rejected", httpCase{req: request{hdr: baseHdr, body: `{"jsonrpc":"2.0","id":1,"result":{}}`}, status: 400, code: -32600}),
		named("GEN/batch_rejected", httpCase{req: request{hdr: ex2Hdr(), body: "[" + fixture.Ex2Body + "]"}, status: 400, code: -32600}),
	}
	// SEP-1303 (TRANSPORTS.md §1.4): arguments that fail the inputSchema
	// are the tool's error — HTTP 200, a result with isError true naming
	// each failing path — and the handler never runs; arguments that are
	// not an object stay -32602, in-band.
	sqlHdr := mcpHdr("tools/call", "Mcp-Name: execute_sql", "Mcp-Param-Region: us-west1")
	cases = append(cases,
		named("SEP-1303/schema_failure_is_tool_error", httpCase{req: request{hdr: sqlHdr,
			body: fixture.ToolsCall("13", "execute_sql", `{"region":"us-west1"}`)}, status: 200, id: "13",
			check: wantToolError("Invalid arguments: arguments.query: required")}),
		named("SEP-1303/schema_type_is_tool_error", httpCase{req: request{hdr: sqlHdr,
			body: fixture.ToolsCall("15", "execute_sql", `{"region":"us-west1","query":["SELECT 1"]}`)}, status: 200, id: "15",
			check: wantToolError("Invalid arguments: arguments.query: expected string, got array")}),
		named("SEP-1303/arguments_not_object", httpCase{req: request{hdr: mcpHdr("tools/call", "Mcp-Name: echo"),
			body: fixture.ToolsCall("14", "echo", `["hi"]`)}, status: 200, code: -32602, id: "14"}),
	)
	for _, r := range paramRows {
		args := "{" + r.arg + `,"query":"SELECT 1"}`
		hdr := mcpHdr("tools/call", "Mcp-Name: execute_sql")
		if r.header != "" {
			hdr = append(hdr, strings.Split(r.header, "\r\n")...)
		}
		body := fixture.ToolsCall("12", "execute_sql", args)
		if r.name == "PARAM-05/null_no_header" {
			// The header rules take it (no -32020: null means no header);
			// then execute_sql's inputSchema refuses null for the integer
			// priority before the handler runs: the tool's error result,
			// HTTP 200 (SEP-1303, TRANSPORTS.md §1.4).
			cases = append(cases, httpCase{name: "EX2c/" + r.name, req: request{hdr: hdr, body: body}, status: 200, id: "12",
				check: wantToolError("Invalid arguments: arguments.priority: expected integer, got null")})
			continue
		}
		if r.ok {
			cases = append(cases, httpCase{name: "EX2c/" + r.name, req: request{hdr: hdr, body: body}, status: 200, id: "12", runs: 1, check: wantText("1 row")})
		} else {
			cases = append(cases, named("EX2c/"+r.name, rej(hdr, body, "12", -32020)))
		}
	}
	return cases
}

func TestHTTPTable(t *testing.T) {
	cases := httpCases(t)
	for _, fe := range frontEnds {
		t.Run(string(fe), func(t *testing.T) {
			for i, tc := range cases {
				t.Run(fmt.Sprintf("%02d_%s", i, tc.name), func(t *testing.T) {
					leakCheck(t)
					h := startHarness(t, fe, Config{}, defaultOptions())
					runCase(t, h, tc)
				})
			}
		})
	}
}

func runCase(t *testing.T, h *harness, tc httpCase) {
	t.Helper()
	if tc.parserOwn {
		tc.stat, tc.code, tc.id, tc.check = nil, 0, "", nil
	}
	var before uint64
	if tc.stat != nil {
		before = tc.stat(h.srv.Stats()).Load()
	}
	resp, body := h.do(t, tc.req)
	if resp.StatusCode != tc.status {
		t.Fatalf("status = %d, want %d; body %q", resp.StatusCode, tc.status, fixture.Trunc(body))
	}
	if got := h.fx.SQLRuns.Load(); got != tc.runs {
		t.Errorf("execute_sql ran %d times, want %d", got, tc.runs)
	}
	if tc.stat != nil {
		if d := tc.stat(h.srv.Stats()).Load() - before; d != 1 {
			t.Errorf("counter went up by %d, want 1", d)
		}
	}
	var m *fixture.RpcMsg
	switch {
	case tc.empty:
		if len(body) != 0 {
			t.Errorf("body = %q, want empty", fixture.Trunc(body))
		}
	case len(body) > 0 && (tc.status == 200 || tc.code != 0):
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		m = fixture.DecodeMsg(t, body)
		switch {
		case tc.code != 0 && m.Error == nil:
			t.Fatalf("body = %s, want error %d", fixture.Trunc(body), tc.code)
		case tc.code != 0 && m.Error.Code != tc.code:
			t.Fatalf("error code = %d, want %d (%s)", m.Error.Code, tc.code, m.Error.Message)
		case tc.code == 0 && m.Error != nil:
			t.Fatalf("unexpected error %d %s", m.Error.Code, m.Error.Message)
		}
		switch tc.id {
		case "":
		case "-":
			if m.HasID {
				t.Errorf("body carries id %s, want none", m.ID)
			}
		default:
			if string(m.ID) != tc.id {
				t.Errorf("id = %s, want %s (HVAL-03)", m.ID, tc.id)
			}
		}
	case tc.code != 0:
		t.Fatalf("empty body, want error %d", tc.code)
	}
	if tc.check != nil {
		tc.check(t, h, resp, m)
	}
}

// framingCase is a B1-B5 case: malformed or oversized framing.
type framingCase struct {
	name string
	raw  func(h *harness) []byte
	// status is what both front ends must answer; netStatus, when set,
	// is what net/http answers by itself, before calling the adapter
	// (the adapter cannot change it).
	status    []int
	netStatus []int
	closed    bool          // the connection must be closed after the response
	within    time.Duration // the response must come within this (default 10 s)
	stat      func(*Stats) *atomic.Uint64
	netOwn    bool // net/http answers this itself: no adapter counter
}

func bigBody(n int) string {
	// A tools/call echo whose body is exactly n bytes.
	head := `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	tail := `"},` + fixture.ExMeta + `}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

var echoHdr = mcpHdr("tools/call", "Mcp-Name: echo")

// hdrLines is an echo POST's request line and headers, without the framing
// headers or the blank line.
func hdrLines(h *harness) string {
	var b strings.Builder
	b.WriteString("POST /mcp HTTP/1.1\r\nHost: " + h.addr + "\r\n")
	for _, l := range echoHdr {
		b.WriteString(l + "\r\n")
	}
	return b.String()
}

func framingCases() []framingCase {
	const limit = DefaultMaxBodyBytes
	small := fixture.ToolsCall("21", "echo", `{"text":"x"}`)
	return []framingCase{
		{name: "B1/at_limit_accepted", status: []int{200},
			raw: func(h *harness) []byte { return h.raw(request{hdr: echoHdr, body: bigBody(limit)}) }},
		{name: "B1/content_length_over_limit_413", status: []int{413}, closed: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BodyTooLarge },
			raw:  func(h *harness) []byte { return h.raw(request{hdr: echoHdr, body: bigBody(limit + 1)}) }},
		{name: "B2/chunked_over_limit_413", status: []int{413}, closed: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BodyTooLarge },
			raw:  func(h *harness) []byte { return h.raw(request{hdr: echoHdr, body: bigBody(limit + 1), chunked: true}) }},
		{name: "B2/chunked_at_limit_accepted", status: []int{200},
			raw: func(h *harness) []byte { return h.raw(request{hdr: echoHdr, body: bigBody(limit), chunked: true}) }},
		// The client sends a tiny body and then waits: the 413 must not
		// wait for (or allocate) the declared 4 GiB.
		{name: "B3/content_length_4GiB_tiny_body_413", status: []int{413}, closed: true, within: 2 * time.Second,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BodyTooLarge },
			raw: func(h *harness) []byte {
				return []byte(hdrLines(h) + "Content-Length: 4294967296\r\n\r\n{}")
			}},
		// net/http answers 431 itself (the harness gives its http.Server
		// Config.MaxHeaderBytes, an http.Handler cannot see the raw block).
		{name: "B4/64KiB_of_headers_431", status: []int{431}, closed: true, netOwn: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.HeadersTooLarge },
			raw: func(h *harness) []byte {
				var b strings.Builder
				b.WriteString(hdrLines(h))
				for i := 0; i < 64; i++ {
					fmt.Fprintf(&b, "Mcp-Param-Pad%02d: %s\r\n", i, strings.Repeat("p", 1<<10))
				}
				fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(small), small)
				return []byte(b.String())
			}},
		// B5: 400 and close, never a smuggled second request. The
		// trailing request after the body would be served on a kept-alive
		// connection. net/http strips Content-Length when chunked is
		// present, before the adapter runs; NetListener reads the header
		// block as it arrives so the adapter answers 400 all the same
		// (TestB5PlainAdapterCloses covers the adapter without it).
		{name: "B5/content_length_and_chunked_400", status: []int{400}, closed: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadFraming },
			raw: func(h *harness) []byte {
				return []byte(hdrLines(h) + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", 5, len(small), small) +
					string(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body})))
			}},
		{name: "B5/two_different_content_lengths_400", status: []int{400}, closed: true, netOwn: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadFraming },
			raw: func(h *harness) []byte {
				return []byte(hdrLines(h) + fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s", len(small), len(small)+1, small) +
					string(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body})))
			}},
		// net/http answers 501 (RFC 9112 §6.1 SHOULD) before the adapter
		// runs: the common outcome asserted is "rejected and closed".
		{name: "B5/transfer_encoding_gzip_chunked_400", status: []int{400}, netStatus: []int{400, 501}, closed: true, netOwn: true,
			stat: func(s *Stats) *atomic.Uint64 { return &s.BadFraming },
			raw: func(h *harness) []byte {
				return []byte(hdrLines(h) + fmt.Sprintf("Transfer-Encoding: gzip, chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(small), small) +
					string(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body})))
			}},
	}
}

func TestHTTPFramingTable(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(string(fe), func(t *testing.T) {
			for i, tc := range framingCases() {
				t.Run(fmt.Sprintf("%02d_%s", i, tc.name), func(t *testing.T) {
					leakCheck(t)
					h := startHarness(t, fe, Config{}, defaultOptions())
					var before uint64
					if tc.stat != nil {
						before = tc.stat(h.srv.Stats()).Load()
					}
					c := h.dial(t)
					start := time.Now()
					c.write(tc.raw(h))
					within := tc.within
					if within == 0 {
						within = 10 * time.Second
					}
					resp, err := c.readResponse(within)
					if err != nil {
						t.Fatalf("no response within %v: %v", within, err)
					}
					body := c.readAll(resp)
					took := time.Since(start)
					want := tc.status
					if fe == netFE && tc.netStatus != nil {
						want = tc.netStatus
					}
					okStatus := false
					for _, s := range want {
						okStatus = okStatus || resp.StatusCode == s
					}
					if !okStatus {
						t.Fatalf("status = %d, want %v (after %v); body %q", resp.StatusCode, want, took, fixture.Trunc(body))
					}
					if tc.closed && !c.closedByServer(2*time.Second) {
						t.Errorf("connection still open after %d", resp.StatusCode)
					}
					if tc.stat != nil && !(fe == netFE && tc.netOwn) {
						if d := tc.stat(h.srv.Stats()).Load() - before; d != 1 {
							t.Errorf("counter went up by %d, want 1", d)
						}
					}
					// The only execute_sql request is the one appended
					// after the body: it must never be served.
					if n := h.fx.SQLRuns.Load(); n != 0 {
						t.Errorf("a smuggled request reached the handler (%d runs)", n)
					}
				})
			}
		})
	}
}

// TestEX3ProgressSSE: EXAMPLES §3, a tools/call with a progressToken is
// answered with a request-scoped SSE stream (SSE-01..07, PROG-03, C17).
func TestEX3ProgressSSE(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: execute_sql", "Mcp-Param-Region: us-west1"), body: fixture.Ex3Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		s := readSSE(t, c, resp)
		var last float64
		var final *fixture.RpcMsg
		n := 0
		for {
			it := s.next(5 * time.Second)
			if it.err != nil {
				if final == nil {
					t.Fatalf("stream ended without the final response: %v", it.err)
				}
				break
			}
			if it.comment {
				continue
			}
			if final != nil {
				t.Fatalf("event after the final response: %q", it.lines)
			}
			for _, l := range it.lines {
				if !strings.HasPrefix(l, "data: ") {
					t.Errorf("non-data line %q (SSE-06: no id:, no retry:; data-only events)", l)
				}
			}
			m := fixture.DecodeMsg(t, []byte(it.data))
			switch {
			case m.Method == "notifications/progress":
				var p struct {
					ProgressToken json.RawMessage `json:"progressToken"`
					Progress      float64         `json:"progress"`
				}
				_ = json.Unmarshal(m.Params, &p)
				if string(p.ProgressToken) != `"tok-3"` {
					t.Errorf("progressToken = %s", p.ProgressToken)
				}
				if p.Progress <= last {
					t.Errorf("progress %v after %v: not strictly increasing", p.Progress, last)
				}
				last = p.Progress
				n++
			case m.HasID:
				final = m
				if string(m.ID) != "3" || fixture.ToolText(t, m) != "1000 rows" {
					t.Errorf("final = id %s %s", m.ID, m.Result)
				}
			default:
				t.Errorf("unexpected message %s", it.data)
			}
		}
		if n != 2 || last != 0.75 {
			t.Errorf("got %d progress notifications ending at %v, want 0.25 then 0.75", n, last)
		}
	})
}

// checkSSEHead: SSE-04, C4, C17.
// TestInlineWithProgressToken: an Inline handler runs where the request
// was read even when the request carries a progressToken (issue 8). If it
// reports no progress the answer is one JSON body, as without the token
// (no stream, no hand-off); if it does, the answer is an SSE stream with
// the progress first and the result last (PROG-07, ERR-04).
func TestInlineWithProgressToken(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		resp, body := h.do(t, request{hdr: mcpHdr("tools/call", "Mcp-Name: quick"), body: fixture.ToolsCallProgress("1", "quick", `{"steps":0}`, `"p1"`)})
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("no progress: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if m := fixture.DecodeMsg(t, body); !strings.Contains(string(m.Result), "quick done") {
			t.Fatalf("result: %s", body)
		}
		if n := h.srv.Stats().Streams.Load(); n != 0 {
			t.Fatalf("Streams = %d for a request that reported nothing", n)
		}
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: quick"), body: fixture.ToolsCallProgress("2", "quick", `{"steps":2}`, `"p2"`)}))
		resp2, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp2)
		kinds := eventKinds(t, readSSE(t, c, resp2), func(m *fixture.RpcMsg) bool { return string(m.ID) == "2" })
		if strings.Join(kinds, ",") != "progress,result" && strings.Join(kinds, ",") != "progress,progress,result" {
			t.Fatalf("events: %v", kinds)
		}
	})
}

// eventKinds reads a stream's events until it ends: "progress" for each
// progress notification, "result" for each message isResult accepts.
func eventKinds(t *testing.T, s *sse, isResult func(*fixture.RpcMsg) bool) []string {
	t.Helper()
	var kinds []string
	for {
		it := s.nextEvent(5 * time.Second)
		if it.err != nil {
			return kinds
		}
		m := fixture.DecodeMsg(t, []byte(it.data))
		switch {
		case m.Method == "notifications/progress":
			kinds = append(kinds, "progress")
		case isResult(m):
			kinds = append(kinds, "result")
		}
	}
}

// TestInlineQuietExchange: an Inline run on the fasthttp front end
// answers through an exchange that takes no lock in Reply and Done
// (exchange.quiet). Under -race it holds that to the two cases where
// another goroutine touches the exchange meanwhile: progress sent from a
// goroutine the handler waits for (the answer is then a stream, progress
// first), and notifications past MaxPendingBytes, which leave a
// slow-consumer goroutine cancelling the call while the handler returns
// (nothing is answered then: the client is taken as gone, SSE-10, C5).
// Each request's exchange goes back to the pool and serves the next.
func TestInlineQuietExchange(t *testing.T) {
	opt := defaultOptions()
	opt.ProgressInterval = -1 // every progress is an event
	h := startHarness(t, fastFE, Config{MaxPendingBytes: 4 << 10}, opt)
	if err := h.eng.AddTool(engine.Tool{Name: "aside", Inline: true, Handler: func(c *engine.Call) error {
		done := make(chan struct{})
		go func() { c.Progress(1, 2, "aside"); close(done) }()
		<-done
		c.Text("aside done")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.AddTool(engine.Tool{Name: "burst", Inline: true, Handler: func(c *engine.Call) error {
		for i := range 200 {
			c.Progress(float64(i+1), 0, strings.Repeat("x", 64))
		}
		c.Text("burst done")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c := h.dial(t)
		id := strconv.Itoa(10 + i)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: aside"), body: fixture.ToolsCallProgress(id, "aside", `{}`, `"a"`)}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		kinds := eventKinds(t, readSSE(t, c, resp), func(m *fixture.RpcMsg) bool {
			return string(m.ID) == id && strings.Contains(string(m.Result), "aside done")
		})
		if got := strings.Join(kinds, ","); got != "progress,result" {
			t.Fatalf("round %d: events %q, want progress,result", i, got)
		}

		c2 := h.dial(t)
		c2.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: burst"), body: fixture.ToolsCallProgress("20", "burst", `{}`, `"b"`)}))
		if !c2.closedByServer(5 * time.Second) {
			t.Fatalf("round %d: the connection of a request cut off as a slow consumer is still open", i)
		}
		if got := h.srv.Stats().SlowConsumers.Load(); got != uint64(i+1) {
			t.Fatalf("round %d: SlowConsumers = %d, want %d", i, got, i+1)
		}
		if resp, body := h.do(t, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
			t.Fatalf("round %d: a plain request after: %d %s", i, resp.StatusCode, body)
		}
	}
}

// TestRepliesOnOneConnection: replies of very different lengths, one
// after the other on one keep-alive connection, each arrive whole and
// alone: each request's pooled exchange, and on fasthttp the connection's
// response, start from buffers an earlier, longer reply filled.
func TestRepliesOnOneConnection(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		for i, n := range []int{3000, 1, 700, 0, 40, 3000, 2} {
			text := strings.Repeat(string(rune('a'+i)), n)
			resp, body := c.roundTrip(h, request{hdr: echoHdr, body: fixture.ToolsCall(strconv.Itoa(i), "echo", `{"text":"`+text+`"}`)})
			if resp.StatusCode != 200 {
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
			}
			m := fixture.DecodeMsg(t, body)
			var res struct {
				Content []struct{ Text string } `json:"content"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != text || string(m.ID) != strconv.Itoa(i) {
				t.Fatalf("request %d (%d bytes of text): reply %s", i, n, body)
			}
		}
	})
}

func checkSSEHead(t *testing.T, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != 200 {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	if v := resp.Header.Get("Cache-Control"); v != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", v)
	}
	if v := resp.Header.Get("X-Accel-Buffering"); v != "no" {
		t.Errorf("X-Accel-Buffering = %q, want no", v)
	}
	if _, ok := resp.Header["Content-Length"]; ok || resp.ContentLength != -1 {
		t.Errorf("SSE response has Content-Length %q (C17)", resp.Header.Get("Content-Length"))
	}
	if v := resp.Header.Get("Content-Encoding"); v != "" {
		t.Errorf("SSE response is compressed: Content-Encoding %q", v)
	}
	noSessionEcho(t, nil, resp, nil)
}

// TestEX8ListenStream: EXAMPLES §8, subscriptions/listen over SSE: the ack
// first, list_changed after AddTool, resources/updated, then Shutdown
// completes the stream with the final result (SUB-10, C14).
func TestEX8ListenStream(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("subscriptions/listen"), body: fixture.Ex8Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		s := readSSE(t, c, resp)
		expect := func(want string) {
			t.Helper()
			it := s.nextEvent(5 * time.Second)
			if it.err != nil {
				t.Fatalf("stream ended: %v", it.err)
			}
			if !fixture.JsonEqual([]byte(it.data), []byte(want)) {
				t.Fatalf("event = %s\nwant    %s", it.data, want)
			}
		}
		expect(fixture.Ex8Ack)
		if err := h.eng.AddTool(engine.Tool{Name: "late_tool", Handler: func(c *engine.Call) error { c.Text("x"); return nil }}); err != nil {
			t.Fatal(err)
		}
		expect(fixture.Ex8List)
		h.eng.ResourceUpdated("file:///project/config.json")
		expect(fixture.Ex8Upd)
		start := time.Now()
		if err := h.shutdown(5 * time.Second); err != nil {
			t.Errorf("Shutdown = %v, want nil (the listen stream completes)", err)
		}
		expect(fixture.Ex8Done)
		if it := s.nextEvent(5 * time.Second); it.err == nil {
			t.Errorf("event after the final result: %s", it.data)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Shutdown took %v", d)
		}
	})
}

// TestAuth: SEC-04, the Authenticator's verdicts.
func TestAuth(t *testing.T) {
	const meta = "https://as.example/.well-known/oauth-protected-resource"
	auth := func(ctx context.Context, token string) (any, error) {
		switch token {
		case "good":
			return "alice", nil
		case "limited":
			return nil, &ErrInsufficientScope{Scope: "tools:call"}
		}
		return nil, ErrUnauthorized
	}
	whoami := fixture.ToolsCall("40", "whoami", `{}`)
	hdr := func(tok string) []string {
		h := mcpHdr("tools/call", "Mcp-Name: whoami")
		if tok != "" {
			h = append(h, "Authorization: Bearer "+tok)
		}
		return h
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Authenticate: auth, ResourceMetadata: meta}, defaultOptions())
		for _, tc := range []struct {
			name, tok string
			status    int
			www       []string
		}{
			{"no_token_401", "", 401, []string{"Bearer", `resource_metadata="` + meta + `"`}},
			{"bad_token_401", "forged", 401, []string{"Bearer", `resource_metadata="` + meta + `"`}},
			{"insufficient_scope_403", "limited", 403, []string{`error="insufficient_scope"`, `scope="tools:call"`, `resource_metadata="` + meta + `"`}},
			{"principal_reaches_handler", "good", 200, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := h.do(t, request{hdr: hdr(tc.tok), body: whoami})
				if resp.StatusCode != tc.status {
					t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
				}
				w := resp.Header.Get("WWW-Authenticate")
				for _, s := range tc.www {
					if !strings.Contains(w, s) {
						t.Errorf("WWW-Authenticate = %q, want it to contain %q", w, s)
					}
				}
				if tc.status == 200 {
					if got := fixture.ToolText(t, fixture.DecodeMsg(t, body)); got != "alice" {
						t.Errorf("Principal() = %q, want alice", got)
					}
				}
			})
		}
		// Origin is checked before authentication (HVAL-02 step 1).
		resp, _ := h.do(t, request{hdr: append(hdr("good"), "Origin: http://evil.example"), body: whoami})
		if resp.StatusCode != 403 {
			t.Errorf("bad Origin with a good token: %d, want 403", resp.StatusCode)
		}
	})
}

// TestC1Slowloris: headers trickled byte by byte are cut at ReadTimeout,
// and do not stop other clients.
func TestC1Slowloris(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{ReadTimeout: readTimeout}, defaultOptions())
		const n = 8
		type result struct {
			closedAfter time.Duration
			err         error
		}
		results := make(chan result, n)
		head := h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		for i := 0; i < n; i++ {
			c := h.dial(t)
			go func() {
				start := time.Now()
				for j := 0; j < len(head); j++ {
					_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
					if _, err := c.conn.Write(head[j : j+1]); err != nil {
						break // the server closed the connection
					}
					if time.Since(start) > 5*time.Second {
						results <- result{err: errors.New("still writing after 5 s")}
						return
					}
					time.Sleep(25 * time.Millisecond)
				}
				// Wait for the close (a 408 may come first).
				_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 512)
				for {
					if _, err := c.conn.Read(buf); err != nil {
						var ne net.Error
						if errors.As(err, &ne) && ne.Timeout() {
							results <- result{err: errors.New("connection not closed within 5 s")}
							return
						}
						break
					}
				}
				results <- result{closedAfter: time.Since(start)}
			}()
		}
		// Normal requests are served meanwhile.
		resp, _ := h.do(t, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		if resp.StatusCode != 200 {
			t.Errorf("normal request during slowloris: %d", resp.StatusCode)
		}
		for i := 0; i < n; i++ {
			r := <-results
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.closedAfter > readTimeout+time.Second {
				t.Errorf("slowloris connection closed after %v, want about %v", r.closedAfter, readTimeout)
			}
		}
	})
}

// TestC3C4ListenNoAbsoluteDeadline: a listen stream outlives every read
// and write timeout of the server (ReadTimeout 300 ms here), showing
// keep-alive comments meanwhile.
func TestC3C4ListenNoAbsoluteDeadline(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{KeepAlive: 100 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}, defaultOptions())
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("subscriptions/listen"), body: fixture.Ex8Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		s := readSSE(t, c, resp)
		if it := s.nextEvent(2 * time.Second); !fixture.JsonEqual([]byte(it.data), []byte(fixture.Ex8Ack)) {
			t.Fatalf("first event = %q %v, want the ack", it.data, it.err)
		}
		comments := 0
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			it := s.next(time.Second)
			if it.err != nil {
				t.Fatalf("stream cut after %v: %v", 1500*time.Millisecond-time.Until(deadline), it.err)
			}
			if !it.comment {
				t.Fatalf("unexpected event %q", it.data)
			}
			if it.lines[0] != ": keep-alive" {
				t.Errorf("comment %q", it.lines[0])
			}
			comments++
		}
		if comments < 5 {
			t.Errorf("%d keep-alive comments in 1.5 s at a 100 ms interval", comments)
		}
		if got := h.eng.Stats().ListenStreams.Load(); got != 1 {
			t.Errorf("ListenStreams = %d, want 1 (the stream was cancelled)", got)
		}
		// Still alive: a change still arrives.
		if err := h.eng.AddTool(engine.Tool{Name: "late_tool", Handler: func(c *engine.Call) error { return nil }}); err != nil {
			t.Fatal(err)
		}
		if it := s.nextEvent(2 * time.Second); !fixture.JsonEqual([]byte(it.data), []byte(fixture.Ex8List)) {
			t.Errorf("event = %q %v, want list_changed", it.data, it.err)
		}
	})
}

// TestC5SlowConsumer: an SSE client that stops reading while the handler
// emits events: past MaxPendingBytes the stream is closed and the request
// cancelled, counted once, and other requests are served.
func TestC5SlowConsumer(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		opt := defaultOptions()
		opt.ProgressInterval = -1 // no coalescing: every progress is an event
		h := startHarness(t, fe, Config{MaxPendingBytes: 256 << 10}, opt)
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: flood"), body: fixture.ToolsCallProgress("50", "flood", `{}`, `"flood-1"`)}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		// ... and the client reads nothing more.
		if !waitFor(t, h.fx.Started, "flood", 5*time.Second) {
			t.Fatal("flood did not start")
		}
		start := time.Now()
		if !waitFor(t, h.fx.Cancelled, "flood", 2*time.Second) {
			t.Errorf("the request was not cancelled within 2 s of the flood's start (SlowConsumers=%d)", h.srv.Stats().SlowConsumers.Load())
		} else {
			t.Logf("cancelled %v after the flood began", time.Since(start))
		}
		if got := h.srv.Stats().SlowConsumers.Load(); got != 1 {
			t.Errorf("SlowConsumers = %d, want 1", got)
		}
		// Other requests are served meanwhile.
		resp2, _ := h.do(t, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		if resp2.StatusCode != 200 {
			t.Errorf("other request: %d", resp2.StatusCode)
		}
		// The stream was closed: what is buffered drains, then it ends.
		_ = c.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 256<<10)
		for {
			if _, err := c.br.Read(buf); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Errorf("the stream was not closed: still open after draining for 2 s")
				}
				break
			}
		}
	})
}

// TestC6DisconnectCancels: closing the TCP connection mid tools/call
// cancels the handler's context promptly (HCAN-01), on the JSON path (no
// progressToken) and on the SSE path (progressToken); also when the
// disconnect comes after the server's ReadTimeout has elapsed, which must
// neither cancel the call by itself nor blind the disconnect detection.
func TestC6DisconnectCancels(t *testing.T) {
	for _, v := range []struct {
		name  string
		body  string
		sse   bool
		cfg   Config
		delay time.Duration // time between the handler's start and the close
	}{
		{name: "json_path", body: fixture.ToolsCall("60", "block", `{}`)},
		{name: "sse_path", body: fixture.ToolsCallProgress("61", "block", `{}`, `"p-61"`), sse: true},
		{name: "json_path_after_read_timeout", body: fixture.ToolsCall("62", "block", `{}`), cfg: Config{ReadTimeout: 300 * time.Millisecond}, delay: 700 * time.Millisecond},
		{name: "sse_path_after_read_timeout", body: fixture.ToolsCallProgress("63", "block", `{}`, `"p-63"`), sse: true, cfg: Config{ReadTimeout: 300 * time.Millisecond}, delay: 700 * time.Millisecond},
	} {
		t.Run(v.name, func(t *testing.T) {
			forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
				h := startHarness(t, fe, v.cfg, defaultOptions())
				c := h.dial(t)
				c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: block"), body: v.body}))
				if !waitFor(t, h.fx.Started, "block", 5*time.Second) {
					t.Fatal("handler did not start")
				}
				if v.sse {
					resp, err := c.readResponse(5 * time.Second)
					if err != nil {
						t.Fatal(err)
					}
					checkSSEHead(t, resp)
					if it := readSSE(t, c, resp).nextEvent(5 * time.Second); !strings.Contains(it.data, "notifications/progress") {
						t.Fatalf("first event = %q %v", it.data, it.err)
					}
				}
				if v.delay > 0 {
					select {
					case <-h.fx.Cancelled:
						t.Fatalf("the call was cancelled while the client was still connected (ReadTimeout %v elapsed)", v.cfg.ReadTimeout)
					case <-time.After(v.delay):
					}
				}
				c.conn.Close()
				start := time.Now()
				if !waitFor(t, h.fx.Cancelled, "block", 2*time.Second) {
					t.Fatalf("handler context not cancelled within 2 s of the disconnect")
				}
				t.Logf("cancelled %v after the disconnect", time.Since(start))
			})
		})
	}
	// A listen stream holds no watcher: the disconnect is found by its
	// next keep-alive write, so within a couple of keep-alive intervals.
	t.Run("listen_stream", func(t *testing.T) {
		forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
			h := startHarness(t, fe, Config{KeepAlive: 200 * time.Millisecond}, defaultOptions())
			c := h.dial(t)
			c.write(h.raw(request{hdr: mcpHdr("subscriptions/listen"), body: fixture.Ex8Body}))
			resp, err := c.readResponse(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if it := readSSE(t, c, resp).nextEvent(5 * time.Second); !fixture.JsonEqual([]byte(it.data), []byte(fixture.Ex8Ack)) {
				t.Fatalf("first event %q %v", it.data, it.err)
			}
			if n := h.eng.Stats().ListenStreams.Load(); n != 1 {
				t.Fatalf("ListenStreams = %d", n)
			}
			c.conn.Close()
			start := time.Now()
			for h.eng.Stats().ListenStreams.Load() != 0 {
				if time.Since(start) > 2*time.Second {
					t.Fatalf("listen stream still registered 2 s after the disconnect (KeepAlive 200 ms)")
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("listen stream ended %v after the disconnect", time.Since(start))
		})
	})
}

// TestC2SlowBody: a client that sends its headers and then trickles its
// body is cut off by the limit between reads (ReadIdleTimeout), long before
// the request's ReadTimeout, answered 408 and counted; a body that keeps
// arriving is not cut, and neither is a keep-alive connection that waits
// between requests (C2; fasthttp front end: the net/http adapter's reads
// belong to the embedding http.Server).
func TestC2SlowBody(t *testing.T) {
	h := startHarness(t, fastFE, Config{ReadTimeout: 30 * time.Second, ReadIdleTimeout: 300 * time.Millisecond}, defaultOptions())
	head := func(n int) string {
		return "POST /mcp HTTP/1.1\r\nHost: " + h.addr + "\r\n" + strings.Join(ex2Hdr(), "\r\n") + fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", n)
	}
	// Stalled: the headers and a few bytes, then nothing.
	c := h.dial(t)
	start := time.Now()
	c.write([]byte(head(len(fixture.Ex2Body)) + fixture.Ex2Body[:10]))
	resp, err := c.readResponse(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled body: %v", err)
	}
	if resp.StatusCode != 408 {
		t.Fatalf("stalled body: %d, want 408", resp.StatusCode)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cut after %v: the between-reads limit did not act before ReadTimeout", d)
	}
	if !c.closedByServer(2 * time.Second) {
		t.Error("connection left open after 408")
	}
	if h.srv.Stats().ReadIdleTimeouts.Load() != 1 {
		t.Errorf("ReadIdleTimeouts = %d", h.srv.Stats().ReadIdleTimeouts.Load())
	}
	// Trickled but steady: every 100 ms, well within the idle limit, for
	// longer than the idle limit in all.
	c = h.dial(t)
	c.write([]byte(head(len(fixture.Ex2Body))))
	for i := 0; i < len(fixture.Ex2Body); i += 20 {
		time.Sleep(100 * time.Millisecond)
		c.write([]byte(fixture.Ex2Body[i:min(i+20, len(fixture.Ex2Body))]))
		if time.Since(start) > 20*time.Second {
			break
		}
	}
	if resp, err := c.readResponse(5 * time.Second); err != nil || resp.StatusCode != 200 {
		t.Fatalf("steady trickle: %v %v", resp, err)
	} else {
		c.readAll(resp)
	}
	// Keep-alive: waiting longer than the idle limit between requests is
	// the IdleTimeout's business.
	time.Sleep(700 * time.Millisecond)
	if resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
		t.Fatalf("next request on the kept-alive connection: %d", resp.StatusCode)
	}
	if h.srv.Stats().ReadIdleTimeouts.Load() != 1 {
		t.Errorf("ReadIdleTimeouts = %d after the steady and keep-alive cases", h.srv.Stats().ReadIdleTimeouts.Load())
	}
}

// TestReadDeadlinePhases: the fasthttp front end applies its read limits
// itself (limitConn), one per phase of a connection: ReadTimeout for a new
// connection's first request and for the whole of each request, IdleTimeout
// between keep-alive requests, ReadIdleTimeout between the reads of one
// request (C1, C2). Each phase is run with deadlines from the clock and
// from the server's coarse clock (limits of at least 16 ticks use it).
func TestReadDeadlinePhases(t *testing.T) {
	old := coarseTick
	defer func() { coarseTick = old }()
	for _, tc := range []struct {
		name string
		tick time.Duration
	}{{"clock", time.Hour}, {"coarse_clock", 20 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			coarseTick = tc.tick
			testReadDeadlinePhases(t)
		})
	}
}

func testReadDeadlinePhases(t *testing.T) {
	const readTO = 400 * time.Millisecond
	h := startHarness(t, fastFE, Config{ReadTimeout: readTO, IdleTimeout: 3 * time.Second, ReadIdleTimeout: 320 * time.Millisecond}, defaultOptions())
	if h.srv.clk.t.Load() == nil {
		t.Fatal("coarse clock not running while the server serves")
	}
	head := func(n int) string {
		return "POST /mcp HTTP/1.1\r\nHost: " + h.addr + "\r\n" + strings.Join(ex2Hdr(), "\r\n") + fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", n)
	}
	t.Run("new_connection_silent", func(t *testing.T) {
		c := h.dial(t)
		start := time.Now()
		if !c.closedByServer(5 * time.Second) {
			t.Fatal("a connection that never sent a byte was kept past 5 s")
		}
		if d := time.Since(start); d < readTO/2 || d > readTO+2*time.Second {
			t.Errorf("silent new connection closed after %v, want about ReadTimeout (%v)", d, readTO)
		}
	})
	t.Run("keep_alive_wait_is_idle_timeout", func(t *testing.T) {
		c := h.dial(t)
		for i := 0; i < 3; i++ {
			if resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
				t.Fatalf("request %d: %d", i, resp.StatusCode)
			}
			// Longer than ReadTimeout, shorter than IdleTimeout.
			time.Sleep(2 * readTO)
		}
	})
	t.Run("whole_request_is_read_timeout", func(t *testing.T) {
		// Every read comes well within ReadIdleTimeout, but the body takes
		// far longer than ReadTimeout in all: cut at about ReadTimeout.
		c := h.dial(t)
		body := strings.Repeat(" ", 40) + fixture.Ex2Body
		start := time.Now()
		c.write([]byte(head(len(body))))
		cut := false
		for i := 0; i < len(body) && !cut; i += 2 {
			time.Sleep(100 * time.Millisecond)
			_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.conn.Write([]byte(body[i:min(i+2, len(body))])); err != nil {
				cut = true
			}
			if time.Since(start) > 8*time.Second {
				t.Fatal("still accepted body bytes after 8 s")
			}
		}
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatalf("slow whole body: %v", err)
		}
		if resp.StatusCode != 408 {
			t.Fatalf("slow whole body: %d, want 408", resp.StatusCode)
		}
		if d := time.Since(start); d > readTO+2*time.Second {
			t.Errorf("cut after %v, want about ReadTimeout (%v)", d, readTO)
		}
	})
	t.Run("idle_timeout_closes", func(t *testing.T) {
		h := startHarness(t, fastFE, Config{ReadTimeout: 5 * time.Second, IdleTimeout: 320 * time.Millisecond}, defaultOptions())
		c := h.dial(t)
		if resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
			t.Fatalf("request: %d", resp.StatusCode)
		}
		start := time.Now()
		if !c.closedByServer(4 * time.Second) {
			t.Fatal("kept-alive connection open past 4 s with IdleTimeout 320 ms")
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("closed after %v, before IdleTimeout", d)
		}
	})
	t.Run("halted_with_the_server", func(t *testing.T) {
		_ = h.srv.Shutdown(context.Background())
		if h.srv.clk.t.Load() != nil {
			t.Error("coarse clock still running after Shutdown")
		}
	})
}

// TestB5PlainAdapterCloses: the net/http adapter mounted without
// NetListener cannot see a Content-Length that net/http dropped, but it
// still closes the connection after a request with a Transfer-Encoding
// (RFC 9112 §6.1), so the request smuggled behind it is never served.
func TestB5PlainAdapterCloses(t *testing.T) {
	plainAdapter = true
	defer func() { plainAdapter = false }()
	leakCheck(t)
	h := startHarness(t, netFE, Config{}, defaultOptions())
	c := h.dial(t)
	small := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	c.write([]byte(hdrLines(h) + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", 5, len(small), small) +
		string(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))))
	resp, err := c.readResponse(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.readAll(resp)
	if !c.closedByServer(2 * time.Second) {
		t.Error("connection left open after a request with Transfer-Encoding")
	}
	if n := h.fx.SQLRuns.Load(); n != 0 {
		t.Errorf("the smuggled request was served (%d runs)", n)
	}
}

// TestC11ConnectionLimits: MaxConnsPerIP answers 429, MaxConns 503, on
// both front ends (the net/http one through NetListener).
func TestC11ConnectionLimits(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) { testC11(t, fe) })
}

func testC11(t *testing.T, fe frontEnd) {
	for _, v := range []struct {
		name   string
		cfg    Config
		status int
		stat   func(*Stats) *atomic.Uint64
	}{
		{"per_ip_429", Config{MaxConnsPerIP: 2}, 429, func(s *Stats) *atomic.Uint64 { return &s.TooManyConnsPerIP }},
		{"global_503", Config{MaxConns: 2}, 503, func(s *Stats) *atomic.Uint64 { return &s.TooManyConns }},
	} {
		t.Run(v.name, func(t *testing.T) {
			leakCheck(t)
			h := startHarness(t, fe, v.cfg, defaultOptions())
			// Two connections, each proven live by a request.
			var open []*client
			for i := 0; i < 2; i++ {
				c := h.dial(t)
				resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
				if resp.StatusCode != 200 {
					t.Fatalf("connection %d: %d", i, resp.StatusCode)
				}
				open = append(open, c)
			}
			third := func() *http.Response {
				c := h.dial(t)
				c.write(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))
				resp, err := c.readResponse(5 * time.Second)
				if err != nil {
					t.Fatalf("third connection: %v", err)
				}
				body := c.readAll(resp)
				if resp.StatusCode != 200 && !c.closedByServer(2*time.Second) {
					t.Errorf("refused connection left open")
				}
				_ = body
				return resp
			}
			if resp := third(); resp.StatusCode != v.status {
				t.Errorf("third connection: %d, want %d", resp.StatusCode, v.status)
			}
			if got := v.stat(h.srv.Stats()).Load(); got != 1 {
				t.Errorf("refusal counter = %d, want 1", got)
			}
			if h.fx.SQLRuns.Load() != 2 {
				t.Errorf("the refused connection's request ran")
			}
			// A slot is given back when a connection closes.
			open[0].conn.Close()
			deadline := time.Now().Add(2 * time.Second)
			for {
				resp := third()
				if resp.StatusCode == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("still refused (%d) 2 s after a connection closed", resp.StatusCode)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestC12HandlerPanic: a panic is -32603 with a generic message, and the
// server keeps serving.
func TestC12HandlerPanic(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		for i := 0; i < 3; i++ {
			resp, body := c.roundTrip(h, request{hdr: mcpHdr("tools/call", "Mcp-Name: boom"), body: fixture.ToolsCall("70", "boom", `{}`)})
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want 200 (in-band -32603)", resp.StatusCode)
			}
			m := fixture.DecodeMsg(t, body)
			if m.Error == nil || m.Error.Code != -32603 || string(m.ID) != "70" {
				t.Fatalf("body = %s, want -32603 for id 70", body)
			}
			for _, leak := range []string{"goroutine", ".go:", "runtime", "nil map", "panic"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("error leaks %q: %s", leak, body)
				}
			}
			resp, _ = c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
			if resp.StatusCode != 200 {
				t.Fatalf("request after a panic: %d", resp.StatusCode)
			}
		}
		if got := h.eng.Stats().Panics.Load(); got != 3 {
			t.Errorf("Panics = %d, want 3", got)
		}
	})
}

// TestC13ShutdownDeadline: Shutdown returns by its deadline even when a
// handler ignores its context.
func TestC13ShutdownDeadline(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: stubborn"), body: fixture.ToolsCall("80", "stubborn", `{}`)}))
		if !waitFor(t, h.fx.Started, "stubborn", 5*time.Second) {
			t.Fatal("handler did not start")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := h.srv.Shutdown(ctx)
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want context.DeadlineExceeded", err)
		}
		if took > 800*time.Millisecond {
			t.Errorf("Shutdown took %v with a 300 ms deadline", took)
		}
		h.fx.ReleaseAll() // let the stubborn handler end (leak check)
	})
}

// TestC14ShutdownDrains: once Shutdown has begun, a new POST gets 503 and
// open listen streams end with their final result; in-flight calls finish.
func TestC14ShutdownDrains(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		lc := h.dial(t)
		lc.write(h.raw(request{hdr: mcpHdr("subscriptions/listen"), body: fixture.Ex8Body}))
		resp, err := lc.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		s := readSSE(t, lc, resp)
		if it := s.nextEvent(5 * time.Second); !fixture.JsonEqual([]byte(it.data), []byte(fixture.Ex8Ack)) {
			t.Fatalf("first event %q", it.data)
		}
		bc := h.dial(t)
		bc.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: stubborn"), body: fixture.ToolsCall("81", "stubborn", `{}`)}))
		if !waitFor(t, h.fx.Started, "stubborn", 5*time.Second) {
			t.Fatal("handler did not start")
		}
		shut := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			shut <- h.srv.Shutdown(ctx)
		}()
		for !h.srv.closing.Load() {
			time.Sleep(time.Millisecond)
		}
		// The listen stream completes (SUB-10).
		if it := s.nextEvent(5 * time.Second); !fixture.JsonEqual([]byte(it.data), []byte(fixture.Ex8Done)) {
			t.Errorf("listen stream: %q %v, want the final result", it.data, it.err)
		}
		// A new POST is refused with 503.
		resp, body := h.do(t, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		if resp.StatusCode != 503 {
			t.Errorf("POST during shutdown: %d %q, want 503", resp.StatusCode, body)
		}
		if h.fx.SQLRuns.Load() != 0 {
			t.Errorf("handler ran during shutdown")
		}
		// The in-flight call finishes, then Shutdown returns.
		h.fx.ReleaseAll()
		resp, body = func() (*http.Response, []byte) {
			r, err := bc.readResponse(5 * time.Second)
			if err != nil {
				t.Fatalf("in-flight call: %v", err)
			}
			return r, bc.readAll(r)
		}()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"late"`) {
			t.Errorf("in-flight call: %d %s", resp.StatusCode, body)
		}
		select {
		case err := <-shut:
			if err != nil {
				t.Errorf("Shutdown = %v", err)
			}
		case <-time.After(6 * time.Second):
			t.Fatal("Shutdown did not return")
		}
	})
}

// TestC15NoGoroutineLeak10k: 10,000 sequential stateless requests over
// one keep-alive connection leave no goroutine behind.
func TestC15NoGoroutineLeak10k(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		warm := h.dial(t)
		warm.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		warm.conn.Close()
		time.Sleep(50 * time.Millisecond)
		base := runtime.NumGoroutine()
		c := h.dial(t)
		req := h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		for i := 0; i < 10000; i++ {
			c.write(req)
			resp, err := c.readResponse(5 * time.Second)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			body := c.readAll(resp)
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"1 row"`)) {
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
			}
		}
		if got := h.fx.SQLRuns.Load(); got != 10001 {
			t.Errorf("handler ran %d times", got)
		}
		c.conn.Close()
		deadline := time.Now().Add(2 * time.Second)
		n := runtime.NumGoroutine()
		for n > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		if n > base {
			t.Errorf("%d goroutines 2 s after the client left, baseline %d", n, base)
		}
	})
}

// TestC17NoCompressionOrLengthOnSSE: with response compression on and
// Accept-Encoding: gzip, SSE responses carry neither Content-Encoding nor
// Content-Length, while a large JSON reply is compressed.
func TestC17NoCompressionOrLengthOnSSE(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Compression: true, CompressMinBytes: 64}, defaultOptions())
		c := h.dial(t)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: execute_sql", "Mcp-Param-Region: us-west1", "Accept-Encoding: gzip"), body: fixture.Ex3Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		checkSSEHead(t, resp)
		s := readSSE(t, c, resp)
		for {
			it := s.nextEvent(5 * time.Second)
			if it.err != nil {
				break
			}
			fixture.DecodeMsg(t, []byte(it.data))
		}
	})
}

// TestHTTPStatsCountedOnce spot-checks that one rejection moves exactly its
// own counter (RELIABILITY "counted").
func TestHTTPStatsCountedOnce(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		h.do(t, request{hdr: ex2Hdr("Origin: http://evil.example"), body: fixture.Ex2Body})
		st := h.srv.Stats()
		total := st.NotFound.Load() + st.MethodNotAllowed.Load() + st.ShuttingDown.Load() + st.BadOrigin.Load() + st.BadHost.Load() +
			st.Unauthorized.Load() + st.Forbidden.Load() + st.BadContentType.Load() + st.NotAcceptable.Load() + st.BodyTooLarge.Load() +
			st.HeadersTooLarge.Load() + st.BadEncoding.Load() + st.BadFraming.Load() + st.ReadTimeouts.Load() + st.BadMessage.Load() +
			st.Rejected.Load()
		if st.BadOrigin.Load() != 1 || total != 1 {
			t.Errorf("BadOrigin = %d, all rejection counters = %d; want 1 and 1", st.BadOrigin.Load(), total)
		}
	})
}

// TestShutdownStopsThisTransportOnly: the HTTP transport's Shutdown leaves
// the engine running for the other transports (issue 8): the engine is
// shut down once, by whoever created it.
func TestShutdownStopsThisTransportOnly(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := h.srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if h.eng.Closing() {
			t.Fatal("the HTTP transport's Shutdown shut the engine down")
		}
		got := make(chan string, 1)
		m := linestream.NewMem(engine.NewScope(h.eng, ""), func(f []byte) error { got <- string(f); return nil }, linestream.Config{}, nil)
		defer m.Close()
		if err := m.Send([]byte(fixture.ToolsCall("9", "echo", `{"text":"still served"}`))); err != nil {
			t.Fatal(err)
		}
		if r := <-got; !strings.Contains(r, "still served") {
			t.Fatalf("engine after the transport's shutdown: %s", r)
		}
	})
}

// TestMetaCaseVariantIsMissing: inside _meta a key that differs from a
// recognised one only in case is another key (META-02, issue 8): the
// request lacks the real key and gets what a missing key gets, -32602 and
// HTTP 400, even with the mirrored MCP-Protocol-Version header present.
func TestMetaCaseVariantIsMissing(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		resp, b := h.do(t, request{hdr: mcpHdr("tools/call", "Mcp-Name: echo"), body: body})
		if resp.StatusCode != 400 {
			t.Fatalf("status %d, want 400: %s", resp.StatusCode, b)
		}
		m := fixture.DecodeMsg(t, b)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "io.modelcontextprotocol/protocolVersion") {
			t.Fatalf("reply %s", b)
		}
	})
}

// TestC17JSONCompression: a JSON reply over CompressMinBytes comes back
// zstd- or gzip-encoded as Accept-Encoding allows (zstd preferred, q=0
// refused), with Vary: Accept-Encoding, and decodes to exactly the bytes an
// identity request gets; identity, an absent Accept-Encoding and a reply
// under the threshold are plain JSON (C17).
func TestC17JSONCompression(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Compression: true, CompressMinBytes: 1024}, defaultOptions())
		big := fixture.ToolsCall("7", "echo", `{"text":"`+strings.Repeat("compressible ", 200)+`"}`)
		small := fixture.ToolsCall("8", "echo", `{"text":"short"}`)
		call := func(body string, ae ...string) (string, []byte) {
			t.Helper()
			hdr := mcpHdr("tools/call", append([]string{"Mcp-Name: echo"}, ae...)...)
			resp, b := h.do(t, request{hdr: hdr, body: body})
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%v: %d %s", ae, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			enc := resp.Header.Get("Content-Encoding")
			if enc != "" && resp.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%v: compressed without Vary: Accept-Encoding", ae)
			}
			return enc, b
		}
		_, plain := call(big)
		if m := fixture.DecodeMsg(t, plain); m.Error != nil || len(plain) < 2000 {
			t.Fatalf("plain reply: %.100s", plain)
		}
		for _, tc := range []struct {
			ae, want string
		}{
			{"Accept-Encoding: gzip", "gzip"},
			{"Accept-Encoding: zstd", "zstd"},
			{"Accept-Encoding: gzip, zstd", "zstd"},
			{"Accept-Encoding: gzip;q=0, zstd", "zstd"},
			{"Accept-Encoding: gzip, zstd;q=0", "gzip"},
			{"Accept-Encoding: GZIP", "gzip"},
			{"Accept-Encoding: *", "zstd"},
			{"Accept-Encoding: identity", ""},
			{"Accept-Encoding: br", ""},
			{"Accept-Encoding: gzip;q=0.0", ""},
		} {
			enc, b := call(big, tc.ae)
			if enc != tc.want {
				t.Errorf("%s: Content-Encoding %q, want %q", tc.ae, enc, tc.want)
				continue
			}
			var got []byte
			switch enc {
			case "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s: %v", tc.ae, err)
				}
				got, err = io.ReadAll(zr)
				if err != nil {
					t.Fatalf("%s: %v", tc.ae, err)
				}
			case "zstd":
				zr, err := zstd.NewReader(nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err = zr.DecodeAll(b, nil)
				zr.Close()
				if err != nil {
					t.Fatalf("%s: %v", tc.ae, err)
				}
			default:
				got = b
			}
			if !bytes.Equal(got, plain) {
				t.Errorf("%s: decoded reply differs from the identity reply (%d vs %d bytes)", tc.ae, len(got), len(plain))
			}
			if enc != "" && len(b) >= len(plain) {
				t.Errorf("%s: %d bytes compressed, %d plain", tc.ae, len(b), len(plain))
			}
		}
		if enc, _ := call(small, "Accept-Encoding: gzip, zstd"); enc != "" {
			t.Errorf("a reply under the threshold was compressed (%s)", enc)
		}
	})
}

// TestOriginHostOnOneConnection: the fasthttp front end remembers the last
// Origin and Host a connection's request was let through with; a later
// request on the same connection with another value is still checked in
// full (SEC-01, SEC-03, B6, B7): a refused value after an allowed one, an
// allowed one after a refused one, a value that differs from the
// remembered one only in case or length, all on one keep-alive connection.
func TestOriginHostOnOneConnection(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		steps := []struct {
			host, origin string
			status       int
		}{
			{"", "http://127.0.0.1:{port}", 200},
			{"", "http://evil.example", 403},
			{"", "http://127.0.0.1:{port}", 200},
			{"", "http://127.0.0.1:{port}0", 403}, // the allowed value, one byte longer
			{"", "http://127.0.0.1:1", 403},
			{"", "", 200},
			{"", "http://LOCALHOST:{port}/", 200},
			{"", "http://localhost:{port}/", 200},
			{"", "http://127.0.0.1:{port}", 200},
			{"attacker.example", "http://127.0.0.1:{port}", 403},
			{"127.0.0.1:{port}", "", 200},
			{"attacker.example:{port}", "", 403},
			{"127.0.0.1:{port}", "", 200},
			{"127.0.0.2:{port}", "", 403}, // same length as the allowed value
			{"LOCALHOST:{port}", "", 200},
			{"attacker.example", "", 403},
			{"127.0.0.1:{port}", "", 200},
		}
		for i, s := range steps {
			more := []string{}
			if s.origin != "" {
				more = append(more, "Origin: "+s.origin)
			}
			resp, _ := c.roundTrip(h, request{host: s.host, hdr: ex2Hdr(more...), body: fixture.Ex2Body})
			if resp.StatusCode != s.status {
				t.Fatalf("step %d (Host %q, Origin %q): status %d, want %d", i, h.expand(s.host), h.expand(s.origin), resp.StatusCode, s.status)
			}
		}
		if got := h.srv.Stats().BadOrigin.Load(); got != 3 {
			t.Errorf("BadOrigin %d, want 3", got)
		}
		if got := h.srv.Stats().BadHost.Load(); got != 4 {
			t.Errorf("BadHost %d, want 4", got)
		}
	})
}
