package refserver

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
)

// Drafts: the handle-based tools (issue 11). A draft is a text kept in the
// shared state store (Config.Store) under an explicit handle bound to the
// caller's principal, so any replica can serve the next call on it with
// no sticky routing:
//
//	draft_create {text}                          → handle (text, and structuredContent {"handle"})
//	draft_append {handle, text, idempotencyKey?} → {"handle","version","length"}
//	draft_read   {handle}                        → the text ({"handle","text","version"})
//
// Isolation is only as good as the principal: without authentication
// (Call.Principal nil) every caller is the same anonymous principal and
// can read every anonymous draft whose handle it knows. Deployments that
// share a server between users must authenticate (streamhttp
// Config.Authenticate, or a socket's accept hook) so that each user's
// drafts are bound to them. A principal without a stable string form is
// refused rather than merged with others.
//
// Errors: an unknown, expired or foreign handle is -32602 "unknown handle"
// (the three are indistinguishable, E3); an unreachable store is -32603
// with HTTP status 503 (engine.ErrUnavailable); a draft over MaxDraftBytes
// is -32602.

const (
	// MaxDraftBytes bounds one draft's text.
	MaxDraftBytes = 64 << 10
	// DraftTTL is how long a draft lives after it was created or last
	// appended to.
	DraftTTL = time.Hour
	// idempotencyTTL is how long an idempotency key is remembered.
	idempotencyTTL = 10 * time.Minute
	// maxHandleLen bounds the handles accepted (longer ones cannot exist).
	maxHandleLen = 256
	// maxIdemKeyLen bounds an idempotency key.
	maxIdemKeyLen = 256
	// casAttempts bounds the compare-and-set retries of one append.
	casAttempts = 32
)

var (
	errUnknownHandle = codec.NewError(codec.CodeInvalidParams, "Invalid params: unknown handle")
	// Argument errors the schema leaves to the handler: tool errors the
	// model reads (SEP-1303), like the schema's own.
	errTextRequired   = engine.InvalidArguments("arguments.text: required")
	errHandleRequired = engine.InvalidArguments("arguments.handle: required")
	errDraftTooLarge  = codec.NewError(codec.CodeInvalidParams, "Invalid params: the draft would exceed "+strconv.Itoa(MaxDraftBytes)+" bytes")
	errIdemKey        = engine.InvalidArguments("arguments.idempotencyKey: must be a non-empty string of at most " + strconv.Itoa(maxIdemKeyLen) + " bytes")
	errNoIdentity     = codec.NewError(codec.CodeInternalError, "Internal error: the caller's identity has no stable form; drafts are refused")
	errContention     = codec.NewError(codec.CodeInternalError, "Internal error: the draft changed too often concurrently; retry")
	errStore          = codec.NewError(codec.CodeInternalError, "Internal error: the state store failed")
)

// anonymous is the principal of unauthenticated callers.
const anonymous = "anonymous"

// draftPrincipal returns the store principal for c.
func draftPrincipal(c *engine.Call) (string, error) {
	p := c.Principal()
	if p == nil {
		return anonymous, nil
	}
	if s := principalString(p); s != "" {
		return s, nil
	}
	return "", errNoIdentity
}

func (r *refServer) draftTools() []engine.Tool {
	if r.store == nil {
		return nil
	}
	return []engine.Tool{
		{
			Name:         "draft_create",
			Description:  "Stores text as a new draft bound to the caller and returns its handle; any replica can serve the handle",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":` + strconv.Itoa(MaxDraftBytes) + `}},"required":["text"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"}},"required":["handle"]}`),
			Annotations:  json.RawMessage(`{"openWorldHint":false}`),
			Handler:      r.draftCreate,
		},
		{
			Name: "draft_append",
			Description: "Appends text to the draft named by handle; with idempotencyKey a call re-sent (new request id, same key) " +
				"is applied once and answered with the first result",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"},"text":{"type":"string"},` +
				`"idempotencyKey":{"type":"string","minLength":1,"maxLength":` + strconv.Itoa(maxIdemKeyLen) + `}},"required":["handle","text"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"},"version":{"type":"integer"},"length":{"type":"integer"}},"required":["handle","version","length"]}`),
			Annotations:  json.RawMessage(`{"openWorldHint":false}`),
			Handler:      r.draftAppend,
		},
		{
			Name:         "draft_read",
			Description:  "Returns the text of the draft named by handle",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"}},"required":["handle"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"},"text":{"type":"string"},"version":{"type":"integer"}},"required":["handle","text","version"]}`),
			Annotations:  json.RawMessage(`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`),
			Handler:      r.draftRead,
		},
	}
}

// storeError maps a store error to the peer's answer: never another
// principal's data, never an internal detail.
func (r *refServer) storeError(tool string, err error) error {
	switch {
	case errors.Is(err, state.ErrNotFound):
		return errUnknownHandle
	case errors.Is(err, state.ErrTooLarge):
		return errDraftTooLarge
	case errors.Is(err, state.ErrUnavailable):
		return err // engine.ErrUnavailable: -32603, HTTP 503
	case errors.Is(err, state.ErrConflict):
		return errContention
	}
	var ce *codec.Error
	if errors.As(err, &ce) {
		return ce
	}
	r.log.Error("draft store failed", "tool", tool, "err", err)
	return errStore
}

func handleArg(c *engine.Call) (state.Handle, error) {
	h, ok := c.ArgString("handle")
	if !ok {
		return "", errHandleRequired
	}
	if h == "" || len(h) > maxHandleLen {
		return "", errUnknownHandle
	}
	return state.Handle(h), nil
}

func (r *refServer) draftCreate(c *engine.Call) error {
	p, err := draftPrincipal(c)
	if err != nil {
		return err
	}
	text, ok := c.ArgString("text")
	if !ok {
		return errTextRequired
	}
	if len(text) > MaxDraftBytes {
		return errDraftTooLarge
	}
	h, err := r.store.Create(c, p, []byte(text), DraftTTL)
	if err != nil {
		return r.storeError("draft_create", err)
	}
	return c.Return(mcp.ToolResult{
		Content:           []mcp.Content{mcp.TextContent(string(h))},
		StructuredContent: map[string]any{"handle": string(h)},
	})
}

func (r *refServer) draftRead(c *engine.Call) error {
	p, err := draftPrincipal(c)
	if err != nil {
		return err
	}
	h, err := handleArg(c)
	if err != nil {
		return err
	}
	rec, err := r.store.Get(c, p, h)
	if err != nil {
		return r.storeError("draft_read", err)
	}
	return c.Return(mcp.ToolResult{
		Content:           []mcp.Content{mcp.TextContent(string(rec.Value))},
		StructuredContent: map[string]any{"handle": string(h), "text": string(rec.Value), "version": rec.Version},
	})
}

// appendResult is draft_append's structured result, also what an
// idempotency key remembers.
type appendResult struct {
	Handle  string `json:"handle"`
	Version uint64 `json:"version"`
	Length  int    `json:"length"`
}

func (r *refServer) draftAppend(c *engine.Call) error {
	p, err := draftPrincipal(c)
	if err != nil {
		return err
	}
	h, err := handleArg(c)
	if err != nil {
		return err
	}
	text, ok := c.ArgString("text")
	if !ok {
		return errTextRequired
	}
	apply := func() ([]byte, error) {
		res, err := r.appendOnce(c, p, h, text)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	}
	var out []byte
	if raw, present := codec.LookupPath(c.Arguments(), "idempotencyKey"); present {
		key, ok := c.ArgString("idempotencyKey")
		if !ok || key == "" || len(key) > maxIdemKeyLen || raw[0] != '"' {
			return errIdemKey
		}
		// The key is scoped to the tool and the handle: the same key on
		// another draft is another operation.
		out, err = r.store.Once(c, p, "draft_append\x00"+string(h)+"\x00"+key, idempotencyTTL, apply)
	} else {
		out, err = apply()
	}
	if err != nil {
		return r.storeError("draft_append", err)
	}
	var res appendResult
	if err := json.Unmarshal(out, &res); err != nil {
		return r.storeError("draft_append", err)
	}
	return c.Return(mcp.ToolResult{
		Content:           []mcp.Content{mcp.TextContent("appended: version " + strconv.FormatUint(res.Version, 10) + ", " + strconv.Itoa(res.Length) + " bytes")},
		StructuredContent: res,
	})
}

// appendOnce appends text with compare-and-set, retrying when another
// writer got in between.
func (r *refServer) appendOnce(c *engine.Call, p string, h state.Handle, text string) (appendResult, error) {
	for range casAttempts {
		rec, err := r.store.Get(c, p, h)
		if err != nil {
			return appendResult{}, err
		}
		if len(rec.Value)+len(text) > MaxDraftBytes {
			return appendResult{}, errDraftTooLarge
		}
		v := make([]byte, 0, len(rec.Value)+len(text))
		v = append(append(v, rec.Value...), text...)
		ver, err := r.store.CompareAndSet(c, p, h, rec.Version, v, DraftTTL)
		if errors.Is(err, state.ErrConflict) {
			if c.Err() != nil {
				return appendResult{}, c.Err()
			}
			continue
		}
		if err != nil {
			return appendResult{}, err
		}
		return appendResult{Handle: string(h), Version: ver, Length: len(v)}, nil
	}
	return appendResult{}, state.ErrConflict
}
