package refserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness ------------------------------------------------------------------------

// sink is the FrameWriter of a test connection: it keeps every frame.
type sink struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frames []string
}

func newSink() *sink {
	s := &sink{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *sink) WriteFrame(p []byte) error {
	if bytes.IndexByte(p, '\n') >= 0 {
		panic("frame contains a newline")
	}
	s.mu.Lock()
	s.frames = append(s.frames, string(p))
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

func (s *sink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.frames)
}

// since returns the decoded frames written at or after index i.
func (s *sink) since(t *testing.T, i int) []msg {
	t.Helper()
	s.mu.Lock()
	fs := append([]string(nil), s.frames[i:]...)
	s.mu.Unlock()
	out := make([]msg, len(fs))
	for k, f := range fs {
		out[k] = decode(t, f)
	}
	return out
}

// wait blocks until a frame at or after index from satisfies pred. hint,
// when not empty, must occur in the raw frame for pred to be tried (it
// spares decoding large frames over and over).
func (s *sink) wait(t *testing.T, from int, what, hint string, pred func(m msg) bool) msg {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	wake := time.AfterFunc(10*time.Second, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer wake.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := from; ; {
		for ; i < len(s.frames); i++ {
			f := s.frames[i]
			if hint != "" && !strings.Contains(f, hint) {
				continue
			}
			if m := decode(t, f); pred(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; frames: %.2000s", what, strings.Join(s.frames[from:], "\n"))
		}
		s.cond.Wait()
	}
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	raw     string
}

func decode(t *testing.T, f string) msg {
	t.Helper()
	var m msg
	if err := json.Unmarshal([]byte(f), &m); err != nil {
		t.Fatalf("server wrote invalid JSON %q: %v", f, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("frame without jsonrpc 2.0: %s", f)
	}
	m.raw = f
	return m
}

type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

type inputReq struct {
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	JSONRPC json.RawMessage `json:"jsonrpc"` // must be absent (MRTR-03)
	ID      json.RawMessage `json:"id"`      // must be absent (MRTR-03)
}

// result is the union of the result shapes the tests look at.
type result struct {
	ResultType    string              `json:"resultType"`
	Content       []content           `json:"content"`
	IsError       *bool               `json:"isError"`
	InputRequests map[string]inputReq `json:"inputRequests"`
	RequestState  *string             `json:"requestState"`
	Messages      []struct {
		Role    string  `json:"role"`
		Content content `json:"content"`
	} `json:"messages"`
	Contents []struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"contents"`
	Completion *struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	} `json:"completion"`
	TTLMs      *int64 `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
	Meta       struct {
		ServerInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Prompts []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Arguments   []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	} `json:"prompts"`
	Resources []struct {
		URI         string `json:"uri"`
		Name        string `json:"name"`
		Description string `json:"description"`
		MimeType    string `json:"mimeType"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
		Name        string `json:"name"`
	} `json:"resourceTemplates"`
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      map[string]json.RawMessage `json:"capabilities"`
}

// res decodes a successful response and checks what every 2026-07-28 result
// carries: resultType and _meta serverInfo (META-06).
func (m msg) res(t *testing.T) result {
	t.Helper()
	if m.Error != nil || m.Result == nil {
		t.Fatalf("expected a result, got %s", m.raw)
	}
	var r result
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("bad result %s: %v", m.raw, err)
	}
	if r.ResultType != "complete" && r.ResultType != "input_required" {
		t.Fatalf("resultType %q in %s", r.ResultType, m.raw)
	}
	if r.Meta.ServerInfo == nil || r.Meta.ServerInfo.Name != ServerName || r.Meta.ServerInfo.Version == "" {
		t.Fatalf("result without serverInfo: %s", m.raw)
	}
	return r
}

// complete decodes a complete result.
func (m msg) complete(t *testing.T) result {
	t.Helper()
	r := m.res(t)
	if r.ResultType != "complete" {
		t.Fatalf("expected a complete result, got %s", m.raw)
	}
	return r
}

// inputRequired decodes an InputRequiredResult and checks its shape
// (MRTR-01, MRTR-03, MRTR-10).
func (m msg) inputRequired(t *testing.T) result {
	t.Helper()
	r := m.res(t)
	if r.ResultType != "input_required" {
		t.Fatalf("expected input_required, got %s", m.raw)
	}
	if len(r.InputRequests) == 0 && r.RequestState == nil {
		t.Fatalf("input_required without inputRequests or requestState: %s", m.raw)
	}
	for k, ir := range r.InputRequests {
		switch ir.Method {
		case "elicitation/create", "sampling/createMessage", "roots/list":
		default:
			t.Fatalf("inputRequests[%s] has method %q", k, ir.Method)
		}
		if ir.JSONRPC != nil || ir.ID != nil {
			t.Fatalf("inputRequests[%s] carries jsonrpc or id: %s", k, m.raw)
		}
	}
	if r.TTLMs != nil || r.CacheScope != "" {
		t.Fatalf("input_required carries cache hints: %s", m.raw)
	}
	return r
}

// text returns the first text of a complete tool result.
func (m msg) text(t *testing.T) string {
	t.Helper()
	r := m.complete(t)
	if len(r.Content) == 0 || r.Content[0].Type != "text" {
		t.Fatalf("no text content in %s", m.raw)
	}
	return r.Content[0].Text
}

// toolError checks a complete tool result with isError true whose text
// starts with want (SEP-1303: arguments the schema refuses are the tool's
// error, not a JSON-RPC error) and returns the text.
func (m msg) toolError(t *testing.T, want string) string {
	t.Helper()
	r := m.complete(t)
	if r.IsError == nil || !*r.IsError || len(r.Content) == 0 || !strings.HasPrefix(r.Content[0].Text, want) {
		t.Fatalf("expected a tool error %q, got %s", want, m.raw)
	}
	return r.Content[0].Text
}

// fails checks an error response with the given code and returns it.
func (m msg) fails(t *testing.T, code int) *rpcError {
	t.Helper()
	if m.Error == nil || m.Error.Code != code || m.Result != nil {
		t.Fatalf("expected error %d, got %s", code, m.raw)
	}
	return m.Error
}

const allCaps = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

// conn is one stream connection to a reference server.
type conn struct {
	t   *testing.T
	srv *engine.Server
	sc  *linestream.MemConn
	out *sink
	n   int
}

// clock is a test clock: real time plus a settable offset.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// newServerT builds a reference server that is shut down after the test.
func newServerT(t *testing.T, opt Config, clk *clock) *engine.Server {
	t.Helper()
	now := time.Now
	if clk != nil {
		now = clk.now
	}
	// Every typed fixture's result is checked against its outputSchema
	// (issue 19: on in tests); none may fail it.
	opt.ValidateOutput = true
	srv, err := newServer(opt, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if n := srv.Stats().InvalidOutputs.Load(); n != 0 {
			t.Errorf("%d results refused by their outputSchema", n)
		}
	})
	return srv
}

// dial opens a stream connection (principal may be nil).
func dial(t *testing.T, srv *engine.Server, principal any) *conn {
	t.Helper()
	c := &conn{t: t, srv: srv, out: newSink()}
	c.sc = linestream.NewMem(engine.NewScope(srv, ""), c.out.WriteFrame, linestream.Config{}, principal)
	t.Cleanup(c.sc.Close)
	return c
}

func newConn(t *testing.T, opt Config) *conn {
	t.Helper()
	return dial(t, newServerT(t, opt, nil), nil)
}

// frame feeds one raw frame to the server.
func (c *conn) frame(f string) {
	c.t.Helper()
	if err := c.sc.Send([]byte(f)); err != nil {
		c.t.Fatalf("Send: %v", err)
	}
}

// send writes a request with full 2026-07-28 _meta (clientCapabilities
// allCaps unless meta overrides it) and returns its raw id.
func (c *conn) send(method string, params map[string]any, meta map[string]any) string {
	c.t.Helper()
	c.n++
	id := `"r` + strconv.Itoa(c.n) + `"`
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "refserver-test", "version": "1.0.0"},
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(allCaps),
	}
	for k, v := range meta {
		m[k] = v
	}
	p := map[string]any{"_meta": m}
	for k, v := range params {
		p[k] = v
	}
	pj, err := json.Marshal(p)
	if err != nil {
		c.t.Fatal(err)
	}
	c.frame(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + string(pj) + `}`)
	return id
}

// reply waits for the response to id.
func (c *conn) reply(id string) msg {
	c.t.Helper()
	return c.out.wait(c.t, 0, "response "+id, `"id":`+id, func(m msg) bool { return m.Method == "" && string(m.ID) == id })
}

func (c *conn) do(method string, params map[string]any, meta map[string]any) msg {
	c.t.Helper()
	return c.reply(c.send(method, params, meta))
}

// tool calls a tool; extra holds further params members (inputResponses,
// requestState).
func (c *conn) tool(name string, args any, extra map[string]any, meta map[string]any) msg {
	c.t.Helper()
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	for k, v := range extra {
		p[k] = v
	}
	return c.do("tools/call", p, meta)
}

func (c *conn) cancel(id string) {
	c.t.Helper()
	c.frame(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`)
}

// progress returns the progress notifications for token among ms.
func progress(t *testing.T, ms []msg, token string) []struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
	Message  string          `json:"message"`
} {
	t.Helper()
	type p = struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    *float64        `json:"total"`
		Message  string          `json:"message"`
	}
	var out []p
	for _, m := range ms {
		if m.Method != "notifications/progress" {
			continue
		}
		var v p
		if err := json.Unmarshal(m.Params, &v); err != nil {
			t.Fatal(err)
		}
		if string(v.Token) == token {
			out = append(out, v)
		}
	}
	return out
}

var noMeta map[string]any

func capsMeta(caps string) map[string]any {
	return map[string]any{"io.modelcontextprotocol/clientCapabilities": json.RawMessage(caps)}
}

// discovery and lists ---------------------------------------------------------------

func TestDiscoverAndLists(t *testing.T) {
	c := newConn(t, Config{})

	d := c.do("server/discover", nil, noMeta).complete(t)
	if !slices.Contains(d.SupportedVersions, "2026-07-28") {
		t.Fatalf("supportedVersions %v", d.SupportedVersions)
	}
	for _, k := range []string{"tools", "resources", "prompts", "completions", "logging"} {
		if _, ok := d.Capabilities[k]; !ok {
			t.Errorf("capability %s not advertised: %v", k, d.Capabilities)
		}
	}
	if !strings.Contains(string(d.Capabilities["tools"]), `"listChanged":true`) ||
		!strings.Contains(string(d.Capabilities["resources"]), `"subscribe":true`) {
		t.Errorf("capabilities %v", d.Capabilities)
	}

	tl := c.do("tools/list", nil, noMeta).complete(t)
	want := []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_progress",
		"json_schema_2020_12_tool", "test_missing_capability", "test_streaming_elicitation",
		"test_logging_tool", "test_trigger_tool_change", "test_trigger_prompt_change", "test_x_mcp_header",
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
		"echo", "sleep", "big", "panic", "touch",
	}
	schemas := map[string]map[string]any{}
	for _, tool := range tl.Tools {
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		var s map[string]any
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("tool %s: inputSchema %s", tool.Name, tool.InputSchema)
		}
		schemas[tool.Name] = s
	}
	for _, n := range want {
		if schemas[n] == nil {
			t.Errorf("tool %s not listed", n)
		}
	}
	if len(tl.Tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(tl.Tools), len(want))
	}
	if tl.TTLMs == nil || *tl.TTLMs < 0 || (tl.CacheScope != "public" && tl.CacheScope != "private") {
		t.Errorf("tools/list cache hints: %v %q", tl.TTLMs, tl.CacheScope)
	}

	// json_schema_2020_12_tool keeps its 2020-12 keywords verbatim.
	s := schemas["json_schema_2020_12_tool"]
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["additionalProperties"] != false {
		t.Errorf("2020-12 schema: %v", s)
	}
	addr, _ := s["$defs"].(map[string]any)["address"].(map[string]any)
	if addr == nil || addr["$anchor"] == nil {
		t.Errorf("$defs.address.$anchor missing: %v", s["$defs"])
	}
	allOf, _ := s["allOf"].([]any)
	if len(allOf) == 0 || allOf[0].(map[string]any)["anyOf"] == nil {
		t.Errorf("allOf/anyOf missing: %v", s["allOf"])
	}
	for _, k := range []string{"if", "then", "else"} {
		if s[k] == nil {
			t.Errorf("%s missing", k)
		}
	}
	// test_x_mcp_header has a string property annotated x-mcp-header.
	region, _ := schemas["test_x_mcp_header"]["properties"].(map[string]any)["region"].(map[string]any)
	if region["type"] != "string" || region["x-mcp-header"] != "Region" {
		t.Errorf("x-mcp-header property: %v", region)
	}

	pl := c.do("prompts/list", nil, noMeta).complete(t)
	var pnames []string
	for _, p := range pl.Prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
		pnames = append(pnames, p.Name)
		if p.Name == "test_prompt_with_arguments" && (len(p.Arguments) != 2 || !p.Arguments[0].Required) {
			t.Errorf("arguments of %s: %+v", p.Name, p.Arguments)
		}
	}
	for _, n := range []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
		"test_prompt_with_image", "test_input_required_result_prompt"} {
		if !slices.Contains(pnames, n) {
			t.Errorf("prompt %s not listed: %v", n, pnames)
		}
	}

	rl := c.do("resources/list", nil, noMeta).complete(t)
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
		if r.Name == "" || r.Description == "" || r.MimeType == "" {
			t.Errorf("resource %+v incomplete", r)
		}
	}
	if !slices.Equal(uris, []string{URIClock, URIStaticBinary, URIStaticText, URIWatched}) {
		t.Errorf("resources %v", uris)
	}
	tpl := c.do("resources/templates/list", nil, noMeta).complete(t)
	var tpls []string
	for _, x := range tpl.ResourceTemplates {
		tpls = append(tpls, x.URITemplate)
	}
	if !slices.Equal(tpls, []string{"mcpwire://{name}", "test://load/{name}", URITemplate}) {
		t.Errorf("templates %+v", tpl.ResourceTemplates)
	}
}

// conformance tools -------------------------------------------------------------------

func TestConformanceTools(t *testing.T) {
	c := newConn(t, Config{})

	if got := c.tool("test_simple_text", nil, nil, noMeta).text(t); got == "" {
		t.Error("empty text")
	}

	img := c.tool("test_image_content", map[string]any{}, nil, noMeta).complete(t)
	if len(img.Content) != 1 || img.Content[0].Type != "image" || img.Content[0].MimeType != "image/png" {
		t.Fatalf("image: %+v", img.Content)
	}
	checkPNG(t, img.Content[0].Data)

	aud := c.tool("test_audio_content", map[string]any{}, nil, noMeta).complete(t)
	if len(aud.Content) != 1 || aud.Content[0].Type != "audio" || aud.Content[0].MimeType != "audio/wav" {
		t.Fatalf("audio: %+v", aud.Content)
	}
	wav, err := base64.StdEncoding.DecodeString(aud.Content[0].Data)
	if err != nil || len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " ||
		string(wav[36:40]) != "data" || int(wav[4])|int(wav[5])<<8 != len(wav)-8 {
		t.Fatalf("not a WAV file: %v % x", err, wav)
	}

	emb := c.tool("test_embedded_resource", map[string]any{}, nil, noMeta).complete(t)
	if len(emb.Content) != 1 || emb.Content[0].Type != "resource" || emb.Content[0].Resource == nil ||
		emb.Content[0].Resource.URI == "" || emb.Content[0].Resource.MimeType != "text/plain" || emb.Content[0].Resource.Text == "" {
		t.Fatalf("embedded resource: %+v", emb.Content)
	}

	mix := c.tool("test_multiple_content_types", map[string]any{}, nil, noMeta).complete(t)
	var types []string
	for _, ct := range mix.Content {
		types = append(types, ct.Type)
	}
	if !slices.Equal(types, []string{"text", "image", "resource"}) {
		t.Fatalf("mixed content types %v", types)
	}
	checkPNG(t, mix.Content[1].Data)

	eh := c.tool("test_error_handling", map[string]any{}, nil, noMeta).complete(t)
	if eh.IsError == nil || !*eh.IsError || len(eh.Content) == 0 || eh.Content[0].Text == "" {
		t.Fatalf("error handling: %+v", eh)
	}
	if ok := c.tool("test_simple_text", nil, nil, noMeta).complete(t); ok.IsError == nil || *ok.IsError {
		t.Fatalf("isError must be present and false: %+v", ok)
	}

	if got := c.tool("json_schema_2020_12_tool", map[string]any{"name": "n", "email": "e@x"}, nil, noMeta).text(t); !strings.Contains(got, `"email":"e@x"`) {
		t.Errorf("json_schema_2020_12_tool: %q", got)
	}
	if got := c.tool("test_x_mcp_header", map[string]any{"region": "us-west1", "count": 2}, nil, noMeta).text(t); got != "region=us-west1" {
		t.Errorf("test_x_mcp_header: %q", got)
	}
	c.tool("test_x_mcp_header", map[string]any{"region": 5}, nil, noMeta).toolError(t, "Invalid arguments: arguments.region: expected string, got number")

	// test_streaming_elicitation: only notifications before the result.
	from := c.out.len()
	id := c.send("tools/call", map[string]any{"name": "test_streaming_elicitation", "arguments": map[string]any{}},
		map[string]any{"progressToken": "se", "io.modelcontextprotocol/clientCapabilities": json.RawMessage(`{"elicitation":{}}`)})
	c.reply(id).text(t)
	for _, m := range c.out.since(t, from) {
		if m.Method != "" && !strings.HasPrefix(m.Method, "notifications/") {
			t.Errorf("server sent a request on the stream: %s", m.raw)
		}
	}
	if p := progress(t, c.out.since(t, from), `"se"`); len(p) == 0 || p[len(p)-1].Progress != 2 {
		t.Errorf("streaming progress %+v", p)
	}
}

func checkPNG(t *testing.T, b64 string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("PNG base64: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if img.Bounds().Dx() != 2 || img.Bounds().Dy() != 2 {
		t.Fatalf("PNG bounds %v", img.Bounds())
	}
}

func TestMissingCapability(t *testing.T) {
	c := newConn(t, Config{})
	e := c.tool("test_missing_capability", map[string]any{}, nil, capsMeta(`{}`)).fails(t, -32021)
	var d struct {
		RequiredCapabilities map[string]map[string]any `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil || d.RequiredCapabilities["sampling"] == nil {
		t.Fatalf("data %s", e.Data)
	}
	// Only this request's capabilities count (META-08).
	c.tool("test_missing_capability", map[string]any{}, nil, capsMeta(`{"sampling":{}}`)).text(t)
	c.tool("test_missing_capability", map[string]any{}, nil, capsMeta(`{"elicitation":{}}`)).fails(t, -32021)
}

func TestLoggingTool(t *testing.T) {
	c := newConn(t, Config{})
	from := c.out.len()
	c.tool("test_logging_tool", map[string]any{}, nil, noMeta).text(t)
	for _, m := range c.out.since(t, from) {
		if m.Method == "notifications/message" {
			t.Fatalf("log without logLevel: %s", m.raw)
		}
	}
	from = c.out.len()
	got := c.tool("test_logging_tool", map[string]any{}, nil, map[string]any{"io.modelcontextprotocol/logLevel": "debug"}).text(t)
	var logs []msg
	for _, m := range c.out.since(t, from) {
		if m.Method == "notifications/message" {
			logs = append(logs, m)
		}
	}
	if len(logs) != 1 || !strings.Contains(logs[0].raw, `"level":"info"`) || !strings.Contains(got, "was sent") {
		t.Fatalf("logs %v, text %q", logs, got)
	}
	// Above the message's level: nothing.
	from = c.out.len()
	c.tool("test_logging_tool", map[string]any{}, nil, map[string]any{"io.modelcontextprotocol/logLevel": "error"}).text(t)
	for _, m := range c.out.since(t, from) {
		if m.Method == "notifications/message" {
			t.Fatalf("log below the requested level: %s", m.raw)
		}
	}
}

func TestToolWithProgress(t *testing.T) {
	for _, iv := range []time.Duration{0, 80 * time.Millisecond} {
		t.Run("interval="+iv.String(), func(t *testing.T) {
			c := newConn(t, Config{ProgressInterval: iv})
			from := c.out.len()
			id := c.send("tools/call", map[string]any{"name": "test_tool_with_progress", "arguments": map[string]any{}},
				map[string]any{"progressToken": "progress-test-1"})
			if got := c.reply(id).text(t); got != "progress-test-1" {
				t.Errorf("text %q, want the token", got)
			}
			p := progress(t, c.out.since(t, from), `"progress-test-1"`)
			if len(p) != 3 {
				t.Fatalf("%d progress notifications, want 3: %+v", len(p), p)
			}
			for i, want := range []float64{0, 50, 100} {
				if p[i].Progress != want || p[i].Total == nil || *p[i].Total != 100 || p[i].Message == "" {
					t.Errorf("progress %d: %+v", i, p[i])
				}
			}
		})
	}
	c := newConn(t, Config{})
	// A numeric token is echoed as its number; without a token no progress.
	if got := c.tool("test_tool_with_progress", map[string]any{}, nil, map[string]any{"progressToken": 7}).text(t); got != "7" {
		t.Errorf("numeric token text %q", got)
	}
	from := c.out.len()
	c.tool("test_tool_with_progress", map[string]any{}, nil, noMeta).text(t)
	for _, m := range c.out.since(t, from) {
		if m.Method == "notifications/progress" {
			t.Fatalf("progress without a token: %s", m.raw)
		}
	}
}

// list changes through subscriptions/listen -------------------------------------------

func TestTriggerChanges(t *testing.T) {
	c := newConn(t, Config{})
	lid := c.send("subscriptions/listen", map[string]any{"notifications": map[string]any{
		"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{URIWatched},
	}}, noMeta)
	ack := c.out.wait(t, 0, "listen ack", "", func(m msg) bool { return m.Method == "notifications/subscriptions/acknowledged" })
	if !strings.Contains(ack.raw, `"io.modelcontextprotocol/subscriptionId":`+lid) {
		t.Fatalf("ack %s", ack.raw)
	}
	subID := func(m msg) bool {
		return strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":`+lid)
	}
	listed := func(method, name string) bool {
		r := c.do(method, nil, noMeta).complete(t)
		for _, x := range r.Tools {
			if x.Name == name {
				return true
			}
		}
		for _, x := range r.Prompts {
			if x.Name == name {
				return true
			}
		}
		return false
	}

	for round, wantListed := range []bool{true, false, true} {
		from := c.out.len()
		c.tool("test_trigger_tool_change", map[string]any{}, nil, noMeta).text(t)
		c.out.wait(t, from, "tools/list_changed", "", func(m msg) bool {
			return m.Method == "notifications/tools/list_changed" && subID(m)
		})
		if got := listed("tools/list", transientTool); got != wantListed {
			t.Fatalf("round %d: transient tool listed %v", round, got)
		}
		from = c.out.len()
		c.tool("test_trigger_prompt_change", map[string]any{}, nil, noMeta).text(t)
		c.out.wait(t, from, "prompts/list_changed", "", func(m msg) bool {
			return m.Method == "notifications/prompts/list_changed" && subID(m)
		})
		if got := listed("prompts/list", transientPrompt); got != wantListed {
			t.Fatalf("round %d: transient prompt listed %v", round, got)
		}
	}
	// The transient entries work while present.
	c.tool(transientTool, map[string]any{}, nil, noMeta).text(t)
	c.do("prompts/get", map[string]any{"name": transientPrompt}, noMeta).complete(t)

	// touch signals resource updates to subscribers of that URI only.
	from := c.out.len()
	if got := c.tool("touch", map[string]any{"uri": URIWatched}, nil, noMeta).text(t); !strings.Contains(got, URIWatched) {
		t.Errorf("touch text %q", got)
	}
	upd := c.out.wait(t, from, "resources/updated", "", func(m msg) bool {
		return m.Method == "notifications/resources/updated" && subID(m)
	})
	if !strings.Contains(string(upd.Params), `"uri":"`+URIWatched+`"`) {
		t.Errorf("updated %s", upd.raw)
	}
	from = c.out.len()
	c.tool("touch", map[string]any{"uri": "test://other"}, nil, noMeta).text(t)
	c.tool("touch", map[string]any{}, nil, noMeta).toolError(t, "Invalid arguments: arguments.uri: required")
	c.tool("touch", map[string]any{"uri": ""}, nil, noMeta).toolError(t, "Invalid arguments: arguments.uri: must be at least 1 character long")
	for _, m := range c.out.since(t, from) {
		if m.Method == "notifications/resources/updated" {
			t.Errorf("update for an unsubscribed URI: %s", m.raw)
		}
	}

	// Cancelling the listen stream ends it without a response (SUB-09).
	from = c.out.len()
	c.cancel(lid)
	waitIdle(t, c)
	for _, m := range c.out.since(t, from) {
		if string(m.ID) == lid {
			t.Errorf("response after cancelling the listen stream: %s", m.raw)
		}
	}
}

// waitIdle waits until the connection has no request in flight.
func waitIdle(t *testing.T, c *conn) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for c.sc.Conn().InFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still in flight", c.sc.Conn().InFlight())
		}
		time.Sleep(time.Millisecond)
	}
}

// our own tools ---------------------------------------------------------------------

func TestEcho(t *testing.T) {
	c := newConn(t, Config{})
	for _, s := range []string{"", "hello", "hello, 世界", "quote \" backslash \\ newline \n tab \t é \u2028 \U0001F600", strings.Repeat("ab", 5000)} {
		if got := c.tool("echo", map[string]any{"text": s}, nil, noMeta).text(t); got != s {
			t.Errorf("echo %q -> %q", s, got)
		}
	}
	// Escapes written by the client are unescaped before echoing.
	id := `"raw"`
	c.frame(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\u0041\n\"b\ud83d\ude00"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if got := c.reply(id).text(t); got != "aA\n\"b\U0001F600" {
		t.Errorf("escaped echo -> %q", got)
	}
	c.tool("echo", map[string]any{}, nil, noMeta).toolError(t, "Invalid arguments: arguments.text: required")
	c.tool("echo", map[string]any{"text": 5}, nil, noMeta).toolError(t, "Invalid arguments: arguments.text: expected string, got number")
	c.tool("echo", map[string]any{"text": "a", "Text": "b"}, nil, noMeta).toolError(t, "Invalid arguments: arguments.Text: not allowed")
	c.tool("echo", []any{"a"}, nil, noMeta).fails(t, -32602)
}

// TestOwnToolsTyped: echo, sleep and touch are typed tools: tools/list
// shows the inferred input and output schemas, and each result carries
// structuredContent beside its text (issue 19).
func TestOwnToolsTyped(t *testing.T) {
	c := newConn(t, Config{})
	var raw struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	list := c.do("tools/list", nil, noMeta)
	list.complete(t)
	if err := json.Unmarshal(list.Result, &raw); err != nil || len(raw.Tools) == 0 {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"echo": {`{"type":"object","properties":{"text":{"type":"string","description":"the text to return"}},"required":["text"],"additionalProperties":false}`,
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`},
		"sleep": {`{"type":"object","properties":{"ms":{"type":"integer","description":"how long to wait, in milliseconds","minimum":0,"maximum":` + strconv.Itoa(MaxSleepMs) + `},` +
			`"steps":{"type":"integer","description":"progress notifications to send, spread evenly","minimum":0,"maximum":` + strconv.Itoa(MaxSleepSteps) + `}},"additionalProperties":false}`,
			`{"type":"object","properties":{"sleptMs":{"type":"integer"}},"required":["sleptMs"],"additionalProperties":false}`},
		"big": {`{"type":"object","properties":{"bytes":{"type":"integer","description":"the size of the text result, in bytes","minimum":0,"maximum":` + strconv.Itoa(MaxBigBytes) + `}},"additionalProperties":false}`, ``},
		"touch": {`{"type":"object","properties":{"uri":{"type":"string","description":"the resource that changed","minLength":1}},"required":["uri"],"additionalProperties":false}`,
			`{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"],"additionalProperties":false}`},
		"panic": {`{"type":"object","properties":{},"additionalProperties":false}`, ``},
	}
	seen := 0
	for _, tl := range raw.Tools {
		w, ok := want[tl.Name]
		if !ok {
			continue
		}
		seen++
		if string(tl.InputSchema) != w[0] || string(tl.OutputSchema) != w[1] {
			t.Errorf("%s:\ninput  %s\noutput %s\nwant   %s\n       %s", tl.Name, tl.InputSchema, tl.OutputSchema, w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of %d tools", seen, len(want))
	}
	for _, tc := range []struct {
		tool       string
		args       map[string]any
		text, json string
	}{
		{"echo", map[string]any{"text": "hi \"there\""}, `hi "there"`, `{"text":"hi \"there\""}`},
		{"sleep", map[string]any{"ms": 1}, "slept 1 ms", `{"sleptMs":1}`},
		{"touch", map[string]any{"uri": "test://x"}, "updated test://x", `{"uri":"test://x"}`},
	} {
		m := c.tool(tc.tool, tc.args, nil, noMeta)
		if got := m.text(t); got != tc.text {
			t.Errorf("%s text %q, want %q", tc.tool, got, tc.text)
		}
		var sc json.RawMessage
		structured(t, m, &sc)
		if string(sc) != tc.json {
			t.Errorf("%s structuredContent %s, want %s", tc.tool, sc, tc.json)
		}
	}
}

func TestBig(t *testing.T) {
	c := newConn(t, Config{})
	for _, n := range []int{0, 1, 1000, 1 << 20, MaxBigBytes} {
		got := c.tool("big", map[string]any{"bytes": n}, nil, noMeta).text(t)
		if len(got) != n || strings.Trim(got, "x") != "" {
			t.Errorf("big %d -> %d bytes", n, len(got))
		}
	}
	if got := c.tool("big", map[string]any{}, nil, noMeta).text(t); got != "" {
		t.Errorf("big {} -> %d bytes", len(got))
	}
	for _, bad := range []any{MaxBigBytes + 1, -1, 1.5, "10", nil, true} {
		c.tool("big", map[string]any{"bytes": bad}, nil, noMeta).toolError(t, "Invalid arguments: arguments.bytes: ")
	}
}

func TestPanic(t *testing.T) {
	c := newConn(t, Config{})
	e := c.tool("panic", map[string]any{}, nil, noMeta).fails(t, -32603)
	if strings.Contains(strings.ToLower(e.Message), "panic") || e.Data != nil {
		t.Errorf("panic leaked into the error: %+v", e)
	}
	if c.srv.Stats().Panics.Load() != 1 {
		t.Errorf("panics counted: %d", c.srv.Stats().Panics.Load())
	}
	// The server goes on.
	c.tool("echo", map[string]any{"text": "after"}, nil, noMeta).text(t)
}

func TestSleepProgress(t *testing.T) {
	t.Run("unlimited", func(t *testing.T) {
		c := newConn(t, Config{ProgressInterval: -1})
		from := c.out.len()
		start := time.Now()
		id := c.send("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60, "steps": 6}},
			map[string]any{"progressToken": "s"})
		c.reply(id).text(t)
		if el := time.Since(start); el < 60*time.Millisecond {
			t.Errorf("slept only %v", el)
		}
		p := progress(t, c.out.since(t, from), `"s"`)
		if len(p) != 6 {
			t.Fatalf("%d progress notifications, want 6", len(p))
		}
		for i, v := range p {
			if v.Progress != float64(i+1) || v.Total == nil || *v.Total != 6 {
				t.Errorf("progress %d: %+v", i, v)
			}
		}
	})
	t.Run("rate-limited", func(t *testing.T) {
		c := newConn(t, Config{})
		from := c.out.len()
		id := c.send("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 120, "steps": 40}},
			map[string]any{"progressToken": 9})
		c.reply(id).text(t)
		p := progress(t, c.out.since(t, from), `9`)
		if len(p) == 0 || len(p) > 10 || p[len(p)-1].Progress != 40 {
			t.Fatalf("progress %+v", p)
		}
		for i := 1; i < len(p); i++ {
			if p[i].Progress <= p[i-1].Progress {
				t.Fatalf("progress not increasing: %+v", p)
			}
		}
	})
	t.Run("no-token", func(t *testing.T) {
		c := newConn(t, Config{ProgressInterval: -1})
		from := c.out.len()
		c.tool("sleep", map[string]any{"ms": 5, "steps": 5}, nil, noMeta).text(t)
		for _, m := range c.out.since(t, from) {
			if m.Method == "notifications/progress" {
				t.Fatalf("progress without a token: %s", m.raw)
			}
		}
		c.tool("sleep", map[string]any{}, nil, noMeta).text(t)
	})
	t.Run("bad-arguments", func(t *testing.T) {
		c := newConn(t, Config{})
		for _, args := range []map[string]any{
			{"ms": -1}, {"ms": 1.5}, {"ms": "5"}, {"ms": MaxSleepMs + 1}, {"steps": MaxSleepSteps + 1}, {"steps": -2},
		} {
			c.tool("sleep", args, nil, noMeta).toolError(t, "Invalid arguments: arguments.")
		}
	})
}

func TestSleepCancel(t *testing.T) {
	c := newConn(t, Config{ProgressInterval: -1})
	id := c.send("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60000, "steps": 600}},
		map[string]any{"progressToken": "cancel-me"})
	c.out.wait(t, 0, "first progress", "", func(m msg) bool {
		return m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"cancel-me"`)
	})
	c.cancel(id)
	from := c.out.len() // nothing for the request may follow the cancel
	waitIdle(t, c)      // the handler returned at once
	time.Sleep(150 * time.Millisecond)
	for _, m := range c.out.since(t, from) {
		if string(m.ID) == id || strings.Contains(string(m.Params), `"cancel-me"`) {
			t.Errorf("frame after cancel: %s", m.raw)
		}
	}
	if got := c.srv.Stats().Cancelled.Load(); got != 1 {
		t.Errorf("cancelled %d", got)
	}
	// The connection goes on; an unknown id is ignored (CAN-04).
	c.cancel(`"nobody"`)
	c.tool("echo", map[string]any{"text": "next"}, nil, noMeta).text(t)
}

// MRTR ----------------------------------------------------------------------------

func elicitAccept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

func samplingReply(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": text},
		"model": "test-model", "stopReason": "endTurn"}
}

var rootsReply = map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}}

// retry builds the extra params of a retry.
func retry(responses map[string]any, state *string) map[string]any {
	x := map[string]any{}
	if responses != nil {
		x["inputResponses"] = responses
	}
	if state != nil {
		x["requestState"] = *state
	}
	return x
}

func TestMRTRElicitation(t *testing.T) {
	c := newConn(t, Config{})
	const tool = "test_input_required_result_elicitation"
	r := c.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t)
	ir, ok := r.InputRequests["user_name"]
	if !ok || ir.Method != "elicitation/create" || r.RequestState == nil || *r.RequestState == "" {
		t.Fatalf("round 1: %+v", r)
	}
	var ep struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Type     string         `json:"type"`
			Props    map[string]any `json:"properties"`
			Required []string       `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(ir.Params, &ep); err != nil || ep.Message == "" || ep.RequestedSchema.Type != "object" ||
		ep.RequestedSchema.Props["name"] == nil || !slices.Equal(ep.RequestedSchema.Required, []string{"name"}) {
		t.Fatalf("elicitation params %s", ir.Params)
	}
	got := c.tool(tool, map[string]any{}, retry(map[string]any{"user_name": elicitAccept(map[string]any{"name": "Alice"})}, r.RequestState), noMeta).text(t)
	if got != "Hello, Alice!" {
		t.Errorf("round 2: %q", got)
	}
	// Without requestState, with extra keys: extra keys are ignored (MRTR-11).
	got = c.tool(tool, map[string]any{}, retry(map[string]any{
		"user_name":          elicitAccept(map[string]any{"name": "Bob"}),
		"unknown_extra_key":  elicitAccept(map[string]any{"foo": "bar"}),
		"another_unexpected": map[string]any{"action": "accept", "content": map[string]any{"baz": 123}},
	}, nil), noMeta).text(t)
	if got != "Hello, Bob!" {
		t.Errorf("extra keys: %q", got)
	}
	// A missing answer (wrong key) or an empty name: ask again (MRTR-11).
	c.tool(tool, map[string]any{}, retry(map[string]any{"wrong_key": elicitAccept(map[string]any{"data": "x"})}, nil), noMeta).inputRequired(t)
	c.tool(tool, map[string]any{}, retry(map[string]any{"user_name": elicitAccept(map[string]any{"name": ""})}, nil), noMeta).inputRequired(t)
	// An answer that is not an ElicitResult: -32602 naming the key.
	if e := c.tool(tool, map[string]any{}, retry(map[string]any{"user_name": 12345}, nil), noMeta).fails(t, -32602); !strings.Contains(e.Message, "inputResponses.user_name") {
		t.Errorf("malformed answer: %q", e.Message)
	}
	c.tool(tool, map[string]any{}, retry(map[string]any{"user_name": map[string]any{"action": "maybe"}}, nil), noMeta).fails(t, -32602)
	// A declined elicitation completes without a name.
	if got := c.tool(tool, map[string]any{}, retry(map[string]any{"user_name": map[string]any{"action": "decline"}}, nil), noMeta).text(t); !strings.Contains(got, "decline") {
		t.Errorf("decline: %q", got)
	}
	// inputResponses that is not an object is a protocol error.
	c.tool(tool, map[string]any{}, map[string]any{"inputResponses": nil}, noMeta).fails(t, -32602)
	c.tool(tool, map[string]any{}, map[string]any{"inputResponses": []any{}}, noMeta).fails(t, -32602)
	// Without the elicitation capability the tool is refused (MRTR-04, META-08).
	e := c.tool(tool, map[string]any{}, nil, capsMeta(`{"sampling":{}}`)).fails(t, -32021)
	if !strings.Contains(string(e.Data), `"elicitation":{}`) {
		t.Errorf("data %s", e.Data)
	}
}

func TestMRTRSamplingAndRoots(t *testing.T) {
	c := newConn(t, Config{})
	r := c.tool("test_input_required_result_sampling", map[string]any{}, nil, noMeta).inputRequired(t)
	ir := r.InputRequests["capital_question"]
	if ir.Method != "sampling/createMessage" || !strings.Contains(string(ir.Params), `"maxTokens":100`) ||
		!strings.Contains(string(ir.Params), `"role":"user"`) {
		t.Fatalf("sampling request %+v", r.InputRequests)
	}
	got := c.tool("test_input_required_result_sampling", map[string]any{},
		retry(map[string]any{"capital_question": samplingReply("Paris.")}, r.RequestState), noMeta).text(t)
	if got != "Sampling response: Paris." {
		t.Errorf("sampling: %q", got)
	}
	// Array content (sampling with tools) is accepted too.
	got = c.tool("test_input_required_result_sampling", map[string]any{},
		retry(map[string]any{"capital_question": map[string]any{"role": "assistant", "model": "m",
			"content": []any{map[string]any{"type": "text", "text": "Paris!"}}}}, nil), noMeta).text(t)
	if got != "Sampling response: Paris!" {
		t.Errorf("sampling array: %q", got)
	}

	r = c.tool("test_input_required_result_list_roots", map[string]any{}, nil, noMeta).inputRequired(t)
	if ir := r.InputRequests["client_roots"]; ir.Method != "roots/list" || string(ir.Params) != "{}" {
		t.Fatalf("roots request %+v", r.InputRequests)
	}
	got = c.tool("test_input_required_result_list_roots", map[string]any{},
		retry(map[string]any{"client_roots": rootsReply}, r.RequestState), noMeta).text(t)
	if !strings.Contains(got, "file:///test/root") || !strings.Contains(got, "1 root") {
		t.Errorf("roots: %q", got)
	}
	// A roots answer without roots: -32602.
	c.tool("test_input_required_result_list_roots", map[string]any{},
		retry(map[string]any{"client_roots": map[string]any{"nope": 1}}, nil), noMeta).fails(t, -32602)
	c.tool("test_input_required_result_list_roots", map[string]any{}, nil, capsMeta(`{"elicitation":{}}`)).fails(t, -32021)
}

func TestMRTRRequestState(t *testing.T) {
	c := newConn(t, Config{})
	const tool = "test_input_required_result_request_state"
	r := c.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t)
	if r.RequestState == nil || r.InputRequests["confirm"].Method != "elicitation/create" {
		t.Fatalf("round 1 %+v", r)
	}
	yes := map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}
	got := c.tool(tool, map[string]any{}, retry(yes, r.RequestState), noMeta).text(t)
	if !strings.Contains(got, "state-ok") {
		t.Errorf("round 2: %q", got)
	}
	// The same state may be retried (no single-use enforcement) ...
	c.tool(tool, map[string]any{}, retry(yes, r.RequestState), noMeta).text(t)
	// ... a verified state without the confirmation asks again with a new state ...
	r2 := c.tool(tool, map[string]any{}, retry(nil, r.RequestState), noMeta).inputRequired(t)
	if r2.RequestState == nil || r2.InputRequests["confirm"].Method == "" {
		t.Fatalf("re-ask %+v", r2)
	}
	// ... and a retry without any state starts over.
	c.tool(tool, map[string]any{}, retry(yes, nil), noMeta).inputRequired(t)
}

func TestMRTRMultipleInputs(t *testing.T) {
	c := newConn(t, Config{})
	const tool = "test_input_required_result_multiple_inputs"
	r := c.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t)
	methods := map[string]string{}
	for k, ir := range r.InputRequests {
		methods[k] = ir.Method
	}
	if len(methods) != 3 || methods["user_name"] != "elicitation/create" || methods["greeting"] != "sampling/createMessage" ||
		methods["client_roots"] != "roots/list" || r.RequestState == nil {
		t.Fatalf("round 1 %+v", r)
	}
	// Two of three: only the missing one is asked for again.
	partial := map[string]any{"user_name": elicitAccept(map[string]any{"name": "Alice"}), "client_roots": rootsReply}
	r2 := c.tool(tool, map[string]any{}, retry(partial, r.RequestState), noMeta).inputRequired(t)
	if len(r2.InputRequests) != 1 || r2.InputRequests["greeting"].Method != "sampling/createMessage" {
		t.Fatalf("re-ask %+v", r2.InputRequests)
	}
	partial["greeting"] = samplingReply("Hello there!")
	got := c.tool(tool, map[string]any{}, retry(partial, r2.RequestState), noMeta).text(t)
	if !strings.Contains(got, "Alice") || !strings.Contains(got, "Hello there!") || !strings.Contains(got, "roots=1") {
		t.Errorf("complete: %q", got)
	}
	e := c.tool(tool, map[string]any{}, nil, capsMeta(`{"elicitation":{},"sampling":{}}`)).fails(t, -32021)
	if !strings.Contains(string(e.Data), `"roots":{}`) {
		t.Errorf("data %s", e.Data)
	}
}

func TestMRTRMultiRound(t *testing.T) {
	c := newConn(t, Config{})
	const tool = "test_input_required_result_multi_round"
	r1 := c.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t)
	if r1.InputRequests["step1"].Method != "elicitation/create" || r1.RequestState == nil {
		t.Fatalf("round 1 %+v", r1)
	}
	r2 := c.tool(tool, map[string]any{}, retry(map[string]any{"step1": elicitAccept(map[string]any{"name": "Alice"})}, r1.RequestState), noMeta).inputRequired(t)
	if r2.InputRequests["step2"].Method != "elicitation/create" || r2.RequestState == nil || *r2.RequestState == *r1.RequestState {
		t.Fatalf("round 2 %+v", r2)
	}
	// The round-1 state replayed with a step2 answer is still round 1.
	c.tool(tool, map[string]any{}, retry(map[string]any{"step2": elicitAccept(map[string]any{"color": "red"})}, r1.RequestState), noMeta).inputRequired(t)
	got := c.tool(tool, map[string]any{}, retry(map[string]any{"step2": elicitAccept(map[string]any{"color": "blue"})}, r2.RequestState), noMeta).text(t)
	if got != "Multi-round complete: Alice's favorite color is blue" {
		t.Errorf("round 3: %q", got)
	}
	// Round 2 without its answer asks for step2 again, keeping the name.
	r2b := c.tool(tool, map[string]any{}, retry(nil, r2.RequestState), noMeta).inputRequired(t)
	got = c.tool(tool, map[string]any{}, retry(map[string]any{"step2": elicitAccept(map[string]any{"color": "green"})}, r2b.RequestState), noMeta).text(t)
	if !strings.Contains(got, "Alice's favorite color is green") {
		t.Errorf("round 3 after re-ask: %q", got)
	}
}

func TestMRTRTamperedState(t *testing.T) {
	clk := &clock{}
	key := bytes.Repeat([]byte{7}, 32)
	srv := newServerT(t, Config{State: stateSigner(t, clk, key)}, clk)
	c := dial(t, srv, nil)
	const tool = "test_input_required_result_tampered_state"
	yes := map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}
	fresh := func(args any) string {
		t.Helper()
		r := c.tool(tool, args, nil, noMeta).inputRequired(t)
		if r.RequestState == nil {
			t.Fatalf("no requestState: %+v", r)
		}
		return *r.RequestState
	}
	st := fresh(map[string]any{})

	bad := func(what string, state any, args any, name string) {
		t.Helper()
		m := c.tool(name, args, map[string]any{"inputResponses": yes, "requestState": state}, noMeta)
		if m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("%s: expected -32602, got %s", what, m.raw)
		}
	}
	bad("suffix", st+"-TAMPERED", map[string]any{}, tool)
	flipped := []byte(st)
	if flipped[3] == 'A' {
		flipped[3] = 'B'
	} else {
		flipped[3] = 'A'
	}
	bad("payload bit", string(flipped), map[string]any{}, tool)
	bad("tag only", st[strings.IndexByte(st, '.'):], map[string]any{}, tool)
	bad("no tag", st[:strings.IndexByte(st, '.')], map[string]any{}, tool)
	bad("empty", "", map[string]any{}, tool)
	bad("not a string", 5, map[string]any{}, tool)
	bad("null", nil, map[string]any{}, tool)
	bad("huge", strings.Repeat("A", 5000)+"."+strings.Repeat("B", 43), map[string]any{}, tool)
	bad("other tool", st, map[string]any{}, "test_input_required_result_request_state")
	bad("other arguments", st, map[string]any{"x": 1}, tool)

	// The genuine state passes; argument order and spacing do not matter.
	if got := c.tool(tool, map[string]any{}, retry(yes, &st), noMeta).text(t); !strings.Contains(got, "state-ok") {
		t.Fatalf("genuine state: %q", got)
	}
	st2 := fresh(map[string]any{"a": 1, "b": []any{"x", map[string]any{"c": true}}})
	id := `"reordered"`
	c.frame(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `",` +
		`"arguments":{ "b" : ["x",{"c":true}], "a":1 },"requestState":"` + st2 + `",` +
		`"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
	if got := c.reply(id).text(t); !strings.Contains(got, "state-ok") {
		t.Errorf("reordered arguments: %q", got)
	}

	// Expiry.
	clk.advance(mrtr.DefaultTTL - time.Minute)
	c.tool(tool, map[string]any{}, retry(yes, &st), noMeta).text(t)
	clk.advance(2 * time.Minute)
	bad("expired", st, map[string]any{}, tool)

	// A replica with the same key accepts the state; another key does not.
	st3 := fresh(map[string]any{})
	same := dial(t, newServerT(t, Config{State: stateSigner(t, clk, key)}, clk), nil)
	if got := same.tool(tool, map[string]any{}, retry(yes, &st3), noMeta).text(t); !strings.Contains(got, "state-ok") {
		t.Errorf("replica: %q", got)
	}
	other := dial(t, newServerT(t, Config{State: stateSigner(t, clk, bytes.Repeat([]byte{8}, 32))}, clk), nil)
	other.tool(tool, map[string]any{}, retry(yes, &st3), noMeta).fails(t, -32602)
}

type principal string

func (p principal) String() string { return string(p) }

func TestMRTRStateBoundToPrincipal(t *testing.T) {
	srv := newServerT(t, Config{}, nil)
	alice, bob, anon := dial(t, srv, principal("alice")), dial(t, srv, principal("bob")), dial(t, srv, nil)
	const tool = "test_input_required_result_request_state"
	yes := map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}
	st := alice.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t).RequestState
	bob.tool(tool, map[string]any{}, retry(yes, st), noMeta).fails(t, -32602)
	anon.tool(tool, map[string]any{}, retry(yes, st), noMeta).fails(t, -32602)
	alice.tool(tool, map[string]any{}, retry(yes, st), noMeta).text(t)
}

func TestMRTRCapabilities(t *testing.T) {
	c := newConn(t, Config{})
	const tool = "test_input_required_result_capabilities"
	keys := func(r result) []string {
		var ks []string
		for k := range r.InputRequests {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	r := c.tool(tool, map[string]any{}, nil, capsMeta(`{"sampling":{}}`)).inputRequired(t)
	if !slices.Equal(keys(r), []string{"greeting"}) || r.InputRequests["greeting"].Method != "sampling/createMessage" {
		t.Fatalf("sampling only: %+v", r.InputRequests)
	}
	r = c.tool(tool, map[string]any{}, nil, capsMeta(`{"elicitation":{},"roots":{}}`)).inputRequired(t)
	if !slices.Equal(keys(r), []string{"client_roots", "user_name"}) {
		t.Fatalf("elicitation+roots: %+v", r.InputRequests)
	}
	r = c.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t)
	if len(r.InputRequests) != 3 {
		t.Fatalf("all: %+v", r.InputRequests)
	}
	c.tool(tool, map[string]any{}, nil, capsMeta(`{}`)).text(t)
	// A capability whose value is not an object is not declared.
	r2 := c.tool(tool, map[string]any{}, nil, capsMeta(`{"elicitation":null,"sampling":false,"roots":{}}`)).inputRequired(t)
	if !slices.Equal(keys(r2), []string{"client_roots"}) {
		t.Fatalf("null/false capabilities: %+v", r2.InputRequests)
	}
	got := c.tool(tool, map[string]any{}, retry(map[string]any{"greeting": samplingReply("hi")}, r.RequestState), noMeta).text(t)
	if !strings.Contains(got, "greeting") {
		t.Errorf("retry: %q", got)
	}
}

func TestMRTRPrompt(t *testing.T) {
	c := newConn(t, Config{})
	const name = "test_input_required_result_prompt"
	r := c.do("prompts/get", map[string]any{"name": name}, noMeta).inputRequired(t)
	if r.InputRequests["user_context"].Method != "elicitation/create" || r.RequestState == nil {
		t.Fatalf("round 1 %+v", r)
	}
	p := c.do("prompts/get", map[string]any{"name": name, "requestState": *r.RequestState,
		"inputResponses": map[string]any{"user_context": elicitAccept(map[string]any{"context": "test context"})}}, noMeta).complete(t)
	if len(p.Messages) != 1 || p.Messages[0].Content.Text != "Context: test context" {
		t.Fatalf("round 2 %+v", p)
	}
	if p.TTLMs != nil {
		t.Errorf("prompts/get carries cache hints")
	}
	c.do("prompts/get", map[string]any{"name": name, "requestState": *r.RequestState + "x",
		"inputResponses": map[string]any{"user_context": elicitAccept(map[string]any{"context": "c"})}}, noMeta).fails(t, -32602)
	c.do("prompts/get", map[string]any{"name": name}, capsMeta(`{"elicitation":null}`)).fails(t, -32021)
	e := c.do("prompts/get", map[string]any{"name": name}, capsMeta(`{}`)).fails(t, -32021)
	if !strings.Contains(string(e.Data), `{"requiredCapabilities":{"elicitation":{}}}`) {
		t.Errorf("data %s", e.Data)
	}
}

func TestMRTRNotOnOtherMethods(t *testing.T) {
	c := newConn(t, Config{})
	for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover"} {
		if r := c.do(m, nil, noMeta).complete(t); r.InputRequests != nil || r.RequestState != nil {
			t.Errorf("%s carries MRTR members", m)
		}
	}
}

// resources, prompts, completion ---------------------------------------------------

func TestResources(t *testing.T) {
	c := newConn(t, Config{})
	read := func(uri string) result {
		t.Helper()
		r := c.do("resources/read", map[string]any{"uri": uri}, noMeta).complete(t)
		if len(r.Contents) != 1 || r.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, r.Contents)
		}
		if r.TTLMs == nil || *r.TTLMs < 0 || (r.CacheScope != "public" && r.CacheScope != "private") {
			t.Fatalf("read %s: cache hints %v %q", uri, r.TTLMs, r.CacheScope)
		}
		return r
	}
	if r := read(URIStaticText); r.Contents[0].MimeType != "text/plain" || r.Contents[0].Text == "" {
		t.Errorf("static text %+v", r.Contents)
	}
	r := read(URIStaticBinary)
	if r.Contents[0].MimeType != "image/png" || r.Contents[0].Text != "" {
		t.Errorf("static binary %+v", r.Contents)
	}
	checkPNG(t, r.Contents[0].Blob)
	if r := read(URIWatched); r.Contents[0].Text == "" {
		t.Errorf("watched %+v", r.Contents)
	}
	for _, id := range []string{"123", "42", `a"b`} {
		uri := "test://template/" + id + "/data"
		r := read(uri)
		var doc struct {
			ID           string `json:"id"`
			TemplateTest bool   `json:"templateTest"`
		}
		if err := json.Unmarshal([]byte(r.Contents[0].Text), &doc); err != nil || doc.ID != id || !doc.TemplateTest ||
			r.Contents[0].MimeType != "application/json" || !strings.Contains(r.Contents[0].Text, "Data for ID: ") {
			t.Errorf("template %s: %+v %v", id, r.Contents, err)
		}
	}
	for _, uri := range []string{"test://nonexistent-resource-for-conformance-testing", "test://template//data", "test://template/1/2/data"} {
		e := c.do("resources/read", map[string]any{"uri": uri}, noMeta).fails(t, -32602)
		var d struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil || d.URI != uri {
			t.Errorf("unknown %s: data %s", uri, e.Data)
		}
	}
}

func TestPrompts(t *testing.T) {
	c := newConn(t, Config{})
	get := func(name string, args map[string]any) result {
		t.Helper()
		p := map[string]any{"name": name}
		if args != nil {
			p["arguments"] = args
		}
		r := c.do("prompts/get", p, noMeta).complete(t)
		if len(r.Messages) == 0 {
			t.Fatalf("%s: no messages", name)
		}
		for _, m := range r.Messages {
			if m.Role != "user" && m.Role != "assistant" {
				t.Fatalf("%s: role %q", name, m.Role)
			}
		}
		return r
	}
	if r := get("test_simple_prompt", nil); r.Messages[0].Content.Type != "text" || r.Messages[0].Content.Text == "" {
		t.Errorf("simple %+v", r.Messages)
	}
	r := get("test_prompt_with_arguments", map[string]any{"arg1": "testValue1", "arg2": "testValue2"})
	if txt := r.Messages[0].Content.Text; !strings.Contains(txt, "testValue1") || !strings.Contains(txt, "testValue2") {
		t.Errorf("with arguments %q", txt)
	}
	c.do("prompts/get", map[string]any{"name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "x"}}, noMeta).fails(t, -32602)
	r = get("test_prompt_with_embedded_resource", map[string]any{"resourceUri": "test://example-resource"})
	if res := r.Messages[0].Content; res.Type != "resource" || res.Resource == nil || res.Resource.URI != "test://example-resource" || res.Resource.Text == "" {
		t.Errorf("embedded %+v", r.Messages)
	}
	c.do("prompts/get", map[string]any{"name": "test_prompt_with_embedded_resource"}, noMeta).fails(t, -32602)
	r = get("test_prompt_with_image", nil)
	if img := r.Messages[0].Content; img.Type != "image" || img.MimeType != "image/png" {
		t.Errorf("image %+v", r.Messages)
	} else {
		checkPNG(t, img.Data)
	}
	c.do("prompts/get", map[string]any{"name": "no_such_prompt"}, noMeta).fails(t, -32602)
}

func TestCompletion(t *testing.T) {
	c := newConn(t, Config{})
	complete := func(ref map[string]any, arg, value string) []string {
		t.Helper()
		r := c.do("completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}}, noMeta).complete(t)
		if r.Completion == nil || r.Completion.Values == nil {
			t.Fatalf("no completion.values")
		}
		if r.Completion.Total != 0 && r.Completion.Total < len(r.Completion.Values) {
			t.Fatalf("total %d < %d values", r.Completion.Total, len(r.Completion.Values))
		}
		return r.Completion.Values
	}
	prompt := map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}
	if got := complete(prompt, "arg1", "test"); !slices.Equal(got, []string{"test", "testValue1", "testing"}) {
		t.Errorf("arg1 test -> %v", got)
	}
	if got := complete(prompt, "arg1", "AP"); !slices.Equal(got, []string{"apple", "apricot"}) {
		t.Errorf("arg1 AP -> %v", got)
	}
	if got := complete(prompt, "arg1", ""); len(got) != 6 {
		t.Errorf("arg1 '' -> %v", got)
	}
	if got := complete(prompt, "arg2", "b"); !slices.Equal(got, []string{"beta", "banana"}) {
		t.Errorf("arg2 b -> %v", got)
	}
	if got := complete(prompt, "arg9", ""); len(got) != 0 {
		t.Errorf("unknown argument -> %v", got)
	}
	if got := complete(map[string]any{"type": "ref/resource", "uri": URITemplate}, "id", "4"); !slices.Equal(got, []string{"42"}) {
		t.Errorf("template id 4 -> %v", got)
	}
	c.do("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "nope"},
		"argument": map[string]any{"name": "a", "value": ""}}, noMeta).fails(t, -32602)
	c.do("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/tool", "name": "echo"},
		"argument": map[string]any{"name": "a", "value": ""}}, noMeta).fails(t, -32602)
	c.do("completion/complete", map[string]any{"ref": prompt}, noMeta).fails(t, -32602)
}

// TestConcurrentUse runs fixtures from several connections at once (race
// detector food: shared signer, transient toggles, big buffer).
func TestConcurrentUse(t *testing.T) {
	srv := newServerT(t, Config{ProgressInterval: -1}, nil)
	t.Run("group", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			t.Run(fmt.Sprint("conn", i), func(t *testing.T) {
				t.Parallel()
				c := dial(t, srv, nil)
				for j := 0; j < 10; j++ {
					s := fmt.Sprint("w", i, "-", j)
					if got := c.tool("echo", map[string]any{"text": s}, nil, noMeta).text(t); got != s {
						t.Errorf("echo %q", got)
					}
					c.tool("test_trigger_tool_change", map[string]any{}, nil, noMeta).text(t)
					c.tool("big", map[string]any{"bytes": 4096}, nil, noMeta).text(t)
					r := c.tool("test_input_required_result_request_state", map[string]any{"i": i}, nil, noMeta).inputRequired(t)
					got := c.tool("test_input_required_result_request_state", map[string]any{"i": i},
						retry(map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}, r.RequestState), noMeta).text(t)
					if !strings.Contains(got, "state-ok") {
						t.Errorf("state %q", got)
					}
					c.tool("sleep", map[string]any{"ms": 1, "steps": 2}, nil, map[string]any{"progressToken": s}).text(t)
				}
			})
		}
	})
}

// TestClockTicks: mcpwire://clock publishes an update every second to its
// listeners; mcpwire:// and test://load/ URIs can be read and touched.
func TestClockTicks(t *testing.T) {
	c := newConn(t, Config{})
	lid := c.send("subscriptions/listen", map[string]any{"notifications": map[string]any{
		"resourceSubscriptions": []string{URIClock, "mcpwire://mine"},
	}}, noMeta)
	c.out.wait(t, 0, "listen ack", "", func(m msg) bool { return m.Method == "notifications/subscriptions/acknowledged" })
	from := c.out.len()
	upd := c.out.wait(t, from, "clock update", "", func(m msg) bool {
		return m.Method == "notifications/resources/updated" && strings.Contains(string(m.Params), URIClock)
	})
	if !strings.Contains(upd.raw, `"io.modelcontextprotocol/subscriptionId":`+lid) {
		t.Fatalf("clock update %s", upd.raw)
	}
	from = c.out.len()
	c.tool("touch", map[string]any{"uri": "mcpwire://mine"}, nil, noMeta).text(t)
	c.out.wait(t, from, "touch update", "", func(m msg) bool {
		return m.Method == "notifications/resources/updated" && strings.Contains(string(m.Params), "mcpwire://mine")
	})
	got := c.do("resources/read", map[string]any{"uri": "test://load/abc"}, noMeta).complete(t)
	if len(got.Contents) != 1 || got.Contents[0].Text != "test://load/abc" {
		t.Fatalf("read test://load/abc: %+v", got.Contents)
	}
	c.cancel(lid)
	waitIdle(t, c)
}
