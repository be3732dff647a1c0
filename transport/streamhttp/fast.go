package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/internal/netutil"
)

// fastServer wraps the fasthttp.Server (kept out of the exported API).
type fastServer struct {
	srv *fasthttp.Server
	ln  net.Listener
}

// shutdown stops fasthttp and closes the listener itself: when Shutdown
// comes right after Serve published f, fasthttp may not have registered
// the listener yet, and would then accept on it forever.
func (f *fastServer) shutdown(ctx context.Context) error {
	err := f.srv.ShutdownWithContext(ctx)
	_ = f.ln.Close()
	return err
}

// ListenAndServe listens on addr (loopback unless AllowNonLoopback) and
// serves until Shutdown.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := s.Listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Listen opens the listener for addr, checking the loopback rule (and, on
// a non-loopback address, that TLS is configured or InsecurePlaintext
// set). Serve it with Serve; its Addr tells the port when addr ends in
// ":0".
func (s *Server) Listen(addr string) (net.Listener, error) {
	if !netutil.IsLoopback(addr) {
		if !s.cfg.AllowNonLoopback {
			return nil, ErrNonLoopback
		}
		if s.tlsConf == nil && s.tlsErr == nil && !s.cfg.InsecurePlaintext {
			return nil, ErrPlaintext
		}
	}
	return net.Listen("tcp", addr)
}

// Serve serves HTTP on ln until Shutdown (it then returns nil): HTTPS when
// Config.TLS is set. A non-loopback listener needs AllowNonLoopback, and
// TLS or InsecurePlaintext; plain HTTP on one is logged as a warning.
func (s *Server) Serve(ln net.Listener) error {
	if s.tlsErr != nil {
		return s.tlsErr
	}
	if err := s.bindAddr(ln.Addr()); err != nil {
		return err
	}
	if !s.checkHost && s.tlsConf == nil {
		if !s.cfg.InsecurePlaintext {
			return ErrPlaintext
		}
		s.cfg.Logger.Warn("streamhttp: serving plain HTTP (no TLS) on a non-loopback address: InsecurePlaintext is set", "addr", ln.Addr().String())
	}
	f := &fastServer{ln: ln, srv: &fasthttp.Server{
		Handler:                       s.fastHandler,
		ErrorHandler:                  s.fastError,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisablePreParseMultipartForm:  true,
		DisableHeaderNamesNormalizing: false,
		ReadBufferSize:                s.cfg.MaxHeaderBytes,
		MaxRequestBodySize:            s.cfg.MaxBodyBytes,
		// ReadTimeout, IdleTimeout and ReadIdleTimeout are applied by
		// limitConn, once per read; fasthttp would set two deadlines per
		// request. Nothing here reads RequestCtx.Time, so fasthttp needs
		// no clock reading per request either.
		LazyRequestTime: true,
		// Connection limits are enforced by limitListener; fasthttp's
		// Concurrency stays above them as a backstop.
		Concurrency:       s.cfg.MaxConns + 1,
		KeepHijackedConns: true, // listen streams own their connection after the hijack
		CloseOnShutdown:   true,
		Logger:            fastLogger{s.cfg.Logger},
	}}
	// The clock starts before f is published: a Shutdown that finds f
	// halts it after; one that does not is seen here (Shutdown sets
	// closing, then reads fast under mu).
	s.clk.start()
	s.mu.Lock()
	s.fast = f
	closing := s.closing.Load()
	s.mu.Unlock()
	if closing {
		s.clk.halt()
		_ = ln.Close()
		return nil
	}
	err := f.srv.Serve(&limitListener{Listener: ln, s: s, perIP: map[string]int{}})
	if s.closing.Load() {
		return nil
	}
	return err
}

type fastLogger struct{ l *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.l.Debug("fasthttp", "msg", sprintf(format, args...))
}

// fastError maps fasthttp's request-reading errors to statuses (B1-B5,
// C1-C2): 431 for headers over the limit, 413 for bodies over it, 408 for
// a read that timed out, 400 (and close) for the rest.
func (s *Server) fastError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		s.stats.HeadersTooLarge.Add(1)
		ctx.SetStatusCode(431)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		s.stats.BodyTooLarge.Add(1)
		ctx.SetStatusCode(413)
	case isTimeout(err):
		s.stats.ReadTimeouts.Add(1)
		ctx.SetStatusCode(408)
	case isDuplicateHost(err): // F2: fasthttp refuses a second Host line
		s.stats.DuplicateHeaders.Add(1)
		ctx.SetStatusCode(400)
		ctx.SetContentType(ctJSON)
		ctx.SetBody(dupBodies[dupHost])
	default:
		s.stats.BadFraming.Add(1)
		ctx.SetStatusCode(400)
	}
	ctx.SetConnectionClose()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (s *Server) fastHandler(ctx *fasthttp.RequestCtx) {
	lc := limitOf(ctx.Conn())
	if lc != nil {
		lc.requestRead()
	}
	p := ctx.Path()
	atPath := shortEqual(p, s.path) // the MCP endpoint (s.path is Config.Path) first: no map lookup
	if !atPath && s.fastMount(ctx, p) {
		return
	}
	x := s.acquireExchange() // the connection's key and ConnInfo stay on lc (serve reads them there)
	// The request's state, the header loop's included, is reached from
	// the loop body through one pointer: a closure loads every variable
	// it captures each time it is called, and this one is called once a
	// field.
	sc := &fastScan{x: x, http11: ctx.Request.Header.IsHTTP11()}
	r := &sc.r
	r.lc = lc
	r.ctx = context.Background()
	r.alone = true
	r.watch = &x.watch
	r.method = ctx.Method()
	r.path, r.atPath = p, atPath
	h := &ctx.Request.Header
	r.host = h.Host()
	// The body is called as All's yield itself, not through a range
	// loop, whose per-field bookkeeping (the iterator's state, checked
	// and set around each call) this loop has no use for: it never
	// stops early.
	h.All()(func(k, v []byte) bool {
		r, x := &sc.r, sc.x
		// fasthttp hands over canonical names ("Content-Type"): exact
		// compares first, the case-insensitive ones below only for
		// other spellings.
		switch string(k) {
		case "Content-Type":
			r.ctype, r.hasCType = v, true
			sc.n++
			return true
		case "Host", "Content-Length", "User-Agent":
			sc.n++
			return true
		case "Mcp-Method": // the mirrored headers' canonical names: mirrored.add's own switch
			x.hdr.method.add(trimOWS(v))
			sc.n++
			return true
		case "Mcp-Name":
			x.hdr.name.add(trimOWS(v))
			sc.n++
			return true
		case "Connection":
			if sc.http11 {
				sc.n++ // before HTTP/1.1, "close" comes without a line of its own
			}
			return true
		case "Accept": // what the case-insensitive switch below does for it, without its compares
			r.addAccept(x, v)
			sc.n++
			return true
		case "Origin":
			if r.hasOrigin {
				sc.dup = dupOrigin
			}
			r.origin, r.hasOrigin = v, true
			sc.n++
			return true
		}
		sc.n++
		// Mcp-Protocol-Version, in two compares of at most 16 bytes,
		// which the compiler makes with word loads (the switch above
		// compares a 20-byte case by a call).
		if len(k) == len("Mcp-Protocol-Version") && string(k[:16]) == "Mcp-Protocol-Ver" && string(k[16:]) == "sion" {
			x.hdr.version.add(trimOWS(v))
			return true
		}
		switch {
		case len(k) > 3 && (k[0]|0x20) == 'm':
			x.hdr.add(k, v)
		case equalFold(k, "origin"):
			if r.hasOrigin {
				sc.dup = dupOrigin
			}
			r.origin, r.hasOrigin = v, true
		case equalFold(k, "content-type"):
			r.ctype, r.hasCType = v, true
		case equalFold(k, "accept"):
			r.addAccept(x, v)
		case equalFold(k, "content-encoding"):
			r.cenc, r.hasCEnc = v, true
		case equalFold(k, "authorization"):
			if sc.hasAuth {
				sc.dup = dupAuthorization
			}
			r.auth, sc.hasAuth = v, true
		case equalFold(k, "accept-encoding"):
			r.aenc = v
		}
		return true
	})
	// PostBody is the body fasthttp has already read (StreamRequestBody
	// is off): taking it here, before a request may be refused below,
	// reads nothing. With a streamed body it would drain the stream of a
	// request about to be refused.
	cl, body := h.ContentLength(), ctx.PostBody()
	dup, raw := sc.dup, h.RawHeaders()
	if dup == dupNone && (sc.n < rawHeaderLines(raw) || !exactCount(cl, body)) {
		dup = scanDuplicates(raw)
	}
	if (dup != dupNone || cl == -1) && s.fastRefuse(ctx, x, dup) {
		return
	}
	r.body = body
	r.raw = ctx.Conn()
	if s.cfg.Authenticate != nil {
		r.chains = verifiedChains(r.raw)
	}
	x.hraw = raw
	x.fw = fastWriter{ctx: ctx}
	s.serve(r, x, &x.fw)
	x.unref() // a stream holds its own reference
}

// fastMount serves a request for a mounted path (p is not Config.Path)
// and reports whether p was one. Out of line, as fastHandler's other rare
// paths, so that the handler's own code stays short.
//
//go:noinline
func (s *Server) fastMount(ctx *fasthttp.RequestCtx, p []byte) bool {
	h := s.mounted(p)
	if h == nil {
		return false
	}
	s.serveMountFast(ctx, h)
	return true
}

// fastRefuse answers a request fastHandler found a duplicate header in
// (dup), or one whose Content-Length fasthttp dropped (cl -1), and
// releases x; it reports false, answering nothing, for a chunked request
// that had no Content-Length.
//
//go:noinline
func (s *Server) fastRefuse(ctx *fasthttp.RequestCtx, x *exchange, dup dupHeader) bool {
	if dup != dupNone {
		x.fw = fastWriter{ctx: ctx}
		s.refuseDuplicate(&x.fw, dup)
		x.unref()
		return true
	}
	if !rawHasHeader(ctx.Request.Header.RawHeaders(), "content-length") {
		return false
	}
	// Content-Length next to Transfer-Encoding: chunked may be request
	// smuggling. fasthttp drops the length and closes after replying
	// (RFC 9112 §6.3); we refuse the request outright (B5).
	s.stats.BadFraming.Add(1)
	ctx.SetConnectionClose()
	ctx.SetStatusCode(400)
	x.unref()
	return true
}

// fastScan is fastHandler's state while it reads the header fields.
type fastScan struct {
	r reqInfo
	x *exchange
	// n counts the fields All yields; fewer than the raw block's lines
	// means fasthttp merged some (a second Content-Type, two Cookie
	// lines, a folded line), and only then is the raw block read again
	// for a duplicate (F2). See exactCount for when n can be trusted.
	n       int
	dup     dupHeader
	hasAuth bool
	http11  bool
}

// addAccept files an Accept field's value: several Accept lines form one
// list (RFC 9110 §5.3), joined in the request's work.
func (r *reqInfo) addAccept(x *exchange, v []byte) {
	if r.hasAccept {
		x.work.accept = append(append(append(x.work.accept[:0], r.accept...), ','), v...)
		v = x.work.accept
	}
	r.accept, r.hasAccept = v, true
}

// exactCount reports whether every field fasthttp's All yields for this
// request stands for a raw header line of its own, so that as many fields
// as lines proves no two lines were merged. That holds for a body framed
// by its Content-Length: fasthttp adds a Content-Length of its own to a
// request without a body, and to a chunked one a Trailer field and a
// Content-Length once the body is read. (Connection: close is yielded for
// an HTTP/1.0 request without a line; fastHandler does not count it
// there.) FuzzDuplicateHeaders holds all of it to an independent count.
// cl and body are the request's ContentLength and PostBody.
func exactCount(cl int, body []byte) bool {
	return cl > 0 && len(body) > 0
}

// fastWriter is the fasthttp respWriter.
type fastWriter struct {
	ctx *fasthttp.RequestCtx
}

func (w *fastWriter) header(k, v string) { w.ctx.Response.Header.Set(k, v) }

func (w *fastWriter) send(status int, contentType string, body []byte) {
	if status == 499 {
		w.ctx.SetConnectionClose()
	}
	w.ctx.SetStatusCode(status)
	if contentType != "" {
		w.ctx.SetContentType(contentType)
	}
	if body != nil {
		w.ctx.SetBody(body)
	}
	// Bound the response write (there is no absolute server-wide deadline,
	// because streams must not have one). On our own connections the
	// deadline moves only when it has come within a second of expiring,
	// which keeps timer work off the per-request path.
	if lc := limitOf(w.ctx.Conn()); lc != nil {
		if p, ok := lc.writeKept(); !ok { // refreshWriteDeadline, its test inlined
			lc.moveWriteDeadline(p)
		}
	} else {
		setResponseDeadline(w.ctx.Conn())
	}
}

// setResponseDeadline bounds a response's write on a connection that is
// not one of ours (no limitConn). Out of line: send's own code stays
// short.
//
//go:noinline
func setResponseDeadline(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(responseWriteTimeout))
}

func (w *fastWriter) stream(x *exchange) {
	x.refs.Add(1) // released by runStream
	w.ctx.SetStatusCode(200)
	w.ctx.SetContentType(ctSSE)
	conn := w.ctx.Conn() // never keep the RequestCtx inside the stream writer
	x.setConn(conn)
	w.ctx.SetBodyStreamWriter(func(bw *bufio.Writer) {
		x.runStream(&fastStream{bw: bw, conn: conn})
	})
}

// streamOpened, when a test sets it, is called by streamListen with the
// stream's exchange.
var streamOpened func(*exchange)

func (w *fastWriter) streamListen(x *exchange) {
	if streamOpened != nil {
		streamOpened(x)
	}
	x.refs.Add(1)   // released by runRaw
	x.releaseWork() // dispatched: an idle stream keeps none of it
	conn := w.ctx.Conn()
	if lc := limitOf(conn); lc != nil {
		lc.hijacked()
	}
	w.ctx.HijackSetNoResponse(true)
	w.ctx.Hijack(func(net.Conn) {
		// Return at once: fasthttp then drops its reader and writer for
		// this connection, and the stream lives on in its own goroutine.
		go x.runRaw(conn)
	})
	// fasthttp recycles the RequestCtx once the hijack handler has run;
	// the stream (which w is part of) must not keep it reachable for its
	// whole life.
	w.ctx = nil
}

type fastStream struct {
	bw   *bufio.Writer
	conn net.Conn
}

func (f *fastStream) Write(p []byte) (int, error)        { return f.bw.Write(p) }
func (f *fastStream) Flush() error                       { return f.bw.Flush() }
func (f *fastStream) SetWriteDeadline(t time.Time) error { return f.conn.SetWriteDeadline(t) }

// rawHasHeader reports whether the raw header block has a line named name
// (lowercase).
func rawHasHeader(raw []byte, name string) bool {
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, newline)
		if i := bytes.IndexByte(line, ':'); i >= 0 && equalFold(trimOWS(line[:i]), name) {
			return true
		}
	}
	return false
}
