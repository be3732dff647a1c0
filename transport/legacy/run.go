package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// run answers one request through the engine. The response is a JSON body
// when the engine's answer is the first thing to say; a notification
// (progress, log) or a server→client request before it turns the response
// into an SSE stream (2025-11-25 allows either).
//
// MRTR: an input_required result becomes the equivalent server→client
// requests (sampling/createMessage, elicitation/create, roots/list) on this
// response's stream, when the session's client declared the capability;
// the client's answers are POSTed back, collected, and the request is run
// again with inputResponses and requestState, for at most MaxRounds rounds.
// An input the client did not declare gets a JSON-RPC error -32603 naming
// the capability.
// limitKey names an anonymous caller for the engine's per-caller limits
// (engine.Request.SetLimitKey; "" for none).
func (s *Server) run(ctx context.Context, out sink, ss *session, m *wire, principal any, limitKey string) {
	s.rounds(ctx, out, ss, m, string(m.ID), principal, limitKey, nil, nil)
}

// rounds is run, after the first round's call when first is not nil
// (begun by begin, under key, string(m.ID), in ss.calls). buf, when not nil, is
// working space the answer is encoded in (out must not keep what final
// is handed); nil allocates.
func (s *Server) rounds(ctx context.Context, out sink, ss *session, m *wire, key string, principal any, limitKey string, first *call, buf *[]byte) {
	var extra map[string]json.RawMessage
	var scratch []byte
	if buf != nil {
		scratch = (*buf)[:0]
		defer func() { *buf = scratch[:0] }()
	}
	for round := 0; ; round++ {
		c := first
		first = nil
		if c == nil {
			var ce *codec.Error
			if c, ce = s.begin(ss, key, m, extra, principal, limitKey, scratch, nil, nil); ce != nil {
				out.final(encodeError(m.ID, ce))
				return
			}
		}
		reply := s.pump(ctx, c, out)
		ss.removeCall(key, c)
		if reply == nil {
			c.release()
			return // cancelled, or the client went away
		}
		if res, ok := reply.complete(m.ID); ok {
			// The common case, read without a scan.
			frame, err := s.appendAnswer(scratch[:0], m.ID, res)
			c.release()
			if err != nil {
				out.final(encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error")))
				return
			}
			scratch = frame
			out.final(frame)
			return
		}
		var r response
		r.Result, _ = codec.LookupPath(reply.frame, "result")
		if len(r.Result) == 0 {
			r.Error, _ = codec.LookupPath(reply.frame, "error")
		}
		if len(r.Result) == 0 && len(r.Error) == 0 {
			c.release()
			out.final(encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error")))
			return
		}
		if len(r.Error) > 0 {
			frame := encodeRawError(m.ID, legacyError(r.Error))
			status := reply.status
			c.release()
			out.finalStatus(frame, status)
			return
		}
		rt, _ := codec.LookupString(r.Result, "resultType")
		if !rt.EqualString("input_required") {
			frame, err := s.appendAnswer(scratch[:0], m.ID, r.Result)
			c.release()
			if err != nil {
				out.final(encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error")))
				return
			}
			scratch = frame
			out.final(frame)
			return
		}
		if round+1 >= s.cfg.MaxRounds {
			c.release()
			out.final(encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error: too many input rounds")))
			return
		}
		var ir inputRequired
		err := codec.Unmarshal(r.Result, &ir)
		c.release()
		if err != nil {
			out.final(encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error")))
			return
		}
		answers, ce := s.ask(ctx, ss, out, ir.InputRequests)
		if ce != nil {
			out.final(encodeError(m.ID, ce))
			return
		}
		if answers == nil {
			return // the client went away
		}
		extra = map[string]json.RawMessage{"inputResponses": answers}
		if ir.RequestState != "" {
			extra["requestState"] = quote(ir.RequestState)
		}
	}
}

// begin starts one round of m in the engine: its message (built in
// scratch when it can be, with head, the session's metaHead, when not
// nil), a call under key in ss.calls. src, when not nil, is the envelope
// of the body m was read from (the fast path's): the message's own is
// then derived from it when it can be, rather than peeked. The error is
// the answer when it could not begin.
func (s *Server) begin(ss *session, key string, m *wire, extra map[string]json.RawMessage, principal any, limitKey string, scratch []byte, head *metaBlock, src *codec.Envelope) (*call, *codec.Error) {
	var sp *splice
	var lay splice
	if src != nil {
		sp = &lay
	}
	msg, err := ss.modern(scratch, head, m.ID, m.Method, m.Params, extra, src, sp)
	if err != nil {
		var ce *codec.Error
		if !errors.As(err, &ce) {
			ce = codec.NewError(codec.CodeInternalError, "Internal error")
		}
		return nil, ce
	}
	c := acquireCall()
	if !ss.addCall(key, c) {
		c.release()
		return nil, codec.NewError(codec.CodeInvalidRequest, "Invalid Request: id "+key+" is already in flight")
	}
	if e := s.start(context.Background(), msg, c, principal, limitKey, src, sp); e != nil {
		ss.removeCall(key, c)
		c.release()
		return nil, e
	}
	return c, nil
}

// completeResult returns the result of an engine response to id when it
// has the shape the engine writes for a complete result,
// {"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete",...}}; ok
// false for anything else (errors, input_required, other writers).
func completeResult(frame, id []byte) (result []byte, ok bool) {
	const pre, post = `{"jsonrpc":"2.0","id":`, `,"result":{"resultType":"complete",`
	if len(frame) < len(pre)+len(id)+len(post)+1 || string(frame[:len(pre)]) != pre || frame[len(frame)-1] != '}' {
		return nil, false
	}
	rest := frame[len(pre):]
	if !bytes.HasPrefix(rest, id) || !bytes.HasPrefix(rest[len(id):], []byte(post)) {
		return nil, false
	}
	start := len(pre) + len(id) + len(`,"result":`)
	return frame[start : len(frame)-1], true
}

// appendAnswer appends the 2025 response carrying result (complete) to dst.
func (s *Server) appendAnswer(dst, id, result []byte) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	if out, ok := appendLegacyResult(dst, result, s.metaTail); ok {
		return append(out, '}'), nil
	}
	res, err := legacyResult(result, s.metaTail)
	if err != nil {
		return nil, err
	}
	dst = append(dst, res...)
	return append(dst, '}'), nil
}

// sink is where one request's messages go: an HTTP response (JSON or
// SSE) or a stdio connection.
type sink interface {
	// event sends a message before the answer (a notification or a
	// server→client request).
	event(frame []byte) error
	// comment keeps a silent stream alive.
	comment() error
	// final sends the answer.
	final(frame []byte)
	// finalStatus sends an error answer whose HTTP status the engine
	// chose (503 when shared state is down; others are sent as 200, as
	// 2025 clients expect JSON-RPC errors in a 200 response).
	finalStatus(frame []byte, status int)
}

// pump forwards the call's notifications to out and returns its reply
// (nil if it ended without one, or ctx ended first).
func (s *Server) pump(ctx context.Context, c *call, out sink) *outcome {
	for {
		notes, reply, done := c.take()
		for _, n := range notes {
			if out.event(n) != nil {
				c.cancelNow(errGone)
			}
		}
		if reply != nil {
			// The engine calls Done right after Reply; wait for it so
			// that the request no longer counts as in flight.
			for !done {
				<-c.wake
				_, _, done = c.take()
			}
			return reply
		}
		if done {
			return nil
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			// 2025-11-25: a disconnect is not a cancellation, but nobody
			// is left to read the answer, so the work is not wanted.
			c.cancelNow(errGone)
		}
	}
}

var errGone = errors.New("legacy: the client closed the response stream")

// ask sends each input request to the client on out and waits for the
// answers. It returns the inputResponses object, or an error to answer,
// or nil, nil when the client went away.
func (s *Server) ask(ctx context.Context, ss *session, out sink, reqs map[string]json.RawMessage) (json.RawMessage, *codec.Error) {
	type pendingInput struct {
		key string
		id  string
		ch  chan json.RawMessage
	}
	var waits []pendingInput
	defer func() {
		ss.mu.Lock()
		for _, p := range waits {
			delete(ss.pending, p.id)
		}
		ss.mu.Unlock()
	}()
	for key, raw := range reqs {
		var ir struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params,omitempty"`
		}
		if err := codec.Unmarshal(raw, &ir); err != nil {
			return nil, codec.NewError(codec.CodeInternalError, "Internal error: bad input request")
		}
		capName := capabilityFor(ir.Method)
		if capName == "" || !ss.hasCap(capName) {
			s.stats.InputRefused.Add(1)
			return nil, codec.NewError(codec.CodeInternalError,
				"This request needs the client's "+orMethod(capName, ir.Method)+" capability, which the session did not declare at initialize")
		}
		id := quote("mcpwire-" + strconv.FormatUint(s.nextID.Add(1), 10))
		ch := make(chan json.RawMessage, 1)
		ss.mu.Lock()
		if ss.gone {
			ss.mu.Unlock()
			return nil, nil
		}
		if ss.pending == nil {
			ss.pending = map[string]chan json.RawMessage{}
		}
		ss.pending[string(id)] = ch
		ss.mu.Unlock()
		waits = append(waits, pendingInput{key, string(id), ch})
		frame := []byte(`{"jsonrpc":"2.0","id":`)
		frame = append(frame, id...)
		frame = append(frame, `,"method":`...)
		frame = codec.AppendString(frame, ir.Method)
		if len(ir.Params) > 0 {
			frame = append(frame, `,"params":`...)
			frame = append(frame, ir.Params...)
		}
		frame = append(frame, '}')
		s.stats.InputRequests.Add(1)
		if out.event(frame) != nil {
			return nil, nil
		}
	}
	answers := map[string]json.RawMessage{}
	timer := time.NewTimer(s.cfg.InputTimeout)
	defer timer.Stop()
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	for _, p := range waits {
	wait:
		for {
			select {
			case b, ok := <-p.ch:
				if !ok {
					return nil, nil // the session ended
				}
				var resp wire
				if err := codec.Unmarshal(b, &resp); err != nil {
					return nil, codec.NewError(codec.CodeInternalError, "Internal error")
				}
				if len(resp.Error) > 0 {
					msg, _ := codec.LookupString(resp.Error, "message")
					return nil, codec.NewError(codec.CodeInternalError, "The client refused the input request: "+msg.String())
				}
				answers[p.key] = resp.Result
				break wait
			case <-keep.C:
				if out.comment() != nil {
					return nil, nil
				}
			case <-timer.C:
				s.stats.InputTimeouts.Add(1)
				return nil, codec.NewError(codec.CodeInternalError, "The client did not answer the input request in time")
			case <-ctx.Done():
				return nil, nil
			}
		}
	}
	b, err := codec.Marshal(answers)
	if err != nil {
		return nil, codec.NewError(codec.CodeInternalError, "Internal error")
	}
	return b, nil
}

func orMethod(capName, method string) string {
	if capName != "" {
		return capName
	}
	return method
}

func (ss *session) addCall(key string, c *call) bool {
	ss.mu.Lock()
	ok := !ss.gone && ss.calls.get(key) == nil
	if ok {
		ss.calls.add(key, c)
	}
	ss.mu.Unlock()
	return ok
}

// keepKey moves c, in ss.calls under key, to a copy of key, which it
// returns: for a key that aliases a buffer about to be reused (the fast
// path's, the id's bytes in fasthttp's body), when the call outlives it.
// A call no longer there (ended, or the session gone) is left alone.
func (ss *session) keepKey(key string, c *call) string {
	kept := strings.Clone(key)
	ss.mu.Lock()
	if ss.calls.get(key) == c {
		ss.calls.del(key)
		ss.calls.add(kept, c)
	}
	ss.mu.Unlock()
	return kept
}

func (ss *session) removeCall(key string, c *call) {
	ss.mu.Lock()
	if ss.calls.get(key) == c {
		ss.calls.del(key)
	}
	ss.touched = time.Now()
	ss.mu.Unlock()
}

// inflight is a session's calls in flight by key (ss.mu held for all of
// it). A session mostly has one at a time: that one is kept in one, off
// the map (an insert and a delete of a map's only key cost ~600
// instructions a call, hashing and, once it empties, a new seed); the
// others are in more. A key is in one place at most: add is only for a
// key get does not find.
type inflight struct {
	oneKey string
	one    *call
	more   map[string]*call
}

// get is the call under key, or nil.
func (f *inflight) get(key string) *call {
	if f.one != nil && f.oneKey == key {
		return f.one
	}
	return f.more[key]
}

// add files c under key, which get does not find.
func (f *inflight) add(key string, c *call) {
	if f.one == nil {
		f.oneKey, f.one = key, c
		return
	}
	if f.more == nil {
		f.more = map[string]*call{}
	}
	f.more[key] = c
}

// del removes the call under key, if any.
func (f *inflight) del(key string) {
	if f.one != nil && f.oneKey == key {
		f.oneKey, f.one = "", nil // no alias of a request body kept
		return
	}
	delete(f.more, key)
}

// len is the number of calls in flight.
func (f *inflight) len() int {
	n := len(f.more)
	if f.one != nil {
		n++
	}
	return n
}
