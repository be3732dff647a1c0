// Package socket serves the engine over TCP and Unix-domain sockets on
// gnet event loops, with the stdio framing and rules unchanged (CUST-04):
// newline-delimited JSON-RPC, notifications/cancelled for cancellation
// (CUST-05), all of a connection's output on that connection.
//
// Connection setup: a client connects and sends requests; there is no
// handshake (every request carries its _meta). With Config.Authenticate the
// server first establishes the peer's principal (Unix peer credentials, or
// the TCP remote address) off the event loop; the connection is closed if
// it is refused. Framing: one message per line, at most Config.MaxLine
// bytes (default 4 MiB); a longer line is answered -32600 "message too
// large" and the connection is closed, as in nats (A1). Closing: when the
// peer closes the connection (or shuts down its write side), the
// connection ends and its in-flight requests are cancelled, as a
// disconnect is on Streamable HTTP.
//
// Each connection is a linestream.Conn fed from gnet's traffic callback:
// no goroutine and no buffer is held per idle connection; handlers run on
// the engine's workers (only Inline tools and the cached list methods run
// on the event loop, where they were read); everything that becomes ready
// in one loop turn leaves in one write. Limits: Config.MaxConns
// connections and Config.MaxConnsPerIP TCP connections from one client IP
// (past either a new one is closed at once and counted),
// Config.MaxPending bytes of output per connection, and a write-progress
// deadline (Config.WriteTimeout): a peer that stops reading is closed and
// counted as a slow consumer (A18).
//
// Who may connect (F3): TCP listens on loopback unless
// Config.AllowNonLoopback, and a Unix socket file is created for its owner
// only (Config.UnixMode, DefaultUnixMode 0600; created no wider even for a
// moment, then set). A listener others can reach — a TCP address other
// than loopback, a Unix socket with group or other bits in UnixMode —
// needs Config.Authenticate, or Config.InsecureNoAuth to say that its
// callers are served anonymously; Listen refuses it otherwise (ErrNoAuth).
// There is no TLS on these sockets.
//
// Systems: on Linux, macOS and the BSDs gnet runs its own event loops on
// epoll or kqueue. On Windows gnet has no poller of its own: each
// connection has a reader goroutine (on the Go runtime's poller) that
// hands its input to an event loop, and a write blocks the loop until the
// socket has taken it all. gnet keeps no outbound buffer there
// (Config.MaxPending bounds only the output queued behind a write in
// progress), and the write-progress deadline becomes a bound on each
// write: one that has not completed within Config.WriteTimeout is
// cancelled and the connection closed, counted as on the other systems;
// until then a slow reader delays the other connections of its loop. Unix
// sockets there need Windows 10 1803 or later (the listener fails to bind
// otherwise). Peer credentials (Peer.Cred) are read on Linux only.
//
// Shutdown stops this transport only: new connections are refused, listen
// streams get their final result, in-flight requests finish or are
// cancelled at the context's deadline, answers are flushed and connections
// closed. The engine is shut down by whoever created it.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// Config.MaxLine (framing.DefaultMaxLine), MaxPending
// (linestream.DefaultMaxPending), MaxBacklog (MaxLine +
// linestream.DefaultBacklogSlack), WriteTimeout (DefaultWriteTimeout),
// MaxConns (DefaultMaxConns), MaxConnsPerIP (DefaultMaxConnsPerIP) and
// CancelBudget (linestream.DefaultCancelBudget) can be disabled with a
// negative value.
// AuthTimeout (DefaultAuthTimeout) cannot, since Shutdown waits for the
// authentications under way, and EventLoops (DefaultEventLoops) is not a
// limit: for both a negative value is the default.
package socket
