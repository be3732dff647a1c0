package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/state"
)

// Scale-out: with Config.Backplane set, the change cues of
// ToolsChanged, PromptsChanged, ResourcesChanged and ResourceUpdated go to
// every replica through the backplane instead of straight to this
// process's hub, and the backplane's subscription delivers every cue — this
// replica's own included — to the local hub, once. The hub's behaviour is
// unchanged: one encoding per cue and replica, updates of one URI still
// queued for a slow listener collapse into one.
//
// Delivery is at most once (the spec has no replay). What must never
// happen is a listen stream that was acknowledged and then silently misses
// a cue, so:
//
//   - until Start has subscribed, and while the backplane is lost, listen
//     requests are refused (-32603, HTTP 503) and publishing fails
//     (ErrBackplaneLost, counted in Stats.PublishErrors); the cue is not
//     sent, so a CueMissed naming it is queued like for a failed publish
//     (below): the other replicas end the listen streams that would have
//     received it once this one publishes again;
//   - when the backplane is lost, every local listen stream is ended
//     (Stats.ListenInterrupted): a transport that can drop a stream without
//     a response does so (StreamDropper; HTTP closes the SSE stream, which
//     tells the client to listen again, SUB-10), the others answer the
//     listen request with a -32603 error. Clients re-listen and re-fetch.
//   - when a publish fails or times out while the subscription stays up
//     (F9), the cue may have reached some replicas, or none — this one's
//     own listeners included, since local delivery is the backplane's
//     echo. The engine does not retry the cue (a timed-out PUBLISH may
//     have gone through, and a retry would deliver it twice); it ends the
//     local listen streams that would have received it at once, and sends
//     a CueMissed naming the cue, in the background and again until it
//     goes through, so that every replica ends its affected streams too
//     (Stats.PublishUncertain, MissedCues, ListenInterrupted). The caller
//     gets the error (503). A stream may so be ended although its cue
//     arrived: a re-listen too many, never a cue missed in silence. A
//     CueMissed carries its sender's id (Cue.Origin), and the sender
//     ignores its own echo: its streams were ended when the publish
//     failed, and those listening when the echo arrives listened since.

// Backplane states (Server.bpState).
const (
	bpStarting int32 = iota // Start has not subscribed yet
	bpUp                    // subscribed: cues flow
	bpDown                  // the subscription was lost
)

// DefaultPublishTimeout bounds one Backplane.Publish.
const DefaultPublishTimeout = 2 * time.Second

// ErrBackplaneLost is returned by the publishing methods while the
// backplane is not connected. It wraps state.ErrUnavailable, so a tool
// handler that returns it is answered -32603 with HTTP 503.
var ErrBackplaneLost = fmt.Errorf("engine: change backplane not connected: %w", state.ErrUnavailable)

// ErrUnavailable is the answer to a request that needs a shared service
// (the state store or the backplane) that cannot be reached: -32603 with
// HTTP status 503 on Streamable HTTP, so that a balancer or client may
// retry; on the other transports the -32603 error alone. A handler error
// wrapping state.ErrUnavailable is answered with it.
var ErrUnavailable = &codec.Error{Code: codec.CodeInternalError,
	Message: "Service unavailable: shared state cannot be reached; retry later", Status: 503}

// ErrStateLost answers a request whose handler's lookup missed just after
// the shared store lost its data (state.ErrLost: a Redis restart without
// persistence): like ErrUnavailable (-32603, HTTP 503) but saying so, so
// that a client does not take a lost handle for a wrong one (F9).
var ErrStateLost = &codec.Error{Code: codec.CodeInternalError,
	Message: "Service unavailable: the shared state was lost (the store restarted); the handle, session or result may be gone: retry, then start over", Status: 503}

var errStartedTwice = errors.New("engine: Start called twice")

// errListenUnavailable refuses a listen request while no cue could reach it.
var errListenUnavailable = &codec.Error{Code: codec.CodeInternalError,
	Message: "Service unavailable: change notifications are interrupted; listen again later", Status: 503}

// errListenInterrupted ends a listen stream on a transport that cannot drop
// it when the backplane is lost.
var errListenInterrupted = &codec.Error{Code: codec.CodeInternalError,
	Message: "Listen stream interrupted: change notifications may have been missed; listen again and re-fetch"}

// StreamDropper is implemented by Repliers whose transport ends a request's
// stream without a response when the request is cancelled, which the
// client sees as an unexpected drop and answers by listening again (SUB-10;
// the Streamable HTTP binding). The engine ends listen streams that may
// have missed cues this way; streams of other Repliers get a -32603 error
// response instead.
type StreamDropper interface {
	DropsOnCancel()
}

// Start connects the server to the services it shares with other
// replicas: with Config.Backplane it subscribes, and returns once the
// subscription is active (or with its error: the caller should not serve).
// The subscription lasts until Shutdown. Without a backplane Start does
// nothing. Until Start has returned nil, listen requests are refused and
// publishing fails.
func (s *Server) Start(ctx context.Context) error {
	if s.bp == nil {
		return nil
	}
	if !s.bpStarted.CompareAndSwap(false, true) {
		return errStartedTwice // a second subscription would deliver every cue twice
	}
	s.bgOnce.Do(func() { s.bgCtx, s.bgStop = context.WithCancel(context.Background()) })
	// The subscription lives in the server's background context (ended by
	// Shutdown); ctx bounds the setup only.
	sub, cancel := context.WithCancel(s.bgCtx)
	stop := context.AfterFunc(ctx, cancel)
	err := s.bp.Subscribe(sub, s.deliverCue, s.backplaneLost, s.backplaneRestored)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		s.bpStarted.Store(false) // may be tried again
		return fmt.Errorf("engine: backplane subscribe: %w", err)
	}
	s.bpState.CompareAndSwap(bpStarting, bpUp)
	s.log.l.Info("backplane subscribed")
	return nil
}

// BackplaneUp reports whether cues flow: always true without a backplane.
func (s *Server) BackplaneUp() bool {
	return s.bp == nil || s.bpState.Load() == bpUp
}

// publish sends a cue to every replica, or, without a backplane, to this
// process's listeners.
func (s *Server) publish(k state.CueKind, uri string) error {
	if s.bp == nil {
		s.deliverCue(state.Cue{Kind: k, URI: uri})
		return nil
	}
	if s.bpState.Load() != bpUp {
		s.stats.PublishErrors.Add(1)
		// This replica's listen streams were ended when the backplane was
		// lost (and none is served before Start), but the other replicas'
		// listeners would miss the cue in silence: they are told with a
		// CueMissed, sent once publishing works again.
		s.log.l.Warn("change not published: backplane not connected; the listen streams of the other replicas that would have received it will be ended", "kind", k, "uri", uri)
		s.oweMissed(state.Cue{Kind: state.CueMissed, Of: k, URI: uri, Origin: s.origin})
		return ErrBackplaneLost
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.PublishTimeout)
	err := s.bp.Publish(ctx, state.Cue{Kind: k, URI: uri})
	cancel()
	if err != nil {
		s.stats.PublishErrors.Add(1)
		s.stats.PublishUncertain.Add(1)
		// A timed-out publish may still reach Redis: the outcome is unknown.
		missed := state.Cue{Kind: state.CueMissed, Of: k, URI: uri, Origin: s.origin}
		n := s.interruptMissed(missed)
		s.log.l.Warn("change publish failed; the listen streams that may have missed it are ended here and on the other replicas", "kind", k, "uri", uri, "err", err, "streams", n)
		s.oweMissed(missed)
		if !errors.Is(err, state.ErrUnavailable) {
			err = fmt.Errorf("%w: %w", state.ErrUnavailable, err)
		}
		return fmt.Errorf("engine: publish: %w", err)
	}
	s.stats.Published.Add(1)
	return nil
}

// deliverCue hands one cue to this process's listen streams.
func (s *Server) deliverCue(c state.Cue) {
	switch c.Kind {
	case state.CueToolsChanged:
		s.hub.listChanged(subTools)
	case state.CuePromptsChanged:
		s.hub.listChanged(subPrompts)
	case state.CueResourcesChanged:
		s.hub.listChanged(subResources)
	case state.CueResourceUpdated:
		if c.URI != "" {
			s.hub.resourceUpdated(c.URI)
		}
	case state.CueMissed:
		if c.Origin == s.origin {
			// Our own notice's echo: the streams it names were ended when
			// the publish failed; those listening now listened since.
			return
		}
		s.stats.MissedCues.Add(1)
		if n := s.interruptMissed(c); n > 0 {
			s.log.l.Warn("a replica's change publish failed: the listen streams that may have missed it are ended", "kind", c.Of, "uri", c.URI, "streams", n)
		}
	}
}

// interruptMissed ends the local listen streams that would have received
// the cue a CueMissed names (all of them when it names none).
func (s *Server) interruptMissed(c state.Cue) int {
	var match func(*subscription) bool
	switch c.Of {
	case state.CueToolsChanged:
		match = func(sub *subscription) bool { return sub.wantsList(subTools) }
	case state.CuePromptsChanged:
		match = func(sub *subscription) bool { return sub.wantsList(subPrompts) }
	case state.CueResourcesChanged:
		match = func(sub *subscription) bool { return sub.wantsList(subResources) }
	case state.CueResourceUpdated:
		match = func(sub *subscription) bool { return sub.wantsUpdate(c.URI) }
	default:
		match = func(*subscription) bool { return true }
	}
	return s.hub.interrupt(match)
}

// maxOwed bounds the CueMissed waiting to be sent; past it they collapse
// into one that names no cue (every stream ends).
const maxOwed = 64

// oweMissed queues a CueMissed for the other replicas and starts the
// sender if it is not running. Once Shutdown began nothing is queued: the
// sender would not outlive it.
func (s *Server) oweMissed(c state.Cue) {
	s.missMu.Lock()
	defer s.missMu.Unlock()
	if s.missClosed {
		// Checked under missMu, which Shutdown holds to set it before it
		// waits for s.bg: no Add after that Wait.
		s.log.l.Warn("CueMissed not sent: the server is shutting down", "kind", c.Of, "uri", c.URI)
		return
	}
	switch {
	case slices.Contains(s.missed, c), len(s.missed) == 1 && s.missed[0].Of == 0:
	case len(s.missed) >= maxOwed:
		s.missed = append(s.missed[:0], state.Cue{Kind: state.CueMissed, Origin: s.origin})
	default:
		s.missed = append(s.missed, c)
	}
	if s.missRunning {
		return
	}
	s.missRunning = true
	s.bgOnce.Do(func() { s.bgCtx, s.bgStop = context.WithCancel(context.Background()) }) // a publish before Start
	s.bg.Add(1)
	go s.sendMissed()
}

// sendMissed publishes the owed CueMissed, each until it goes through
// (backoff 100 ms doubling to 2 s), and ends when none is left or at
// Shutdown.
func (s *Server) sendMissed() {
	defer s.bg.Done()
	wait := 100 * time.Millisecond
	for {
		s.missMu.Lock()
		if len(s.missed) == 0 || s.bgCtx.Err() != nil {
			s.missed, s.missRunning = nil, false
			s.missMu.Unlock()
			return
		}
		c := s.missed[0]
		s.missMu.Unlock()
		ctx, cancel := context.WithTimeout(s.bgCtx, s.opt.PublishTimeout)
		err := s.bp.Publish(ctx, c)
		cancel()
		if err == nil {
			s.stats.MissedSent.Add(1)
			s.missMu.Lock()
			if i := slices.Index(s.missed, c); i >= 0 {
				s.missed = slices.Delete(s.missed, i, i+1)
			}
			s.missMu.Unlock()
			wait = 100 * time.Millisecond
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.bgCtx.Done():
			t.Stop()
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// backplaneLost ends every local listen stream: they may miss cues from now
// on. New listen requests are refused until the backplane is restored.
func (s *Server) backplaneLost() {
	s.bpState.Store(bpDown) // before the snapshot: see listen
	s.stats.BackplaneLost.Add(1)
	n := s.hub.interruptAll()
	s.log.l.Warn("backplane lost: listen streams ended, new ones refused until it is back", "streams", n)
}

func (s *Server) backplaneRestored() {
	if s.bpState.CompareAndSwap(bpDown, bpUp) {
		s.log.l.Info("backplane restored")
	}
}

// interruptAll ends every listen stream without the hub closing; it returns
// how many it ended.
func (h *hub) interruptAll() int {
	return h.interrupt(func(*subscription) bool { return true })
}

// interrupt ends the listen streams match selects; it returns how many it
// ended.
func (h *hub) interrupt(match func(*subscription) bool) int {
	sp := h.snapshot(match)
	subs := append([]*subscription(nil), *sp...)
	h.putSnapshot(sp)
	n := 0
	for _, sub := range subs {
		if sub.c.interrupt(sub) {
			n++
		}
	}
	h.srv.stats.ListenInterrupted.Add(uint64(n))
	return n
}

// interrupt ends a detached listen stream that may have missed cues: as a
// drop where the transport can (StreamDropper), else with an error
// response. Only while the call still serves sub.
func (c *Call) interrupt(sub *subscription) bool {
	c.mu.Lock()
	// c.sub first: it is only written under c.mu, while the Call's next
	// request may be released (detached cleared without the lock).
	if c.sub != sub || !c.detached || c.detachDone || c.state != stateRunning {
		c.mu.Unlock()
		return false
	}
	if _, ok := c.rep.(StreamDropper); ok {
		return c.cancelLocked(ErrBackplaneLost) // releases c.mu; completes the call without a response
	}
	c.detachDone, c.rare = true, true
	c.mu.Unlock()
	c.setError(errListenInterrupted)
	c.complete()
	return true
}
