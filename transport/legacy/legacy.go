package legacy

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/state"
)

// ProtocolVersion is the revision this package serves; older 2025 revisions
// a client asks for are echoed (they share the wire this package speaks).
const ProtocolVersion = "2025-11-25"

// Versions lists the revisions an initialize may negotiate, newest first.
var Versions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultMaxSessions = 10000
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxBodyBytes and DefaultMaxLine are one message, the bound
	// every transport puts on it by default (framing.DefaultMaxLine,
	// 4 MiB), so an old client may send what a modern one may.
	DefaultMaxBodyBytes     = framing.DefaultMaxLine
	DefaultMaxLine          = framing.DefaultMaxLine
	DefaultKeepAlive        = 15 * time.Second
	DefaultWriteIdleTimeout = 30 * time.Second
	DefaultMaxPendingBytes  = 1 << 20
	DefaultInputTimeout     = 2 * time.Minute
	DefaultMaxRounds        = 10
)

// DefaultMaxSessionsPerPrincipal and DefaultMaxSessionsPerIP bound what
// one caller holds of MaxSessions: a client needs one session, a few
// across restarts; the IP bound leaves room for several users behind one
// NAT (RELIABILITY F5).
const (
	DefaultMaxSessionsPerPrincipal = 100
	DefaultMaxSessionsPerIP        = 256
)

// Config configures the legacy endpoint. Every field's zero value selects
// the documented default; its limits follow the package's rule (see
// Limits in the package documentation): 0 is the default, negative is no
// limit unless the field says otherwise.
type Config struct {
	// Store keeps the sessions (one record per Mcp-Session-Id, bound to the
	// caller's principal, expiring when idle). Share the state store of
	// the fleet (state/redisstate) and any replica serves any
	// session. Nil: a private state.Memory, closed by Shutdown.
	Store state.Store
	// MaxSessions bounds the sessions this process holds (created here or
	// used here); an initialize past it gets HTTP 503 (Stats.Refused).
	// Default DefaultMaxSessions (10,000); negative means unlimited
	// (unsafe: an initialize flood then fills memory).
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the sessions one authenticated
	// principal has created here and still holds; an initialize past it
	// gets HTTP 429 with Retry-After (Stats.RefusedPerPrincipal), while
	// other callers are still served. Anonymous callers (no principal)
	// are bounded by MaxSessionsPerIP only: they share no principal.
	// Default DefaultMaxSessionsPerPrincipal (100); negative means
	// unlimited (unsafe: one caller can fill MaxSessions, and everyone
	// else gets 503 until its sessions expire).
	MaxSessionsPerPrincipal int
	// MaxSessionsPerIP bounds the sessions anonymous callers created here
	// from one client IP (the request's RemoteAddr) and still hold: 429
	// with Retry-After past it (Stats.RefusedPerIP). An authenticated
	// caller is bounded by MaxSessionsPerPrincipal instead, and a loopback
	// IP names no caller (the operator's tools, or a reverse proxy on the
	// host: then only MaxSessions bounds). Default DefaultMaxSessionsPerIP
	// (256); negative means unlimited (unsafe, as above).
	MaxSessionsPerIP int
	// IdleTimeout ends a session nobody used for this long (the store
	// expires its record; later requests get 404). Default
	// DefaultIdleTimeout (30 min). A client that goes away never says so,
	// so sessions must expire: a negative value is taken as 0, the
	// default.
	IdleTimeout time.Duration
	// MaxBodyBytes bounds a POST body in bytes: 413 past it
	// (Stats.TooLarge). Default DefaultMaxBodyBytes (4 MiB); negative
	// means unlimited (unsafe: a body is held in memory whole).
	MaxBodyBytes int
	// MaxLine bounds one message of a line connection (ServeLines,
	// StdioUpgrade) in bytes, without its newline: a longer line ends the
	// connection with ErrLineTooLong (Stats.TooLarge). Default
	// DefaultMaxLine (4 MiB); negative means unlimited (unsafe).
	MaxLine int
	// KeepAlive is the interval of SSE comments on a silent stream.
	// Default DefaultKeepAlive (15 s). It is an interval, not a limit: a
	// negative value is taken as 0, the default.
	KeepAlive time.Duration
	// WriteIdleTimeout closes a stream when one write makes no progress
	// for this long. Default DefaultWriteIdleTimeout (30 s); negative
	// means none (unsafe: a client that stops reading keeps its stream
	// until MaxPendingBytes is queued).
	WriteIdleTimeout time.Duration
	// MaxPendingBytes bounds what waits for one stream whose client is not
	// reading, in bytes; past it the stream is closed
	// (Stats.SlowConsumers). Default DefaultMaxPendingBytes (1 MiB);
	// negative means unlimited (unsafe).
	MaxPendingBytes int
	// InputTimeout bounds the wait for the client's answer to a
	// server→client request (sampling, elicitation, roots;
	// Stats.InputTimeouts). Default DefaultInputTimeout (2 min); negative
	// means none (unsafe: the request then waits until the session or the
	// server ends).
	InputTimeout time.Duration
	// MaxRounds bounds the input rounds of one request. Default
	// DefaultMaxRounds (10); negative means unlimited (unsafe: a tool that
	// keeps asking runs forever).
	MaxRounds int
	// Principal returns the authenticated principal of a request (sessions
	// are bound to it). Default: what WithPrincipal put in the request
	// context; behind streamhttp.Config.Mounts with Authenticate, use
	// streamhttp.PrincipalFrom.
	Principal func(ctx context.Context) any
	// ResourceMetadata is the protected resource metadata URL a 403
	// insufficient_scope challenge names (resource_metadata, SEC-04); set
	// it to the mounting streamhttp.Config's. "": left out.
	ResourceMetadata string
	// Logger receives the package's logs; nil discards them.
	Logger *slog.Logger
}

// What a negative (unlimited) limit becomes: the largest int, and a
// timeout about 146 years long, which time arithmetic still handles.
const (
	noLimit   = math.MaxInt
	noTimeout = time.Duration(math.MaxInt64 >> 1)
)

// limit applies the rule to a size or count: 0 is def, negative noLimit.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return noLimit
	}
	return v
}

// timeout applies the rule to a timeout: 0 is def, negative noTimeout.
func timeout(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return noTimeout
	}
	return v
}

func (c Config) withDefaults() Config {
	c.MaxSessions = limit(c.MaxSessions, DefaultMaxSessions)
	c.MaxSessionsPerPrincipal = limit(c.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal)
	c.MaxSessionsPerIP = limit(c.MaxSessionsPerIP, DefaultMaxSessionsPerIP)
	if c.IdleTimeout <= 0 { // sessions always expire
		c.IdleTimeout = DefaultIdleTimeout
	}
	c.MaxBodyBytes = limit(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.MaxLine = limit(c.MaxLine, DefaultMaxLine)
	if c.KeepAlive <= 0 { // an interval, not a limit
		c.KeepAlive = DefaultKeepAlive
	}
	c.WriteIdleTimeout = timeout(c.WriteIdleTimeout, DefaultWriteIdleTimeout)
	c.MaxPendingBytes = limit(c.MaxPendingBytes, DefaultMaxPendingBytes)
	c.InputTimeout = timeout(c.InputTimeout, DefaultInputTimeout)
	c.MaxRounds = limit(c.MaxRounds, DefaultMaxRounds)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Principal == nil {
		c.Principal = func(ctx context.Context) any { return ctx.Value(principalKey{}) }
	}
	return c
}

// Stats are the endpoint's counters, one per rejection reason.
type Stats struct {
	Sessions         atomic.Int64  // sessions held by this process
	Created          atomic.Uint64 // sessions created by initialize
	Refused          atomic.Uint64 // initialize refused: MaxSessions reached (503)
	Expired          atomic.Uint64 // sessions ended for being idle
	Deleted          atomic.Uint64 // sessions ended by DELETE
	UnknownSession   atomic.Uint64 // requests naming no live session (404)
	MissingSession   atomic.Uint64 // requests without Mcp-Session-Id (400)
	BadRequests      atomic.Uint64 // malformed bodies, batches, bad headers (4xx), TooLarge included
	TooLarge         atomic.Uint64 // bodies over MaxBodyBytes (413) and lines over MaxLine
	DuplicateHeaders atomic.Uint64 // two Mcp-Session-Id, MCP-Protocol-Version or Content-Type lines (400, BadRequests included; F2)
	Requests         atomic.Uint64 // requests answered
	Streams          atomic.Int64  // open GET streams
	StreamConflict   atomic.Uint64 // a second GET stream for one session (409)
	Resyncs          atomic.Uint64 // GET streams that re-read their session on a subscription change made on another replica
	SlowConsumers    atomic.Uint64 // streams closed for not reading
	InputRequests    atomic.Uint64 // server→client requests sent
	InputTimeouts    atomic.Uint64 // server→client requests not answered in time
	InputRefused     atomic.Uint64 // inputs the session's capabilities do not allow (error answered)
	StrayResponses   atomic.Uint64 // client responses matching no server→client request
	Unavailable      atomic.Uint64 // 503: the session store could not be reached
	// Initializes refused by a per-caller bound (429): the principal's
	// MaxSessionsPerPrincipal, the client IP's MaxSessionsPerIP.
	RefusedPerPrincipal, RefusedPerIP atomic.Uint64
}

// Server is the 2025-11-25 front of an engine.Server: it speaks the old
// wire (initialize, sessions, the GET stream, server→client requests) and
// runs every request through the engine's own method table as a
// 2026-07-28 request.
type Server struct {
	eng    *engine.Server
	scope  *engine.Scope
	cfg    Config
	store  state.Store
	gens   *state.Memory // the store, when it is a state.Memory (its Generation): lookupIn
	own    bool          // store created here
	log    *slog.Logger
	stats  Stats
	modern string // the engine revision requests are run at
	// maxDepth is eng.Config().MaxDepth, read once: Config returns the
	// engine's whole Config by value (copied on every call), and the
	// engine never changes it after New.
	maxDepth int
	// metaTail is `,"_meta":` and the engine's server _meta, which ends
	// every handler result (fixed once the engine is made).
	metaTail []byte

	mu       sync.RWMutex // read-locked by the lookups of every call
	sessions map[string]*session
	// Sessions created here and held, per principal and per client IP
	// (MaxSessionsPerPrincipal, MaxSessionsPerIP); an entry goes when its
	// count reaches 0.
	perPrincipal, perIP map[string]int
	// countLoopback: a loopback client IP names a caller too (tests on
	// loopback; see callerIP).
	countLoopback bool

	closing  atomic.Bool
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	nextID   atomic.Uint64
}

// New puts a legacy front on eng.
func New(eng *engine.Server, cfg Config) *Server {
	cfg = cfg.withDefaults()
	sc := engine.NewScope(eng, "legacy")
	s := &Server{
		eng:      eng,
		scope:    sc,
		cfg:      cfg,
		store:    cfg.Store,
		log:      cfg.Logger,
		modern:   eng.Config().SupportedVersions[0],
		maxDepth: eng.Config().MaxDepth,
		metaTail: append([]byte(`,"_meta":`), sc.ServerMeta()...),
		sessions: map[string]*session{},
		stop:     make(chan struct{}),
	}
	s.perPrincipal, s.perIP = map[string]int{}, map[string]int{}
	if s.store == nil {
		s.store = state.NewMemory(state.MemoryConfig{})
		s.own = true
	}
	// Only the Memory itself: a wrapper may change what Get returns
	// without moving the generation.
	s.gens, _ = s.store.(*state.Memory)
	s.wg.Add(1)
	go s.sweepLoop()
	return s
}

// Stats returns the endpoint's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// Shutdown ends every GET stream, refuses new requests (503), lets the
// requests in flight finish until ctx ends and cancels the rest. Sessions
// stay in a shared store (another replica may serve them); a private store
// is closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.stopOnce.Do(func() { close(s.stop) })
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.endStream()
	}
	err := s.scope.Shutdown(ctx)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	if s.own {
		if e := s.store.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}
