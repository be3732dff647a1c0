package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a scripted line server on one end of a net.Pipe: serve is
// called for each message the client sends, with a function that writes
// one raw line back.
type fake struct {
	t     *testing.T
	mu    sync.Mutex
	got   []map[string]json.RawMessage // every message received, in order
	raw   []string
	serve func(f *fake, msg map[string]json.RawMessage, raw string, reply func(string))
	dials int
	cut   bool // set by serve: close this connection now (a server that died)
}

func (f *fake) dial(ctx context.Context) (io.ReadWriteCloser, error) {
	a, b := net.Pipe()
	f.mu.Lock()
	f.dials++
	f.mu.Unlock()
	go func() {
		defer b.Close()
		var wmu sync.Mutex
		reply := func(line string) {
			wmu.Lock()
			defer wmu.Unlock()
			_, _ = io.WriteString(b, line+"\n")
		}
		sc := bufio.NewScanner(b)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				f.t.Errorf("client sent a line that is not JSON: %q", sc.Text())
				return
			}
			f.mu.Lock()
			f.got = append(f.got, m)
			f.raw = append(f.raw, sc.Text())
			f.mu.Unlock()
			f.serve(f, m, sc.Text(), reply)
			f.mu.Lock()
			cut := f.cut
			f.cut = false
			f.mu.Unlock()
			if cut {
				return
			}
		}
	}()
	return a, nil
}

func (f *fake) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.raw...)
}

func method(m map[string]json.RawMessage) string {
	var s string
	_ = json.Unmarshal(m["method"], &s)
	return s
}

func newFake(t *testing.T, serve func(f *fake, msg map[string]json.RawMessage, raw string, reply func(string)), o Config) (*Client, *fake, *LineTransport) {
	t.Helper()
	f := &fake{t: t, serve: serve}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lt := NewLineTransport(f.dial, LineConfig{Logger: o.Logger, MaxLine: 4096, MinBackoff: time.Millisecond})
	c := New(lt, o)
	t.Cleanup(func() { c.Close() })
	return c, f, lt
}

const discoverOK = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`

// modern answers server/discover and hands other requests to rest.
func modern(rest func(m map[string]json.RawMessage, raw string, reply func(string))) func(*fake, map[string]json.RawMessage, string, func(string)) {
	return func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
		id := string(m["id"])
		switch method(m) {
		case "server/discover":
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":` + discoverOK + `}`)
		default:
			rest(m, raw, reply)
		}
	}
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRequestShape: every request carries the META-02 keys, a
// progressToken only when progress is asked for, and the caller's
// params; results without resultType read as complete (COMPAT-08).
func TestRequestShape(t *testing.T) {
	c, f, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	}), Config{Info: mcp.Implementation{Name: "shape-test", Version: "9"}})
	ctx := ctx10(t)
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "x"}, &CallOptions{OnProgress: func(Progress) {}})
	if err != nil || res.Text() != "hi" {
		t.Fatalf("call: %v %+v", err, res)
	}
	r, err := c.Call(ctx, "tools/list", nil, nil)
	if err != nil || r.Type != "complete" {
		t.Fatalf("a result without resultType: %v %+v, want complete (COMPAT-08)", err, r)
	}
	msgs := f.messages()
	if len(msgs) != 3 {
		t.Fatalf("server got %d messages: %q", len(msgs), msgs)
	}
	var call struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
			Meta      map[string]json.RawMessage
		} `json:"params"`
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(msgs[1]), &raw)
	if err := json.Unmarshal([]byte(msgs[1]), &call); err != nil {
		t.Fatal(err)
	}
	meta := raw["params"].(map[string]any)["_meta"].(map[string]any)
	if meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" || meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		t.Fatalf("_meta %v lacks META-02 keys", meta)
	}
	if info, _ := meta["io.modelcontextprotocol/clientInfo"].(map[string]any); info["name"] != "shape-test" {
		t.Fatalf("clientInfo %v", meta["io.modelcontextprotocol/clientInfo"])
	}
	if tok, ok := meta["progressToken"]; !ok || fmt.Sprint(tok) != string(call.ID) {
		t.Fatalf("progressToken %v, want the id %s", tok, call.ID)
	}
	if call.Params.Name != "echo" || call.Params.Arguments["text"] != "x" {
		t.Fatalf("params %+v", call.Params)
	}
	if strings.Contains(msgs[2], "progressToken") {
		t.Fatalf("progressToken sent without OnProgress: %s", msgs[2])
	}
}

// TestStrayAndUnmatched: a line that is not JSON-RPC and a reply with an
// id nobody waits for are counted and skipped, never fatal.
func TestStrayAndUnmatched(t *testing.T) {
	c, _, lt := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		reply(`this is not JSON`)
		reply(`{"jsonrpc":"2.0","id":999999,"result":{}}`)
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"resultType":"complete","content":[]}}`)
	}), Config{})
	if _, err := c.CallTool(ctx10(t), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	st := lt.Stats()
	if st.StrayLines != 1 || st.Unmatched != 1 {
		t.Fatalf("stats %+v, want 1 stray line and 1 unmatched reply", st)
	}
}

// TestReplyTooLarge: a reply over MaxLine fails its call with ErrTooLarge
// at once (its id is read from the line's first bytes) and the stream
// goes on.
func TestReplyTooLarge(t *testing.T) {
	c, _, lt := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		var args struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(raw), &args)
		text := "small"
		if args.Params.Name == "big" {
			text = strings.Repeat("x", 10000)
		}
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"resultType":"complete","content":[{"type":"text","text":"` + text + `"}]}}`)
	}), Config{})
	ctx := ctx10(t)
	if _, err := c.CallTool(ctx, "big", nil, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big reply: %v, want ErrTooLarge", err)
	}
	if res, err := c.CallTool(ctx, "small", nil, nil); err != nil || res.Text() != "small" {
		t.Fatalf("after a big reply: %v", err)
	}
	if lt.Stats().TooLong != 1 {
		t.Fatalf("stats %+v", lt.Stats())
	}
}

// TestCancelSendsNotification: a call abandoned by its context sends
// notifications/cancelled with its id (STD-10, TMO-01); the late reply is
// ignored (CAN-05).
func TestCancelSendsNotification(t *testing.T) {
	var held sync.Map
	c, f, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		if method(m) == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m["params"], &p)
			if r, ok := held.Load(string(p.RequestID)); ok {
				r.(func(string))(`{"jsonrpc":"2.0","id":` + string(p.RequestID) + `,"result":{}}`)
			}
			return
		}
		held.Store(string(m["id"]), reply) // never answered
	}), Config{})
	// The era first (server/discover is id 1), so the short deadline below
	// can only cancel the call itself, however slow a loaded machine is.
	if _, err := c.Probe(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx10(t), 30*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range f.messages() {
			if strings.Contains(m, `"notifications/cancelled"`) && strings.Contains(m, `"requestId":2`) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no notifications/cancelled for id 2: %q", f.messages())
}

// TestProbeLegacy: a server that answers server/discover with an error
// that is not a recognised modern one is legacy (STD-17 case 3): the
// client initializes with 2025-11-25, sends notifications/initialized and
// then requests without the modern claims.
func TestProbeLegacy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		discover func(id string, reply func(string))
	}{
		{"method-not-found", func(id string, reply func(string)) {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"Method not found"}}`)
		}},
		{"not-initialized", func(id string, reply func(string)) {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32002,"message":"Server not initialized"}}`)
		}},
		{"silent", func(id string, reply func(string)) {}},
		{"discover-lists-legacy-only", func(id string, reply func(string)) {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Short only where nothing answers: a slow answer on a
			// loaded machine must not turn into a timeout.
			probeTimeout := 5 * time.Second
			if tc.name == "silent" {
				probeTimeout = 100 * time.Millisecond
			}
			c, f, _ := newFake(t, func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
				id := string(m["id"])
				switch method(m) {
				case "server/discover":
					tc.discover(id, reply)
				case "initialize":
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}`)
				case "notifications/initialized", "notifications/cancelled":
				default:
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"legacy"}]}}`)
				}
			}, Config{ProbeTimeout: probeTimeout})
			res, err := c.CallTool(ctx10(t), "echo", nil, nil)
			if err != nil || res.Text() != "legacy" {
				t.Fatalf("call: %v", err)
			}
			if c.Era() != Era2025 || c.ProtocolVersion() != Version2025 || c.Server().Info.Name != "old" {
				t.Fatalf("era %s %s %+v", c.Era(), c.ProtocolVersion(), c.Server())
			}
			msgs := f.messages()
			var seq []string
			for _, m := range msgs {
				var x map[string]json.RawMessage
				_ = json.Unmarshal([]byte(m), &x)
				if mm := method(x); mm != "notifications/cancelled" {
					seq = append(seq, mm)
				}
			}
			if strings.Join(seq, ",") != "server/discover,initialize,notifications/initialized,tools/call" {
				t.Fatalf("sequence %v", seq)
			}
			if strings.Contains(msgs[len(msgs)-1], "io.modelcontextprotocol/protocolVersion") {
				t.Fatalf("legacy request carries the modern claim: %s", msgs[len(msgs)-1])
			}
		})
	}
}

// TestProbeConnectionLost: a line server whose connection ends during
// the version probe (it died) is probed again on a new connection, not
// taken for a legacy server; one that dies at every probe is (a legacy
// server that does not survive an unknown method; STD-17, issue 20).
func TestProbeConnectionLost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dies  int // probes the server dies on
		era   Era
		dials int
	}{
		{"once", 1, EraModern, 2},
		{"always", 100, Era2025, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			died := 0
			c, f, _ := newFake(t, func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
				id := string(m["id"])
				switch method(m) {
				case "server/discover":
					if died < tc.dies {
						died++
						f.mu.Lock()
						f.cut = true
						f.mu.Unlock()
						return
					}
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":` + discoverOK + `}`)
				case "initialize":
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}`)
				case "notifications/initialized", "notifications/cancelled":
				default:
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ok"}]}}`)
				}
			}, Config{ProbeTimeout: 5 * time.Second})
			res, err := c.CallTool(ctx10(t), "echo", nil, nil)
			if err != nil || res.Text() != "ok" {
				t.Fatalf("call: %v", err)
			}
			f.mu.Lock()
			dials := f.dials
			f.mu.Unlock()
			if c.Era() != tc.era || dials != tc.dials {
				t.Fatalf("era %s after %d connections, want %s after %d", c.Era(), dials, tc.era, tc.dials)
			}
		})
	}
}

// TestFixedLegacyEra: Config.Era = Era2025 skips server/discover and
// runs initialize on first use, Probe included.
func TestFixedLegacyEra(t *testing.T) {
	c, f, _ := newFake(t, func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
		id := string(m["id"])
		switch method(m) {
		case "initialize":
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}`)
		case "notifications/initialized":
		default:
			reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"Method not found"}}`)
		}
	}, Config{Era: Era2025})
	d, err := c.Probe(ctx10(t))
	if err != nil || d == nil || d.Info.Name != "old" {
		t.Fatalf("probe: %+v, %v", d, err)
	}
	if c.Era() != Era2025 || c.ProtocolVersion() != Version2025 {
		t.Fatalf("era %s version %s", c.Era(), c.ProtocolVersion())
	}
	for _, m := range f.messages() {
		if strings.Contains(m, "server/discover") || strings.Contains(m, "io.modelcontextprotocol/protocolVersion") {
			t.Fatalf("fixed legacy era sent %s", m)
		}
	}
}

// TestProbeUnsupportedVersion: -32022 is a recognised modern error (STD-17
// case 2): the client retries with a version from data.supported and
// never falls back to initialize.
func TestProbeUnsupportedVersion(t *testing.T) {
	c, f, _ := newFake(t, func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
		id := string(m["id"])
		if strings.Contains(raw, `"2099-01-01"`) {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`)
			return
		}
		reply(`{"jsonrpc":"2.0","id":` + id + `,"result":` + discoverOK + `}`)
	}, Config{Version: "2099-01-01"})
	if _, err := c.Probe(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	if c.Era() != EraModern || c.ProtocolVersion() != Version2026 {
		t.Fatalf("era %s version %s", c.Era(), c.ProtocolVersion())
	}
	for _, m := range f.messages() {
		if strings.Contains(m, `"initialize"`) {
			t.Fatal("fell back to initialize after -32022")
		}
	}
}

// TestProbeDroppedAndVersionRetry: the retry after a dropped connection
// and the DISC-04 version retry (-32022 with a mutual version) each have
// their own budget, in either order: the probe ends modern with the mutual
// version, never "no mutual protocol version" and never initialize
// (STD-17, DISC-04, issue 20).
func TestProbeDroppedAndVersionRetry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []string // what server/discover does, in order: "cut", "32022", then OK
	}{
		{"dropped-then-32022", []string{"cut", "32022"}},
		{"32022-then-dropped", []string{"32022", "cut"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			c, f, _ := newFake(t, func(f *fake, m map[string]json.RawMessage, raw string, reply func(string)) {
				id := string(m["id"])
				switch method(m) {
				case "server/discover":
					mu.Lock()
					step := "ok"
					if n < len(tc.steps) {
						step = tc.steps[n]
					}
					n++
					mu.Unlock()
					switch {
					case step == "cut":
						f.mu.Lock()
						f.cut = true
						f.mu.Unlock()
					case step == "32022" || strings.Contains(raw, `"2099-01-01"`):
						reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`)
					default:
						reply(`{"jsonrpc":"2.0","id":` + id + `,"result":` + discoverOK + `}`)
					}
				case "initialize":
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}`)
				}
			}, Config{Version: "2099-01-01", ProbeTimeout: 5 * time.Second})
			if _, err := c.Probe(ctx10(t)); err != nil {
				t.Fatalf("probe: %v", err)
			}
			if c.Era() != EraModern || c.ProtocolVersion() != Version2026 {
				t.Fatalf("era %s version %s, want modern %s", c.Era(), c.ProtocolVersion(), Version2026)
			}
			for _, m := range f.messages() {
				if strings.Contains(m, `"initialize"`) {
					t.Fatal("fell back to initialize")
				}
			}
		})
	}
}

// TestMRTR: inputs go to OnInput, the retry carries a new id, the original
// params, inputResponses and requestState byte for byte (MRTR-05); the
// round limit holds (MRTR-12).
func TestMRTR(t *testing.T) {
	const state = `"opaque<&>\u00e9state"`
	c, f, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		id := string(m["id"])
		var p map[string]json.RawMessage
		_ = json.Unmarshal(m["params"], &p)
		if string(p["name"]) == `"forever"` {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","requestState":"again"}}`)
			return
		}
		if p["requestState"] == nil {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"name?"}}},"requestState":` + state + `}}`)
			return
		}
		if string(p["requestState"]) != state {
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":"state changed: ` + strings.ReplaceAll(string(p["requestState"]), `"`, `'`) + `"}]}}`)
			return
		}
		reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok ` + strings.ReplaceAll(string(p["inputResponses"]), `"`, `'`) + `"}]}}`)
	}), Config{MaxInputRounds: 3, OnInput: func(ctx context.Context, key string, r mcp.InputRequest) (json.RawMessage, error) {
		if key != "who" || r.Method != "elicitation/create" {
			return nil, fmt.Errorf("unexpected %s %s", key, r.Method)
		}
		return json.RawMessage(`{"action":"accept","content":{"name":"z"}}`), nil
	}})
	ctx := ctx10(t)
	res, err := c.CallTool(ctx, "ask", map[string]int{"n": 1}, nil)
	if err != nil || !strings.HasPrefix(res.Text(), "ok ") || !strings.Contains(res.Text(), "accept") {
		t.Fatalf("mrtr: %v %+v", err, res)
	}
	msgs := f.messages()
	last := msgs[len(msgs)-1]
	if !strings.Contains(last, `"arguments":{"n":1}`) || !strings.Contains(last, `"id":3`) {
		t.Fatalf("retry %s lacks the original params or a new id", last)
	}
	if _, err := c.CallTool(ctx, "forever", nil, nil); err == nil || !strings.Contains(err.Error(), "rounds") {
		t.Fatalf("round limit: %v", err)
	}
}

// TestUnknownResultType: GEN-10, an unrecognised resultType is invalid.
func TestUnknownResultType(t *testing.T) {
	c, _, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"resultType":"task"}}`)
	}), Config{})
	if _, err := c.Call(ctx10(t), "tools/list", nil, nil); err == nil || !strings.Contains(err.Error(), "resultType") {
		t.Fatalf("err %v", err)
	}
}

// TestListenEndsOnServerCancel: a server's notifications/cancelled naming
// the listen id ends the subscription cleanly (SUB-11); the completion
// result does too (SUB-10).
func TestListenEnds(t *testing.T) {
	for _, end := range []string{"cancelled", "result"} {
		t.Run(end, func(t *testing.T) {
			c, _, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
				id := string(m["id"])
				if method(m) != "subscriptions/listen" {
					return
				}
				reply(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`)
				reply(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`)
				if end == "cancelled" {
					reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
				} else {
					reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`)
				}
			}), Config{})
			s, err := c.Listen(ctx10(t), Filter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []EventKind
			for e := range s.Events() {
				kinds = append(kinds, e.Kind)
			}
			if len(kinds) != 2 || kinds[0] != EventAcknowledged || kinds[1] != EventNotification || s.Err() != nil {
				t.Fatalf("events %v err %v", kinds, s.Err())
			}
		})
	}
}

// TestParamHeaders: PARAM-05/06 extraction and the header forms (the
// PARAM-02 validity rules are mcp.ParseHeaderBindings', tested there).
func TestParamHeaders(t *testing.T) {
	bs, _ := mcp.ParseHeaderBindings(json.RawMessage(`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"},"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"},"z":{"type":"string","x-mcp-header":"Z"}}}`))
	hs, err := paramHeaders(bs, json.RawMessage(`{"r":"日本","n":42.0,"b":false,"z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(hs)
	if got != "[{Mcp-Param-B false} {Mcp-Param-N 42} {Mcp-Param-R =?base64?5pel5pys?=}]" {
		t.Fatalf("headers %s", got)
	}
	if _, err := paramHeaders(bs, json.RawMessage(`{"n":1.5}`)); err == nil {
		t.Fatal("a fraction in an integer header was accepted")
	}
}

// TestEndlessStream: a server that never stops sending progress for a
// call does not hold it past its timeout (TMO-01), and the caller sees a
// clear deadline error.
func TestEndlessStream(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	c, _, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		if method(m) != "tools/call" {
			return
		}
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				reply(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, m["id"], i))
			}
		}()
	}), Config{Timeout: 200 * time.Millisecond})
	var n int
	start := time.Now()
	_, err := c.CallTool(context.Background(), "endless", nil, &CallOptions{OnProgress: func(Progress) { n++ }})
	if !errors.Is(err, context.DeadlineExceeded) || n == 0 {
		t.Fatalf("err %v after %d notifications", err, n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestPrettyParams: params with newlines are sent compact, one line
// (STD-02).
func TestPrettyParams(t *testing.T) {
	c, f, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		reply(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"resultType":"complete","content":[]}}`)
	}), Config{})
	if _, err := c.CallTool(ctx10(t), "x", json.RawMessage("{\n  \"a\": 1\n}"), nil); err != nil {
		t.Fatal(err)
	}
	if msgs := f.messages(); !strings.Contains(msgs[len(msgs)-1], `"arguments":{"a":1}`) {
		t.Fatalf("sent %q", msgs[len(msgs)-1])
	}
}

// TestHeaderMismatchRefresh: a -32020 on tools/call makes the client list
// the tools again and retry once with the new annotations (PARAM-11).
func TestHeaderMismatchRefresh(t *testing.T) {
	var lists int
	var mu sync.Mutex
	c, f, _ := newFake(t, modern(func(m map[string]json.RawMessage, raw string, reply func(string)) {
		id := string(m["id"])
		mu.Lock()
		defer mu.Unlock()
		switch method(m) {
		case "tools/list":
			lists++
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","tools":[{"name":"r","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}}`)
		case "tools/call":
			if lists == 0 {
				reply(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32020,"message":"Header mismatch: Mcp-Param-Region missing"}}`)
				return
			}
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`)
		}
	}), Config{})
	res, err := c.CallTool(ctx10(t), "r", map[string]string{"region": "eu"}, nil)
	if err != nil || res.Text() != "ok" {
		t.Fatalf("%v %+v", err, res)
	}
	msgs := f.messages()
	if len(msgs) != 4 { // discover, call, list, call
		t.Fatalf("%d messages: %q", len(msgs), msgs)
	}
}

// TestRelistenable: a 503 (a replica without its backplane) is worth a
// new listen; a JSON-RPC refusal is not.
func TestRelistenable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", ErrDropped), true},
		{fmt.Errorf("x: %w", ErrNotDelivered), true},
		{&StatusError{Status: 503}, true},
		{&RPCError{Code: -32603, Status: 503}, true},
		{&RPCError{Code: -32602, Status: 400}, false},
		{&StatusError{Status: 404}, false},
		{ErrClosed, false},
	} {
		if got := relistenable(tc.err); got != tc.want {
			t.Errorf("relistenable(%v) = %v", tc.err, got)
		}
	}
}
