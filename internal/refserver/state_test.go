package refserver

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/mrtr"
)

// stateSigner returns a signer with keys on clk's time.
func stateSigner(t *testing.T, clk *clock, keys ...[]byte) *mrtr.Signer {
	t.Helper()
	s, err := mrtr.NewSigner(mrtr.Config{Keys: keys, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStateKeyRotation: the fixtures sign with Config.State, so replicas
// given signers of one key list accept each other's states, a rotated
// list ([new, old]) accepts both, and every refusal is counted on the
// signer (E5, SEC-07).
func TestStateKeyRotation(t *testing.T) {
	clk := &clock{}
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	const tool = "test_input_required_result_tampered_state"
	yes := map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}
	oldSigner := stateSigner(t, clk, oldKey)
	oldSrv := dial(t, newServerT(t, Config{State: oldSigner}, nil), nil)
	st := *oldSrv.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t).RequestState
	rotated := dial(t, newServerT(t, Config{State: stateSigner(t, clk, newKey, oldKey)}, nil), nil)
	if got := rotated.tool(tool, map[string]any{}, retry(yes, &st), noMeta).text(t); !strings.Contains(got, "state-ok") {
		t.Fatalf("old state on a rotated replica: %q", got)
	}
	st2 := *rotated.tool(tool, map[string]any{}, nil, noMeta).inputRequired(t).RequestState
	e := oldSrv.tool(tool, map[string]any{}, retry(yes, &st2), noMeta).fails(t, -32602)
	if e.Message != "Invalid params: requestState was signed with a key this server does not hold" {
		t.Errorf("foreign key: %q", e.Message)
	}
	onlyNew := dial(t, newServerT(t, Config{State: stateSigner(t, clk, newKey)}, nil), nil)
	if got := onlyNew.tool(tool, map[string]any{}, retry(yes, &st2), noMeta).text(t); !strings.Contains(got, "state-ok") {
		t.Fatalf("new state: %q", got)
	}
	oldSrv.tool(tool, map[string]any{}, retry(yes, &st), noMeta).text(t)
	if s := oldSigner.Stats(); s.Signed.Load() != 1 || s.Verified.Load() != 1 || s.ForeignKey.Load() != 1 {
		t.Errorf("stats: signed %d verified %d foreign %d", s.Signed.Load(), s.Verified.Load(), s.ForeignKey.Load())
	}
}

// TestStateRoundTrip: the fixtures' states are mrtr tokens
// (base64url "." base64url, a 32-byte tag) carrying the round first.
func TestStateRoundTrip(t *testing.T) {
	signer := stateSigner(t, &clock{}, bytes.Repeat([]byte{3}, 32))
	srv := newServerT(t, Config{State: signer}, nil)
	c := dial(t, srv, nil)
	st := *c.tool("test_input_required_result_multi_round", map[string]any{}, nil, noMeta).inputRequired(t).RequestState
	dot := strings.IndexByte(st, '.')
	if dot <= 0 || strings.ContainsAny(st, "+/=") {
		t.Fatalf("token %q is not base64url.base64url", st)
	}
	tag, err := base64.RawURLEncoding.DecodeString(st[dot+1:])
	if err != nil || len(tag) != 32 {
		t.Fatalf("tag %q: %v", st[dot+1:], err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(st[:dot])
	if err != nil || payload[0] != 1 || payload[len(payload)-1] != 1 {
		t.Fatalf("payload %x: %v (want version 1, round 1 last)", payload, err)
	}
	// A verified state whose data the fixtures did not write (another
	// server sharing the key), or whose round the tool has no step for,
	// is refused.
	yes := map[string]any{"confirm": elicitAccept(map[string]any{"ok": true})}
	for _, data := range [][]byte{nil, {0x80}, {9}} {
		const tool = "test_input_required_result_request_state"
		st, err := signer.Seal(mrtr.Binding{Method: "tools/call", Target: tool, Arguments: []byte(`{}`)}, data)
		if err != nil {
			t.Fatal(err)
		}
		e := c.tool(tool, map[string]any{}, retry(yes, &st), noMeta).fails(t, -32602)
		if !strings.Contains(e.Message, "round") {
			t.Errorf("data %x: %q", data, e.Message)
		}
	}
}
