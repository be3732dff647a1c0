package refserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

// fakeStore is a minimal state.Store for these tests (the real ones are
// held to state's contract tests). down makes every call fail with
// ErrUnavailable; conflicts makes the next CompareAndSet calls conflict.
type fakeStore struct {
	mu        sync.Mutex
	recs      map[string]*fakeRec
	once      map[string][]byte
	down      bool
	conflicts int
	applied   int // Once functions run
}

type fakeRec struct {
	owner string
	state.Record
}

func newFakeStore() *fakeStore {
	return &fakeStore{recs: map[string]*fakeRec{}, once: map[string][]byte{}}
}

func (f *fakeStore) Create(_ context.Context, p string, v []byte, _ time.Duration) (state.Handle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return "", state.ErrUnavailable
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	f.recs[h] = &fakeRec{owner: p, Record: state.Record{Value: append([]byte(nil), v...), Version: 1}}
	return state.Handle(h), nil
}

func (f *fakeStore) Get(_ context.Context, p string, h state.Handle) (state.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return state.Record{}, state.ErrUnavailable
	}
	r := f.recs[string(h)]
	if r == nil || r.owner != p {
		return state.Record{}, state.ErrNotFound
	}
	return state.Record{Value: append([]byte(nil), r.Value...), Version: r.Version}, nil
}

func (f *fakeStore) CompareAndSet(_ context.Context, p string, h state.Handle, ver uint64, v []byte, _ time.Duration) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return 0, state.ErrUnavailable
	}
	r := f.recs[string(h)]
	if r == nil || r.owner != p {
		return 0, state.ErrNotFound
	}
	if f.conflicts > 0 {
		f.conflicts--
		r.Version++ // someone else wrote
		return 0, state.ErrConflict
	}
	if r.Version != ver {
		return 0, state.ErrConflict
	}
	r.Value, r.Version = append([]byte(nil), v...), r.Version+1
	return r.Version, nil
}

func (f *fakeStore) Delete(context.Context, string, state.Handle) error { return nil }

func (f *fakeStore) Once(_ context.Context, p, key string, _ time.Duration, fn func() ([]byte, error)) ([]byte, error) {
	f.mu.Lock()
	if f.down {
		f.mu.Unlock()
		return nil, state.ErrUnavailable
	}
	if v, ok := f.once[p+"\x00"+key]; ok {
		f.mu.Unlock()
		return v, nil
	}
	f.applied++
	f.mu.Unlock()
	v, err := fn()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.once[p+"\x00"+key] = v
	f.mu.Unlock()
	return v, nil
}

func (f *fakeStore) Close() error { return nil }

func (f *fakeStore) setDown(d bool) {
	f.mu.Lock()
	f.down = d
	f.mu.Unlock()
}

// structured decodes a tool result's structuredContent.
func structured(t *testing.T, m msg, v any) {
	t.Helper()
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.StructuredContent == nil {
		t.Fatalf("no structuredContent in %s", m.raw)
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		t.Fatal(err)
	}
}

type namedPrincipal string

func (p namedPrincipal) String() string { return string(p) }

// TestDraftsAcrossReplicas: a draft created through one replica is read and
// appended through two others sharing the store; another principal gets
// "unknown handle", never the draft (E3).
func TestDraftsAcrossReplicas(t *testing.T) {
	st := newFakeStore()
	var reps [3]*conn
	for i := range reps {
		reps[i] = dial(t, newServerT(t, Config{Store: st}, nil), namedPrincipal("alice"))
	}
	created := reps[0].tool("draft_create", map[string]any{"text": "hello"}, nil, noMeta)
	var h struct{ Handle string }
	structured(t, created, &h)
	if len(h.Handle) < 22 || created.text(t) != h.Handle {
		t.Fatalf("handle %q in %s", h.Handle, created.raw)
	}
	if got := reps[1].tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "hello" {
		t.Fatalf("read through B: %q", got)
	}
	reps[1].tool("draft_append", map[string]any{"handle": h.Handle, "text": ", B"}, nil, noMeta).complete(t)
	app := reps[2].tool("draft_append", map[string]any{"handle": h.Handle, "text": ", C"}, nil, noMeta)
	var ar appendResult
	structured(t, app, &ar)
	if ar.Version != 3 || ar.Length != len("hello, B, C") || ar.Handle != h.Handle {
		t.Fatalf("append through C: %+v", ar)
	}
	if got := reps[0].tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "hello, B, C" {
		t.Fatalf("read through A: %q", got)
	}

	mallory := dial(t, newServerT(t, Config{Store: st}, nil), namedPrincipal("mallory"))
	anon := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	for _, c := range []*conn{mallory, anon} {
		e := c.tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).fails(t, -32602)
		if e.Message != "Invalid params: unknown handle" || strings.Contains(string(e.Data), "hello") {
			t.Fatalf("foreign read: %+v", e)
		}
		c.tool("draft_append", map[string]any{"handle": h.Handle, "text": "x"}, nil, noMeta).fails(t, -32602)
	}
	reps[0].tool("draft_read", map[string]any{"handle": "nope"}, nil, noMeta).fails(t, -32602)
	reps[0].tool("draft_read", map[string]any{"handle": strings.Repeat("a", 300)}, nil, noMeta).fails(t, -32602)
	reps[0].tool("draft_read", map[string]any{}, nil, noMeta).toolError(t, "Invalid arguments: arguments.handle: required")
}

// TestDraftAppendIdempotent: a re-sent append (new request id, same key),
// through another replica, is applied once and answered with the first
// result (E4); another key is another append.
func TestDraftAppendIdempotent(t *testing.T) {
	st := newFakeStore()
	a := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	b := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	var h struct{ Handle string }
	structured(t, a.tool("draft_create", map[string]any{"text": "x"}, nil, noMeta), &h)
	args := map[string]any{"handle": h.Handle, "text": "y", "idempotencyKey": "k1"}
	first := a.tool("draft_append", args, nil, noMeta)
	again := b.tool("draft_append", args, nil, noMeta)
	var r1, r2 appendResult
	structured(t, first, &r1)
	structured(t, again, &r2)
	if r1 != r2 || r1.Version != 2 {
		t.Fatalf("first %+v, re-sent %+v", r1, r2)
	}
	if got := b.tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "xy" {
		t.Fatalf("after a re-sent append: %q", got)
	}
	args["idempotencyKey"] = "k2"
	b.tool("draft_append", args, nil, noMeta).complete(t)
	if got := a.tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "xyy" {
		t.Fatalf("after a second key: %q", got)
	}
	args["idempotencyKey"] = ""
	a.tool("draft_append", args, nil, noMeta).toolError(t, "Invalid arguments: arguments.idempotencyKey: must be at least 1 character long")
	args["idempotencyKey"] = 5
	a.tool("draft_append", args, nil, noMeta).toolError(t, "Invalid arguments: arguments.idempotencyKey: expected string, got number")
}

// TestDraftAppendRetriesConflicts: concurrent writers are retried with
// compare-and-set; the append lands once.
func TestDraftAppendRetriesConflicts(t *testing.T) {
	st := newFakeStore()
	c := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	var h struct{ Handle string }
	structured(t, c.tool("draft_create", map[string]any{"text": "a"}, nil, noMeta), &h)
	st.mu.Lock()
	st.conflicts = 3
	st.mu.Unlock()
	c.tool("draft_append", map[string]any{"handle": h.Handle, "text": "b"}, nil, noMeta).complete(t)
	if got := c.tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "ab" {
		t.Fatalf("after conflicts: %q", got)
	}
	st.mu.Lock()
	st.conflicts = casAttempts + 1
	st.mu.Unlock()
	c.tool("draft_append", map[string]any{"handle": h.Handle, "text": "c"}, nil, noMeta).fails(t, -32603)
}

// TestDraftStoreDown: an unreachable store is -32603 with HTTP status 503
// (engine.ErrUnavailable), for every draft tool; back up, it works.
func TestDraftStoreDown(t *testing.T) {
	st := newFakeStore()
	c := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	var h struct{ Handle string }
	structured(t, c.tool("draft_create", map[string]any{"text": "a"}, nil, noMeta), &h)
	st.setDown(true)
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"draft_create", map[string]any{"text": "a"}},
		{"draft_read", map[string]any{"handle": h.Handle}},
		{"draft_append", map[string]any{"handle": h.Handle, "text": "b"}},
		{"draft_append", map[string]any{"handle": h.Handle, "text": "b", "idempotencyKey": "k"}},
	} {
		e := c.tool(call.name, call.args, nil, noMeta).fails(t, -32603)
		if !strings.Contains(e.Message, "unavailable") {
			t.Errorf("%s: %+v", call.name, e)
		}
	}
	st.setDown(false)
	if got := c.tool("draft_read", map[string]any{"handle": h.Handle}, nil, noMeta).text(t); got != "a" {
		t.Fatalf("after the outage: %q", got)
	}
}

// TestDraftLimits: texts over MaxDraftBytes are refused, before and after
// appending; principals without a string form are refused.
func TestDraftLimits(t *testing.T) {
	st := newFakeStore()
	c := dial(t, newServerT(t, Config{Store: st}, nil), nil)
	big := string(bytes.Repeat([]byte{'x'}, MaxDraftBytes))
	var h struct{ Handle string }
	structured(t, c.tool("draft_create", map[string]any{"text": big}, nil, noMeta), &h)
	c.tool("draft_create", map[string]any{"text": big + "x"}, nil, noMeta).toolError(t, "Invalid arguments: arguments.text: must be at most 65536 characters long")
	c.tool("draft_append", map[string]any{"handle": h.Handle, "text": "x"}, nil, noMeta).fails(t, -32602)
	odd := dial(t, newServerT(t, Config{Store: st}, nil), struct{ n int }{1})
	odd.tool("draft_create", map[string]any{"text": "a"}, nil, noMeta).fails(t, -32603)
	// Without a store there are no draft tools.
	none := newConn(t, Config{})
	none.tool("draft_create", map[string]any{"text": "a"}, nil, noMeta).fails(t, -32602)
}
