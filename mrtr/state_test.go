package mrtr_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
)

var (
	key1 = bytes.Repeat([]byte{1}, 32)
	key2 = bytes.Repeat([]byte{2}, 32)
)

func signer(t *testing.T, cfg mrtr.Config) *mrtr.Signer {
	t.Helper()
	s, err := mrtr.NewSigner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`

// deployTool is the EXAMPLES.md §10 tool: round 1 asks for a confirmation
// with a state carrying "step-1"; the retry verifies the state (SEC-07)
// and reads the answer.
func deployTool(name string, s *mrtr.Signer) engine.Tool {
	return engine.Tool{Name: name, Handler: func(c *engine.Call) error {
		data, ok, err := s.Verify(c)
		if err != nil {
			return err
		}
		in, err := mrtr.Responses(c)
		if err != nil {
			return err
		}
		ans, err := in.Elicit("confirm")
		if !ok || errors.Is(err, mrtr.ErrResponseMissing) {
			return s.Ask(c, map[string]mcp.InputRequest{"confirm": mrtr.Elicit("Deploy?", confirmSchema)}, []byte("step-1"))
		}
		if err != nil {
			return err
		}
		c.Text("deployed after " + string(data) + ": " + ans.Action)
		return nil
	}}
}

func serverWith(t *testing.T, s *mrtr.Signer, tools ...string) *engine.Server {
	t.Helper()
	srv := newEngine(t)
	for _, name := range tools {
		if err := srv.AddTool(deployTool(name, s)); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

const yes = `"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}`

func retry(name, args, state string) string {
	return `{"name":"` + name + `","arguments":` + args + `,` + yes + `,"requestState":"` + state + `"}`
}

// TestBindingThroughEngine: a state verifies for the retry of the request
// that received it, whatever the spelling of its arguments, and for no
// other principal, tool or arguments (SEC-07, MRTR-05).
func TestBindingThroughEngine(t *testing.T) {
	s := signer(t, mrtr.Config{Keys: [][]byte{key1}})
	srv := serverWith(t, s, "deploy", "other")
	alice, bob, anon := dial(t, srv, "alice"), dial(t, srv, "bob"), dial(t, srv, nil)

	args := `{"env":"prod","n":1,"tags":["a","b"],"opt":{"x":true,"y":null}}`
	st := alice.do("tools/call", `{"name":"deploy","arguments":`+args+`}`).state(t)
	if got := alice.do("tools/call", retry("deploy", args, st)).text(t); got != "deployed after step-1: accept" {
		t.Fatalf("retry: %q", got)
	}
	// The same value spelled otherwise: members reordered, spacing,
	// escapes, number spelling.
	same := ` { "tags" : [ "a" , "\u0062" ] , "opt":{"y":null,"x":true}, "n": 1.0e0, "env":"pr\u006fd" } `
	if got := alice.do("tools/call", retry("deploy", same, st)).text(t); !strings.HasPrefix(got, "deployed") {
		t.Fatalf("respelled arguments: %q", got)
	}
	for i, v := range []struct {
		c          *conn
		name, args string
		want       string
	}{
		0: {bob, "deploy", args, "another principal"},
		1: {anon, "deploy", args, "another principal"},
		2: {alice, "other", args, "another tool"},
		3: {alice, "deploy", `{"env":"dev","n":1,"tags":["a","b"],"opt":{"x":true,"y":null}}`, "other arguments"},
		4: {alice, "deploy", `{"env":"prod","n":2,"tags":["a","b"],"opt":{"x":true,"y":null}}`, "other arguments"},
		5: {alice, "deploy", `{"env":"prod","n":1,"tags":["b","a"],"opt":{"x":true,"y":null}}`, "other arguments"},
		6: {alice, "deploy", `{"env":"prod","n":1,"tags":["a","b"],"opt":{"x":true}}`, "other arguments"},
		7: {alice, "deploy", `{}`, "other arguments"},
	} {
		r := v.c.do("tools/call", retry(v.name, v.args, st))
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, v.want) {
			t.Errorf("%d: want -32602 %q, got %+v", i, v.want, r.Error)
		}
	}
	if st := s.Stats(); st.WrongPrincipal.Load() != 2 || st.WrongTarget.Load() != 1 || st.WrongArguments.Load() != 5 || st.Verified.Load() != 2 {
		t.Errorf("stats: principal %d target %d arguments %d verified %d", st.WrongPrincipal.Load(), st.WrongTarget.Load(), st.WrongArguments.Load(), st.Verified.Load())
	}
	// A retry without state starts over (MRTR-05: the state is echoed
	// only when one was given).
	anon.do("tools/call", `{"name":"deploy","arguments":{},`+yes+`}`).state(t)
}

// TestPromptAndResourceTargets: prompts/get binds to the prompt name,
// resources/read to the URI.
func TestPromptAndResourceTargets(t *testing.T) {
	s := signer(t, mrtr.Config{})
	srv := newEngine(t)
	// ask answers the first round with a state; ok reports a verified retry.
	ask := func(c *engine.Call) (ok bool, err error) {
		_, ok, err = s.Verify(c)
		if err == nil && !ok {
			err = s.Ask(c, nil, nil)
		}
		return ok, err
	}
	for _, p := range []string{"p1", "p2"} {
		if err := srv.AddPrompt(engine.Prompt{Name: p, Handler: func(c *engine.Call) error {
			if ok, err := ask(c); !ok {
				return err
			}
			return c.Return(mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("ok")}}})
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.AddResourceTemplate(engine.ResourceTemplate{URITemplate: "test://doc/{id}", Name: "doc", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
		if ok, err := ask(c); !ok {
			return err
		}
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "ok"}}})
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv, nil)
	st := c.do("prompts/get", `{"name":"p1"}`).state(t)
	if got := c.do("prompts/get", `{"name":"p1","requestState":"`+st+`"}`).text(t); got != "ok" {
		t.Fatalf("prompt retry: %q", got)
	}
	c.do("prompts/get", `{"name":"p2","requestState":"`+st+`"}`).fails(t, "another prompt")
	st = c.do("resources/read", `{"uri":"test://doc/1"}`).state(t)
	if got := c.do("resources/read", `{"uri":"test://doc/1","requestState":"`+st+`"}`).text(t); got != "ok" {
		t.Fatalf("resource retry: %q", got)
	}
	c.do("resources/read", `{"uri":"test://doc/2","requestState":"`+st+`"}`).fails(t, "another resource")
}

// TestReplicas: two engines whose signers load the same key file accept
// each other's states (MRTR-09); an engine with other keys refuses them
// as signed with a key it does not hold; rotation keeps states in flight
// valid.
func TestReplicas(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hex1, hex2 := strings.Repeat("01", 32), strings.Repeat("02", 32)
	load := func(file string) *mrtr.Signer {
		keys, err := mrtr.LoadKeys(file, func(string) string { return "" }, nil)
		if err != nil {
			t.Fatal(err)
		}
		return signer(t, mrtr.Config{Keys: keys})
	}
	fleet := write("fleet", "# fleet keys\n"+hex1+"\n")
	a := dial(t, serverWith(t, load(fleet), "deploy"), "alice")
	bSigner := load(fleet)
	b := dial(t, serverWith(t, bSigner, "deploy"), "alice")
	otherSigner := load(write("other", hex2))
	other := dial(t, serverWith(t, otherSigner, "deploy"), "alice")

	st := a.do("tools/call", `{"name":"deploy","arguments":{"env":"prod"}}`).state(t)
	if got := b.do("tools/call", retry("deploy", `{"env":"prod"}`, st)).text(t); !strings.HasPrefix(got, "deployed") {
		t.Fatalf("replica b: %q", got)
	}
	other.do("tools/call", retry("deploy", `{"env":"prod"}`, st)).fails(t, "key this server does not hold")
	if otherSigner.Stats().ForeignKey.Load() != 1 || bSigner.Stats().Verified.Load() != 1 {
		t.Errorf("stats: foreign %d, verified %d", otherSigner.Stats().ForeignKey.Load(), bSigner.Stats().Verified.Load())
	}

	// Rotation, step 1: "new, old" everywhere. The old state still
	// verifies; new states are signed with the new key.
	rotated := write("rotated", hex2+"\n"+hex1+"\n")
	r1 := dial(t, serverWith(t, load(rotated), "deploy"), "alice")
	if got := r1.do("tools/call", retry("deploy", `{"env":"prod"}`, st)).text(t); !strings.HasPrefix(got, "deployed") {
		t.Fatalf("rotated replica, old state: %q", got)
	}
	st2 := r1.do("tools/call", `{"name":"deploy","arguments":{"env":"prod"}}`).state(t)
	// Step 2: "new" alone, once old states expired: new states verify,
	// old ones are foreign.
	r2 := dial(t, serverWith(t, load(write("new", hex2)), "deploy"), "alice")
	r2.do("tools/call", retry("deploy", `{"env":"prod"}`, st2)).text(t)
	r2.do("tools/call", retry("deploy", `{"env":"prod"}`, st)).fails(t, "key this server does not hold")
}

// TestOpenRefusals: every way a state fails, its reason, message and
// counter.
func TestOpenRefusals(t *testing.T) {
	clk := newClock()
	s := signer(t, mrtr.Config{Keys: [][]byte{key1}, Now: clk.now, MaxData: 64})
	b := mrtr.Binding{Principal: "alice", Method: "tools/call", Target: "deploy", Arguments: []byte(`{"env":"prod"}`)}
	st, err := s.Seal(b, []byte("round 2"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := s.Open(b, st); err != nil || string(data) != "round 2" {
		t.Fatalf("genuine: %q %v", data, err)
	}
	dot := strings.IndexByte(st, '.')
	payload, _ := base64.RawURLEncoding.DecodeString(st[:dot])
	reencode := func(p []byte) string { return base64.RawURLEncoding.EncodeToString(p) + st[dot:] }
	flip := func(i int) string {
		p := append([]byte(nil), payload...)
		p[i] ^= 1
		return reencode(p)
	}
	otherKey := signer(t, mrtr.Config{Keys: [][]byte{key2}, Now: clk.now})
	foreign, _ := otherKey.Seal(b, nil)
	big, _ := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{key1}, Now: clk.now, MaxData: -1})
	tooLong, _ := big.Seal(b, bytes.Repeat([]byte{'x'}, 100))
	v2 := append([]byte(nil), payload...)
	v2[0] = 2

	for i, v := range []struct {
		state  string
		b      mrtr.Binding
		reason error
		msg    string
	}{
		0:  {"", b, mrtr.ErrStateMalformed, "malformed"},
		1:  {st + "-TAMPERED", b, mrtr.ErrStateMalformed, "malformed"},
		2:  {st[:dot], b, mrtr.ErrStateMalformed, "malformed"},
		3:  {st[dot:], b, mrtr.ErrStateMalformed, "malformed"},
		4:  {st + "=", b, mrtr.ErrStateMalformed, "malformed"},
		5:  {strings.Replace(st, ".", "..", 1), b, mrtr.ErrStateMalformed, "malformed"},
		6:  {"%%%%." + st[dot+1:], b, mrtr.ErrStateMalformed, "malformed"},
		7:  {reencode(payload[:20]), b, mrtr.ErrStateMalformed, "malformed"},
		8:  {reencode(v2), b, mrtr.ErrStateMalformed, "malformed"},
		9:  {tooLong, b, mrtr.ErrStateMalformed, "malformed"},
		10: {strings.Repeat("A", 5000) + "." + st[dot+1:], b, mrtr.ErrStateMalformed, "malformed"},
		11: {foreign, b, mrtr.ErrStateForeignKey, "key this server does not hold"},
		12: {flip(2), b, mrtr.ErrStateForeignKey, "key this server does not hold"}, // the key id
		13: {flip(8), b, mrtr.ErrStateTampered, "integrity check"},                 // the expiry
		14: {flip(20), b, mrtr.ErrStateTampered, "integrity check"},                // a binding
		15: {flip(len(payload) - 1), b, mrtr.ErrStateTampered, "integrity check"},  // the data
		16: {st[:dot+1] + strings.Repeat("A", 43), b, mrtr.ErrStateTampered, "integrity check"},
		17: {st, mrtr.Binding{Principal: "bob", Method: b.Method, Target: b.Target, Arguments: b.Arguments}, mrtr.ErrStateWrongPrincipal, "another principal"},
		18: {st, mrtr.Binding{Principal: stringer("alice"), Method: b.Method, Target: b.Target, Arguments: b.Arguments}, mrtr.ErrStateWrongPrincipal, "another principal"},
		19: {st, mrtr.Binding{Principal: 42, Method: b.Method, Target: b.Target, Arguments: b.Arguments}, mrtr.ErrStateWrongPrincipal, "another principal"},
		20: {st, mrtr.Binding{Principal: "alice", Method: "prompts/get", Target: b.Target, Arguments: b.Arguments}, mrtr.ErrStateWrongTarget, "another prompt"},
		21: {st, mrtr.Binding{Principal: "alice", Method: b.Method, Target: "deploy2", Arguments: b.Arguments}, mrtr.ErrStateWrongTarget, "another tool"},
		22: {st, mrtr.Binding{Principal: "alice", Method: b.Method, Target: b.Target, Arguments: []byte(`{"env":"dev"}`)}, mrtr.ErrStateWrongArguments, "other arguments"},
		23: {st, mrtr.Binding{Principal: "alice", Method: b.Method, Target: b.Target, Arguments: []byte(`{"env":`)}, mrtr.ErrStateWrongArguments, "other arguments"},
	} {
		_, err := s.Open(v.b, v.state)
		var me *mrtr.Error
		var ce *codec.Error
		if !errors.Is(err, v.reason) || !errors.As(err, &me) || !errors.As(err, &ce) || ce.Code != codec.CodeInvalidParams ||
			!strings.HasPrefix(ce.Message, "Invalid params: requestState") || !strings.Contains(ce.Message, v.msg) || err.Error() != ce.Message {
			t.Errorf("%d: %v, want %v (%q)", i, err, v.reason, v.msg)
		}
	}
	st1 := s.Stats()
	for name, got := range map[string]uint64{
		"malformed": st1.Malformed.Load(), "foreign": st1.ForeignKey.Load(), "tampered": st1.Tampered.Load(),
		"principal": st1.WrongPrincipal.Load(), "target": st1.WrongTarget.Load(), "arguments": st1.WrongArguments.Load(),
	} {
		want := map[string]uint64{"malformed": 11, "foreign": 2, "tampered": 4, "principal": 3, "target": 2, "arguments": 2}[name]
		if got != want {
			t.Errorf("Stats.%s = %d, want %d", name, got, want)
		}
	}

	// Expiry: valid until TTL, refused from then on.
	clk.advance(mrtr.DefaultTTL - time.Millisecond)
	if _, err := s.Open(b, st); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	clk.advance(time.Millisecond)
	if _, err := s.Open(b, st); !errors.Is(err, mrtr.ErrStateExpired) || !strings.Contains(err.Error(), "expired") || s.Stats().Expired.Load() != 1 {
		t.Fatalf("at expiry: %v", err)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// TestConfig: keys, TTL, MaxData and Principal follow their rules.
func TestConfig(t *testing.T) {
	if _, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{}}); err == nil {
		t.Error("an empty key list was accepted")
	}
	if _, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{key1, []byte("short")}}); err == nil || !strings.Contains(err.Error(), "key 2: 5 bytes") {
		t.Errorf("short key: %v", err)
	}
	// Nil keys: one random key per process, shared.
	a, b := signer(t, mrtr.Config{}), signer(t, mrtr.Config{})
	bind := mrtr.Binding{Method: "tools/call", Target: "t"}
	st, _ := a.Seal(bind, nil)
	if _, err := b.Open(bind, st); err != nil {
		t.Errorf("process key not shared: %v", err)
	}
	// The signer copies its keys.
	k := append([]byte(nil), key1...)
	c := signer(t, mrtr.Config{Keys: [][]byte{k}})
	st, _ = c.Seal(bind, nil)
	k[0] ^= 1
	if _, err := c.Open(bind, st); err != nil {
		t.Errorf("the caller's key slice changed the signer: %v", err)
	}

	// TTL < 0: never expires.
	clk := newClock()
	forever := signer(t, mrtr.Config{Keys: [][]byte{key1}, TTL: -1, Now: clk.now})
	st, _ = forever.Seal(bind, nil)
	clk.advance(100 * 365 * 24 * time.Hour)
	if _, err := forever.Open(bind, st); err != nil {
		t.Errorf("TTL<0 expired: %v", err)
	}
	short := signer(t, mrtr.Config{Keys: [][]byte{key1}, TTL: time.Second, Now: clk.now})
	st, _ = short.Seal(bind, nil)
	clk.advance(time.Second)
	if _, err := short.Open(bind, st); !errors.Is(err, mrtr.ErrStateExpired) {
		t.Errorf("TTL 1s after 1s: %v", err)
	}

	// MaxData: 0 is DefaultMaxData, negative none.
	def := signer(t, mrtr.Config{Keys: [][]byte{key1}})
	if _, err := def.Seal(bind, make([]byte, mrtr.DefaultMaxData)); err != nil {
		t.Errorf("DefaultMaxData bytes: %v", err)
	}
	if _, err := def.Seal(bind, make([]byte, mrtr.DefaultMaxData+1)); err == nil || !strings.Contains(err.Error(), "MaxData") {
		t.Errorf("DefaultMaxData+1 bytes: %v", err)
	}
	max, _ := def.Seal(bind, make([]byte, mrtr.DefaultMaxData))
	if _, err := def.Open(bind, max); err != nil {
		t.Errorf("a state with DefaultMaxData bytes does not open: %v", err)
	}
	unbounded := signer(t, mrtr.Config{Keys: [][]byte{key1}, MaxData: -1})
	huge, err := unbounded.Seal(bind, make([]byte, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := unbounded.Open(bind, huge); err != nil || len(data) != 1<<20 {
		t.Errorf("MaxData<0: %d bytes, %v", len(data), err)
	}

	// Principal: the default refuses a type without identity at Seal; a
	// custom one maps principals to identities.
	if _, err := def.Seal(mrtr.Binding{Principal: struct{ ID int }{1}}, nil); err == nil || !strings.Contains(err.Error(), "Config.Principal") {
		t.Errorf("struct principal: %v", err)
	}
	type user struct{ ID int }
	custom := signer(t, mrtr.Config{Keys: [][]byte{key1}, Principal: func(p any) (string, error) {
		if u, ok := p.(user); ok {
			return "user:" + string(rune('0'+u.ID)), nil
		}
		return mrtr.DefaultPrincipal(p)
	}})
	st, err = custom.Seal(mrtr.Binding{Principal: user{1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := custom.Open(mrtr.Binding{Principal: user{1}}, st); err != nil {
		t.Errorf("custom principal: %v", err)
	}
	if _, err := custom.Open(mrtr.Binding{Principal: user{2}}, st); !errors.Is(err, mrtr.ErrStateWrongPrincipal) {
		t.Errorf("custom principal, other user: %v", err)
	}
	// No identity: an empty String is refused, a typed nil is anonymous
	// (neither is a "t:" every such principal shares).
	if id, err := mrtr.DefaultPrincipal(stringer("")); err == nil {
		t.Errorf("an empty Stringer: %q, want an error", id)
	}
	if id, err := mrtr.DefaultPrincipal((*ptrStringer)(nil)); err != nil || id != "n:" {
		t.Errorf("a typed nil Stringer: %q, %v; want the anonymous identity", id, err)
	}
	for _, p := range []any{nil, "", "x", stringer("x")} {
		for _, q := range []any{nil, "", "x", stringer("x")} {
			pi, _ := mrtr.DefaultPrincipal(p)
			qi, _ := mrtr.DefaultPrincipal(q)
			if (pi == qi) != (p == q) {
				t.Errorf("DefaultPrincipal(%#v) = %q, (%#v) = %q", p, pi, q, qi)
			}
		}
	}
}

// ptrStringer is a Stringer on a pointer, nil-receiver safe.
type ptrStringer struct{ id string }

func (p *ptrStringer) String() string {
	if p == nil {
		return ""
	}
	return p.id
}

// TestVerifyRequestState: what Verify makes of params.requestState itself.
func TestVerifyRequestState(t *testing.T) {
	s := signer(t, mrtr.Config{Keys: [][]byte{key1}})
	srv := serverWith(t, s, "deploy")
	c := dial(t, srv, nil)
	st := c.do("tools/call", `{"name":"deploy","arguments":{}}`).state(t)
	// An escaped spelling of the same string is the same state.
	escaped := `\u00` + hexByte(st[0]) + st[1:]
	if got := c.do("tools/call", retry("deploy", `{}`, escaped)).text(t); !strings.HasPrefix(got, "deployed") {
		t.Fatalf("escaped state: %q", got)
	}
	for i, v := range []string{`5`, `null`, `{}`, `["x"]`, `""`, `true`} {
		r := c.do("tools/call", `{"name":"deploy","arguments":{},`+yes+`,"requestState":`+v+`}`)
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "requestState is malformed") {
			t.Errorf("%d %s: %+v", i, v, r.Error)
		}
	}
	// An escaped token far longer than any state is refused unread.
	long := strings.Repeat(`\u0041`, 20000)
	c.do("tools/call", `{"name":"deploy","arguments":{},"requestState":"`+long+`"}`).fails(t, "malformed")
}

func hexByte(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}
