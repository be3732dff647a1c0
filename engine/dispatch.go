package engine

import (
	"errors"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/state"
)

// method is one entry of the 2026-07-28 method table (Appendix A).
type method struct {
	name      string
	handle    func(c *Call) error
	gate      gateKind   // the capability that makes it available (gateNone: always)
	cacheable bool       // Return adds ttlMs/cacheScope (resources/read)
	mrtr      bool       // may answer input_required (MRTR-02)
	inline    bool       // cheap: run on the transport's goroutine
	slot      uint8      // histogram index (metrics.go)
	list      listKind   // the catalogue a list method pages through (catalog.go)
	target    targetKind // what checkTarget checks (a list method: targetCursor, set by init)
}

// gateKind names the server capability a method needs (checkMethod).
type gateKind uint8

const (
	gateNone gateKind = iota
	gateTools
	gateResources
	gatePrompts
	gateCompletions
)

// allows reports whether caps make a method gated by g available.
func (g gateKind) allows(caps *capabilities) bool {
	switch g {
	case gateTools:
		return caps.tools
	case gateResources:
		return caps.resources
	case gatePrompts:
		return caps.prompts
	case gateCompletions:
		return caps.completions
	}
	return true
}

// targetKind is what checkTarget checks of a method's params.
type targetKind uint8

const (
	targetNone   targetKind = iota
	targetTool              // tools/call: params.name names a tool
	targetPrompt            // prompts/get: params.name is present
	targetURI               // resources/read: params.uri is present
	targetCursor            // a list method: its cursor is one of its list's
)

var methods map[string]*method

// listenMethod is the subscriptions/listen entry (set by init).
var listenMethod *method

func init() {
	const tools, res, prompts = gateTools, gateResources, gatePrompts
	ms := []*method{
		{name: "server/discover", handle: discover, inline: true},
		{name: "tools/list", handle: listPage, list: listTools, gate: tools, inline: true},
		{name: "tools/call", handle: callTool, gate: tools, mrtr: true, target: targetTool},
		{name: "prompts/list", handle: listPage, list: listPrompts, gate: prompts, inline: true},
		{name: "prompts/get", handle: getPrompt, gate: prompts, mrtr: true, target: targetPrompt},
		{name: "resources/list", handle: listPage, list: listResources, gate: res, inline: true},
		{name: "resources/templates/list", handle: listPage, list: listTemplates, gate: res, inline: true},
		{name: "resources/read", handle: readResource, gate: res, mrtr: true, cacheable: true, target: targetURI},
		{name: "completion/complete", handle: complete, gate: gateCompletions},
		{name: "subscriptions/listen", handle: listen},
	}
	methods = make(map[string]*method, len(ms))
	for _, m := range ms {
		if m.list != listNone {
			m.target = targetCursor // a list method's cursor is checked
		}
		methods[m.name] = m
	}
	listenMethod = methods["subscriptions/listen"]
	toolsCallMethod = methods["tools/call"]
}

// toolsCallMethod is the tools/call entry: the method of most requests,
// which checkMethod finds without a map lookup.
var toolsCallMethod *method

// Validation errors. Those without per-request data are shared values so
// the rejection path does not allocate.
var (
	errShuttingDown = codec.NewError(codec.CodeInternalError, "Server is shutting down")
	errPanic        = codec.NewError(codec.CodeInternalError, "Internal error")
	errNoName       = codec.NewError(codec.CodeInvalidParams, "Invalid params: params.name must be a string")
	errNoURI        = codec.NewError(codec.CodeInvalidParams, "Invalid params: params.uri must be a string")
	errBadLogLevel  = codec.NewError(codec.CodeInvalidParams, "Invalid params: unknown io.modelcontextprotocol/logLevel")
)

const (
	keyVersion = "io.modelcontextprotocol/protocolVersion"
	keyCaps    = "io.modelcontextprotocol/clientCapabilities"
)

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// Check runs every validation step in order: CheckMeta, CheckVersion,
// CheckMethod, CheckTarget, CheckCapabilities. The HTTP binding interleaves its header checks
// between the steps (HVAL-02).
func (c *Call) check() *codec.Error {
	// A message of the template generation whose outcome c keeps: the
	// method and the tool as kept, the client capabilities as the tool
	// requires (the same bytes every time, but an error is counted).
	if c.tmplHit() {
		t := c.tc.tool
		c.method, c.tool = toolsCallMethod, t
		if len(t.RequiredClientCapabilities) == 0 {
			return nil
		}
		return c.missingCaps(t.RequiredClientCapabilities)
	}
	// checkMeta's and checkCapabilities' usual outcome is decided here,
	// without their calls: both _meta keys present and no logLevel; a tool
	// that requires no client capability.
	env := &c.env
	if !env.ProtocolVersion.Present || env.ClientCapabilities == nil || env.LogLevel.Present {
		if e := c.checkMeta(); e != nil {
			return e
		}
	}
	// checkVersion's usual outcome without its call: an unescaped
	// version the server supports, mostly its first (two word compares).
	if v := &env.ProtocolVersion; v.Escaped || !c.srv.ver0.is(v.Raw) && !c.srv.supportsRaw(v.Raw) {
		if e := c.checkVersion(); e != nil {
			return e
		}
	}
	// checkMethod's and checkTarget's usual outcome without their calls: a
	// batch's tools/call naming, unescaped, the tool the batch found last
	// (its name compared as two words), in the registry snapshot it was
	// found in, with tools served and no ToolFilter to ask.
	if b := c.batch; b != nil && !env.Method.Escaped && string(env.Method.Raw) == "tools/call" &&
		!env.Name.Escaped && b.toolKey.is(env.Name.Raw) {
		if rc := c.srv.regs(); b.toolIn == rc && rc.caps.tools && c.srv.opt.ToolFilter == nil {
			t := b.tool
			c.method, c.tool = toolsCallMethod, t
			if env.Template() != 0 {
				c.keepCheck()
			}
			if len(t.RequiredClientCapabilities) == 0 {
				return nil
			}
			return c.checkCapabilities()
		}
	}
	if e := c.checkMethod(); e != nil {
		return e
	}
	if e := c.checkTarget(); e != nil {
		return e
	}
	if t := c.tool; t != nil && len(t.RequiredClientCapabilities) == 0 {
		return nil
	}
	return c.checkCapabilities()
}

// tmplCheck is what a whole check decided for the messages of one
// template generation (codec.Envelope.Template), each of which has the
// same method, name, protocol version and client capabilities bytes: a
// tools/call that passes checkMeta, checkVersion and checkMethod and
// names tool, in the registry snapshot rc, with no ToolFilter to ask.
// Three words a Call; nothing per tool.
type tmplCheck struct {
	gen  uint64
	rc   *resultCache
	tool *Tool
}

// tmplHit reports whether c.tc holds the outcome of c's check: c's
// message was taken by a template (gen != 0) of the generation c.tc was
// kept for, rc is still the registry's snapshot (a tool added, removed
// or replaced, or the tools capability changed, makes a new one; c.tc
// keeps rc alive, so no other snapshot has its address). The server is
// rc's: keepCheck kept nothing for one with a ToolFilter, and a server's
// Config is fixed at New.
func (c *Call) tmplHit() bool {
	g := c.env.Template()
	// reg, not regs: a cleared snapshot (nil) is never the one kept (rc
	// is set with gen, from regs), so a change misses here and the check
	// that follows builds the snapshot.
	return g != 0 && g == c.tc.gen && c.tc.rc == c.srv.reg.Load()
}

// keepCheck keeps in c.tc the outcome of the check of c's message, a
// template's (Template != 0), after checkMethod and checkTarget (or
// check in their place) found its tool: every step but the client
// capabilities' decided again here from the envelope, against one
// snapshot of the registry, so that what is kept does not depend on which
// steps the transport ran, or in which snapshot (the tool found in rc
// is t: rc serves tools). When anything differs from the usual outcome
// nothing is kept, and c.tc keeps what it held.
//
//go:noinline
func (c *Call) keepCheck() {
	env, s, t := &c.env, c.srv, c.tool
	rc := s.regs()
	g := env.Template()
	if g == 0 || t == nil || s.opt.ToolFilter != nil ||
		!env.ProtocolVersion.Present || env.ProtocolVersion.Escaped || env.ClientCapabilities == nil || env.LogLevel.Present ||
		env.Method.Escaped || string(env.Method.Raw) != "tools/call" ||
		!env.Name.Present || env.Name.Escaped || rc.tool(env.Name.Raw) != t ||
		!s.supportsRaw(env.ProtocolVersion.Raw) {
		return
	}
	c.tc = tmplCheck{gen: g, rc: rc, tool: t}
}

// CheckCapabilities enforces META-08 for the target found by CheckTarget:
// the client capabilities a tool or prompt requires must be declared in this
// request.
func (c *Call) checkCapabilities() *codec.Error {
	switch {
	case c.tool != nil:
		if len(c.tool.RequiredClientCapabilities) == 0 {
			return nil // most tools: no call
		}
		return c.missingCaps(c.tool.RequiredClientCapabilities)
	case c.method.name == "prompts/get":
		if p := c.srv.lookupPrompt(c.nameBytes()); p != nil {
			return c.missingCaps(p.RequiredClientCapabilities)
		}
	}
	return nil
}

// CheckMeta enforces META-02/03: params._meta carries the protocol version
// and the client capabilities; an initialize without a modern claim gets
// -32022 naming the served versions (DISC-05, our choice).
func (c *Call) checkMeta() *codec.Error {
	env := &c.env
	pv, caps := env.ProtocolVersion.Present, env.ClientCapabilities != nil
	if pv && caps {
		if env.LogLevel.Present && !knownLogLevel(env.LogLevel) {
			c.srv.stats.InvalidParams.Add(1)
			return errBadLogLevel
		}
		return nil
	}
	if !pv && env.Method.EqualString("initialize") {
		requested := ""
		if s, ok := codec.LookupString(env.Params, "protocolVersion"); ok {
			requested = s.String()
		}
		c.srv.stats.BadVersion.Add(1)
		return c.srv.unsupportedVersion(requested, "Unsupported protocol version; this server speaks "+strings.Join(c.srv.opt.SupportedVersions, ", ")+" only")
	}
	var missing []string
	if !pv {
		missing = append(missing, keyVersion)
	}
	if !caps {
		missing = append(missing, keyCaps)
	}
	c.srv.stats.InvalidParams.Add(1)
	e := codec.NewError(codec.CodeInvalidParams, "Invalid params: missing _meta keys: "+strings.Join(missing, ", "))
	e.Status = 400
	return e
}

func knownLogLevel(s codec.Str) bool {
	for _, l := range logLevels {
		if s.EqualString(l) {
			return true
		}
	}
	return false
}

// CheckVersion enforces DISC-04.
func (c *Call) checkVersion() *codec.Error {
	if c.tmplHit() {
		return nil // the version of the template's kept check
	}
	if v := &c.env.ProtocolVersion; !v.Escaped {
		// supports, written out for the usual unescaped value: no call,
		// no copy of the Str.
		if v.Present {
			if c.srv.ver0.is(v.Raw) {
				return nil // the first supported version, as two word compares
			}
			for _, sv := range c.srv.opt.SupportedVersions {
				if string(v.Raw) == sv {
					return nil
				}
			}
		}
	} else if c.srv.supports(*v) {
		return nil
	}
	c.srv.stats.BadVersion.Add(1)
	return c.srv.unsupportedVersion(c.env.ProtocolVersion.String(), "Unsupported protocol version")
}

// supportsRaw reports whether raw, an unescaped version, is one s
// supports.
func (s *Server) supportsRaw(raw []byte) bool {
	for _, sv := range s.opt.SupportedVersions {
		if string(raw) == sv {
			return true
		}
	}
	return false
}

func (s *Server) supports(v codec.Str) bool {
	for _, sv := range s.opt.SupportedVersions {
		if v.EqualString(sv) {
			return true
		}
	}
	return false
}

// unsupportedVersion builds -32022 with data {supported, requested}.
func (s *Server) unsupportedVersion(requested, msg string) *codec.Error {
	d := append([]byte(`{"supported":`), s.supported...)
	d = append(d, `,"requested":`...)
	d = codec.AppendString(d, requested)
	d = append(d, '}')
	e := codec.NewError(codec.CodeUnsupportedProtocolVersion, msg)
	e.Data = d
	return e
}

// CheckMethod routes the method: unknown, removed and capability-gated
// methods get -32601 (HDR-08, DISC-08).
func (c *Call) checkMethod() *codec.Error {
	if c.tmplHit() {
		c.method = toolsCallMethod // the template's kept check
		return nil
	}
	var m *method
	if raw := c.env.Method.Raw; !c.env.Method.Escaped {
		if string(raw) == "tools/call" {
			m = toolsCallMethod
		} else {
			m = methods[string(raw)]
		}
	} else {
		m = methods[c.env.Method.String()]
	}
	if m != nil && m.gate != gateNone && !m.gate.allows(&c.srv.regs().caps) {
		m = nil
	}
	if m == nil {
		c.srv.stats.MethodNotFound.Add(1)
		return codec.NewError(codec.CodeMethodNotFound, "Method not found: "+c.env.Method.String())
	}
	c.method = m
	return nil
}

// CheckTarget checks the method's target: the tool named by params.name
// exists, prompts/get has a name, resources/read has a uri, a list
// method's cursor is one of its list's (cursor.go).
func (c *Call) checkTarget() *codec.Error {
	if c.tmplHit() {
		c.method, c.tool = toolsCallMethod, c.tc.tool // the template's kept check
		return nil
	}
	switch c.method.target { // a byte, not the name: a string switch compares
	case targetTool:
		if !c.env.Name.Present {
			c.srv.stats.InvalidParams.Add(1)
			return errNoName
		}
		var t *Tool
		if b := c.batch; b != nil {
			t = b.lookupTool(c.srv, c.nameBytes())
		} else {
			t = c.srv.lookupTool(c.nameBytes())
		}
		if t == nil || (c.srv.opt.ToolFilter != nil && !c.srv.opt.ToolFilter(c, t)) {
			c.srv.stats.InvalidParams.Add(1)
			return c.errUnknownTool()
		}
		c.tool = t
		if c.env.Template() != 0 {
			c.keepCheck()
		}
	case targetPrompt:
		if !c.env.Name.Present {
			c.srv.stats.InvalidParams.Add(1)
			return errNoName
		}
	case targetURI:
		if !c.env.URI.Present {
			c.srv.stats.InvalidParams.Add(1)
			return errNoURI
		}
	case targetCursor:
		if e := c.readCursor(); e != nil {
			c.srv.stats.InvalidParams.Add(1)
			c.srv.stats.InvalidCursors.Add(1)
			return e
		}
	}
	return nil
}

// nameBytes returns the unescaped params.name.
func (c *Call) nameBytes() []byte {
	if !c.env.Name.Escaped {
		return c.env.Name.Raw
	}
	c.scratch = c.env.Name.AppendUnescaped(c.scratch[:0])
	return c.scratch
}

func (c *Call) missingCaps(required []string) *codec.Error {
	var missing []string
	for _, name := range required {
		if !c.HasClientCapability(name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	c.srv.stats.MissingCaps.Add(1)
	return ErrMissingCapabilities(missing...)
}

// ErrMissingCapabilities is the -32021 error naming the client capabilities
// a request lacks, with data.requiredCapabilities as a ClientCapabilities
// object (META-08).
func ErrMissingCapabilities(missing ...string) *codec.Error {
	d := []byte(`{"requiredCapabilities":{`)
	for i, name := range missing {
		if i > 0 {
			d = append(d, ',')
		}
		d = codec.AppendString(d, name)
		d = append(d, `:{}`...)
	}
	d = append(d, `}}`...)
	e := codec.NewError(codec.CodeMissingRequiredClientCapability,
		"Server requires the "+strings.Join(missing, ", ")+" client capability for this request")
	e.Data = d
	return e
}

// Start runs the handler: cheap methods and Inline tools on the caller's
// goroutine, the rest on a pooled worker. The response reaches the
// Replier; then Done is called.
func (c *Call) start() {
	if c.inline() {
		c.runInline(false)
		return
	}
	// A worker runs it after the transport has moved on; owned before
	// admit arms a timeout that may read it from another goroutine.
	c.leaveBatch()
	c.own()
	if !c.admit() {
		return
	}
	c.armTimeout()
	c.srv.pool.submit(c)
}

// runInline is start for an inline request: admit, then run, written
// out (one call less for every inline request). With direct, it is
// Request.StartInline, also written out: it first checks that the request
// is inline without a timeout (else it reports false and does nothing),
// and a request of a batch with a stage writes its response there (it
// ends on this goroutine). It reports whether it ran the request.
func (c *Call) runInline(direct bool) bool {
	b := c.batch // read again only after admit's and armTimeout's calls, as before
	if direct {
		// A tool's call (its method tools/call) is decided by its bare
		// flag, which addTool set from the same terms.
		if t := c.tool; t == nil || !t.bare {
			if c.method == nil || !c.inline() || c.hasTimeout() {
				return false
			}
		}
		if b != nil && b.stage != nil {
			c.stageOut(*b.stage)
		}
	}
	// admit's usual case for a batch's request written out, without its
	// call: no hooks to run, no caller the limiter can name, the batch
	// listed with c as its Call, and no shutdown begun. Any other case,
	// a shutdown flag seen set included, goes to admit, which decides it
	// all again in the same order (the mark stored twice is the same
	// mark, and a flag once set stays set).
	admitted := false
	if b != nil && b.listed && c.srv.hooks == nil && c.principal == nil && c.limKey == "" && b.cur.Load() == c {
		c.admitted.Store(c.gen + 1)
		if !b.sc.srv.tracker.shut.Load() && !b.sc.shut.Load() {
			b.requests++ // as admit: added to Stats.Requests at the batch's end
			admitted = true
		}
	}
	if !admitted {
		if !c.admit() {
			return true
		}
		b = c.batch // (after the hooks)
	}
	if !direct {
		// (direct found no timeout: there is none to arm.)
		c.armTimeout()
		b = c.batch
	}
	var err error
	if b != nil && b.recovers {
		// The transport recovers a panic on the batch's goroutine and
		// hands it to Batch.Recover: no deferred call per request.
		b.inHandler = true
		if h := c.srv.chain; h != nil { // the middleware chain, or the method's handler
			err = h(c)
		} else {
			err = c.method.handle(c)
		}
		b.inHandler = false
	} else {
		err = c.invoke()
	}
	if err != nil {
		if err == errDetached {
			return true // the call lives on; it may already be recycled
		}
		c.handleError(err)
	}
	c.complete()
	return true
}

// panicked counts and logs a handler's panic with value v.
func (c *Call) panicked(v any) {
	c.srv.stats.Panics.Add(1)
	c.srv.log.panic(c.method.name, v)
}

// Run is Start on the caller's goroutine: the handler runs, the response
// reaches the Replier, Done is called, and only then does Run return.
// Transports use it when the request cannot stream (see MayNotify).
func (c *Call) runNow() {
	if c.batch == nil && c.srv.hooks == nil && c.principal == nil && c.limKey == "" {
		// admit's usual case for a request on its own written out, without
		// its call: no hooks to run, no caller the limiter can name, no
		// batch. admit would decide it the same way: listed, or refused
		// once a shutdown has begun.
		if !c.srv.tracker.add(c, 1) {
			c.refuse()
			return
		}
	} else {
		if c.batch != nil && (c.method == nil || !c.inline()) {
			// It may not end here (a listen stream outlives its handler):
			// on its own.
			c.leaveBatch()
		}
		if !c.admit() {
			return
		}
	}
	c.armTimeout()
	// run, written out: one frame less for every request Run runs.
	if err := c.invoke(); err != nil {
		if err == errDetached {
			return // the call lives on; it may already be recycled: do not touch it
		}
		c.handleError(err)
	}
	c.complete()
}

// admit registers the call for Shutdown; once Shutdown has begun it
// answers the call instead. Its caller then arms the request's timeout
// (armTimeout), unless it has found that there is none.
func (c *Call) admit() bool {
	if h := c.srv.hooks; h != nil {
		c.hookStart(h)
	}
	// The limiter only for a request it can count: a caller it can name
	// (acquire returns nil at once for an anonymous request without a
	// limit key, whatever the limits).
	if c.principal != nil || c.limKey != "" {
		if e := c.srv.lim.acquire(c); e != nil {
			c.fail(e)
			return false
		}
	}
	var ok bool
	if b := c.batch; b != nil {
		// Batch.admit's usual case written out (its frame is a tenth of
		// what admitting a batch's request costs): the batch is listed,
		// its Call is c, and no shutdown has begun. Any other case goes to
		// b.admit, which does it all again in the same order: the mark
		// stored twice is the same mark, and a shutdown flag once set
		// stays set.
		if b.listed && b.cur.Load() == c {
			c.admitted.Store(c.gen + 1)
			ok = !b.sc.srv.tracker.shut.Load() && !b.sc.shut.Load()
		}
		if !ok {
			ok = b.admit(c)
		}
	} else {
		ok = c.srv.tracker.add(c, 1) // counted in Stats.Requests when admitted
	}
	if !ok {
		c.refuse()
		return false
	}
	if b := c.batch; b != nil {
		b.requests++ // added to Stats.Requests at the batch's end: one atomic add per read
	}
	return true
}

// refuse answers a request that a shutdown keeps from being admitted
// (admit, runNow).
//
//go:noinline
func (c *Call) refuse() {
	c.srv.stats.ShutdownRefused.Add(1)
	c.refused, c.rare = true, true
	c.fail(errShuttingDown)
}

// inline reports whether the handler runs on the transport's goroutine:
// cheap methods and Inline tools. resources/list is not cheap with a
// ResourceLister, which may wait for its store.
func (c *Call) inline() bool {
	if c.tool != nil && c.tool.Inline {
		return true
	}
	return c.method.inline && (c.method.list != listResources || c.srv.opt.ResourceLister == nil)
}

// MayNotify reports whether the request can produce notifications before
// its response: it asked for progress (progressToken), for log messages
// (logLevel, with Config.Logging), or is a listen stream. A request that
// cannot may be answered with a single JSON body (HTTP-07, SSE-10).
func (c *Call) mayNotify() bool {
	return c.env.ProgressToken != nil ||
		(c.srv.opt.Logging && c.env.LogLevel.Present) ||
		(c.method != nil && c.method == listenMethod)
}

// run invokes the handler and completes the call.
func (c *Call) run() {
	if err := c.invoke(); err != nil {
		if err == errDetached {
			return // the call lives on; it may already be recycled: do not touch it
		}
		c.handleError(err)
	}
	c.complete()
}

func (c *Call) invoke() (err error) {
	// recover is called only when the handler did not return: a call of
	// it (gorecover) on every request costs more than the flag.
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			c.panicked(v)
			err = errPanic
		}
	}()
	// handle, written out, with tools/call's handler called by name (a
	// direct call, not one through the method's function value): one
	// frame and one indirect call less for most requests.
	if h := c.srv.chain; h != nil {
		err = h(c)
	} else if m := c.method; m == toolsCallMethod {
		// callTool's first case here too (typedPlain, inlined): a typed
		// tool given arguments Peek recorded goes straight to its handler.
		if tt, n := c.typedPlain(); tt != nil {
			err = tt.call(c, n)
			returned = true
			return err
		}
		err = callTool(c)
	} else {
		err = m.handle(c)
	}
	returned = true
	return err
}

func (c *Call) handleError(err error) {
	var ce *codec.Error
	var ae *ArgumentsError
	switch {
	case errors.As(err, &ce):
		c.setError(ce)
	case errors.As(err, &ae):
		// Arguments a handler (Bind, a typed tool's decoding, its own
		// checks) refused: the tool's error in tools/call (SEP-1303),
		// invalid params elsewhere.
		if c.method.name == "tools/call" {
			c.argumentsRefused(ae)
		} else {
			c.srv.stats.InvalidArguments.Add(1)
			c.setError(ae.rpcError())
		}
	case errors.Is(err, state.ErrUnavailable):
		// The shared store or backplane is down: a retryable error (HTTP
		// 503), never a tool result the model would take as an answer.
		c.srv.stats.Unavailable.Add(1)
		c.srv.log.l.Warn("shared state unavailable", "method", c.method.name, "err", err)
		if errors.Is(err, state.ErrLost) {
			c.setError(ErrStateLost)
		} else {
			c.setError(ErrUnavailable)
		}
	case c.method.name == "tools/call":
		// A tool's own failure is a result the model can read, not a
		// protocol error.
		c.ErrorText(err.Error())
	default:
		c.srv.log.l.Error("handler failed", "method", c.method.name, "err", err)
		c.setError(errPanic)
	}
}

// ErrResourceNotFound is the -32602 error for an unknown resource URI, with
// data.uri (sep-2164; replaces -32002).
func ErrResourceNotFound(uri string) *codec.Error {
	e := codec.NewError(codec.CodeInvalidParams, "Resource not found")
	e.Data = codec.AppendString([]byte(`{"uri":`), uri)
	e.Data = append(e.Data, '}')
	return e
}

// built-in method handlers -----------------------------------------------------

func discover(c *Call) error {
	c.setRawResult(c.srv.regs().discover)
	return nil
}

// typedPlain returns c's tool's typed handler and the number of argument
// members Peek recorded, when the tool is typed and they are recorded (nil
// otherwise): recorded members are an object's (PlainArguments), so the
// typed handler checks and decodes them in one pass
// (typedTool.checkDecode), or calls checkArgs; called with n, it need not
// find either again (Tool.Handler would). callTool's first case, and
// invoke's for tools/call.
func (c *Call) typedPlain() (*typedTool, int) {
	if a := c.tool.args; a != nil && a.typed != nil {
		if n := c.env.PlainArguments(); n >= 0 {
			return a.typed, n
		}
	}
	return nil, 0
}

// callTool checks the arguments, then runs the handler. Arguments that
// are not an object fail the request itself (-32602); arguments that fail
// the tool's InputSchema are the tool's error, a result with isError true
// listing each failing path (SEP-1303, TRANSPORTS.md §1.4), and the handler
// never runs.
func callTool(c *Call) error {
	if tt, n := c.typedPlain(); tt != nil {
		return tt.call(c, n)
	}
	if a := c.tool.args; a != nil {
		if !argsObject(c.env.Arguments) {
			c.srv.stats.InvalidArguments.Add(1)
			return errArgsNotObject
		}
		// checkArgs, written out: a call costs 20 instructions here.
		e, scanned := a.checkPeeked(c.env.Arguments, &c.env, &c.flatVals)
		if a.flat != nil {
			c.flatN = len(a.flat.names) // what release clears, decided or not
		}
		if e != nil {
			c.argumentsRefused(e)
			return nil
		}
		if scanned {
			c.flatBy = a.flat // a typed tool decodes from c.flatVals
		}
	}
	return c.tool.Handler(c)
}

// checkArgs checks c's arguments, an object, against a, as callTool does;
// when they fail it answers the call (argumentsRefused) and reports false.
func (c *Call) checkArgs(a *argSchema) bool {
	e, scanned := a.checkPeeked(c.env.Arguments, &c.env, &c.flatVals)
	if a.flat != nil {
		c.flatN = len(a.flat.names) // what release clears, decided or not
	}
	if e != nil {
		c.argumentsRefused(e)
		return false
	}
	if scanned {
		c.flatBy = a.flat // a typed tool decodes from c.flatVals
	}
	return true
}

// argumentsRefused answers a tools/call whose arguments e refuses: a tool
// execution error the model reads (SEP-1303), counted.
func (c *Call) argumentsRefused(e *ArgumentsError) {
	c.srv.stats.InvalidArguments.Add(1)
	c.ErrorText(e.Error())
}

func getPrompt(c *Call) error {
	p := c.srv.lookupPrompt(c.nameBytes())
	if p == nil {
		return codec.NewError(codec.CodeInvalidParams, "Unknown prompt: "+c.env.Name.String())
	}
	if e := p.checkArgs(c.env.Arguments); e != nil {
		c.srv.stats.InvalidArguments.Add(1)
		return e
	}
	return p.Handler(c)
}

func readResource(c *Call) error {
	uri := c.env.URI.String()
	h, vars := c.srv.lookupResource(uri)
	if h == nil {
		if r := c.srv.opt.ResourceReader; r != nil {
			return r(c, uri)
		}
		return ErrResourceNotFound(uri)
	}
	return h(c, uri, vars)
}

func complete(c *Call) error {
	h := c.srv.completionHandler()
	if h == nil {
		return codec.NewError(codec.CodeMethodNotFound, "Method not found: completion/complete")
	}
	return h(c)
}
