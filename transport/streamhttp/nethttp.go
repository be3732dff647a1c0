package streamhttp

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// Handler returns a net/http handler with the same behaviour as the
// fasthttp server, for mounting mcpwire in an existing router (the router
// decides the path; Config.Path is still checked). addr is the address the
// http.Server listens on: it sets the default Origin allow-list and whether
// Host is checked (SEC-02/03). The body limit is enforced while reading
// (413); the request context's cancellation (client disconnect) cancels
// the call (HCAN-01).
func (s *Server) Handler(addr string) (http.Handler, error) {
	ta, err := resolveTCP(addr)
	if err != nil {
		return nil, err
	}
	if err := s.bindAddr(ta); err != nil {
		return nil, err
	}
	return http.HandlerFunc(s.serveHTTP), nil
}

func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if h := s.cfg.Mounts[req.URL.Path]; h != nil && req.URL.Path != s.cfg.Path {
		s.serveMountHTTP(h, w, req)
		return
	}
	x := s.acquireExchange()
	var r reqInfo
	// The request's values (an instrumented handler's span, say) without
	// its cancellation: a client that goes away cancels the call through
	// the AfterFunc below, with the disconnect as its cause (hooks report
	// EndDisconnect); the bare context.Canceled racing it would not say why.
	r.ctx = context.WithoutCancel(req.Context())
	r.gone = req.Context()
	r.goneCounted = true // by x.cancel, below
	r.method = []byte(req.Method)
	r.path = []byte(req.URL.Path)
	r.host = []byte(req.Host)
	dup := dupNone // F2: net/http gathers repeated lines under one key
	for k, vs := range req.Header {
		kb := []byte(k)
		switch {
		case len(k) > 3 && (k[0]|0x20) == 'm':
			for _, v := range vs {
				x.hdr.add(kb, []byte(v))
			}
		case k == "Origin":
			if len(vs) > 1 {
				dup = dupOrigin
			}
			r.origin, r.hasOrigin = []byte(vs[0]), true
		case k == "Content-Type":
			if len(vs) > 1 {
				dup = dupContentType
			}
			r.ctype, r.hasCType = []byte(vs[0]), true
		case k == "Accept":
			r.accept, r.hasAccept = []byte(joinValues(vs)), true
		case k == "Content-Encoding":
			r.cenc, r.hasCEnc = []byte(vs[0]), true
		case k == "Authorization":
			if len(vs) > 1 {
				dup = dupAuthorization
			}
			r.auth = []byte(vs[0])
		case k == "Accept-Encoding":
			r.aenc = []byte(joinValues(vs))
		}
	}
	nw := &netWriter{w: w, rc: http.NewResponseController(w)}
	if dup != dupNone {
		s.refuseDuplicate(nw, dup)
		x.unref()
		return
	}
	x.netHeaders(req.Header)
	nc, _ := req.Context().Value(netConnKey{}).(*netConn)
	if nc != nil {
		x.info, x.peer = nc.info, nc.peer
	} else if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		x.peer = textCallerKey(host) // served without NetListener: the address net/http reports
	}
	if s.cfg.Authenticate != nil {
		r.chains = netChains(req)
	}
	if nc != nil && nc.smuggled() {
		// Content-Length and Transfer-Encoding both: refused, as on the
		// fasthttp front end (B5; seen by NetListener).
		s.stats.BadFraming.Add(1)
		nw.header("Connection", "close")
		nw.send(400, "", nil)
		x.unref()
		return
	}
	if len(req.TransferEncoding) > 0 {
		// net/http drops a Content-Length sent next to Transfer-Encoding
		// before we can see it; RFC 9112 §6.1 then requires closing the
		// connection after the response, so no smuggled request follows (B5).
		w.Header().Set("Connection", "close")
	}
	if req.Method == http.MethodPost && req.URL.Path == s.cfg.Path {
		if req.ContentLength > int64(s.cfg.MaxBodyBytes) { // B3: nothing allocated up front
			s.stats.BodyTooLarge.Add(1)
			nw.header("Connection", "close")
			nw.send(413, "", nil)
			x.unref()
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, int64(s.cfg.MaxBodyBytes)))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.stats.BodyTooLarge.Add(1)
				nw.send(413, "", nil)
			} else if nc != nil && nc.gapSeen.Load() && isTimeout(err) {
				// The body stalled past ReadIdleTimeout (C2; counted
				// in ReadIdleTimeouts by the connection).
				nw.header("Connection", "close")
				nw.send(408, "", nil)
			} else {
				s.stats.BadFraming.Add(1)
				nw.send(400, "", nil)
			}
			x.unref()
			return
		}
		r.body = body
	}
	afDone := make(chan struct{})
	stop := context.AfterFunc(req.Context(), func() {
		defer close(afDone)
		x.cancel(errClientGone)
	})
	s.serve(&r, x, nw)
	if !stop() {
		<-afDone // the cancellation is running: let it finish before x is reused
	}
	x.unref()
}

// netChains returns the verified TLS peer chains of a net/http request:
// from NetListener's TLS layer, else from the embedding server's.
func netChains(req *http.Request) [][]*x509.Certificate {
	if nc, _ := req.Context().Value(netConnKey{}).(*netConn); nc != nil && nc.tc != nil {
		return nc.tc.ConnectionState().VerifiedChains
	}
	if req.TLS != nil {
		return req.TLS.VerifiedChains
	}
	return nil
}

func joinValues(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

type netWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (n *netWriter) header(k, v string) { n.w.Header().Set(k, v) }

func (n *netWriter) send(status int, contentType string, body []byte) {
	if status == 499 {
		return // the client is gone
	}
	if contentType != "" {
		n.w.Header().Set("Content-Type", contentType)
	}
	n.w.WriteHeader(status)
	if body != nil {
		_, _ = n.w.Write(body)
	}
}

// stream runs the pump on the handler's goroutine; runStream drops the
// stream's reference and serveHTTP drops the request's.
func (n *netWriter) stream(x *exchange) {
	x.refs.Add(1)
	x.mu.Lock()
	x.rc = n.rc // a slow consumer is cut off through the write deadline
	x.mu.Unlock()
	n.w.Header().Set("Content-Type", ctSSE)
	n.w.WriteHeader(200)
	_ = n.rc.Flush()
	x.runStream(n)
}

func (n *netWriter) streamListen(x *exchange) {
	n.w.Header().Set("Cache-Control", "no-cache")
	n.w.Header().Set("X-Accel-Buffering", "no")
	n.stream(x)
}

func (n *netWriter) Write(p []byte) (int, error)        { return n.w.Write(p) }
func (n *netWriter) Flush() error                       { return n.rc.Flush() }
func (n *netWriter) SetWriteDeadline(t time.Time) error { return n.rc.SetWriteDeadline(t) }
