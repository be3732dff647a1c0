package engine

import (
	"log/slog"
	"time"

	"github.com/mcpwire/mcpwire/engine/state"
)

// ProtocolVersion is the MCP revision this engine implements.
const ProtocolVersion = "2026-07-28"

// Defaults for Options fields; each applies when the field is zero.
const (
	DefaultMaxInFlight      = 256
	DefaultProgressInterval = 50 * time.Millisecond
	DefaultCacheTTL         = 60 * time.Second
	DefaultMaxDepth         = 128
)

// Options configures a Server. Every field's zero value selects the
// documented default.
type Options struct {
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
	// 60 s; negative means 0 ("do not reuse").
	CacheTTL time.Duration
	// CacheScope is "public" or "private". Default "public". Servers whose
	// lists depend on the caller must use "private".
	CacheScope string

	// MaxInFlight bounds the requests in flight per stream connection
	// (listen streams included); at the bound the transport stops reading
	// until one finishes. Default 256.
	MaxInFlight int
	// MaxDepth bounds JSON nesting of incoming messages. Default 128.
	MaxDepth int
	// ProgressInterval is the minimum time between two progress
	// notifications of one request; bursts in between are coalesced, the
	// latest value wins. Default 50 ms; negative disables rate limiting.
	ProgressInterval time.Duration

	// Timeout is the default Tool.Timeout for tools that set none. 0: no
	// timeout.
	Timeout time.Duration

	// Logging advertises the (deprecated) logging capability, so that
	// Call.Log delivers notifications/message to requests whose _meta asks for
	// them (GEN-13). Default off.
	Logging bool

	// Logger receives the engine's own logs (never protocol traffic). Nil
	// discards them.
	Logger *slog.Logger

	// Backplane, when set, carries the change cues (ToolsChanged,
	// PromptsChanged, ResourcesChanged, ResourceUpdated) to the listen
	// streams of every replica sharing it; Server.Start must subscribe
	// before the server is served. Nil: cues stay in this process (no
	// cost). The caller owns it and closes it after Shutdown.
	Backplane state.Backplane
	// PublishTimeout bounds one publish on the backplane. Default 2 s.
	PublishTimeout time.Duration

	// NoRequestDurations turns the request-duration histograms off
	// (Server.RequestDurations reports nothing): recording costs about
	// 60 ns per request (two monotonic clock reads and two atomic adds;
	// BenchmarkInlineRequest), which a server nobody scrapes may save.
	// Default on.
	NoRequestDurations bool
}

func (o *Options) withDefaults() Options {
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
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = DefaultProgressInterval
	} else if c.ProgressInterval < 0 {
		c.ProgressInterval = 0
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	return c
}
