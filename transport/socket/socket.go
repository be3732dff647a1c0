package socket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultMaxConns      = 16384
	DefaultMaxConnsPerIP = 1024 // as streamhttp's
	DefaultWriteTimeout  = 30 * time.Second
	DefaultAuthTimeout   = 10 * time.Second
	// DefaultUnixMode is the permission of a Unix socket file: only its
	// owner (and root) may connect.
	DefaultUnixMode os.FileMode = 0o600
)

// Config configures a socket server. Zero values select the defaults; its
// limits follow the package's rule (see Limits in the package
// documentation): 0 is the default, negative is no limit unless the field
// says otherwise.
type Config struct {
	// MaxLine is the largest accepted message in bytes; a longer line is
	// answered -32600 and the connection closed
	// (engine.Stats.LinesTooLong). Default framing.DefaultMaxLine (4 MiB);
	// negative means unlimited (unsafe).
	MaxLine int
	// MaxPending bounds the output waiting for a peer that does not read,
	// in bytes (ours and gnet's outbound buffer each); past it the
	// connection is closed as a slow consumer
	// (engine.Stats.SlowConsumers). Default linestream.DefaultMaxPending
	// (64 MiB); negative means unlimited (unsafe).
	MaxPending int
	// MaxBacklog bounds the input kept while a connection has
	// engine.Config.MaxInFlight requests in flight (an event loop cannot
	// stop reading), in bytes; past it the connection is closed
	// (engine.Stats.InputOverflows). Default MaxLine +
	// linestream.DefaultBacklogSlack (1 MiB); negative means unlimited
	// (unsafe).
	MaxBacklog int
	// WriteTimeout closes a connection whose pending output makes no
	// progress for this long (A18: a peer that stopped reading), counted
	// in Stats.WriteTimeouts and engine.Stats.SlowConsumers. On Windows it
	// bounds each write instead (see the package doc). Default
	// DefaultWriteTimeout (30 s); negative disables it (unsafe).
	WriteTimeout time.Duration
	// MaxConns bounds concurrent connections; past it new ones are closed
	// at once and counted in Stats.Refused. Default DefaultMaxConns
	// (16384); negative means unlimited (unsafe: each connection costs
	// a file descriptor and its buffers).
	MaxConns int
	// MaxConnsPerIP bounds the concurrent TCP connections from one client
	// IP address (C11); past it a new one is closed at once, before any
	// session state is made, and counted in Stats.RefusedPerIP, so one
	// host cannot take the MaxConns every client shares. Unix-socket
	// connections have no address and are not counted. Default
	// DefaultMaxConnsPerIP (1024); negative means unlimited.
	MaxConnsPerIP int
	// CancelBudget: see linestream.Config (C8, engine.Stats.CancelFloods).
	// Default linestream.DefaultCancelBudget (1024); negative means
	// unlimited.
	CancelBudget int
	// EventLoops is the number of gnet event loops. Default
	// DefaultEventLoops(): GOMAXPROCS-1, at least 1. It is not a limit:
	// a negative value is taken as 0, the default.
	EventLoops int
	// AllowNonLoopback must be set to listen on a TCP address other than
	// loopback (SEC-04). Without Authenticate, InsecureNoAuth must be set
	// too.
	AllowNonLoopback bool
	// InsecureNoAuth must be set to serve without Authenticate a listener
	// others can reach: a TCP address other than loopback, or a Unix
	// socket whose UnixMode lets group or others connect (F3). Every
	// caller there is anonymous and may call every tool; Listen refuses
	// such a listener otherwise (ErrNoAuth). Sockets have no TLS: on a
	// network, put them behind something that authenticates.
	InsecureNoAuth bool
	// UnixMode is the permission of each Unix socket file Listen adds
	// (connecting needs write permission on it). Default DefaultUnixMode
	// (0600: the owner only). The file is created no wider than the owner's
	// bits of UnixMode (Start narrows the process umask while it binds, so
	// it is never open wider, even for a moment), then set to UnixMode. On
	// Windows it is ignored.
	UnixMode os.FileMode
	// Authenticate, when set, establishes each connection's principal
	// before any of its requests is served; it runs off the event loop
	// (the connection's input waits, up to MaxBacklog) with a context that
	// ends after AuthTimeout. A nil error admits the connection and the
	// principal reaches handlers as engine.Call.Principal; an error closes
	// it (Stats.AuthFailures). Peer carries the Unix peer credentials or
	// the TCP remote address.
	Authenticate func(ctx context.Context, peer Peer) (principal any, err error)
	// AuthTimeout bounds Authenticate. Default DefaultAuthTimeout (10 s).
	// Shutdown waits for the authentications under way, so it cannot be
	// unlimited: a negative value is taken as 0, the default.
	AuthTimeout time.Duration
	// Logger receives transport logs (never protocol traffic), gnet's
	// included; nil discards them.
	Logger *slog.Logger
}

// DefaultEventLoops is the number of event loops when Config.EventLoops
// is 0: GOMAXPROCS-1, at least 1. An event loop waits in epoll_wait, a
// system call the Go scheduler takes for a short one: the loop keeps its P
// until sysmon takes it back, after up to 10 ms when the process is quiet.
// With as many busy loops as Ps, every P can sit in epoll_wait at once;
// goroutines woken meanwhile (handlers, and everything on the Go netpoller:
// the HTTP front end in the same process, a Redis client, the admin
// listener) then wait for sysmon. One P left over keeps an M in the
// scheduler, so they run at once. With GOMAXPROCS 1 nothing is left over:
// there, serve sockets and Go-netpoller work from separate processes.
func DefaultEventLoops() int {
	return max(1, runtime.GOMAXPROCS(0)-1)
}

func (c Config) withDefaults() Config {
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	switch {
	case c.MaxConns == 0:
		c.MaxConns = DefaultMaxConns
	case c.MaxConns < 0:
		c.MaxConns = math.MaxInt
	}
	switch {
	case c.MaxConnsPerIP == 0:
		c.MaxConnsPerIP = DefaultMaxConnsPerIP
	case c.MaxConnsPerIP < 0:
		c.MaxConnsPerIP = math.MaxInt
	}
	if c.EventLoops <= 0 {
		c.EventLoops = DefaultEventLoops()
	}
	if c.AuthTimeout <= 0 {
		c.AuthTimeout = DefaultAuthTimeout
	}
	if c.UnixMode == 0 {
		c.UnixMode = DefaultUnixMode
	}
	c.UnixMode &= os.ModePerm
	switch {
	case c.MaxPending == 0:
		c.MaxPending = linestream.DefaultMaxPending
	case c.MaxPending < 0:
		c.MaxPending = math.MaxInt
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Peer describes the other end of a connection, for Config.Authenticate.
type Peer struct {
	Network string   // "tcp" or "unix"
	Addr    net.Addr // the remote address (for Unix sockets usually unnamed)
	// Cred holds the Unix peer's credentials (SO_PEERCRED) on Linux; nil
	// for TCP and where the system does not tell.
	Cred *Cred
}

// Cred is a Unix socket peer's process credentials at connect time.
type Cred struct {
	PID, UID, GID int
}

// Stats are the transport's counters.
type Stats struct {
	Accepted      atomic.Uint64 // connections served
	Refused       atomic.Uint64 // connections closed at once: MaxConns reached, or shutting down
	RefusedPerIP  atomic.Uint64 // connections closed at once: MaxConnsPerIP reached for their IP (C11)
	Open          atomic.Int64  // connections open now
	AuthFailures  atomic.Uint64 // connections refused by Authenticate
	WriteTimeouts atomic.Uint64 // connections closed by the write-progress deadline
	Disconnects   atomic.Uint64 // connections the peer closed while requests ran (those requests count in engine Stats.Cancelled)
}

// Errors returned by Listen, Start and Shutdown.
var (
	ErrNonLoopback = errors.New("socket: refusing a non-loopback listener without AllowNonLoopback")
	ErrNoAuth      = errors.New("socket: refusing a listener others can reach without Authenticate (set InsecureNoAuth to serve it to anonymous callers)")
	ErrStarted     = errors.New("socket: server already started")
	ErrClosed      = errors.New("socket: server closed")
	ErrNoListener  = errors.New("socket: no listener: call Listen first")
	ErrSocketInUse = errors.New("socket: a server is already listening on that Unix socket")
	ErrNotSocket   = errors.New("socket: path exists and is not a socket")
)

type listenAddr struct{ network, addr string }

// Server serves an engine on TCP and Unix-socket listeners.
type Server struct {
	eng    *engine.Server
	scope  *engine.Scope // TCP connections
	uscope *engine.Scope // Unix-socket connections (metrics.go)
	cfg    Config
	lcfg   linestream.Config
	log    *slog.Logger
	stats  Stats

	mu      sync.Mutex
	lns     []listenAddr
	addrs   []net.Addr
	conns   map[*conn]struct{}
	perIP   map[netip.Addr]int // open TCP connections per client IP (MaxConnsPerIP)
	started bool
	gnetEng gnet.Engine
	booted  chan struct{}
	done    chan struct{} // closed when gnet has stopped
	runErr  error
	auths   sync.WaitGroup

	closing  atomic.Bool
	shutOnce sync.Once
}

// New returns a socket server for eng. Add listeners with Listen, then
// Start.
func New(eng *engine.Server, cfg Config) *Server {
	cfg = cfg.withDefaults()
	return &Server{
		eng:    eng,
		scope:  engine.NewScope(eng, "tcp"),
		uscope: engine.NewScope(eng, "unix"),
		cfg:    cfg,
		lcfg: linestream.Config{
			MaxLine: cfg.MaxLine, MaxPending: cfg.MaxPending, MaxBacklog: cfg.MaxBacklog,
			CloseOnTooLong: true, CancelBudget: cfg.CancelBudget, Logger: cfg.Logger,
		},
		log:    cfg.Logger,
		conns:  map[*conn]struct{}{},
		perIP:  map[netip.Addr]int{},
		booted: make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Stats returns the transport's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// Listen adds a listener for network "tcp" (a host:port, loopback unless
// Config.AllowNonLoopback; port 0 picks one, see Addrs) or "unix" (a
// filesystem path; an existing socket that nobody serves is replaced, a
// live one or any other file is an error). It is bound by Start.
func (s *Server) Listen(network, addr string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		if !netutil.IsLoopback(addr) {
			if !s.cfg.AllowNonLoopback {
				return ErrNonLoopback
			}
			if s.cfg.Authenticate == nil && !s.cfg.InsecureNoAuth {
				return fmt.Errorf("%w: %s", ErrNoAuth, addr)
			}
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("socket: %q: %w", addr, err)
		}
	case "unix":
		if s.cfg.UnixMode&0o077 != 0 && s.cfg.Authenticate == nil && !s.cfg.InsecureNoAuth {
			return fmt.Errorf("%w: %s has mode %v", ErrNoAuth, addr, s.cfg.UnixMode)
		}
		abs, err := filepath.Abs(addr)
		if err != nil {
			return err
		}
		if err := checkUnixPath(abs); err != nil {
			return err
		}
		addr = abs
	default:
		return fmt.Errorf("socket: unsupported network %q (want tcp or unix)", network)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	s.lns = append(s.lns, listenAddr{network, addr})
	return nil
}

// checkUnixPath refuses to take over a path gnet would remove: a file that
// is not a socket, or a socket some process still serves.
func checkUnixPath(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%w: %s", ErrNotSocket, path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	return nil // a stale socket file: gnet replaces it
}

// Start binds every listener and serves them on gnet's event loops in the
// background. It returns once they are bound, or the error that prevented
// it.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrStarted
	}
	if s.closing.Load() {
		s.mu.Unlock()
		return ErrClosed
	}
	if len(s.lns) == 0 {
		s.mu.Unlock()
		return ErrNoListener
	}
	s.started = true
	protoAddrs := make([]string, len(s.lns))
	var unixPaths []string
	for i, l := range s.lns {
		protoAddrs[i] = l.network + "://" + l.addr
		if l.network == "unix" {
			unixPaths = append(unixPaths, l.addr)
		}
	}
	s.mu.Unlock()
	if len(unixPaths) > 0 {
		// bind creates the socket file with the bits the umask leaves:
		// the owner's of UnixMode at most, until the chmod below.
		restore := setUmask(0o777 &^ int(s.cfg.UnixMode&0o600))
		defer func() {
			restore()
			s.chmodUnix(unixPaths)
		}()
	}
	h := &handler{s: s}
	go func() {
		err := gnet.Rotate(h, protoAddrs,
			gnet.WithNumEventLoop(s.cfg.EventLoops),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogger(gnetLogger{s.log}),
		)
		s.mu.Lock()
		s.runErr = err
		s.mu.Unlock()
		close(s.done)
	}()
	select {
	case <-s.booted:
		return nil
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.runErr == nil {
			return ErrClosed
		}
		return fmt.Errorf("socket: %w", s.runErr)
	}
}

// chmodUnix gives the bound Unix socket files their UnixMode. A failure
// leaves a file narrower than asked (the owner only), never wider.
func (s *Server) chmodUnix(paths []string) {
	select {
	case <-s.booted:
	default:
		return // not bound
	}
	for _, p := range paths {
		if err := chmodSocket(p, s.cfg.UnixMode); err != nil {
			s.log.Warn("socket: cannot set the Unix socket's mode", "path", p, "mode", s.cfg.UnixMode.String(), "err", err)
		}
	}
}

// ListenAndServe is Listen for each address ("tcp://host:port" or
// "unix:///path"), Start, and Wait.
func (s *Server) ListenAndServe(addrs ...string) error {
	for _, a := range addrs {
		network, addr, ok := cutScheme(a)
		if !ok {
			return fmt.Errorf("socket: %q: want tcp://host:port or unix:///path", a)
		}
		if err := s.Listen(network, addr); err != nil {
			return err
		}
	}
	if err := s.Start(); err != nil {
		return err
	}
	return s.Wait()
}

func cutScheme(a string) (network, addr string, ok bool) {
	for _, p := range []string{"tcp", "unix"} {
		if len(a) > len(p)+3 && a[:len(p)+3] == p+"://" {
			return p, a[len(p)+3:], true
		}
	}
	return "", "", false
}

// Addrs returns the bound listener addresses (after Start), in the order
// of the Listen calls: a TCP port 0 shows the port picked.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]net.Addr(nil), s.addrs...)
}

// Wait blocks until the server has stopped (Shutdown, or a fatal event-loop
// error, which it returns).
func (s *Server) Wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runErr
}

// Shutdown stops this transport: new connections are refused, new requests
// are answered "Server is shutting down", listen streams complete with
// their final result (SUB-10), in-flight requests may finish until ctx
// ends and are then cancelled; answers are flushed, connections closed, the
// event loops and listeners stopped. It returns by ctx's deadline: nil when
// everything finished in time, ctx.Err() otherwise. The engine is not shut
// down.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.shutOnce.Do(func() {
		s.closing.Store(true)
		err = s.shutdownScopes(ctx)
		s.mu.Lock()
		started := s.started
		for c := range s.conns {
			c.closeAfterFlush()
		}
		s.mu.Unlock()
		if !started {
			close(s.done)
			return
		}
		<-s.booted
		// Connections close once their answers are out.
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
	wait:
		for s.stats.Open.Load() > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				break wait
			}
		}
		s.mu.Lock()
		ge := s.gnetEng
		s.mu.Unlock()
		// Engine.Stop polls for the end every 500 ms; the event loops end
		// sooner, and Wait sees it at once.
		stopCtx, stopDone := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() { _ = ge.Stop(stopCtx); close(stopped) }()
		select {
		case <-s.done:
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
		stopDone()
		<-stopped
		authDone := make(chan struct{})
		go func() { s.auths.Wait(); close(authDone) }()
		select {
		case <-authDone:
		case <-ctx.Done():
		}
	})
	if err == nil && ctx.Err() != nil {
		select {
		case <-s.done:
		default:
			err = ctx.Err()
		}
	}
	return err
}

// handler is the gnet event handler.
type handler struct {
	gnet.BuiltinEventEngine
	s *Server
}

func (h *handler) OnBoot(e gnet.Engine) gnet.Action {
	s := h.s
	s.mu.Lock()
	s.gnetEng = e
	for _, l := range s.lns {
		s.addrs = append(s.addrs, boundAddr(e, l))
	}
	s.mu.Unlock()
	close(s.booted)
	return gnet.None
}

// boundAddr asks the kernel where listener l is bound (port 0 picks one).
func boundAddr(e gnet.Engine, l listenAddr) net.Addr {
	if fd, err := e.DupListener(l.network, l.addr); err == nil {
		if a := dupListenerAddr(fd); a != nil {
			return a
		}
	}
	if l.network == "unix" {
		return &net.UnixAddr{Name: l.addr, Net: "unix"}
	}
	a, _ := net.ResolveTCPAddr("tcp", l.addr)
	return a
}

func (h *handler) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	s := h.s
	if s.closing.Load() || s.stats.Open.Load() >= int64(s.cfg.MaxConns) {
		s.stats.Refused.Add(1)
		return nil, gnet.Close
	}
	network := networkOf(gc)
	c := &conn{s: s, gc: gc, remote: gc.RemoteAddr(), unix: network == "unix"}
	if !c.unix && !s.takeIP(c) {
		s.stats.RefusedPerIP.Add(1)
		return nil, gnet.Close
	}
	s.stats.Open.Add(1)
	s.stats.Accepted.Add(1)
	sc := s.scopeOf(c)
	c.lc = linestream.New(sc, c, s.lcfg, context.Background(), nil)
	if c.info = sc.ConnOpen(gc.LocalAddr(), c.remote); c.info != nil {
		c.lc.SetConnInfo(c.info)
	}
	gc.SetContext(c)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	if s.cfg.Authenticate != nil {
		c.lc.Hold()
		peer := Peer{Network: network, Addr: c.remote}
		if peer.Network == "unix" {
			peer.Cred = peerCred(gc.Fd())
		}
		s.auths.Add(1)
		go c.authenticate(peer)
	}
	return nil, gnet.None
}

func networkOf(gc gnet.Conn) string {
	if _, ok := gc.LocalAddr().(*net.UnixAddr); ok {
		return "unix"
	}
	return "tcp"
}

func (h *handler) OnTraffic(gc gnet.Conn) gnet.Action {
	c, _ := gc.Context().(*conn)
	buf, _ := gc.Next(-1)
	if c == nil {
		return gnet.None
	}
	// A plain load first: the usual read finds no timer's request and
	// takes no locked exchange. A request set after the load waits for the
	// next OnTraffic, which the timer's own wake makes.
	if c.stallCheck.Load() && c.stallCheck.Swap(false) {
		if !c.checkStall() {
			return gnet.Close
		}
	}
	if len(buf) > 0 {
		c.lc.Feed(buf)
		return gnet.None
	}
	// A wake: held input may go on, queued output goes out, or the
	// connection is to be closed once flushed.
	c.lc.Resume()
	c.lc.Flush()
	if c.closeReq.Load() {
		return gnet.Close
	}
	return gnet.None
}

func (h *handler) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.None
	}
	gc.SetContext(nil)
	why := err
	if why == nil {
		why = linestream.ErrClosed
	}
	if err != nil {
		// gnet passes the read or write error of a peer that left (EOF,
		// reset); a close of ours comes with nil.
		if c.lc.CloseByPeer(why) > 0 {
			c.s.stats.Disconnects.Add(1)
		}
	} else {
		c.lc.Close(why)
	}
	c.lc.ReleaseInput()
	c.s.scopeOf(c).ConnClose(c.info, err)
	if c.st != nil && c.st.timer != nil {
		c.st.timer.Stop()
	}
	s := c.s
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.releaseIP(c)
	s.stats.Open.Add(-1)
	return gnet.None
}

// takeIP counts c against its client IP's MaxConnsPerIP; false when the
// IP is at the limit (c is then not counted).
func (s *Server) takeIP(c *conn) bool {
	ip, ok := ipOf(c.remote)
	if !ok {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perIP[ip] >= s.cfg.MaxConnsPerIP {
		return false
	}
	s.perIP[ip]++
	c.counted = true
	return true
}

// ipOf is the client IP of a TCP peer address.
func ipOf(a net.Addr) (netip.Addr, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip, _ := netip.AddrFromSlice(ta.IP)
	return ip.Unmap(), true
}

// releaseIP gives back what takeIP counted for c.
func (s *Server) releaseIP(c *conn) {
	if !c.counted {
		return
	}
	ip, _ := ipOf(c.remote)
	s.mu.Lock()
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
	s.mu.Unlock()
}

// conn is one socket connection: the linestream.Driver of its Conn.
type conn struct {
	s      *Server
	gc     gnet.Conn
	lc     *linestream.Conn
	remote net.Addr         // read once on the loop: gnet's accessors are loop-only
	info   *engine.ConnInfo // for the engine's hooks; nil without

	closeReq   atomic.Bool // close once the output is flushed
	stallCheck atomic.Bool // the write timer asks the loop to look at progress
	unix       bool        // a Unix-socket connection
	counted    bool        // remote's IP is counted for MaxConnsPerIP

	// event loop only (guard first: a zero-size last field would be padded)
	guard writeGuard  // Windows: bounds a blocking write (sys_windows.go)
	st    *stallWatch // from the first time output was left waiting; nil before
}

// The fields above are ordered and kept to what every connection needs
// (the client IP is derived from remote when needed): 10,000 idle
// connections should cost little more than gnet's own (issue 21 item 6).

// stallWatch is the write-progress bookkeeping of a connection whose
// output once had to wait. Most connections never get there, so it is
// allocated then, not with every connection (issue 21 item 6).
type stallWatch struct {
	handed int64     // bytes handed to gnet since the watch exists
	mark   int64     // delivered at the last progress
	since  time.Time // when that progress was seen
	armed  bool      // the write timer runs
	timer  *time.Timer
}

// Write hands b to gnet on the event loop (Conn.Flush runs only there).
// gnet writes what the socket takes at once and keeps the rest in its own
// outbound buffer, which is bounded by MaxPending and by the
// write-progress deadline. On Windows gnet writes all of b before
// returning, within the bound of writeGuard.
func (c *conn) Write(b []byte) (int, error) {
	n, err := c.guard.write(c, b)
	if err != nil {
		return n, err
	}
	if c.st != nil {
		c.st.handed += int64(len(b))
	}
	if ob := c.gc.OutboundBuffered(); ob > 0 {
		if ob > c.s.cfg.MaxPending {
			return n, linestream.ErrSlowConsumer
		}
		c.watchStall(ob)
	}
	return n, nil
}

// watchStall arms the write-progress timer when output is left waiting.
func (c *conn) watchStall(ob int) {
	if c.s.cfg.WriteTimeout < 0 {
		return
	}
	if c.st == nil {
		c.st = &stallWatch{}
	}
	st := c.st
	if st.armed {
		return
	}
	st.armed = true
	st.mark = c.delivered(ob)
	st.since = time.Now()
	if st.timer == nil {
		st.timer = time.AfterFunc(c.s.cfg.WriteTimeout, c.onTimer)
	} else {
		st.timer.Reset(c.s.cfg.WriteTimeout)
	}
}

func (c *conn) onTimer() {
	c.stallCheck.Store(true)
	_ = c.gc.Wake(nil)
}

// delivered is how many bytes of output the peer has taken since the
// watch began, offset by what was then still waiting: what was handed to
// gnet, less what gnet still holds (ob) and what waits in the kernel's
// send queue. Only its growth means anything (progress).
func (c *conn) delivered(ob int) int64 {
	return c.st.handed - int64(ob) - int64(kernelQueued(c.gc.Fd()))
}

// checkStall runs on the event loop when the write timer fired; it
// reports whether the connection may go on.
func (c *conn) checkStall() bool {
	st := c.st
	if st == nil || !st.armed {
		return true
	}
	ob := c.gc.OutboundBuffered()
	if ob == 0 {
		st.armed = false
		return true
	}
	now := time.Now()
	if d := c.delivered(ob); d > st.mark {
		st.mark, st.since = d, now
		st.timer.Reset(c.s.cfg.WriteTimeout)
		return true
	}
	if left := c.s.cfg.WriteTimeout - now.Sub(st.since); left > 0 {
		st.timer.Reset(left)
		return true
	}
	st.armed = false
	c.s.stats.WriteTimeouts.Add(1)
	c.s.eng.Stats().SlowConsumers.Add(1)
	c.s.log.Warn("closing a connection whose output made no progress", "remote", addrString(c.remote), "pending", ob, "timeout", c.s.cfg.WriteTimeout)
	return false
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// WakeOutput implements linestream.Driver.
func (c *conn) WakeOutput() { _ = c.gc.Wake(nil) }

// WakeInput implements linestream.Driver.
func (c *conn) WakeInput() { _ = c.gc.Wake(nil) }

// Abort implements linestream.Driver.
func (c *conn) Abort(err error) {
	c.s.log.Debug("closing a socket connection", "remote", addrString(c.remote), "err", err)
	_ = c.gc.Close()
}

// closeAfterFlush asks the loop to write what is queued, then close.
func (c *conn) closeAfterFlush() {
	c.closeReq.Store(true)
	_ = c.gc.Wake(nil)
}

func (c *conn) authenticate(peer Peer) {
	defer c.s.auths.Done()
	ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.AuthTimeout)
	defer cancel()
	p, err := c.s.cfg.Authenticate(ctx, peer)
	if err != nil {
		c.s.stats.AuthFailures.Add(1)
		c.s.log.Info("socket connection refused by Authenticate", "network", peer.Network, "remote", addrString(peer.Addr), "err", err)
		_ = c.gc.Close()
		return
	}
	c.lc.Admit(p)
}
