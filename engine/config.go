package engine

import (
	"log/slog"
	"math"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/state"
)

// ProtocolVersion is the MCP revision this engine implements.
const ProtocolVersion = "2026-07-28"

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultMaxInFlight      = 256
	DefaultProgressInterval = 50 * time.Millisecond
	DefaultCacheTTL         = 60 * time.Second
	DefaultMaxDepth         = 128
	DefaultLogInterval      = 10 * time.Millisecond
	DefaultLogBurst         = 20
)

// Config configures a Server. Every field's zero value selects the
// documented default; its limits follow the package's rule (see Limits in
// the package documentation): 0 is the default, negative is no limit
// unless the field says otherwise.
type Config struct {
	// Name and Version go into io.modelcontextprotocol/serverInfo on every
	// result (META-06). Defaults: "mcpwire" and the module version.
	Name, Version string
	// Title is an optional human-readable server title for serverInfo.
	Title string
	// Instructions is returned by server/discover when not empty.
	Instructions string
	// SupportedVersions lists the protocol versions served. Default
	// [ProtocolVersion]. Only modern (2026-07-28 and later) revisions can be
	// served by this engine.
	SupportedVersions []string

	// CacheTTL is the ttlMs hint on cacheable results (server/discover and the
	// list results; resources/read unless the handler sets its own). Default
	// DefaultCacheTTL (60 s); negative means 0 ("do not reuse"). It is a
	// hint to clients, not a limit: a negative value spells the ttlMs 0
	// that 0 itself cannot.
	CacheTTL time.Duration
	// CacheScope is "public" or "private". Default "public". Servers whose
	// lists depend on the caller must use "private" (with ToolFilter,
	// tools/list is "private" whatever this says; a ResourceLister that
	// lists per caller needs it).
	CacheScope string

	// PageSize is the most entries one page of tools/list, prompts/list,
	// resources/list and resources/templates/list carries; a longer list
	// ends its page with a nextCursor (see cursor.go for what a cursor
	// holds and guarantees). Default DefaultPageSize (1000); negative
	// means no paging: every registered entry on the first page, which
	// then grows with the catalogue (a ResourceLister is still asked for
	// DefaultPageSize at a time).
	PageSize int
	// ResourceLister, when set, lists resources beyond those registered
	// with AddResource, a page at a time, from the application's own store:
	// resources/list gives the registered resources first (by URI), then
	// the lister's pages in its order. The engine does not merge the two:
	// a URI both registered and listed is listed twice. Its resources are
	// read through ResourceReader. Setting it advertises the resources
	// capability and runs resources/list on a worker.
	ResourceLister ResourceLister
	// ResourceReader, when set, serves resources/read for URIs that no
	// registered resource or template matches, instead of answering
	// ErrResourceNotFound. Setting it advertises the resources capability.
	ResourceReader ResourceReader

	// MaxInFlight bounds the requests in flight per stream connection
	// (listen streams included); at the bound the transport stops reading
	// until one finishes (Stats.InFlightStalls). Default
	// DefaultMaxInFlight (256); negative means unlimited (unsafe: a peer
	// can start as many handlers as it sends requests).
	MaxInFlight int
	// MaxListensPerPrincipal bounds the subscriptions/listen streams one
	// caller has open at once, across its connections and the transports
	// of this process; one more is refused with -32603, HTTP 429 and
	// Retry-After (limit.go; LimitStats.ListenPerPrincipal). The caller is
	// Call.Principal, or for an anonymous request the key its transport
	// names (a non-loopback client IP on Streamable HTTP; see
	// Request.SetLimitKey).
	// Default DefaultMaxListensPerPrincipal (64); negative means unlimited
	// (unsafe: one caller may hold every stream its connections allow).
	MaxListensPerPrincipal int
	// MaxInFlightPerPrincipal bounds one caller's requests in flight
	// across its connections: those running on a worker (a handler that
	// is not Inline); listen streams count under MaxListensPerPrincipal,
	// and inline ones, which finish before their connection reads on, are
	// not counted. One more is refused like a listen stream
	// (LimitStats.InFlightPerPrincipal). Default
	// DefaultMaxInFlightPerPrincipal (256); negative means unlimited
	// (unsafe: one caller may occupy every worker).
	MaxInFlightPerPrincipal int
	// RatePerPrincipal is the request rate one caller may sustain, in
	// requests per second, with bursts of RateBurst (a token bucket per
	// caller); a request over it is refused with -32603, HTTP 429 and a
	// Retry-After of the seconds until a token is back
	// (LimitStats.RatePerPrincipal). Default DefaultRatePerPrincipal (0:
	// no rate limit); negative means no rate limit as well.
	RatePerPrincipal float64
	// RateBurst is the bucket of RatePerPrincipal, in requests. Default
	// (0 or negative): one second's worth, RatePerPrincipal rounded up.
	RateBurst int
	// MaxDepth bounds the JSON nesting of incoming messages, in levels
	// (-32600, Stats.TooDeep). Default DefaultMaxDepth (128); negative
	// means no bound of the engine's own, leaving the parser's hard cap,
	// codec.MaxDepthLimit (4096), which is always applied.
	MaxDepth int
	// ProgressInterval is the minimum time between two progress
	// notifications of one request; bursts in between are coalesced, the
	// latest value wins. Default DefaultProgressInterval (50 ms); negative
	// disables rate limiting.
	ProgressInterval time.Duration

	// Timeout is the default Tool.Timeout for tools that set none. Default:
	// none, so such tools run as long as they take; a negative value is
	// none as well. (The default is no limit because a tool's run time is
	// the application's to judge, per tool.)
	Timeout time.Duration

	// Logging advertises the (deprecated) logging capability, so that
	// Call.Log delivers notifications/message to requests whose _meta asks for
	// them (GEN-13). Default off.
	Logging bool
	// LogInterval and LogBurst rate-limit Call.Log per request: a burst of
	// LogBurst messages, then one more per LogInterval; messages beyond are
	// dropped, counted (Stats.LogsDropped) and reported to the client by
	// one warning before the response. Defaults DefaultLogInterval (10 ms)
	// and DefaultLogBurst (20 messages); a negative value of either
	// disables the limit.
	LogInterval time.Duration
	LogBurst    int

	// Logger receives the engine's own logs (never protocol traffic). Nil
	// discards them.
	Logger *slog.Logger

	// Backplane, when set, carries the change cues (ToolsChanged,
	// PromptsChanged, ResourcesChanged, ResourceUpdated) to the listen
	// streams of every replica sharing it; Server.Start must subscribe
	// before the server is served. Nil: cues stay in this process (no
	// cost). The caller owns it and closes it after Shutdown.
	Backplane state.Backplane
	// PublishTimeout bounds one publish on the backplane. Default
	// DefaultPublishTimeout (2 s). A publish runs in the application's
	// own call (ToolsChanged, ResourceUpdated…), which must not hang with
	// the backplane, so it cannot be unlimited: a negative value is taken
	// as 0, the default.
	PublishTimeout time.Duration

	// Hooks are called when connections, calls and listen streams start
	// and end, on every transport (hooks.go). Unset: no cost.
	Hooks Hooks
	// Middleware wraps dispatch, outermost first (see Middleware). Empty:
	// no cost.
	Middleware []Middleware
	// ToolFilter, when set, hides tools from callers per request (usually
	// per Call.Principal): in tools/list and tools/call alike. tools/list
	// is then built per request from pre-encoded entries and carries
	// cacheScope "private", whatever CacheScope says.
	ToolFilter ToolFilter
	// ValidateOutput checks every typed tool's result against its
	// outputSchema before it is sent, as Tool.ValidateOutput does for one
	// tool: a result that fails is answered -32603, logged and counted
	// (Stats.InvalidOutputs). It costs a decode and a validation per call
	// (about 1-3 µs for a small result): on in tests, off by default.
	ValidateOutput bool
	// NoRequestDurations turns the request-duration histograms off
	// (Server.RequestDurations reports nothing): recording costs about
	// 60 ns per request (two monotonic clock reads and two atomic adds;
	// BenchmarkInlineRequest; the line transports read the clock once per
	// read for the starts of the requests that read delivered, so about
	// one read per request), which a server nobody scrapes may save.
	// Default on.
	NoRequestDurations bool
}

func (o *Config) withDefaults() Config {
	c := *o
	if c.Name == "" {
		c.Name = "mcpwire"
	}
	if c.Version == "" {
		c.Version = moduleVersion()
	}
	if len(c.SupportedVersions) == 0 {
		c.SupportedVersions = []string{ProtocolVersion}
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = DefaultCacheTTL
	} else if c.CacheTTL < 0 {
		c.CacheTTL = 0
	}
	if c.CacheScope == "" {
		c.CacheScope = "public"
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize // negative stays: no paging (Server.pageSize)
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight // negative stays: no limit (the transports read it so)
	}
	if c.MaxListensPerPrincipal == 0 {
		c.MaxListensPerPrincipal = DefaultMaxListensPerPrincipal // negative stays: no limit
	}
	if c.MaxInFlightPerPrincipal == 0 {
		c.MaxInFlightPerPrincipal = DefaultMaxInFlightPerPrincipal // negative stays: no limit
	}
	switch {
	case c.RatePerPrincipal == 0:
		c.RatePerPrincipal = DefaultRatePerPrincipal
	case c.RatePerPrincipal < 0 || math.IsNaN(c.RatePerPrincipal):
		c.RatePerPrincipal = 0
	}
	if c.RatePerPrincipal > 0 && c.RateBurst <= 0 {
		c.RateBurst = int(math.Ceil(c.RatePerPrincipal))
	}
	switch {
	case c.MaxDepth == 0:
		c.MaxDepth = DefaultMaxDepth
	case c.MaxDepth < 0:
		c.MaxDepth = codec.MaxDepthLimit
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = DefaultProgressInterval
	} else if c.ProgressInterval < 0 {
		c.ProgressInterval = 0
	}
	if c.LogInterval == 0 {
		c.LogInterval = DefaultLogInterval
	} else if c.LogInterval < 0 {
		c.LogInterval = 0
	}
	if c.LogBurst == 0 {
		c.LogBurst = DefaultLogBurst // negative stays: no limit (logLimit.take)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	return c
}
