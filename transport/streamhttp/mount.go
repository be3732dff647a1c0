package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Mounts: other handlers on other paths of the same listener (Config.Mounts).
// This package knows nothing about what they serve; it only gives them the
// listener's connection limits, its Origin and Host checks (SEC-01..03),
// Config.Authenticate (the principal reaches the handler through
// PrincipalFrom), and 503 once Shutdown has begun.

type principalKey struct{}

// PrincipalFrom returns the principal Config.Authenticate established for
// a request of a mounted handler (nil without authentication).
func PrincipalFrom(ctx context.Context) any { return ctx.Value(principalKey{}) }

type chainsKey struct{}

// VerifiedChains returns the verified certificate chains of the TLS peer
// (mTLS: Config.TLS with ClientAuth VerifyClientCertIfGiven or
// RequireAndVerifyClientCert) from the context an Authenticator is called
// with: nil over plain HTTP, without a client certificate, or when the
// certificate was not verified (RequestClientCert). The first certificate
// of each chain is the client's. Callers must not modify them.
func VerifiedChains(ctx context.Context) [][]*x509.Certificate {
	c, _ := ctx.Value(chainsKey{}).([][]*x509.Certificate)
	return c
}

// verifiedChains returns the verified peer chains of c when it is one of
// this package's TLS connections.
func verifiedChains(c net.Conn) [][]*x509.Certificate {
	if tc, ok := c.(*tlsConn); ok {
		return tc.ConnectionState().VerifiedChains
	}
	return nil
}

// statusWriter is the respWriter of a mount's refusals (status, headers
// and a body, never a stream).
type statusWriter struct {
	set  func(k, v string)
	code func(status int)
	body func(b []byte)
}

func (w statusWriter) header(k, v string) { w.set(k, v) }
func (w statusWriter) send(status int, contentType string, body []byte) {
	if contentType != "" {
		w.set("Content-Type", contentType)
	}
	w.code(status)
	if body != nil {
		w.body(body)
	}
}
func (w statusWriter) stream(*exchange)       { panic("streamhttp: a mount refusal cannot stream") }
func (w statusWriter) streamListen(*exchange) { panic("streamhttp: a mount refusal cannot stream") }

// refusalWriter is statusWriter for the fasthttp front end.
type refusalWriter struct{ ctx *fasthttp.RequestCtx }

func (w refusalWriter) header(k, v string) { w.ctx.Response.Header.Set(k, v) }
func (w refusalWriter) send(status int, contentType string, body []byte) {
	if contentType != "" {
		w.ctx.Response.Header.Set("Content-Type", contentType)
	}
	w.ctx.SetStatusCode(status)
	if body != nil {
		w.ctx.SetBody(body)
	}
}
func (w refusalWriter) stream(*exchange)       { panic("streamhttp: a mount refusal cannot stream") }
func (w refusalWriter) streamListen(*exchange) { panic("streamhttp: a mount refusal cannot stream") }

// mounted returns the handler mounted on path, or nil.
func (s *Server) mounted(path []byte) http.Handler {
	if len(s.cfg.Mounts) == 0 {
		return nil
	}
	return s.cfg.Mounts[string(path)]
}

// serveMountHTTP is the net/http adapter's side: the checks, then the handler.
func (s *Server) serveMountHTTP(h http.Handler, w http.ResponseWriter, req *http.Request) {
	sw := statusWriter{set: w.Header().Set, code: w.WriteHeader, body: func(b []byte) { _, _ = w.Write(b) }}
	if d := netDuplicates(req.Header); d != dupNone { // F2
		s.refuseDuplicate(sw, d)
		return
	}
	origin, hasOrigin := req.Header["Origin"]
	var o []byte
	if hasOrigin && len(origin) > 0 {
		o = []byte(origin[0])
	}
	r := reqInfo{ctx: req.Context(), gone: req.Context(), origin: o, hasOrigin: hasOrigin, host: []byte(req.Host)}
	r.public = s.cfg.PublicMounts[req.URL.Path] != nil
	if s.cfg.Authenticate != nil && !r.public {
		r.auth = []byte(req.Header.Get("Authorization"))
		r.chains = netChains(req)
	}
	p, ok := s.admit(&r, sw)
	if !ok {
		return
	}
	if s.cfg.Authenticate != nil && !r.public {
		req = req.WithContext(context.WithValue(req.Context(), principalKey{}, p))
	}
	h.ServeHTTP(w, req)
}

// mountFields are the header fields a mount's checks read from a fasthttp
// request: the first once-only field sent twice (F2), Origin and
// Authorization.
type mountFields struct {
	dup          dupHeader
	origin, auth []byte
	hasOrigin    bool

	// For a fieldMount, when exact (the fields are the raw lines one for
	// one): the lines of each of mountFieldNames, counted up to 2, and
	// the value of the last.
	vals  [4][]byte
	n     [4]uint8
	exact bool
}

// mountFieldNames are the MCP header fields a fieldMount takes from the
// mount's walk, in the order of its vals and n.
var mountFieldNames = [4]string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept"}

// field files the value of the mountFieldNames field i.
func (f *mountFields) field(i int, v []byte) {
	f.vals[i] = v
	if f.n[i] < 2 {
		f.n[i]++
	}
}

// read fills f from the fields fasthttp parsed, which it holds anyway,
// when they stand one for one for the raw block's lines; else as first
// written, from the raw block (scanDuplicates) and Peek. It is the same
// answer either way (FuzzMountFields):
//
//   - One for one (exactCount, and as many fields as lines, counted as
//     fastHandler counts them): no two lines were merged, so no folded
//     line, no second Content-Type (fasthttp keeps only the last) and no
//     second Host (fasthttp refuses it while parsing). Of the once-only
//     fields only Origin and Authorization can then come twice, each line
//     a field of its own, in the block's order: the first of them seen a
//     second time is the one scanDuplicates names. (The one field fasthttp
//     yields without a line here, Connection: close after Content-Length
//     with Transfer-Encoding: identity, stands for the line it keeps no
//     field of, that Transfer-Encoding: it never makes up for a merge.)
//   - Peek("Origin") is the first field fasthttp filed under that
//     canonical name, before any trailer field; a body framed by its
//     Content-Length has no trailer section. Without a duplicate the walk
//     sees that field alone, and takes its value as it is (a nil value
//     stays none).
//
// The same walk reads mountFieldNames for a fieldMount, any case, as
// their lines have them (the value cut of the spaces and tabs around it,
// as fasthttp does): FuzzMountFields holds them to the raw lines too.
// When the walk is not exact they are left for the handler.
//
// The walk calls All, which files the Cookie lines apart (collectCookies),
// as the net/http way's copyRequest does anyway.
func (f *mountFields) read(hdr *fasthttp.RequestHeader, body []byte) {
	raw := hdr.RawHeaders()
	if exactCount(hdr.ContentLength(), body) {
		n, http11 := 0, hdr.IsHTTP11()
		seenOrigin, seenAuth := false, false
		// The body is All's yield itself, as in fastHandler.
		hdr.All()(func(k, v []byte) bool {
			n++
			switch string(k) {
			case "Origin":
				if seenOrigin && f.dup == dupNone {
					f.dup = dupOrigin
				}
				// Of two, either: the request is refused.
				f.origin, f.hasOrigin, seenOrigin = v, v != nil, true
				return true
			case "Authorization":
				if seenAuth && f.dup == dupNone {
					f.dup = dupAuthorization
				}
				f.auth, seenAuth = v, true
				return true
			case "Connection":
				if !http11 {
					n-- // before HTTP/1.1, "close" comes without a line of its own
				}
				return true
			case "Host", "Content-Length", "User-Agent":
				return true
			case "Mcp-Session-Id": // mountFieldNames, canonical
				f.field(0, v)
				return true
			case "Mcp-Protocol-Version":
				f.field(1, v)
				return true
			case "Content-Type":
				f.field(2, v)
				return true
			case "Accept":
				f.field(3, v)
				return true
			}
			// Another spelling (a name fasthttp did not canonicalise)
			// does not count for Peek, but it does for the scan; nor
			// does it for mountFieldNames.
			for i, name := range &mountFieldNames {
				if foldEqual(k, name) {
					f.field(i, v)
					return true
				}
			}
			if len(k) > 0 && (k[0]|0x20 == 'o' || k[0]|0x20 == 'a') {
				switch {
				case equalFold(k, "origin"):
					if seenOrigin && f.dup == dupNone {
						f.dup = dupOrigin
					}
					seenOrigin = true
				case equalFold(k, "authorization"):
					if seenAuth && f.dup == dupNone {
						f.dup = dupAuthorization
					}
					seenAuth = true
				}
			}
			return true
		})
		if n == rawHeaderLines(raw) {
			f.exact = true
			return
		}
		*f = mountFields{}
	}
	f.dup = scanDuplicates(raw)
	if f.dup != dupNone {
		return
	}
	if v := hdr.Peek("Origin"); v != nil {
		f.origin, f.hasOrigin = v, true
	}
	f.auth = hdr.Peek("Authorization")
}

// fastMount is a mounted handler that serves some fasthttp requests
// itself, without a net/http request (transport/legacy's common case):
// ServeFastHTTP reports whether it did; false means it wrote and changed
// nothing, and the request takes the net/http way. ctx carries the
// principal (PrincipalFrom). rc must not be kept past the call (a
// response stream goes through rc.SetBodyStreamWriter).
type fastMount interface {
	ServeFastHTTP(ctx context.Context, rc *fasthttp.RequestCtx) bool
}

// fieldMount is a mounted handler that takes the MCP header fields it
// reads (mountFieldNames) from the mount's own walk of the fields
// (mountFields.read), so that they are walked once, not twice
// (transport/legacy); it is asked instead of fastMount's ServeFastHTTP.
// ServeFastFields is ServeFastHTTP given, when exact,
// each field's lines (n, counted up to 2) and the value of the last, in
// the order of mountFieldNames, as the raw block's lines have them (no
// line was folded or merged: see read); when not exact, vals and n are
// empty and the handler reads the request's fields itself.
type fieldMount interface {
	ServeFastFields(ctx context.Context, rc *fasthttp.RequestCtx, vals [4][]byte, n [4]uint8, exact bool) bool
}

// serveMountFast runs a net/http handler for a fasthttp request. The
// handler runs on its own goroutine against a copy of the request. Until
// it first flushes, its response is buffered and sent when it returns;
// its first Flush turns the response into a stream (chunked), written
// from the handler's goroutine while the connection's reader waits for
// the next request. The handler's http.ResponseController can set the
// connection's write deadline, so that a stream whose client stopped
// reading ends (C3, C5).
func (s *Server) serveMountFast(ctx *fasthttp.RequestCtx, h http.Handler) {
	hdr := &ctx.Request.Header
	// No closures: a request that is let through allocates nothing here.
	sw := refusalWriter{ctx}
	var mf mountFields
	mf.read(hdr, ctx.PostBody())
	if mf.dup != dupNone { // F2
		s.refuseDuplicate(sw, mf.dup)
		return
	}
	base := context.Background()
	r := reqInfo{ctx: base, raw: ctx.Conn(), lc: limitOf(ctx.Conn()), origin: mf.origin, hasOrigin: mf.hasOrigin, host: hdr.Host()}
	r.public = s.cfg.PublicMounts[string(ctx.Path())] != nil
	if s.cfg.Authenticate != nil && !r.public {
		r.auth = mf.auth
		r.chains = verifiedChains(ctx.Conn())
	}
	p, ok := s.admit(&r, sw)
	if !ok {
		return
	}
	if s.cfg.Authenticate != nil && !r.public {
		base = context.WithValue(base, principalKey{}, p)
	}
	served := false
	if fm, ok := h.(fieldMount); ok {
		served = fm.ServeFastFields(base, ctx, mf.vals, mf.n, mf.exact)
	} else if fm, ok := h.(fastMount); ok {
		served = fm.ServeFastHTTP(base, ctx)
	}
	if served {
		if !ctx.Response.IsBodyStream() {
			s.refreshWrite(ctx)
		}
		return
	}
	req, err := copyRequest(ctx)
	if err != nil {
		s.stats.BadFraming.Add(1)
		ctx.SetStatusCode(400)
		return
	}
	rctx, cancel := context.WithCancel(base)
	req = req.WithContext(rctx)
	conn := ctx.Conn()
	w := &mountWriter{hdr: http.Header{}, conn: conn, flushed: make(chan struct{}), streaming: make(chan struct{}), ready: make(chan *bufio.Writer, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { //nolint:errorlint // sentinel value, as net/http compares it
					return
				}
				s.cfg.Logger.Error("mounted handler panic", "path", req.URL.Path, "panic", v)
				w.mu.Lock()
				if !w.wroteHeader {
					w.status, w.wroteHeader = 500, true
				}
				w.mu.Unlock()
			}
		}()
		h.ServeHTTP(w, req)
	}()
	select {
	case <-w.done:
		w.mu.Lock()
		w.copyHeader(ctx)
		ctx.SetBody(w.buf.Bytes())
		w.mu.Unlock()
		s.refreshWrite(ctx)
	case <-w.flushed:
		w.mu.Lock()
		w.copyHeader(ctx)
		w.mu.Unlock()
		// The handler flushed: the client must see the headers now, not
		// with the first body bytes.
		ctx.Response.ImmediateHeaderFlush = true
		ctx.SetBodyStreamWriter(func(bw *bufio.Writer) {
			w.ready <- bw
			<-w.done
		})
	}
}

func (s *Server) refreshWrite(ctx *fasthttp.RequestCtx) {
	if lc := limitOf(ctx.Conn()); lc != nil {
		lc.refreshWriteDeadline()
	} else {
		_ = ctx.Conn().SetWriteDeadline(time.Now().Add(responseWriteTimeout))
	}
}

// copyRequest builds a net/http request that owns all its bytes (the
// fasthttp request is reset once the fasthttp handler returns, while a
// streaming handler goes on).
func copyRequest(ctx *fasthttp.RequestCtx) (*http.Request, error) {
	u, err := url.ParseRequestURI(string(ctx.RequestURI()))
	if err != nil {
		return nil, err
	}
	body := bytes.Clone(ctx.PostBody())
	req := &http.Request{
		Method:     string(ctx.Method()),
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{},
		Host:       string(ctx.Host()),
		RequestURI: u.RequestURI(),
		RemoteAddr: ctx.RemoteAddr().String(),
		Body:       io.NopCloser(bytes.NewReader(body)),

		ContentLength: int64(len(body)),
	}
	for k, v := range ctx.Request.Header.All() {
		req.Header.Add(string(k), string(v))
	}
	return req, nil
}

// mountWriter is the http.ResponseWriter of a mounted handler on the
// fasthttp front end (also http.Flusher, and SetWriteDeadline for
// http.ResponseController).
type mountWriter struct {
	conn net.Conn

	mu          sync.Mutex
	hdr         http.Header
	status      int
	wroteHeader bool
	buf         bytes.Buffer
	bw          *bufio.Writer // once streaming
	broken      bool          // the stream writer is gone
	committing  bool          // the first Flush is under way

	flushed   chan struct{}      // closed by the first Flush
	streaming chan struct{}      // closed once bw is set
	ready     chan *bufio.Writer // the stream writer, handed over by fasthttp
	done      chan struct{}      // the handler returned
}

func (w *mountWriter) Header() http.Header { return w.hdr }

func (w *mountWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
}

func (w *mountWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader {
		w.status, w.wroteHeader = 200, true
	}
	if w.broken {
		return 0, io.ErrClosedPipe
	}
	if w.bw == nil {
		return w.buf.Write(p)
	}
	return w.bw.Write(p)
}

// Flush sends what was written so far; the first call commits the
// status and headers and turns the response into a stream.
func (w *mountWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with the write error (http.ResponseController).
func (w *mountWriter) FlushError() error {
	w.mu.Lock()
	if !w.wroteHeader {
		w.status, w.wroteHeader = 200, true
	}
	if w.broken {
		w.mu.Unlock()
		return io.ErrClosedPipe
	}
	for w.bw == nil {
		if w.committing {
			// Another goroutine is turning the response into a stream.
			w.mu.Unlock()
			<-w.streaming
			w.mu.Lock()
			continue
		}
		w.committing = true
		w.mu.Unlock()
		close(w.flushed)
		bw := <-w.ready
		w.mu.Lock()
		w.bw = bw
		close(w.streaming)
		if _, err := bw.Write(w.buf.Bytes()); err != nil {
			w.broken = true
		}
		w.buf = bytes.Buffer{}
	}
	err := w.bw.Flush()
	if err != nil {
		w.broken = true
	}
	w.mu.Unlock()
	return err
}

// SetWriteDeadline bounds the next writes of a stream on the connection
// (http.ResponseController).
func (w *mountWriter) SetWriteDeadline(t time.Time) error { return w.conn.SetWriteDeadline(t) }

// copyHeader moves status and headers to the fasthttp response (mu held).
func (w *mountWriter) copyHeader(ctx *fasthttp.RequestCtx) {
	status := w.status
	if status == 0 {
		status = 200
	}
	ctx.SetStatusCode(status)
	for k, vs := range w.hdr {
		for i, v := range vs {
			if i == 0 {
				ctx.Response.Header.Set(k, v)
			} else {
				ctx.Response.Header.Add(k, v)
			}
		}
	}
}
