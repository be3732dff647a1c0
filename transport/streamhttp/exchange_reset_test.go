package streamhttp

import (
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/replayconn"
)

// unrefKept are the exchange's fields unref leaves as they are: the server,
// the lock, the channel and the callback made with the exchange, the
// counters and flags with rules of their own, the timer, the watcher,
// and the buffers it keeps (emptied: their lengths are checked apart).
var unrefKept = map[string]bool{
	"s": true, "mu": true, "signal": true, "onGone": true, "refs": true, "pooled": true,
	"waiting": true, "parked": true, "rawLive": true, "ka": true, "watch": true, "work": true,
	"queue": true, "spare": true, "reply": true, "keys": true, "zbuf": true, "hbuf": true,
}

// checkClean fails unless every field of the pooled x that unref resets
// is zero, and the buffers it keeps are empty.
func checkClean(t *testing.T, how string, x *exchange) {
	t.Helper()
	if !x.pooled || x.refs.Load() != 1 {
		t.Fatalf("%s: pooled %v, refs %d; want true, 1", how, x.pooled, x.refs.Load())
	}
	v := reflect.ValueOf(x).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if unrefKept[f.Name] {
			continue
		}
		if !v.Field(i).IsZero() {
			t.Errorf("%s: field %s not reset: %v", how, f.Name, v.Field(i))
		}
	}
	if len(x.queue)+len(x.spare)+len(x.reply)+len(x.keys) != 0 || len(x.signal) != 0 {
		t.Errorf("%s: queue %d, spare %d, reply %d, keys %d, signals %d left", how,
			len(x.queue), len(x.spare), len(x.reply), len(x.keys), len(x.signal))
	}
}

// dirty writes every field a request may leave set, the stream-only ones
// (resetLoud's) included.
func dirty(x *exchange, conn net.Conn) {
	x.mode, x.status, x.replied, x.ended, x.gone, x.inPlace = modeSSE, 200, true, true, errClientGone, true
	x.listen, x.conn, x.rc = true, conn, http.NewResponseController(nil)
	x.inlineOn, x.pumpBusy, x.inlineAt = true, true, 5
	x.inline.rc = rawConnOf(conn)
	x.kaDue, x.pst = true, pumpState{lastWrite: 1, deadline: 2}
	x.nh = http.Header{"A": nil}
	x.hraw, x.info, x.peer, x.retry = []byte("h"), &engine.ConnInfo{Transport: "http"}, "peer", 3
	x.fw = fastWriter{}
	x.keys = append(x.keys, 1)
	x.reply = append(x.reply, 'r')
	x.hbuf = append(x.hbuf, 'h')
	select {
	case x.signal <- struct{}{}:
	default:
	}
}

// TestUnrefResetsLoud: an exchange that stopped being quiet (handed off
// to a worker, or made a stream by dispatch) comes back from unref with
// every field a request wrote reset, the stream-only ones included
// (resetLoud); one still quiet comes back clean of what a quiet request
// writes. Fails if unref skips resetLoud for an exchange that is not
// quiet (the test of quiet inverted or dropped), or resetLoud or unref
// forgets a field.
func TestUnrefResetsLoud(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	conn := replayconn.New(wrkRequest, 1)

	// Handed off: handOff clears quiet and takes the engine's reference.
	x := s.acquireExchange()
	x.quiet = true // bound alone (bind)
	x.handOff()
	dirty(x, conn)
	x.async = true
	x.unref() // the engine's (Done)
	x.unref() // the HTTP side's
	checkClean(t, "handed off", x)

	// A stream from an inline run: dispatch clears quiet itself.
	x = s.acquireExchange()
	x.quiet = true
	x.quiet = false // dispatch: streaming, or a watch armed
	dirty(x, conn)
	x.unref()
	checkClean(t, "streamed", x)

	// Quiet to the end: what a quiet request may write (a reply, a
	// notification queued behind it, a slow consumer's gone, a 429's
	// retry) is reset all the same. (info and peer are net/http's, whose
	// exchanges are never quiet.)
	x = s.acquireExchange()
	x.quiet = true
	x.mode, x.status, x.replied, x.ended, x.gone, x.inPlace = modeJSON, 429, true, true, errSlowConsumer, true
	x.reply = append(x.reply, 'r')
	x.keys = append(x.keys, 1)
	x.hraw, x.retry = []byte("h"), 3
	x.unref()
	checkClean(t, "quiet", x)
}
