package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
)

// ErrServerClosed is returned by transports once Shutdown has begun.
var ErrServerClosed = errors.New("engine: server closed")

// Server is the transport-agnostic MCP server: registries, method table,
// cached list results and the subscription hub. It is safe for concurrent
// use; registries may change while requests are served (each change
// rebuilds the cached results and notifies list_changed listeners).
type Server struct {
	opt Config
	log logger
	// stats' Requests is written by every request on every core: the pads
	// keep it off the cache lines of opt and log, which every request
	// reads (false sharing cost ~100 ns a request on two cores,
	// BenchmarkTypedEchoPrepared/parallel), and a Counter spreads it
	// over several lines.
	_     cacheLinePad
	stats Stats
	_     cacheLinePad
	hub   hub
	pool  workerPool
	durs  *durations // request-duration histograms (metrics.go)

	// Per-caller limits (limit.go).
	lim      *limiter
	limStats LimitStats

	regMu      sync.RWMutex
	tools      map[string]*Tool
	resources  map[string]*Resource
	templates  []*templateEntry
	prompts    map[string]*Prompt
	completion CompletionHandler

	// reg is the registries' snapshot the hot path reads without locks,
	// through regs. A change clears it under regMu (staleLocked) and the
	// first read after the change builds it, so that registering n tools
	// costs one build, not n (each build copies every name).
	reg atomic.Pointer[resultCache]
	// privateHints are the cache hints with cacheScope "private" (the
	// pages of tools/list with a ToolFilter).
	privateHints []byte

	hooks *Hooks      // nil when Config.Hooks sets nothing
	chain HandlerFunc // Config.Middleware around dispatch; nil without

	serverMeta []byte // `{"io.modelcontextprotocol/serverInfo":{...}}`
	// textTail ends a text tool result (Call.TextBytes) after its text in
	// one append: `}],"isError":false,"_meta":` serverMeta `}`; without
	// its first two bytes it ends a typed tool's (Call.structured).
	textTail []byte
	// textEnd is textTail and the response's closing brace: the last
	// append of a text result (Call.TextBytes), which closes it.
	textEnd []byte
	// structTail is '}' (closing a typed tool's structuredContent),
	// textTail without its first two bytes and the response's closing
	// brace: structuredFlat's last append.
	structTail []byte
	supported  []byte // `["2026-07-28"]`
	// ver0 is the first supported version (the one clients mostly send)
	// as a wordKey: check accepts it without a string comparison.
	ver0 wordKey

	tracker  tracker // every request in flight
	closing  atomic.Bool
	shutOnce sync.Once

	bgOnce sync.Once
	bgCtx  context.Context
	bgStop context.CancelFunc
	bg     sync.WaitGroup

	// Scale-out (backplane.go): nil bp keeps every cue in this process.
	bp        state.Backplane
	bpState   atomic.Int32 // bpStarting, bpUp, bpDown
	bpStarted atomic.Bool  // Start subscribed (or is subscribing)

	missMu      sync.Mutex  // guards missed, missRunning (a leaf)
	missed      []state.Cue // CueMissed owed to the other replicas (oweMissed)
	missRunning bool        // sendMissed is running
	missClosed  bool        // Shutdown began: nothing more is queued
	origin      uint64      // names this replica in its CueMissed (Cue.Origin), never 0
}

type templateEntry struct {
	def ResourceTemplate
	tpl uriTemplate
}

// resultCache holds what the request path reads of the registries: the
// encoded server/discover result, the capabilities, the lookup tables and
// the lists' catalogs.
type resultCache struct {
	discover []byte
	hints    []byte // `,"ttlMs":N,"cacheScope":"S"`
	caps     capabilities
	// Snapshots of the tool and prompt registries for the request path:
	// read without a lock (a read lock is an atomic on a cache line every
	// core shares). Never modified once published.
	toolsByName   map[string]*Tool
	promptsByName map[string]*Prompt
	// fewTools is toolsByName as a list of word keys when it holds at
	// most maxFewTools tools whose names are all 4 to 16 bytes long (a
	// usual server's): finding a name is then a few word compares, where
	// the map hashes it and compares it again (~100 instructions a
	// request). byKey: fewTools is complete and used.
	fewTools []fewTool
	byKey    bool
	// The lists' catalogs (catalog.go), each built by the first list
	// request after the registry change that made this cache.
	lists [numLists]atomic.Pointer[catalog]
}

type capabilities struct {
	tools, resources, prompts, completions, logging bool
}

// New returns a Server with the given options.
func New(opt Config) *Server {
	s := &Server{
		opt:       opt.withDefaults(),
		tools:     map[string]*Tool{},
		resources: map[string]*Resource{},
		prompts:   map[string]*Prompt{},
	}
	s.bp = s.opt.Backplane
	s.origin = rand.Uint64() | 1
	if !s.opt.NoRequestDurations {
		s.durs = new(durations)
	}
	s.tracker.init()
	s.stats.Requests.t = &s.tracker
	s.lim = newLimiter(&s.opt, &s.limStats)
	s.log = logger{s.opt.Logger}
	if !s.opt.Hooks.empty() {
		h := s.opt.Hooks
		s.hooks = &h
	}
	s.chain = buildChain(s.opt.Middleware)
	info := mcp.Implementation{Name: s.opt.Name, Title: s.opt.Title, Version: s.opt.Version}
	im, err := codec.Marshal(info)
	if err != nil {
		panic("engine: cannot encode serverInfo: " + err.Error())
	}
	s.serverMeta = append(append([]byte(`{"io.modelcontextprotocol/serverInfo":`), im...), '}')
	s.textTail = append(append([]byte(`}],"isError":false,"_meta":`), s.serverMeta...), '}')
	s.textEnd = append(append([]byte(nil), s.textTail...), '}')
	s.structTail = append(append([]byte{'}'}, s.textTail[2:]...), '}')
	s.supported, _ = codec.Marshal(s.opt.SupportedVersions)
	s.ver0 = makeWordKey(s.opt.SupportedVersions[0])
	s.privateHints = s.cacheHints("private")
	s.hub.init(s)
	s.pool.init()
	s.freshRegs() // the first snapshot, so that no request builds it
	return s
}

// Config returns the server's effective options (defaults applied).
func (s *Server) Config() Config { return s.opt }

// Stats returns the server's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// AddTool registers (or replaces) a tool and notifies tools/list_changed
// listeners.
func (s *Server) AddTool(t Tool) error {
	return s.addTool(t, nil)
}

// addTool is AddTool; tt, when not nil, is the typed tool whose handler
// t.Handler is (AddTool[In, Out]): when it can check the arguments Peek
// recorded itself (typedTool.fuse), its argSchema says so.
func (s *Server) addTool(t Tool, tt *typedTool) error {
	if err := t.validate(); err != nil {
		return err
	}
	if tt != nil && t.args != nil && tt.fuse(t.args.flat) {
		t.args.typed = tt
	}
	// What runInline's direct check decides for a call of t (hasTimeout:
	// the tool's Timeout, else the Config's).
	t.bare = t.Inline && t.Timeout <= 0 && s.opt.Timeout <= 0
	s.regMu.Lock()
	s.tools[t.Name] = &t
	s.staleLocked()
	s.regMu.Unlock()
	s.hub.listChanged(subTools)
	return nil
}

// RemoveTool unregisters a tool; it reports whether the tool existed.
func (s *Server) RemoveTool(name string) bool {
	s.regMu.Lock()
	_, ok := s.tools[name]
	delete(s.tools, name)
	s.staleLocked()
	s.regMu.Unlock()
	if ok {
		s.hub.listChanged(subTools)
	}
	return ok
}

// AddResource registers (or replaces) a concrete resource and notifies
// resources/list_changed listeners.
func (s *Server) AddResource(r Resource) error {
	if r.URI == "" || r.Name == "" {
		return errors.New("engine: resource needs a URI and a name")
	}
	if r.Handler == nil {
		return fmt.Errorf("engine: resource %q: %w", r.URI, errNoHandler)
	}
	s.regMu.Lock()
	s.resources[r.URI] = &r
	s.staleLocked()
	s.regMu.Unlock()
	s.hub.listChanged(subResources)
	return nil
}

// RemoveResource unregisters the concrete resource of uri; it reports
// whether it existed, and then notifies resources/list_changed listeners.
func (s *Server) RemoveResource(uri string) bool {
	s.regMu.Lock()
	_, ok := s.resources[uri]
	if ok {
		delete(s.resources, uri)
		s.staleLocked()
	}
	s.regMu.Unlock()
	if ok {
		s.hub.listChanged(subResources)
	}
	return ok
}

// AddResourceTemplate registers a resource template, or replaces the one
// with the same URITemplate (which keeps its place: a URI that several
// templates match goes to the one registered first), and notifies
// resources/list_changed listeners.
func (s *Server) AddResourceTemplate(t ResourceTemplate) error {
	if t.Name == "" {
		return errors.New("engine: resource template needs a name")
	}
	if t.Handler == nil {
		return fmt.Errorf("engine: template %q: %w", t.URITemplate, errNoHandler)
	}
	tpl, err := parseTemplate(t.URITemplate)
	if err != nil {
		return err
	}
	e := &templateEntry{def: t, tpl: tpl}
	s.regMu.Lock()
	if i := s.templateIndex(t.URITemplate); i >= 0 {
		s.templates[i] = e
	} else {
		s.templates = append(s.templates, e)
	}
	s.staleLocked()
	s.regMu.Unlock()
	s.hub.listChanged(subResources)
	return nil
}

// RemoveResourceTemplate unregisters the template registered with
// uriTemplate; it reports whether it existed, and then notifies
// resources/list_changed listeners.
func (s *Server) RemoveResourceTemplate(uriTemplate string) bool {
	s.regMu.Lock()
	i := s.templateIndex(uriTemplate)
	if i >= 0 {
		// The others keep their order: matching goes by registration.
		s.templates = slices.Delete(s.templates, i, i+1)
		s.staleLocked()
	}
	s.regMu.Unlock()
	if i >= 0 {
		s.hub.listChanged(subResources)
	}
	return i >= 0
}

// templateIndex returns the position of the template registered with
// uriTemplate, or -1. Called with regMu held.
func (s *Server) templateIndex(uriTemplate string) int {
	for i, t := range s.templates {
		if t.def.URITemplate == uriTemplate {
			return i
		}
	}
	return -1
}

// AddPrompt registers (or replaces) a prompt and notifies
// prompts/list_changed listeners.
func (s *Server) AddPrompt(p Prompt) error {
	if p.Name == "" {
		return errors.New("engine: prompt name is empty")
	}
	if p.Handler == nil {
		return fmt.Errorf("engine: prompt %q: %w", p.Name, errNoHandler)
	}
	s.regMu.Lock()
	s.prompts[p.Name] = &p
	s.staleLocked()
	s.regMu.Unlock()
	s.hub.listChanged(subPrompts)
	return nil
}

// RemovePrompt unregisters a prompt; it reports whether it existed.
func (s *Server) RemovePrompt(name string) bool {
	s.regMu.Lock()
	_, ok := s.prompts[name]
	delete(s.prompts, name)
	s.staleLocked()
	s.regMu.Unlock()
	if ok {
		s.hub.listChanged(subPrompts)
	}
	return ok
}

// SetCompletion installs the completion/complete handler (and advertises
// the completions capability).
func (s *Server) SetCompletion(h CompletionHandler) {
	s.regMu.Lock()
	s.completion = h
	s.staleLocked()
	s.regMu.Unlock()
}

// Go runs task in the background with a context that is cancelled when
// Shutdown begins; Shutdown waits for it (within its own deadline). Use it
// for work that publishes updates, such as a resource that changes on a
// timer.
func (s *Server) Go(task func(ctx context.Context)) {
	s.bgOnce.Do(func() { s.bgCtx, s.bgStop = context.WithCancel(context.Background()) })
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		task(s.bgCtx)
	}()
}

// ToolsChanged, PromptsChanged and ResourcesChanged tell listeners that a
// list changed for a reason the registries cannot see (for example tools
// filtered per caller, or the store behind a ResourceLister). AddTool,
// RemoveTool, AddPrompt, RemovePrompt, AddResource, RemoveResource,
// AddResourceTemplate and RemoveResourceTemplate publish their own
// changes, to this process's listeners only: each replica of a fleet has
// its own registries and makes the same change itself, so each of its
// listeners hears of it once, from its own replica. A change made in a
// store the replicas share is announced once, by one replica, with
// ResourcesChanged (and the like), which reaches every replica's
// listeners through the backplane.
//
// With Config.Backplane the change goes to the listeners of every replica
// (see Start); the error is then ErrBackplaneLost while the backplane is
// not connected, or the publish error, both wrapping
// state.ErrUnavailable (a handler may return it: -32603, HTTP 503).
// Without a backplane they deliver at once and return nil.
func (s *Server) ToolsChanged() error     { return s.publish(state.CueToolsChanged, "") }
func (s *Server) PromptsChanged() error   { return s.publish(state.CuePromptsChanged, "") }
func (s *Server) ResourcesChanged() error { return s.publish(state.CueResourcesChanged, "") }

// ResourceUpdated tells listeners subscribed to uri (or to a parent of it)
// that the resource changed (notifications/resources/updated); with a
// backplane, the listeners of every replica (errors as ToolsChanged).
func (s *Server) ResourceUpdated(uri string) error {
	return s.publish(state.CueResourceUpdated, uri)
}

// regs returns the registries' current snapshot, building it when a
// change since the last build left none.
func (s *Server) regs() *resultCache {
	if rc := s.reg.Load(); rc != nil {
		return rc
	}
	return s.freshRegs()
}

// freshRegs is regs' build, out of line (the hot path finds a snapshot).
//
//go:noinline
func (s *Server) freshRegs() *resultCache {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	return s.regsLocked()
}

// regsLocked is regs with regMu held: a snapshot it returns was built
// from the registries as they are (every change clears reg before it
// releases regMu).
func (s *Server) regsLocked() *resultCache {
	if rc := s.reg.Load(); rc != nil {
		return rc
	}
	s.rebuildLocked()
	return s.reg.Load()
}

// staleLocked drops the snapshot after a registry change (regMu held):
// the next read builds one (regs). Readers that loaded the old one before
// the change may finish with it; a read that begins after the change
// returns sees the change.
func (s *Server) staleLocked() { s.reg.Store(nil) }

// rebuildLocked makes a new cache for the registries as they are: the
// capabilities, the lookup tables and server/discover; the lists'
// catalogs are built when first asked for (catalog.go). Called with regMu
// held.
func (s *Server) rebuildLocked() {
	c := &resultCache{caps: capabilities{
		tools: len(s.tools) > 0,
		resources: len(s.resources) > 0 || len(s.templates) > 0 ||
			s.opt.ResourceLister != nil || s.opt.ResourceReader != nil,
		prompts:     len(s.prompts) > 0,
		completions: s.completion != nil,
		logging:     s.opt.Logging,
	}}
	hints := s.cacheHints(s.opt.CacheScope)
	c.hints = hints
	c.toolsByName = make(map[string]*Tool, len(s.tools))
	// Keys only for a registry small enough to use them: a large one is
	// rebuilt after every change and must not pay a key per tool each time.
	c.byKey = len(s.tools) <= maxFewTools
	for k, t := range s.tools {
		c.toolsByName[k] = t
		if !c.byKey {
			continue
		}
		if key := makeWordKey(k); key.n == 0 {
			c.byKey = false // a name outside 4 to 16 bytes: the map
		} else {
			c.fewTools = append(c.fewTools, fewTool{key: key, t: t})
		}
	}
	if !c.byKey {
		c.fewTools = nil
	}
	c.promptsByName = make(map[string]*Prompt, len(s.prompts))
	for k, p := range s.prompts {
		c.promptsByName[k] = p
	}

	d := []byte(`{"resultType":"complete","supportedVersions":`)
	d = append(d, s.supported...)
	d = append(d, `,"capabilities":`...)
	d = c.caps.append(d)
	if s.opt.Instructions != "" {
		d = append(d, `,"instructions":`...)
		d = codec.AppendString(d, s.opt.Instructions)
	}
	d = append(d, hints...)
	d = append(d, `,"_meta":`...)
	d = append(d, s.serverMeta...)
	c.discover = append(d, '}')
	s.reg.Store(c)
}

// cacheHints returns `,"ttlMs":N,"cacheScope":"SCOPE"` (CACHE, DISC-02).
func (s *Server) cacheHints(scope string) []byte {
	h := []byte(`,"ttlMs":`)
	h = strconv.AppendInt(h, s.opt.CacheTTL.Milliseconds(), 10)
	h = append(h, `,"cacheScope":`...)
	return codec.AppendString(h, scope)
}

func (c capabilities) append(b []byte) []byte {
	b = append(b, '{')
	n := 0
	add := func(s string) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
		n++
	}
	if c.tools {
		add(`"tools":{"listChanged":true}`)
	}
	if c.resources {
		add(`"resources":{"subscribe":true,"listChanged":true}`)
	}
	if c.prompts {
		add(`"prompts":{"listChanged":true}`)
	}
	if c.completions {
		add(`"completions":{}`)
	}
	if c.logging {
		add(`"logging":{}`)
	}
	return append(b, '}')
}

func (s *Server) lookupTool(name []byte) *Tool {
	return s.regs().tool(name)
}

// maxFewTools bounds resultCache.fewTools: past it, a miss's walk over
// the keys costs about what the map's hash does.
const maxFewTools = 8

// fewTool is one entry of resultCache.fewTools.
type fewTool struct {
	key wordKey
	t   *Tool
}

// tool returns the tool registered as name, or nil: toolsByName's answer,
// from fewTools when byKey (the keys are the map's, each a distinct name
// that wordKey.is matches exactly).
func (c *resultCache) tool(name []byte) *Tool {
	if !c.byKey {
		return c.toolsByName[string(name)]
	}
	for i := range c.fewTools {
		if c.fewTools[i].key.is(name) {
			return c.fewTools[i].t
		}
	}
	return nil
}

func (s *Server) lookupPrompt(name []byte) *Prompt {
	return s.regs().promptsByName[string(name)]
}

// lookupResource finds the handler for uri: a concrete resource first, then
// the first matching template.
func (s *Server) lookupResource(uri string) (ResourceHandler, map[string]string) {
	s.regMu.RLock()
	defer s.regMu.RUnlock()
	if r := s.resources[uri]; r != nil {
		return r.Handler, nil
	}
	for _, t := range s.templates {
		if vars, ok := t.tpl.match(uri); ok {
			return t.def.Handler, vars
		}
	}
	return nil, nil
}

func (s *Server) completionHandler() CompletionHandler {
	s.regMu.RLock()
	defer s.regMu.RUnlock()
	return s.completion
}

// Closing reports whether Shutdown has begun.
func (s *Server) Closing() bool { return s.closing.Load() }

// Shutdown stops the engine, once, for every transport: new requests are
// refused, listen streams are completed with a final result (SUB-10),
// background tasks started with Go are cancelled, in-flight requests are
// waited for until ctx ends and then cancelled. It returns by ctx's
// deadline: nil when everything finished in time, ctx.Err() otherwise. Idle
// workers are stopped. Whoever created the engine shuts it down, after the
// transports (each transport's own Shutdown stops only that transport).
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.tracker.closeAll()
		s.closing.Store(true)
		s.hub.closeAll()
		s.missMu.Lock()
		s.missClosed = true // before s.bg.Wait: see oweMissed
		s.missMu.Unlock()
		s.bgOnce.Do(func() { s.bgCtx, s.bgStop = context.WithCancel(context.Background()) })
		s.bgStop() // also ends the backplane subscription (Start)
	})
	bgDone := make(chan struct{})
	go func() { s.bg.Wait(); close(bgDone) }()
	err := s.tracker.wait(ctx, nil)
	select {
	case <-bgDone:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	s.pool.stop()
	return err
}

var errShutdown = errors.New("engine: server shutting down")

// logger wraps slog with the engine's few log calls.
type logger struct{ l *slog.Logger }

func (l logger) panic(method string, v any) {
	l.l.Error("handler panic", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// Counter is a counter that requests on several cores add to at once
// (Stats.Requests): its count is kept in counterStripes parts, each on a
// cache line of its own, and Load sums them, so that two cores adding
// at the same time do not take the line from each other for every add.
// Add adds to the first part; the engine adds to the part of the
// request's Call.
type Counter struct {
	s [counterStripes]struct {
		n atomic.Uint64
		_ [120]byte
	}
	// t, when set (Stats.Requests), keeps the rest of the count: a
	// request on its own is counted in its tracker shard as it is listed
	// (tracker.add), under the lock it takes there.
	t *tracker
}

// counterStripes is a Counter's parts (a power of two).
const counterStripes = 4

// Add adds n.
func (c *Counter) Add(n uint64) { c.s[0].n.Add(n) }

// addAt adds n to the part of a Call's tracker shard.
func (c *Counter) addAt(shard uint8, n uint64) { c.s[shard&(counterStripes-1)].n.Add(n) }

// Load returns the count: the parts read one after the other, while
// adds go on.
func (c *Counter) Load() uint64 {
	var n uint64
	for i := range c.s {
		n += c.s[i].n.Load()
	}
	if c.t != nil {
		n += c.t.admitted()
	}
	return n
}

// Stats are the server's counters; every rejection reason has its own.
type Stats struct {
	Requests         Counter       // requests dispatched to a handler (those of a Batch added at its End)
	Notifications    atomic.Uint64 // notifications received
	ParseErrors      atomic.Uint64 // -32700 answers
	InvalidRequests  atomic.Uint64 // -32600 answers
	TooDeep          atomic.Uint64 // nesting over MaxDepth
	LinesTooLong     atomic.Uint64 // frames over the size limit
	Responses        atomic.Uint64 // responses received from a peer (ignored)
	MethodNotFound   atomic.Uint64 // -32601 answers
	InvalidParams    atomic.Uint64 // -32602 answers from validation
	InvalidCursors   atomic.Uint64 // list cursors refused: not a string, too long, malformed, altered or another list's (-32602; also in InvalidParams)
	InvalidArguments atomic.Uint64 // arguments refused: by a tool's InputSchema or its handler (isError result, SEP-1303), by a prompt's required arguments (-32602)
	InvalidOutputs   atomic.Uint64 // typed tool results refused by their OutputSchema (ValidateOutput; -32603, never sent)
	BadVersion       atomic.Uint64 // -32022 answers
	MissingCaps      atomic.Uint64 // -32021 answers
	Panics           atomic.Uint64 // handler panics (-32603)
	Cancelled        atomic.Uint64 // requests cancelled by the peer: notifications/cancelled, or a disconnect while they ran
	UnknownCancels   atomic.Uint64 // cancellations naming no in-flight request
	DuplicateIDs     atomic.Uint64 // a request reused an id still in flight
	InFlightStalls   atomic.Uint64 // reads paused because MaxInFlight was reached
	ProgressSent     atomic.Uint64
	ProgressDropped  atomic.Uint64 // non-increasing, late or tokenless progress
	ProgressCoalesce atomic.Uint64 // progress values replaced by a later one
	LogsSent         atomic.Uint64 // notifications/message sent by Call.Log
	LogsDropped      atomic.Uint64 // Call.Log messages over the per-request rate limit (LogInterval, LogBurst)
	ListenStreams    atomic.Int64  // open subscriptions/listen streams
	Deliveries       atomic.Uint64 // listen-stream notifications handed to transports
	SlowConsumers    atomic.Uint64 // peers closed for not reading
	ShutdownRefused  atomic.Uint64 // requests refused because Shutdown began
	TimedOut         atomic.Uint64 // requests answered "Request timed out"
	CancelFloods     atomic.Uint64 // line connections closed for cancelling unknown requests beyond the budget (C8)
	InputOverflows   atomic.Uint64 // line connections closed for input piling up while the in-flight bound held (A19)
	// Backplane (Config.Backplane; all zero without one).
	Published         atomic.Uint64 // cues published
	PublishErrors     atomic.Uint64 // cues not published: backplane lost or Publish failed (E1)
	BackplaneLost     atomic.Uint64 // times the backplane subscription was lost
	ListenInterrupted atomic.Uint64 // listen streams ended because the backplane was lost (E1) or a cue may have been missed (F9)
	ListenRefused     atomic.Uint64 // listen requests refused while the backplane was not connected
	PublishUncertain  atomic.Uint64 // publishes that failed or timed out while subscribed: affected streams ended, CueMissed sent (F9)
	MissedSent        atomic.Uint64 // CueMissed published for a publish of this replica that failed or was refused (backplane not connected)
	MissedCues        atomic.Uint64 // CueMissed received from another replica (its publish failed): affected listen streams ended; this replica's own echo is not counted
	Unavailable       atomic.Uint64 // requests answered 503 because shared state was unreachable
}
