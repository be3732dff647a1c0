package redisstate

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// A cue travels as one PUBLISH on "<Prefix>cues": one byte of kind, then
// the URI (empty for the list_changed kinds). CueMissed has, before the
// URI, a byte of the missed kind (0: any) and 8 bytes (big-endian) naming
// the replica that sent it (Cue.Origin).

// missedHeader is the length of a CueMissed before its URI.
const missedHeader = 2 + 8

func appendCue(dst []byte, c state.Cue) []byte {
	dst = append(dst, byte(c.Kind))
	if c.Kind == state.CueMissed {
		dst = binary.BigEndian.AppendUint64(append(dst, byte(c.Of)), c.Origin)
	}
	return append(dst, c.URI...)
}

func parseCue(b string) (state.Cue, bool) {
	if len(b) == 0 {
		return state.Cue{}, false
	}
	k := state.CueKind(b[0])
	if k == state.CueMissed {
		if len(b) < missedHeader {
			return state.Cue{}, false
		}
		c := state.Cue{Kind: k, Of: state.CueKind(b[1]), Origin: binary.BigEndian.Uint64([]byte(b[2:missedHeader])), URI: b[missedHeader:]}
		if c.Of == 0 {
			return c, c.URI == ""
		}
		return c, validCue(c.Of, c.URI)
	}
	return state.Cue{Kind: k, URI: b[1:]}, validCue(k, b[1:])
}

// validCue reports whether a cue of kind k (not CueMissed) may carry uri.
func validCue(k state.CueKind, uri string) bool {
	switch k {
	case state.CueToolsChanged, state.CuePromptsChanged, state.CueResourcesChanged:
		return uri == ""
	case state.CueResourceUpdated:
		return uri != ""
	}
	return false
}

// Publish implements state.Backplane: one PUBLISH (on a cluster, one
// SPUBLISH on the URI's shard channel: sharded.go), bounded by OpTimeout.
// Cues from one publisher that waits for each Publish reach every
// subscriber in order (on a cluster: in order per URI).
func (s *Store) Publish(ctx context.Context, c state.Cue) error {
	if s.isClosed() {
		return errClosed
	}
	var buf [128]byte
	msg := appendCue(buf[:0], c)
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	cmd := s.c.B().Publish().Channel(s.channel).Message(rueidis.BinaryString(msg)).Build()
	if s.shards != nil {
		cmd = s.c.B().Spublish().Channel(s.cueChannel(c)).Message(rueidis.BinaryString(msg)).Build()
	}
	if err := s.c.Do(cctx, cmd).Error(); err != nil {
		return s.fail(ctx, "publish", err)
	}
	s.stats.Published.Add(1)
	return nil
}

// Subscribe implements state.Backplane with SUBSCRIBE on a dedicated
// connection. It returns once Redis confirmed the subscription (or with
// an error matching state.ErrUnavailable). When the connection drops,
// lost is called, the subscriber reconnects with backoff (ReconnectMin
// doubling to ReconnectMax, with jitter) and calls restored once it is
// subscribed again. deliver, lost and restored are called one at a time,
// never concurrently; lost and restored may be nil. The subscription ends
// with ctx or Close. On a cluster it subscribes to every shard channel
// (SSUBSCRIBE), and the loss of any of them is a loss (sharded.go).
func (s *Store) Subscribe(ctx context.Context, deliver func(state.Cue), lost, restored func()) error {
	if s.shards != nil {
		return s.subscribeSharded(ctx, deliver, lost, restored)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	sub := &subscriber{s: s, deliver: deliver}
	broken, err := sub.connect(ctx)
	if err != nil {
		s.wg.Done()
		return err
	}
	go sub.run(ctx, broken, lost, restored)
	return nil
}

type subscriber struct {
	s       *Store
	deliver func(state.Cue)
	dc      rueidis.DedicatedClient
}

// connect subscribes on a fresh dedicated connection and returns the
// channel that reports its end.
func (sub *subscriber) connect(ctx context.Context) (<-chan error, error) {
	s := sub.s
	dc, release := s.c.Dedicate()
	_ = release // Close below ends the connection and releases it
	subscribed := make(chan struct{}, 1)
	broken := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) {
			c, ok := parseCue(m.Message)
			if !ok {
				s.stats.Malformed.Add(1)
				return
			}
			s.stats.Delivered.Add(1)
			sub.deliver(c)
		},
		OnSubscription: func(ps rueidis.PubSubSubscription) {
			if ps.Kind == "subscribe" {
				select {
				case subscribed <- struct{}{}:
				default:
				}
			}
		},
	})
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	err := dc.Do(cctx, dc.B().Subscribe().Channel(s.channel).Build()).Error()
	if err == nil {
		select {
		case <-subscribed:
		case err = <-broken:
		case <-cctx.Done():
			err = cctx.Err()
		}
	}
	if err != nil {
		dc.Close()
		return nil, s.fail(ctx, "subscribe", err)
	}
	sub.dc = dc
	return broken, nil
}

func (sub *subscriber) run(ctx context.Context, broken <-chan error, lost, restored func()) {
	s := sub.s
	defer s.wg.Done()
	var tick <-chan time.Time
	if s.opt.LossCheckInterval > 0 {
		t := time.NewTicker(s.opt.LossCheckInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			sub.dc.Close()
			return
		case <-s.done:
			sub.dc.Close()
			return
		case <-tick:
			// A flush or an eviction drops no connection: look for it.
			s.lossMu.Lock()
			s.checkEpoch(ctx, "periodic check")
			s.lossMu.Unlock()
			continue
		case <-broken:
		}
		sub.dc.Close()
		s.stats.Lost.Add(1)
		if lost != nil {
			lost()
		}
		if !s.retry(ctx, func() bool {
			var err error
			broken, err = sub.connect(ctx)
			return err == nil
		}) {
			return
		}
		// Every restart of Redis drops the subscription: see whether this
		// was one, and whether the data went with it, before cues flow.
		s.checkRestart(ctx)
		s.stats.Reconnects.Add(1)
		if restored != nil {
			restored()
		}
	}
}

// retry calls try after a backoff (ReconnectMin doubling up to
// ReconnectMax, full jitter in [wait/2, wait)) until it reports success,
// and reports true; false when ctx ends or the store closes first.
func (s *Store) retry(ctx context.Context, try func() bool) bool {
	wait := s.opt.ReconnectMin
	for {
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-s.done:
			t.Stop()
			return false
		case <-t.C:
		}
		if try() {
			return true
		}
		wait = min(2*wait, s.opt.ReconnectMax)
	}
}
