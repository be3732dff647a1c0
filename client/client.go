package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// Protocol revisions the client speaks.
const (
	Version2026 = "2026-07-28"
	Version2025 = "2025-11-25"
	Version2024 = "2024-11-05"
)

// Era is the protocol generation in use with a server (DISC-01).
type Era uint8

const (
	EraUnknown Era = iota // not probed yet
	EraModern             // 2026-07-28: per-request _meta, no handshake
	Era2025               // 2025-11-25 (and 2025-03-26/06-18): initialize, sessions
	Era2024               // 2024-11-05 HTTP+SSE (deprecated transport, COMPAT-04)
)

func (e Era) String() string {
	switch e {
	case EraModern:
		return "modern"
	case Era2025:
		return "legacy-2025"
	case Era2024:
		return "legacy-2024-sse"
	}
	return "unknown"
}

// Defaults for Config and LineConfig fields; each applies when the field
// is zero.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultProbeTimeout   = 10 * time.Second
	DefaultMaxInputRounds = 10
	DefaultRetries        = 2
	DefaultMaxQueued      = 4096
	DefaultMinBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
)

// Config configures a Client. Zero values give the defaults noted; its
// limits follow the package's rule (see Limits in the package
// documentation): 0 is the default, negative is no limit unless the field
// says otherwise.
type Config struct {
	// Info is sent as clientInfo on every request (META-02). Default
	// {"mcpwire", <module version>}.
	Info mcp.Implementation
	// Capabilities is the clientCapabilities object declared on every
	// request (META-02). Default: {} plus "elicitation"/"sampling"/"roots"
	// when OnInput is set.
	Capabilities json.RawMessage
	// Version is the preferred protocol revision. Default 2026-07-28.
	Version string
	// Era fixes the era and skips the probe (EraUnknown: probe on first
	// use, COMPAT-01, STD-17). EraModern never falls back; Era2025 and
	// Era2024 run initialize (on HTTP after switching the transport) on
	// first use.
	Era Era
	// Timeout bounds every call that has no deadline of its own (TMO-01).
	// Default DefaultTimeout (60 s); negative: none. Listen streams are
	// exempt (SUB-13).
	Timeout time.Duration
	// ProbeTimeout bounds the era probe; no answer in time means legacy on
	// stdio (STD-17). Default DefaultProbeTimeout (10 s). Without it a
	// silent legacy server would never be recognised, so it cannot be
	// unlimited: a negative value is taken as 0, the default.
	ProbeTimeout time.Duration
	// OnInput answers the embedded requests of an InputRequiredResult
	// (MRTR-01..05): key → request; return the result object. Without it an
	// input_required result is returned to the caller as it is.
	OnInput func(ctx context.Context, key string, req mcp.InputRequest) (json.RawMessage, error)
	// MaxInputRounds caps MRTR retries of one call (MRTR-12). Default
	// DefaultMaxInputRounds (10); negative means unlimited (unsafe: a
	// server that keeps asking holds the call until its timeout).
	MaxInputRounds int
	// Retries is how many times a request that was not delivered
	// (ErrNotDelivered) is re-sent with a new id. Default DefaultRetries
	// (2). It is a count, not a limit: a negative value means 0, no
	// re-send, which 0 itself cannot say.
	Retries int
	// Logger receives warnings (dropped tools, stray lines, restarts) and
	// log notifications that belong to no request. Default slog.Default().
	Logger *slog.Logger
	// Propagate, when set, adds string members to every request's _meta
	// from the request's context: the W3C trace context (traceparent,
	// tracestate, baggage; META-01), so that the server's span continues
	// the caller's trace. It is called once per request sent (each MRTR
	// round, each re-send) with set, which must not be kept. Package
	// observe/otelmcp provides one (otelmcp.Propagate). Nil: nothing added,
	// no cost.
	Propagate func(ctx context.Context, set func(key, value string))
}

// limit applies the rule to a count: 0 is def, negative the largest int
// (no limit).
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return math.MaxInt
	}
	return v
}

func (o *Config) normalize() {
	if o.Info.Name == "" {
		o.Info = mcp.Implementation{Name: "mcpwire", Version: "dev"}
	}
	if o.Version == "" {
		o.Version = Version2026
	}
	if len(o.Capabilities) == 0 {
		if o.OnInput != nil {
			o.Capabilities = json.RawMessage(`{"elicitation":{},"sampling":{},"roots":{}}`)
		} else {
			o.Capabilities = json.RawMessage(`{}`)
		}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout // negative stays: none
	}
	if o.ProbeTimeout <= 0 { // never unlimited
		o.ProbeTimeout = DefaultProbeTimeout
	}
	o.MaxInputRounds = limit(o.MaxInputRounds, DefaultMaxInputRounds)
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Client calls one MCP server through a Transport. It is safe for
// concurrent use.
type Client struct {
	t    Transport
	opts Config
	ids  atomic.Int64

	eraMu   sync.Mutex // held while probing
	era     atomic.Uint32
	version atomic.Pointer[string] // revision in use
	server  atomic.Pointer[ServerDescription]

	tools sync.Map // tool name → []mcp.HeaderBinding (x-mcp-header, learned from tools/list)
	info  []byte   // clientInfo, encoded once

	closed atomic.Bool
}

// New returns a Client over t. It sends nothing until the first call.
func New(t Transport, opts Config) *Client {
	opts.normalize()
	c := &Client{t: t, opts: opts}
	c.info, _ = json.Marshal(opts.Info)
	v := opts.Version
	c.version.Store(&v)
	if opts.Era == EraModern {
		c.era.Store(uint32(opts.Era))
	}
	// A legacy Config.Era is set up on first use (legacySetup): the
	// transport must switch and initialize must run first.
	if hs, ok := t.(hookSetter); ok {
		hs.SetConnectHook(c.onConnect)
	}
	return c
}

// Era reports the era in use (EraUnknown before the first call).
func (c *Client) Era() Era { return Era(c.era.Load()) }

// ProtocolVersion reports the revision in use.
func (c *Client) ProtocolVersion() string { return *c.version.Load() }

// Server reports what the server said about itself (server/discover or
// initialize); nil before the probe.
func (c *Client) Server() *ServerDescription { return c.server.Load() }

// Close closes the transport.
func (c *Client) Close() error {
	c.closed.Store(true)
	return c.t.Close()
}

// RPCError is a JSON-RPC error the server answered with.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	Status  int             `json:"-"` // HTTP status, when known
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("client: server error %d: %s", e.Code, e.Message)
}

// Is matches a *codec.Error or *RPCError with the same code.
func (e *RPCError) Is(target error) bool {
	switch t := target.(type) {
	case *RPCError:
		return t.Code == e.Code
	case *codec.Error:
		return int(t.Code) == e.Code
	}
	return false
}

// Result is a complete result object.
type Result struct {
	// Raw is the result object as the server sent it.
	Raw json.RawMessage
	// Type is its resultType; a result without one reads "complete"
	// (COMPAT-08, GEN-10).
	Type string
}

// Progress is one notifications/progress of a call (PROG-02).
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// LogMessage is one notifications/message (GEN-13).
type LogMessage struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// CallOptions tune one call.
type CallOptions struct {
	// OnProgress asks for progress (a progressToken is sent) and receives
	// each notification.
	OnProgress func(Progress)
	// LogLevel asks for log messages at or above the level (deprecated
	// feature, GEN-13); OnLog receives them.
	LogLevel string
	OnLog    func(LogMessage)
	// NoRetry forbids re-sending a request that was not delivered.
	NoRetry bool
	// Resend allows re-sending, with a new id, a request whose connection
	// was lost after it was sent (the server may have run it): set it for
	// idempotent calls that should survive a server restart (STD-14,
	// SSE-09). Counted against Config.Retries.
	Resend bool
	// Meta adds members to _meta (for example traceparent): a JSON object.
	Meta json.RawMessage
}

// Call sends method with params (a JSON object, or nil) and waits for its
// final result: progress and log messages go to opts' callbacks, MRTR
// rounds to Config.OnInput. A JSON-RPC error comes back as *RPCError.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (*Result, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	if err := c.ensureEra(ctx); err != nil {
		return nil, err
	}
	if c.opts.Timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
			defer cancel()
		}
	}
	var inputResponses json.RawMessage
	var requestState json.RawMessage
	refreshed := false
	for round := 0; ; round++ {
		p := params
		if round > 0 {
			p = withRetryMembers(params, inputResponses, requestState)
		}
		res, err := c.callOnce(ctx, method, p, opts)
		if err != nil && method == "tools/call" && !refreshed && isHeaderMismatch(err) {
			// PARAM-11: the tool's x-mcp-header annotations may have
			// changed; learn them again and retry once.
			refreshed = true
			if _, lerr := c.ListTools(ctx); lerr == nil {
				res, err = c.callOnce(ctx, method, p, opts)
			}
		}
		if err != nil {
			return nil, err
		}
		if res.Type != "input_required" {
			return res, nil
		}
		if c.opts.OnInput == nil && !hasOnlyState(res.Raw) {
			return res, nil
		}
		if round+1 >= c.opts.MaxInputRounds {
			return nil, fmt.Errorf("client: %s still needs input after %d rounds (MRTR-12)", method, c.opts.MaxInputRounds)
		}
		inputResponses, requestState, err = c.answerInputs(ctx, res.Raw)
		if err != nil {
			return nil, err
		}
	}
}

// isHeaderMismatch reports a -32020 HeaderMismatch answer.
func isHeaderMismatch(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Code == -32020
}

// callOnce runs one JSON-RPC request, re-sending it with a new id when the
// transport says it was not delivered.
func (c *Client) callOnce(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (*Result, error) {
	tries := c.opts.Retries
	if opts.NoRetry {
		tries = 0
	}
	for attempt := 0; ; attempt++ {
		res, err := c.roundTrip(ctx, method, params, opts)
		again := errors.Is(err, ErrNotDelivered) || (opts.Resend && errors.Is(err, ErrDropped))
		if err != nil && again && attempt < tries && ctx.Err() == nil {
			c.opts.Logger.Debug("client: re-sending with a new id", "method", method, "err", err)
			continue
		}
		return res, err
	}
}

func (c *Client) nextID() []byte { return strconv.AppendInt(nil, c.ids.Add(1), 10) }

func (c *Client) roundTrip(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (*Result, error) {
	out, err := c.build(ctx, method, params, opts, false)
	if err != nil {
		return nil, err
	}
	ex, err := c.t.Open(ctx, out)
	if err != nil {
		return nil, err
	}
	defer ex.Close()
	for {
		msg, err := ex.Next(ctx)
		if err != nil {
			if err == io.EOF {
				err = ErrDropped
			}
			return nil, err
		}
		var in incoming
		if err := in.parse(msg); err != nil {
			return nil, fmt.Errorf("client: bad message from server: %w", err)
		}
		switch {
		case in.isResponse():
			return in.result(statusOf(ex))
		case in.Method == "notifications/progress":
			if opts.OnProgress != nil {
				var p Progress
				if codec.Unmarshal(in.Params, &p) == nil {
					opts.OnProgress(p)
				}
			}
		case in.Method == "notifications/message":
			var m LogMessage
			if codec.Unmarshal(in.Params, &m) == nil {
				if opts.OnLog != nil {
					opts.OnLog(m)
				} else {
					c.opts.Logger.Debug("client: server log", "level", m.Level, "data", string(m.Data))
				}
			}
		default:
			// Anything else on a request's stream is ignored (SSE-02: a
			// server request here would break the revision).
			c.opts.Logger.Debug("client: unexpected message on a request stream", "method", in.Method)
		}
	}
}

func statusOf(ex Exchange) int {
	if s, ok := ex.(statusReporter); ok {
		return s.Status()
	}
	return 0
}

// build encodes one request: params with _meta merged in (META-02).
func (c *Client) build(ctx context.Context, method string, params json.RawMessage, opts *CallOptions, listen bool) (*Outgoing, error) {
	id := c.nextID()
	out := &Outgoing{ID: id, Method: method, Version: c.ProtocolVersion(), Listen: listen}
	var token []byte
	if opts != nil && opts.OnProgress != nil {
		token = id // unique among this client's active requests (PROG-01)
		out.Token = token
	}
	body := make([]byte, 0, 192+len(params))
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, id...)
	body = append(body, `,"method":`...)
	body = codec.AppendString(body, method)
	body = append(body, `,"params":{`...)
	body = c.appendMeta(ctx, body, token, opts)
	rest, err := objectMembers(params)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		body = append(body, ',')
		body = append(body, rest...)
	}
	body = append(body, "}}"...)
	if bytes.IndexByte(body, '\n') >= 0 || bytes.IndexByte(body, '\r') >= 0 {
		// Pretty-printed params: one message per line (STD-02).
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return nil, fmt.Errorf("client: params: %w", err)
		}
		body = buf.Bytes()
	}
	out.Body = body
	switch method {
	case "tools/call", "prompts/get":
		if s, ok := codec.LookupString(params, "name"); ok {
			out.Name, out.HasName = s.String(), true
		}
	case "resources/read":
		if s, ok := codec.LookupString(params, "uri"); ok {
			out.Name, out.HasName = s.String(), true
		}
	}
	if method == "tools/call" && out.HasName && c.Era() != Era2024 {
		if bs, ok := c.tools.Load(out.Name); ok {
			args, _ := codec.LookupPath(params, "arguments")
			hs, err := paramHeaders(bs.([]mcp.HeaderBinding), args)
			if err != nil {
				return nil, err
			}
			out.Headers = hs
		}
	}
	return out, nil
}

// appendMeta writes the "_meta" member: on the modern era the required
// keys (META-02); on legacy eras only progressToken and caller extras.
func (c *Client) appendMeta(ctx context.Context, b []byte, token []byte, opts *CallOptions) []byte {
	b = append(b, `"_meta":{`...)
	n := len(b)
	if c.Era() == EraModern || c.Era() == EraUnknown {
		b = append(b, `"io.modelcontextprotocol/protocolVersion":`...)
		b = codec.AppendString(b, c.ProtocolVersion())
		b = append(b, `,"io.modelcontextprotocol/clientCapabilities":`...)
		b = append(b, c.opts.Capabilities...)
		b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
		b = append(b, c.info...)
		if opts != nil && opts.LogLevel != "" {
			b = append(b, `,"io.modelcontextprotocol/logLevel":`...)
			b = codec.AppendString(b, opts.LogLevel)
		}
	}
	if token != nil {
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, `"progressToken":`...)
		b = append(b, token...)
	}
	if p := c.opts.Propagate; p != nil && ctx != nil {
		p(ctx, func(key, value string) {
			if len(b) > n {
				b = append(b, ',')
			}
			b = codec.AppendString(b, key)
			b = append(b, ':')
			b = codec.AppendString(b, value)
		})
	}
	if opts != nil && len(opts.Meta) > 0 {
		if rest, err := objectMembers(opts.Meta); err == nil && len(rest) > 0 {
			if len(b) > n {
				b = append(b, ',')
			}
			b = append(b, rest...)
		}
	}
	return append(b, '}')
}

// objectMembers returns the inside of a JSON object (between the braces,
// trimmed), dropping a "_meta" member the caller passed (it is rebuilt).
func objectMembers(obj json.RawMessage) ([]byte, error) {
	if len(obj) == 0 || string(obj) == "null" {
		return nil, nil
	}
	if t := trimSpace(obj); len(t) >= 2 && t[0] == '{' && !bytes.Contains(t, []byte(`"_meta"`)) {
		if !json.Valid(t) {
			return nil, errors.New("client: params must be a JSON object")
		}
		return trimSpace(t[1 : len(t)-1]), nil
	}
	var m map[string]json.RawMessage
	if err := codec.Unmarshal(obj, &m); err != nil {
		return nil, fmt.Errorf("client: params must be a JSON object: %w", err)
	}
	if _, ok := m["_meta"]; ok {
		delete(m, "_meta")
		b, err := marshalRaw(m)
		if err != nil {
			return nil, err
		}
		obj = b
	}
	s := trimSpace(obj)
	if len(s) < 2 {
		return nil, nil
	}
	return trimSpace(s[1 : len(s)-1]), nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// peekOpts: a server's results may nest deeper than the requests a server
// accepts.
var peekOpts = codec.PeekConfig{MaxDepth: codec.MaxDepthLimit}

// incoming is one server message, decoded enough to route it: Peek finds
// the members, and only an error object is decoded (the result stays a
// span of the message).
type incoming struct {
	env    codec.Envelope
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
}

func (in *incoming) parse(msg []byte) error {
	if err := codec.PeekWith(msg, &in.env, peekOpts); err != nil {
		return err
	}
	in.Params = in.env.Params
	if in.env.Kind != codec.KindResponse {
		in.Method = methodName(in.env.Method)
		return nil
	}
	if in.env.HasError {
		raw, _ := codec.LookupPath(msg, "error")
		in.Error = new(RPCError)
		return codec.Unmarshal(raw, in.Error)
	}
	in.Result, _ = codec.LookupPath(msg, "result")
	return nil
}

// methodName returns the known notification methods without allocating.
func methodName(s codec.Str) string {
	for _, m := range [...]string{"notifications/progress", "notifications/message",
		"notifications/subscriptions/acknowledged", "notifications/tools/list_changed",
		"notifications/prompts/list_changed", "notifications/resources/list_changed",
		"notifications/resources/updated", "notifications/cancelled"} {
		if s.EqualString(m) {
			return m
		}
	}
	return s.String()
}

func (in *incoming) isResponse() bool { return in.env.Kind == codec.KindResponse }

// result converts a response into a Result or *RPCError.
func (in *incoming) result(status int) (*Result, error) {
	if in.Error != nil {
		in.Error.Status = status
		return nil, in.Error
	}
	r := &Result{Raw: in.Result, Type: "complete"}
	if s, ok := codec.LookupString(in.Result, "resultType"); ok {
		switch {
		case s.EqualString("complete"):
		case s.EqualString("input_required"):
			r.Type = "input_required"
		default:
			// GEN-10: an unrecognised resultType is invalid.
			return nil, fmt.Errorf("client: result has unknown resultType %q", s.String())
		}
	}
	return r, nil
}

// hasOnlyState reports an InputRequiredResult that carries a requestState
// and no inputRequests: it may be retried at once (MRTR-05).
func hasOnlyState(res json.RawMessage) bool {
	_, reqs := codec.LookupPath(res, "inputRequests")
	_, state := codec.LookupPath(res, "requestState")
	return state && !reqs
}

// answerInputs runs OnInput for each embedded request and returns the
// retry's inputResponses and requestState (MRTR-05).
func (c *Client) answerInputs(ctx context.Context, res json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	var ir struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState json.RawMessage `json:"requestState"`
	}
	if err := codec.Unmarshal(res, &ir); err != nil {
		return nil, nil, fmt.Errorf("client: bad InputRequiredResult: %w", err)
	}
	var responses json.RawMessage
	if len(ir.InputRequests) > 0 {
		if c.opts.OnInput == nil {
			return nil, nil, errors.New("client: server asked for input and Config.OnInput is not set")
		}
		out := make(map[string]json.RawMessage, len(ir.InputRequests))
		for k, r := range ir.InputRequests {
			req := mcp.InputRequest{Method: r.Method}
			if r.Params != nil {
				req.Params = r.Params // as received (InputRequest.DecodeParams reads it)
			}
			v, err := c.opts.OnInput(ctx, k, req)
			if err != nil {
				return nil, nil, fmt.Errorf("client: input %q (%s): %w", k, r.Method, err)
			}
			out[k] = v
		}
		b, err := marshalRaw(out)
		if err != nil {
			return nil, nil, err
		}
		responses = b
	}
	return responses, ir.RequestState, nil
}

// withRetryMembers returns params with inputResponses and requestState set
// (top-level params members, MRTR-06); requestState byte for byte.
func withRetryMembers(params, responses, state json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(params) > 0 {
		_ = codec.Unmarshal(params, &m)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	delete(m, "inputResponses")
	delete(m, "requestState")
	if responses != nil {
		m["inputResponses"] = responses
	}
	if state != nil {
		m["requestState"] = state
	}
	b, _ := marshalRaw(m)
	return b
}

// marshalRaw encodes v without HTML escaping, so raw members (an opaque
// requestState above all) keep their bytes (MRTR-05).
func marshalRaw(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
