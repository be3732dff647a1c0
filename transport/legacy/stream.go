package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// The GET stream of a session carries the server's change notifications:
// tools, prompts and resources list_changed, and resources/updated for the
// URIs the session subscribed to. It is fed by an internal
// subscriptions/listen request of the engine (so by the same hub and,
// with a backplane, by every replica's ToolsChanged, ResourceUpdated…);
// a subscribe or unsubscribe starts a new listen with the new URI set and
// ends the old one.
//
// A subscribe or unsubscribe served by another replica reaches the replica
// holding the GET stream through the change backplane (F9): the stream's
// listen also subscribes to a private URI of its session (cueURI), the
// replica that changed the subscriptions publishes an update of that URI,
// and the stream that hears it re-reads the session and listens again
// with the new set, instead of waiting for the next keep-alive tick.

// getStream is a session's open GET stream.
type getStream struct {
	ss   *session
	mu   sync.Mutex
	q    [][]byte
	size int
	slow bool
	end  bool
	wake chan struct{}

	relisten sync.Mutex // serializes listen
	lmu      sync.Mutex
	listen   engine.RequestRef // the engine's listen feeding it
	gen      uint64
	resync   chan struct{} // the session's subscriptions changed elsewhere
	cue      string        // the session's cueURI
}

func (g *getStream) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// take empties the queue: the frames waiting, and whether the stream
// overflowed (a slow consumer) or was ended.
func (g *getStream) take() (q [][]byte, slow, end bool) {
	g.mu.Lock()
	q, slow, end = g.q, g.slow, g.end
	g.q, g.size = nil, 0
	g.mu.Unlock()
	return q, slow, end
}

// stopListen ends the engine listen feeding g; the generation bump keeps a
// listen still being started from taking its place.
func (g *getStream) stopListen() {
	g.lmu.Lock()
	g.gen++
	ref := g.listen
	g.lmu.Unlock()
	ref.Abort(errGone)
}

// push queues a frame; past MaxPendingBytes the stream is a slow consumer.
func (g *getStream) push(frame []byte) {
	g.mu.Lock()
	if g.end || g.slow {
		g.mu.Unlock()
		return
	}
	if g.size+len(frame) > g.ss.s.cfg.MaxPendingBytes {
		g.slow = true
	} else {
		g.q = append(g.q, frame)
		g.size += len(frame)
	}
	g.mu.Unlock()
	g.signal()
}

func (g *getStream) close() {
	g.mu.Lock()
	g.end = true
	g.mu.Unlock()
	g.signal()
}

// listener is the Replier of one internal listen request.
type listener struct {
	g     *getStream
	gen   uint64
	ready chan struct{} // closed at the acknowledgement or the end
	once  sync.Once
}

func (l *listener) joined() { l.once.Do(func() { close(l.ready) }) }

// Notify implements engine.Replier: the acknowledgement is dropped, the
// subscription id taken out of each notification.
func (l *listener) Notify(_ *engine.Request, frame []byte) error {
	method, _ := codec.LookupString(frame, "method")
	if method.EqualString("notifications/subscriptions/acknowledged") {
		l.joined()
		return nil
	}
	if method.EqualString("notifications/resources/updated") {
		if uri, _ := codec.LookupPath(frame, "params", "uri"); string(uri) == `"`+l.g.cue+`"` {
			select { // the GET loop re-reads the session (never block here)
			case l.g.resync <- struct{}{}:
			default:
			}
			return nil
		}
	}
	out := stripSubscription(frame, method.String())
	l.g.push(out)
	return nil
}

// cueURI is the private resource URI the GET stream of session id listens
// to for changes of its subscriptions made on other replicas: a hash of
// the id (which stays secret), so no client can name another session's.
func cueURI(id string) string {
	sum := sha256.Sum256([]byte("mcpwire legacy session\x00" + id))
	return "urn:mcpwire:legacy-session:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// Reply implements engine.Replier: the engine ended the listen (shutdown,
// lost backplane): end the GET stream, so the client opens it again.
func (l *listener) Reply(*engine.Request, []byte, int) error {
	l.joined()
	l.g.lmu.Lock()
	current := l.g.gen == l.gen
	l.g.lmu.Unlock()
	if current {
		l.g.close()
	}
	return nil
}

// Done implements engine.Replier.
func (l *listener) Done(*engine.Request) { l.joined() }

// stripSubscription rewrites a listen-stream notification as a 2025 one:
// params without the _meta subscription id.
func stripSubscription(frame []byte, method string) []byte {
	var kept []byte // nil: no params member
	if params, ok := codec.LookupPath(frame, "params"); ok && len(params) > 0 && params[0] == '{' {
		var p map[string]json.RawMessage
		if codec.Unmarshal(params, &p) == nil {
			delete(p, "_meta")
			if len(p) > 0 {
				if b, err := codec.Marshal(p); err == nil {
					kept = b
				}
			}
		}
	}
	return codec.AppendNotification(nil, method, kept)
}

// relisten points the session's GET stream (if any) at its current
// subscriptions.
func (ss *session) relisten() {
	ss.mu.Lock()
	g := ss.stream
	ss.mu.Unlock()
	if g != nil {
		ss.s.listen(g)
	}
}

// listen starts a new engine listen for g and ends the previous one once
// the new one is acknowledged (so a change published after listen returns
// reaches the stream: a subscribe is in effect when it is answered).
func (s *Server) listen(g *getStream) {
	g.relisten.Lock() // one (re)listen at a time
	defer g.relisten.Unlock()
	rec := g.ss.snapshot()
	g.lmu.Lock()
	g.gen++
	gen := g.gen
	g.lmu.Unlock()
	f := map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}
	f["resourceSubscriptions"] = append(slices.Clip(rec.Subs), g.cue)
	fb, _ := codec.Marshal(f)
	id := "legacy-listen-" + strconv.FormatUint(s.nextID.Add(1), 10)
	msg := []byte(`{"jsonrpc":"2.0","id":`)
	msg = codec.AppendString(msg, id)
	msg = append(msg, `,"method":"subscriptions/listen","params":{"notifications":`...)
	msg = append(msg, fb...)
	msg = append(msg, `,"_meta":{"io.modelcontextprotocol/protocolVersion":`...)
	msg = append(msg, quote(s.modern)...)
	msg = append(msg, `,"io.modelcontextprotocol/clientCapabilities":{}}}}`...)
	var env codec.Envelope
	if err := codec.PeekWith(msg, &env, codec.PeekConfig{}); err != nil {
		return
	}
	l := &listener{g: g, gen: gen, ready: make(chan struct{})}
	r := s.scope.Begin(context.Background(), msg, &env, l, nil)
	// Recorded before it starts, so that the stream's end (which aborts
	// g.listen) cannot miss it; no lock is held while the engine runs it
	// (its Reply takes lmu).
	g.lmu.Lock()
	if g.gen != gen { // the stream ended meanwhile
		g.lmu.Unlock()
		r.Fail(codec.NewError(codec.CodeInternalError, "stream ended"))
		return
	}
	old := g.listen
	g.listen = r.Ref()
	g.lmu.Unlock()
	if e := r.Check(); e != nil {
		r.Fail(e)
	} else {
		r.Start()
	}
	t := time.NewTimer(5 * time.Second)
	select {
	case <-l.ready:
	case <-t.C:
		s.log.Warn("legacy: the engine did not acknowledge a listen in 5 s")
	}
	t.Stop()
	old.Abort(errRelisten)
}

type relistenErr struct{}

func (relistenErr) Error() string { return "legacy: subscriptions changed" }

var errRelisten = relistenErr{}

// get serves the GET stream of a session.
func (s *Server) get(w http.ResponseWriter, req *http.Request, principal any) {
	if !accepts(req, "text/event-stream") {
		s.bad(w, 406, nil, codec.NewError(codec.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream"))
		return
	}
	ss := s.session(w, req, principal)
	if ss == nil || !s.checkVersionHeader(w, req) {
		return
	}
	g := &getStream{ss: ss, wake: make(chan struct{}, 1), resync: make(chan struct{}, 1), cue: cueURI(ss.id)}
	ss.mu.Lock()
	if ss.stream != nil || ss.gone {
		ss.mu.Unlock()
		s.stats.StreamConflict.Add(1)
		s.bad(w, 409, nil, codec.NewError(codec.CodeInvalidRequest, "Conflict: this session already has a GET stream"))
		return
	}
	ss.stream = g
	ss.mu.Unlock()
	s.stats.Streams.Add(1)
	defer func() {
		s.stats.Streams.Add(-1)
		ss.mu.Lock()
		if ss.stream == g {
			ss.stream = nil
		}
		ss.touched = time.Now()
		ss.mu.Unlock()
		g.stopListen()
	}()
	out := &sse{w: w, rc: http.NewResponseController(w), idle: s.cfg.WriteIdleTimeout, meta: s.cfg.ResourceMetadata}
	if out.begin() != nil {
		return
	}
	s.listen(g)
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	ctx := req.Context()
	for {
		q, slow, end := g.take()
		if slow {
			s.stats.SlowConsumers.Add(1)
			return
		}
		for _, f := range q {
			if err := out.event(f); err != nil {
				s.countWriteErr(g, out, err)
				return
			}
		}
		if end {
			return
		}
		select {
		case <-g.wake:
		case <-keep.C:
			ss.touch()
			if err := out.comment(); err != nil {
				s.countWriteErr(g, out, err)
				return
			}
			// Another replica may have changed the subscriptions.
			if ss.refresh(ctx) != nil {
				return
			}
		case <-g.resync:
			s.stats.Resyncs.Add(1)
			if ss.refresh(ctx) != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		}
	}
}

// countWriteErr counts a stream ended by a failed write as a slow
// consumer when the client had stopped reading: the write timed out
// (WriteIdleTimeout) or the queue overflowed meanwhile.
func (s *Server) countWriteErr(g *getStream, out *sse, err error) {
	g.mu.Lock()
	overflow := g.slow
	g.mu.Unlock()
	var ne net.Error
	if overflow || out.stalledErr() || (errors.As(err, &ne) && ne.Timeout()) {
		s.stats.SlowConsumers.Add(1)
	}
}

// endStream ends the session's GET stream, if one is open here.
func (ss *session) endStream() {
	ss.mu.Lock()
	g := ss.stream
	ss.mu.Unlock()
	if g != nil {
		g.close()
	}
}

// delete ends a session (DELETE with its Mcp-Session-Id).
func (s *Server) delete(w http.ResponseWriter, req *http.Request, principal any) {
	ss := s.session(w, req, principal)
	if ss == nil {
		return
	}
	if err := s.end(req.Context(), ss); err != nil {
		s.stats.Unavailable.Add(1)
		writeJSON(w, 503, encodeError(nil, codec.NewError(codec.CodeInternalError, "Session store unavailable")))
		return
	}
	w.WriteHeader(200)
}
